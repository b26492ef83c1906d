#pragma OPENCL FP_CONTRACT OFF


__kernel void fz3050(__global const uchar *in0, __global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    long v1 = ((long)((ulong)(0L) - (ulong)(((long)abs_diff((-4947961479887611841L), ((long)(in0[(uint)(((short)0)) % 33u])))))));
    v1 = ((long)mul_hi(v1, v1));
    out[gid * 1u + 0u] = (ulong)(v1);
}
