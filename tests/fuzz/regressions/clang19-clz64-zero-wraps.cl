#pragma OPENCL FP_CONTRACT OFF


__kernel void fz405(__global const int *in2, __global ulong *out) {
    const uint gid = (uint)(get_global_id(1) * get_global_size(0) + get_global_id(0));
    const uint lid = (uint)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const uint grp = (uint)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    int v4 = 0;
    if (((int)((lid) > (grp)))) {
    } else {
        v4 = in2[(uint)(((ulong)max(((ulong)(lid)), ((ulong)clz(((ulong)(grp))))))) % 16u];
    }
    out[gid * 1u + 0u] = (ulong)(v4);
}
