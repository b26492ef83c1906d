#pragma OPENCL FP_CONTRACT OFF


__kernel void fz3771(__global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    int v1 = ((int)((uint)(((int)(lid))) - (uint)(2097152)));
    long v2 = ((long)mul_hi(convert_long_sat(v1), ((long)(v1))));
    out[gid * 1u + 0u] = (ulong)(v2);
}
