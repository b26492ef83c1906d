#pragma OPENCL FP_CONTRACT OFF


__kernel void fz221(__global const uint *in0, __global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    __local uchar lm[1];
    float v1 = 32.0f;
    float v4 = 0.0f;
    uchar v7 = ((uchar)0);
    ushort a8[6] = {(ushort)(((ushort)1)), (ushort)(((ushort)0)), (ushort)(((ushort)0)), (ushort)(((ushort)0)), (ushort)(((ushort)0)), (ushort)(((ushort)0))};
    v4 = convert_float(((ulong)(-(ulong)(((ulong)(in0[(uint)(((short)0)) % 100u]))))));
    lm[lid] = (uchar)(convert_uchar_sat(a8[(uint)(convert_int_sat(a8[(uint)(((char)(in0[(uint)(((uchar)(in0[(uint)(((long)(in0[(uint)(((ulong)((ulong)(convert_ulong_sat(v4)) - (ulong)(convert_ulong_sat_rtz(v1))))) % 100u]))) % 100u]))) % 100u]))) % 6u])) % 6u]));
    barrier(CLK_LOCAL_MEM_FENCE);
    v7 = (uchar)(max((uchar)(v7), lm[(lid + 16u) % 1u]));
    barrier(CLK_LOCAL_MEM_FENCE);
    out[gid * 1u + 0u] = (ulong)(v7);
}
