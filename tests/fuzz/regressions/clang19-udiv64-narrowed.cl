#pragma OPENCL FP_CONTRACT OFF

static ulong fz_div_ulong(ulong a, ulong b) { return (b == 0) ? a : (ulong)(a / b); }

__kernel void fz227(__global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    uint v2 = gid;
    ulong v5 = ((ulong)(v2));
    ulong v6 = 1UL;
    v6 = fz_div_ulong(18446744073709551614UL, v5);
    out[gid * 1u + 0u] = (ulong)(v6);
}
