/*
 * long_div.cl -- 64-bit integer division and remainder as users write them: splitting a
 *                nanosecond timestamp, averages of 64-bit totals, signed division by run-time
 *                divisors, and Euclid's gcd on ulong.
 *
 * Kernels:
 *   split_time(ns, parts, n)        ns: ulong[n]; parts: uint[4 n] = days, hours of the day,
 *                                   seconds of the hour, microseconds of the second (ulong
 *                                   division and remainder by constants).
 *   long_divmod(a, b, q, r, uq, ur, n)  a, b: long[n]: q = a / b, r = a % b (C truncation),
 *                                   uq, ur: the same on the ulong bit patterns (b != 0,
 *                                   no LONG_MIN / -1).
 *   mean_by_count(total, count, mean, n)  mean[i] = total[i] / count[i] (long / int, the
 *                                   count widened), rounded to nearest by adding count / 2
 *                                   with the sign of the total.
 *   gcd64(a, b, g, n)               g[i] = gcd(a[i], b[i]) by repeated %, a data-dependent
 *                                   loop of 64-bit remainders.
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64.
 *
 * SI features: no 64-bit divide instruction: constant divisors become v_mul_hi_u32 /
 *              v_mul_lo_u32 chains with 64-bit adds (v_addc_u32), run-time divisors the long
 *              reciprocal-estimate expansion (v_cvt_f32_u32, v_rcp_iflag_f32, v_madmk_f32 ...)
 *              with correction steps.
 */

__kernel void split_time(__global const ulong *ns, __global uint *parts, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    ulong t = ns[i];
    ulong us = t / 1000;
    ulong s = us / 1000000;
    parts[4 * i + 0] = (uint)(s / 86400);
    parts[4 * i + 1] = (uint)((s % 86400) / 3600);
    parts[4 * i + 2] = (uint)(s % 3600);
    parts[4 * i + 3] = (uint)(us % 1000000);
}

__kernel void long_divmod(__global const long *a, __global const long *b, __global long *q,
                          __global long *r, __global ulong *uq, __global ulong *ur, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    long x = a[i], y = b[i];
    q[i] = x / y;
    r[i] = x % y;
    uq[i] = (ulong)x / (ulong)y;
    ur[i] = (ulong)x % (ulong)y;
}

__kernel void mean_by_count(__global const long *total, __global const int *count,
                            __global long *mean, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    long t = total[i];
    long c = count[i];
    long halfc = c / 2;
    mean[i] = (t >= 0 ? t + halfc : t - halfc) / c;
}

__kernel void gcd64(__global const ulong *a, __global const ulong *b, __global ulong *g, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    ulong x = a[i], y = b[i];
    while (y != 0) {
        ulong t = x % y;
        x = y;
        y = t;
    }
    g[i] = x;
}
