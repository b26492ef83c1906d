/*
 * vectors.cl -- float4 / int4 vector types as users write them: swizzles (.xyzw, .s0123,
 *               .wzyx, .lo/.hi, .even/.odd), component writes through swizzles, vector
 *               literals, vload4/vstore4 from scalar pointers (aligned and unaligned), select,
 *               relational results (-1 / 0), conversions and reinterpretations.
 *
 * Kernels:
 *   float4_ops(a, b, out, n)           a, b, out: float4[n]. Element-wise arithmetic with
 *                                      swizzled operands and swizzled stores.
 *   float_vload(in, out, n, shift)     in: float[4 n + shift + 3]; vload4 at 4 i (aligned) and
 *                                      at 4 i + shift (unaligned), .lo/.hi, .even/.odd,
 *                                      vstore4 into out (float[8 n]).
 *   int4_ops(a, b, out, mask, n)       a, b: int4[n], out: int4[4 n]. Integer vector
 *                                      arithmetic, shifts by a vector, compares, select,
 *                                      any/all, convert_float4/as_int4, vector min/max/clamp.
 *   wide_vectors(a, out, b, iout, n)   float8 and int16: .s76543210, .sfedcba9876543210,
 *                                      .lo/.hi/.even/.odd of 8 and 16 components, .sCDEF,
 *                                      vector literals built from smaller vectors.
 *   rgb_vec3(rgb, bgr, luma, a, b, c, d, n)  3-component vectors: vload3/vstore3 of uchar3
 *                                      (RGB -> BGR with .zyx), convert_float3, float3
 *                                      buffers (16-byte elements), cross and dot.
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64; every kernel checks i < n.
 *
 * SI features: vector types are scalarized by clang: buffer_load/store_dwordx4 (dwordx2 for
 *              halves), per-component VALU, v_cndmask for select.
 */

__kernel void float4_ops(__global const float4 *a, __global const float4 *b,
                         __global float4 *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = a[i];
    float4 q = b[i];
    float4 r = p * q.wzyx + (float4)(1.0f, -2.0f, 0.5f, 4.0f);
    r.xy = r.yx - p.zw;
    r.s23 = p.s01 * 2.0f + q.s32;
    r.w = r.x * q.y - r.z;
    float4 s = fmin(p, q) - fmax(p.yzwx, q.zwxy);
    out[i] = r + s.xxyy * s.zwzw;
}

__kernel void float_vload(__global const float *in, __global float *out, int n, int shift)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 v = vload4(i, in);
    float4 u = vload4(0, in + 4 * i + shift);
    float2 lo = v.lo, hi = v.hi;
    float2 ev = u.even, od = u.odd;
    float4 w = (float4)(lo * hi, ev - od);
    float4 z = (float4)(v.s3, u.s2, v.s1 + u.s0, w.s0 - w.s3);
    vstore4(w, 2 * i, out);
    vstore4(z.s3210, 2 * i + 1, out);
}

__kernel void int4_ops(__global const int4 *a, __global const int4 *b, __global int4 *out,
                       int mask, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int4 x = a[i];
    int4 y = b[i];
    int4 sh = y & (int4)(31, 15, 7, 3);
    int4 t = (x << sh) ^ (x.wzyx >> sh.yxwz);
    int4 c = x > y;                                  /* -1 where true, 0 where false */
    int4 m = select(y, x, c);                        /* max by hand */
    int4 k = clamp(x, min(y, 0), max(y, 0)) + (int4)(max(x.lo, y.hi), min(x.hi, y.lo));
    uint4 u = as_uint4(x) >> 28;
    int flags = any(x < 0) | (all(y > -100000) << 1) | (any(c.even) << 2) | (all(c.odd) << 3);
    int4 f = convert_int4(convert_float4(x >> 8) * 0.5f);
    out[4 * i + 0] = t + c;
    out[4 * i + 1] = m - k;
    out[4 * i + 2] = (int4)(flags, mask, i, -i) + as_int4(u) * (int4)(3, 5, 7, 9);
    out[4 * i + 3] = f + (x.s0123 & mask).s3012;
}

__kernel void wide_vectors(__global const float8 *a, __global float8 *out,
                           __global const int16 *b, __global int16 *iout, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float8 v = a[i];
    out[i] = v.s76543210 * (float8)(v.lo, v.hi.s3210) + v.even.s01230123;
    int16 x = b[i];
    iout[i] = x.sfedcba9876543210 + (int16)(x.lo.odd, x.hi.even, x.s0123, x.sCDEF) * 3;
}

__kernel void rgb_vec3(__global const uchar *rgb, __global uchar *bgr, __global float *luma,
                       __global const float3 *a, __global const float3 *b, __global float3 *c,
                       __global float *d, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uchar3 p = vload3(i, rgb);
    vstore3(p.zyx, i, bgr);
    float3 f = convert_float3(p) * (float3)(0.299f, 0.587f, 0.114f);
    luma[i] = f.x + f.y + f.z;
    float3 u = a[i], w = b[i];
    c[i] = cross(u, w);
    d[i] = dot(u, w);
}
