#pragma OPENCL FP_CONTRACT OFF


__kernel void fz164(__global const float *in0, __global ulong *out, __global float *fout) {
    const uint gid = (uint)(get_global_id(1) * get_global_size(0) + get_global_id(0));
    const uint lid = (uint)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const uint grp = (uint)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    float v2 = 0.0f;
    float v3 = convert_float_rtp(1u);
    float v4 = 0.0f;
    v3 = fmod(v3, 0.0f);
    v2 = in0[(uint)(convert_int_sat_rtz(v3)) % 64u];
    v4 = fmod(0.0f, v2);
    fout[gid * 1u + 0u] = v4;
}
