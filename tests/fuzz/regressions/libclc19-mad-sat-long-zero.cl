#pragma OPENCL FP_CONTRACT OFF


__kernel void fz8(__global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    long v3 = ((long)mad_sat(0L, (-8394451106720641568L), 1L));
    short a8[7] = {(short)(((short)0)), (short)(((short)0)), (short)(((short)0)), (short)(((short)0)), (short)(((short)0)), (short)(((short)(v3))), (short)(((short)0))};
    out[gid * 1u + 0u] = (ulong)(a8[5]);
}
