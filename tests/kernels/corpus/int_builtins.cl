/*
 * int_builtins.cl -- the OpenCL integer built-ins on signed and unsigned operands, full range
 *                    and edge values (0, -1, INT_MIN, INT_MAX), one column of results each.
 *
 * Kernels:
 *   int_builtins(a, b, c, out, n)     a, b, c: int[n]; out: int[NCOL n], row i holds NCOL
 *       results for (a[i], b[i], c[i]): add_sat, sub_sat, mad24, mul24, rotate, clz, popcount,
 *       mul_hi (+ z), hadd, rhadd, abs, abs_diff, min, max, clamp, upsample, mad_sat; each on
 *       int and on uint (the same bits). mul24/mad24 get 24-bit operands (a >> 8, b >> 8 and
 *       their low 24 bits unsigned), as the specification requires; clamp gets lo <= hi.
 *       Not sub_sat(0, INT_MIN): libclc 19 gives INT_MIN (it picks the bound from x > 0).
 *   small_builtins(a, b, out, n)      the same family on char/uchar/short/ushort lanes of a[i]
 *       and b[i] (add_sat, sub_sat, hadd, rhadd, clz, popcount, rotate, abs, abs_diff,
 *       mad_sat, upsample(char, uchar) -> short, upsample(uchar, uchar) -> ushort, min/max);
 *       out: int[NSMALL n], each result widened to int.
 *   long_builtins(a, b, c, out, n)    a, b, c: long[n]; out: long[NLONG n]: the family on
 *       long and ulong (add_sat, sub_sat, mul_hi, clz, popcount, rotate, hadd, rhadd, abs,
 *       abs_diff, min/max, clamp, upsample(int, uint) -> long, mad_sat on ulong), 64-bit
 *       shifts and compares. libclc 19 gets two of them wrong, so the case avoids them:
 *       mad_sat(long) saturates products of 0 and misses overflows of the addition, and
 *       sub_sat(0L, LONG_MIN) gives LONG_MIN (it picks the bound from x > 0).
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64.
 *
 * SI features: v_ffbh_u32 (clz), v_bcnt_u32_b32, v_mul_hi_i32/u32, v_mul_i32_i24 /
 *              v_mad_u32_u24, v_alignbit_b32 (rotate), v_med3 / v_min / v_max, carries and
 *              compares for the saturating forms; libclc's 64-bit arithmetic for mad_sat;
 *              64-bit: v_lshl/lshr/ashr_b64, v_cmp_*_i64/u64, 64-bit mul_hi from 32-bit
 *              partial products.
 */

#define NCOL 36
#define NSMALL 24

__kernel void int_builtins(__global const int *a, __global const int *b, __global const int *c,
                           __global int *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int x = a[i], y = b[i], z = c[i];
    uint ux = x, uy = y, uz = z;
    __global int *o = out + NCOL * i;

    o[0] = add_sat(x, y);
    o[1] = sub_sat(x, y);
    o[2] = add_sat(ux, uy);
    o[3] = sub_sat(ux, uy);
    o[4] = mad24(x >> 8, y >> 8, z);
    o[5] = mul24(x >> 8, y >> 8);
    o[6] = mad24(ux & 0xFFFFFFu, uy & 0xFFFFFFu, uz);
    o[7] = mul24(ux & 0xFFFFFFu, uy & 0xFFFFFFu);
    o[8] = rotate(x, y);
    o[9] = rotate(ux, uy);
    o[10] = clz(x);
    o[11] = clz(ux >> (uy & 31));
    o[12] = popcount(x);
    o[13] = popcount(uy);
    o[14] = mul_hi(x, y);
    o[15] = mul_hi(ux, uy);
    o[16] = mul_hi(x, y) + z;            /* mad_hi: not in libclc 19 (undefined symbol) */
    o[17] = mul_hi(ux, uy) + uz;
    o[18] = hadd(x, y);
    o[19] = rhadd(x, y);
    o[20] = hadd(ux, uy);
    o[21] = rhadd(ux, uy);
    o[22] = abs(x);
    o[23] = abs_diff(x, y);
    o[24] = abs_diff(ux, uy);
    o[25] = min(x, y);
    o[26] = max(x, y);
    o[27] = min(ux, uy);
    o[28] = max(ux, uy);
    o[29] = clamp(x, min(y, z), max(y, z));
    o[30] = clamp(ux, min(uy, uz), max(uy, uz));
    o[31] = upsample((short)x, (ushort)y);
    o[32] = upsample((ushort)ux, (ushort)(uy >> 16));
    o[33] = mad_sat(x, y, z);
    o[34] = mad_sat(ux, uy, uz);
    o[35] = mad_sat(x >> 12, y >> 12, z);
}

__kernel void small_builtins(__global const int *a, __global const int *b, __global int *out,
                             int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    char cx = (char)x, cy = (char)y;
    uchar ux = (uchar)(x >> 8), uy = (uchar)(y >> 8);
    short sx = (short)(x >> 16), sy = (short)(y >> 16);
    ushort wx = (ushort)x, wy = (ushort)(y >> 8);
    __global int *o = out + NSMALL * i;

    o[0] = add_sat(cx, cy);
    o[1] = sub_sat(cx, cy);
    o[2] = add_sat(ux, uy);
    o[3] = sub_sat(ux, uy);
    o[4] = add_sat(sx, sy);
    o[5] = sub_sat(wx, wy);
    o[6] = hadd(cx, cy);
    o[7] = rhadd(ux, uy);
    o[8] = rhadd(sx, sy);
    o[9] = hadd(wx, wy);
    o[10] = clz(cx);
    o[11] = clz(wx);
    o[12] = popcount(cx);
    o[13] = popcount(sx);
    o[14] = rotate(ux, uy);
    o[15] = rotate(sx, sy);
    o[16] = abs(cx);
    o[17] = abs_diff(sx, sy);
    o[18] = mad_sat(cx, cy, (char)(x >> 24));
    o[19] = mad_sat(wx, wy, (ushort)(y >> 16));
    o[20] = upsample(cx, uy);
    o[21] = upsample(ux, uy);
    o[22] = min(cx, cy) + max(ux, uy);
    o[23] = clamp(sx, (short)-1000, (short)1000) + max(wx, wy);
}

#define NLONG 20

__kernel void long_builtins(__global const long *a, __global const long *b,
                            __global const long *c, __global long *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    long x = a[i], y = b[i], z = c[i];
    ulong ux = x, uy = y, uz = z;
    __global long *o = out + NLONG * i;

    o[0] = add_sat(x, y);
    o[1] = sub_sat(x, y);
    o[2] = add_sat(ux, uy);
    o[3] = sub_sat(ux, uy);
    o[4] = mul_hi(x, y);
    o[5] = mul_hi(ux, uy);
    o[6] = clz(x);
    o[7] = popcount(y);
    o[8] = rotate(x, y);
    o[9] = hadd(x, y);
    o[10] = rhadd(ux, uy);
    o[11] = abs(x);
    o[12] = abs_diff(x, y);
    o[13] = min(x, y) ^ max(ux, uy);
    o[14] = clamp(x, min(y, z), max(y, z));
    o[15] = upsample((int)x, (uint)y);
    o[16] = add_sat(x * y, z);      /* mad_sat(long): wrong in libclc 19 (docs/corpus.md) */
    o[17] = mad_sat(ux, uy, uz);
    o[18] = (x >> (y & 63)) + (long)(ux >> (uz & 63));
    o[19] = (x < y) + 2 * (ux < uy) + 4 * (x == z) + 8 * (ux >= uz);
}
