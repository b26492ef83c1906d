/*
 * long_arith.cl -- 64-bit integer arithmetic: a 64-bit hash (splitmix64 finaliser, as used by
 *                  GPU random-number generators) and mixed long/ulong operations.
 *
 * Kernels:
 *   __kernel void splitmix64(__global ulong *out, ulong seed, int n)
 *       out[i] = mix(seed + (i + 1) * 0x9E3779B97F4A7C15), with
 *       mix(z) = z ^= z >> 30, z *= 0xBF58476D1CE4E5B9, z ^= z >> 27, z *= 0x94D049BB133111EB,
 *                z ^ (z >> 31)
 *   __kernel void long_ops(__global const long *a, __global const long *b,
 *                          __global long *out, int n)
 *       8 results per element, at out[8 * i + k]:
 *         k = 0: a + b         1: a - b          2: a * b          (wrap around modulo 2^64)
 *             3: a >> s        4: (long)((ulong)a >> s)          (s = b & 63; arithmetic,
 *                                                                  then logical shift)
 *             5: (long)((ulong)a << s)             6: (long)mul_hi((ulong)a, (ulong)b)
 *             7: (long)((ulong)max(a, b) - (ulong)(a < b) + (ulong)((ulong)a > (ulong)b))
 *
 * NDRange (both): 1-D, global = n rounded up to a multiple of 64, local = 64.
 *          Example: n = 300 -> global 320, local 64.
 */

__kernel void splitmix64(__global ulong *out, ulong seed, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        ulong z = seed + (ulong)(i + 1) * 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        out[i] = z ^ (z >> 31);
    }
}

__kernel void long_ops(__global const long *a, __global const long *b,
                       __global long *out, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        long x = a[i], y = b[i];
        ulong ux = (ulong)x, uy = (ulong)y;
        int s = (int)(y & 63);
        __global long *o = out + 8 * i;
        o[0] = (long)(ux + uy);
        o[1] = (long)(ux - uy);
        o[2] = (long)(ux * uy);
        o[3] = x >> s;
        o[4] = (long)(ux >> s);
        o[5] = (long)(ux << s);
        o[6] = (long)mul_hi(ux, uy);
        o[7] = (long)((ulong)max(x, y) - (ulong)(x < y) + (ulong)(ux > uy));
    }
}
