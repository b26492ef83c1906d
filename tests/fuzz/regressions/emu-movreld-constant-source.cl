#pragma OPENCL FP_CONTRACT OFF

static long fz_mul_long(long a, long b) { return ((a > 0 && b > 0 && a > 9223372036854775807L / b) || (a > 0 && b <= 0 && b < (-9223372036854775807L - 1L) / a) || (a <= 0 && b > 0 && a < (-9223372036854775807L - 1L) / b) || (a <= 0 && b <= 0 && a != 0 && b < 9223372036854775807L / a)) ? a : (long)(a * b); }

__kernel void fz147(__global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    float v3 = 0.0f;
    long a7[7] = {(long)(0L), (long)(0L), (long)(0L), (long)(0L), (long)(0L), (long)(0L), (long)(0L)};
    v3 = 3.0f;
    a7[(uint)(((long)((ulong)(convert_long_sat_rte(76.0f)) + (ulong)(fz_mul_long((-513L), convert_long_sat_rtp(v3)))))) % 7u] = (long)(0L);
    out[gid * 1u + 0u] = (ulong)(a7[4]);
}
