#pragma OPENCL FP_CONTRACT OFF


__kernel void fz6333(__global long *scr, __global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    __local char lm[1];
    ushort v1 = ((ushort)((uint)(((ushort)65516)) - (uint)(((ushort)21620))));
    int v3 = ((int)((uint)(((int)(lid))) + (uint)(((int)(v1)))));
    int v4 = ((int)mad_sat((-1048576), ((int)((uint)(v3) + (uint)((-20)))), ((int)rotate(1, v3))));
    ulong v5 = convert_ulong_sat(scr[gid * 8u + (uint)(v4) % 8u]);
    out[gid * 9u + 4u] = (ulong)(v5);
}
