/*
 * many_args.cl -- long argument lists of mixed scalar sizes interleaved with pointers, as in
 *                 kernels ported from C functions: char, uchar, short, ushort, int, uint,
 *                 long, ulong, float and vector scalars, each at its natural alignment in the
 *                 kernel-argument segment.
 *
 * Kernels:
 *   mixed_args(c, a, s, l, fout, f, u, uc, lout, us, ul, n, c2, f2, sh2, iout)
 *       For i < n: iout[i] = a[i] * c + s + (int)uc + us + c2 + sh2 (int arithmetic),
 *       fout[i] = (float)a[i] * f + f2, lout[i] = l * a[i] + (long)(ul >> (i & 63)) +
 *       (long)u. 16 arguments, 5 of them pointers; c, uc, s, us, c2, sh2 are 1- and 2-byte
 *       scalars between 8-byte pointers and longs.
 *   vec_args(int4 iv, __global int4 *out, float2 fv, uchar4 cv, short2 sv, long lv, n)
 *       By-value vectors of several sizes: out[i] = iv * i + (int4)(fv.x, fv.y, cv.x + cv.w,
 *       sv.x - sv.y) + (int)lv.
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64.
 *
 * SI features: s_load_dword / dwordx2 / dwordx4 from the kernarg segment at the argument
 *              offsets; sub-dword arguments extracted with s_bfe_i32 / s_sext / s_and.
 */

__kernel void mixed_args(char c, __global const int *a, short s, long l, __global float *fout,
                         float f, uint u, uchar uc, __global long *lout, ushort us, ulong ul,
                         int n, char c2, float f2, short sh2, __global int *iout)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int x = a[i];
    iout[i] = x * c + s + (int)uc + us + c2 + sh2;
    fout[i] = (float)x * f + f2;
    lout[i] = l * x + (long)(ul >> (i & 63)) + (long)u;
}

__kernel void vec_args(int4 iv, __global int4 *out, float2 fv, uchar4 cv, short2 sv, long lv,
                       int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    out[i] = iv * i + (int4)((int)fv.x, (int)fv.y, cv.x + cv.w, sv.x - sv.y) + (int)lv;
}
