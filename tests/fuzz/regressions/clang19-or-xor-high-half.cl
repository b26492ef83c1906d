#pragma OPENCL FP_CONTRACT OFF


__kernel void fz90(__global const ulong *in2, __global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    uint v1 = 0u;
    ulong v5 = 0UL;
    v1 = lid;
    v5 = 18446744073709551602UL;
    v5 = ((ulong)((v5) ^ (((ulong)popcount(in2[(uint)(v1) % 100u])))));
    v5 = ((ulong)((v5) | (in2[(uint)(((ushort)0)) % 100u])));
    out[gid * 1u + 0u] = (ulong)(v5);
}
