#pragma OPENCL FP_CONTRACT OFF


__kernel void fz236(__global ulong *out, __global float *fout) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    uint v1 = ((uint)(-(uint)(1u)));
    float v2 = convert_float_rtz(v1);
    fout[gid * 1u + 0u] = v2;
}
