#pragma OPENCL FP_CONTRACT OFF

static long fz_mod_long(long a, long b) { return (b == 0 || (a == (-9223372036854775807L - 1L) && b == -1)) ? a : (long)(a % b); }

__kernel void fz2102(__global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    long v1 = 0L;
    short v2 = ((short)-14);
    uint v5 = ((uint)(v2));
    v1 = fz_mod_long(((long)(v5)), convert_long_sat(lid));
    out[gid * 1u + 0u] = (ulong)(v1);
}
