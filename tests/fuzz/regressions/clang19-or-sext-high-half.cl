#pragma OPENCL FP_CONTRACT OFF

static float fz_fin_int(float x) { return isnan(x) ? 0.0f : fmax(fmin(x, 0x1.fffffe0000000p+30f), (-0x1.0000000000000p+31f)); }

__kernel void fz223(__global const uint *in2, __global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    long v4 = (-1048576L);
    int v5 = ((int)mul_hi(convert_int_sat_rtz(fz_fin_int(0.0f)), ((int)upsample(((short)(in2[(uint)(0u) % 256u])), ((ushort)0)))));
    char v6 = convert_char_sat(v5);
    long v8 = v4;
    for (uint i11 = 0; i11 < 8u; i11++) {
        v8 = ((long)((v8) | (((long)(convert_int_sat_rtz(fz_fin_int(convert_float_rte(in2[(uint)(convert_short_sat(v6)) % 256u]))))))));
    }
    out[gid * 1u + 0u] = (ulong)(v8);
}
