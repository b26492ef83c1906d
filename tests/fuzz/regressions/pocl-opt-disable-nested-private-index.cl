#pragma OPENCL FP_CONTRACT OFF


__kernel void fz2262(__global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    ulong v1 = 1UL;
    ushort a8[4] = {(ushort)(((ushort)((uint)(((ushort)0)) - (uint)(((ushort)1))))), (ushort)(((ushort)0)), (ushort)(((ushort)0)), (ushort)(((ushort)0))};
    if (((int)((1u) > (((uint)(a8[(uint)(((uchar)(a8[(uint)(((uchar)mul_hi(convert_uchar_sat(gid), convert_uchar_sat(a8[(uint)(((int)abs_diff((-2147483647 - 1), 0))) % 4u])))) % 4u]))) % 4u])))))) {
    } else {
        v1 = 0UL;
    }
    out[gid * 1u + 0u] = (ulong)(v1);
}
