#pragma OPENCL FP_CONTRACT OFF

static uint fz_div_uint(uint a, uint b) { return (b == 0) ? a : (uint)(a / b); }

__kernel void fz535(__global uint *gcnt, __global ulong *out) {
    const uint gid = (uint)(get_global_id(1) * get_global_size(0) + get_global_id(0));
    const uint lid = (uint)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const uint grp = (uint)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    short v1 = ((short)0);
    uint v2 = 0u;
    v1 = ((short)((uint)(((short)0)) - (uint)(select(((short)0), ((short)1), (short)(((int)((((uint)((lid) & (3u)))) < (1u))))))));
    v2 = ((uint)(((uchar)(lid))));
    v1 = ((short)((((short)(v2))) & (v1)));
    atomic_or(&gcnt[1], fz_div_uint(4294967294u, convert_uint_sat(v1)));
}
