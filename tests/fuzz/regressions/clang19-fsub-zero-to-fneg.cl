#pragma OPENCL FP_CONTRACT OFF


__kernel void fz2090(__global ulong *out, __global float *fout) {
    const uint gid = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    const uint grp = (uint)get_group_id(0);
    float v9 = 0.0f;
    v9 = copysign(convert_float(1u), (isnan(((float)((((float)((0.0f) - (convert_float_rte(gid))))) * (0.0f)))) ? 1.0f : (((float)((((float)((0.0f) - (convert_float_rte(gid))))) * (0.0f))))));
    fout[gid * 1u + 0u] = v9;
}
