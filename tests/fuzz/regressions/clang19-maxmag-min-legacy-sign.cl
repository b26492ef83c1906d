#pragma OPENCL FP_CONTRACT OFF

static float fz_fin_uint(float x) { return isnan(x) ? 0.0f : fmax(fmin(x, 0x1.fffffe0000000p+31f), 0.0f); }

__kernel void fz562(__global const ulong *in1, __global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    float v1 = (-39.0f);
    ulong a4[3] = {(ulong)(0UL), (ulong)(0UL), (ulong)(0UL)};
    v1 = (maxmag(v1, convert_float_rte(in1[(uint)(0UL) % 7u])) + 0.0f);
    a4[(uint)(((short)1)) % 3u] = (ulong)(((ulong)(convert_uint_sat_rtz(fz_fin_uint(v1)))));
    out[gid * 1u + 0u] = (ulong)(a4[1]);
}
