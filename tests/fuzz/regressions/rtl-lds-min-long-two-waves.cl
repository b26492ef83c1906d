#pragma OPENCL FP_CONTRACT OFF


__kernel void fz110(__global ulong *out) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    __local long lm[96];
    int v1 = 0;
    long v7 = 0L;
    lm[lid] = (long)(((long)(lid)));
    barrier(CLK_LOCAL_MEM_FENCE);
    v1 = (int)((long)(((long)(v1)) ^ (lm[(lid + 1u) % 96u])));
    barrier(CLK_LOCAL_MEM_FENCE);
    lm[lid] = (long)(((long)((ulong)(((long)(v1))) - (ulong)(1L))));
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 64u; s > 0; s >>= 1) {
        if (lid < s && lid + s < 96u) lm[lid] = min(lm[lid], lm[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    v7 = (long)(min((long)(v7), lm[0]));
    barrier(CLK_LOCAL_MEM_FENCE);
    out[gid * 1u + 0u] = (ulong)(v7);
}
