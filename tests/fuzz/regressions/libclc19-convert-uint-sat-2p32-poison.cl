#pragma OPENCL FP_CONTRACT OFF


__kernel void fz389(__global const long *in0, __global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    short v5 = convert_short_sat_rte((isnan(0.0f) ? 0.0f : (0.0f)));
    float v8 = 0x1.0000000000000p+32f;
    uchar a10[6] = {(uchar)(((uchar)0)), (uchar)(((uchar)(in0[(uint)(((short)(in0[(uint)(convert_uint_sat((isnan(v8) ? 0.0f : (v8)))) % 16u]))) % 16u]))), (uchar)(((uchar)0)), (uchar)(((uchar)0)), (uchar)(((uchar)0)), (uchar)(((uchar)0))};
    out[gid * 1u + 0u] = (ulong)(a10[1]);
}
