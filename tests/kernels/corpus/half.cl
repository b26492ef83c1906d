/*
 * half.cl -- 16-bit floats through the load/store built-ins (no half arithmetic, which
 *            needs cl_khr_fp16): vload_half / vstore_half and their vector, aligned (vloada)
 *            and explicitly rounded (_rtz, _rtp, _rtn) forms.
 *
 * Kernels:
 *   half_scale(in, out, gain, n)     in, out: half[4 n] as ushort bits: vload_half4, times
 *                                    gain in float, vstore_half4 (round to nearest even).
 *   half_convert(f, h, back, n)      f: float[n]; h: half[4 n]: h[4i..4i+3] = f[i] stored
 *                                    with vstore_half, _rtz, _rtp, _rtn; back[i] = the four
 *                                    read back with vload_half summed in float, plus
 *                                    vloada_half2 of the first two.
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64.
 *
 * SI features: buffer_load_ushort / buffer_store_short, v_cvt_f32_f16 and v_cvt_f16_f32
 *              (nearest even), the directed roundings by libclc's integer code, the
 *              16-bit denormals kept (MODE 0xC0 flushes only f32).
 */

__kernel void half_scale(__global const half *in, __global half *out, float gain, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 v = vload_half4(i, in);
    vstore_half4(v * gain, i, out);
}

__kernel void half_convert(__global const float *f, __global half *h, __global float *back,
                           int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = f[i];
    vstore_half(x, 4 * i + 0, h);
    vstore_half_rtz(x, 4 * i + 1, h);
    vstore_half_rtp(x, 4 * i + 2, h);
    vstore_half_rtn(x, 4 * i + 3, h);
    float s = vload_half(4 * i + 0, h) + vload_half(4 * i + 1, h);
    float2 p = vloada_half2(2 * i + 1, h);
    back[i] = s + p.x * 2.0f - p.y;
}
