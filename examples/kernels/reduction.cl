/*
 * reduction.cl -- parallel sum reduction in __local memory (AMD APP SDK Reduction,
 *                 NVIDIA "reduction" with sequential addressing).
 *
 * Kernel:
 *   __kernel void reduce_sum(__global const int *in, __global int *partial,
 *                            __local int *scratch, int n)
 *
 * Each workgroup g sums the elements in[g * L .. g * L + L - 1] that are < n (L = local size)
 * and writes the result to partial[g]. The host (or a second launch over `partial`) adds up
 * the get_num_groups(0) partial sums. Sums wrap around modulo 2^32.
 * The tree reduction halves the number of active work-items each round, with a barrier
 * after every round.
 *
 * NDRange: 1-D, global = n rounded up to a multiple of the local size, local = L where L is
 *          a power of two (e.g. 256 = 4 wavefronts, or 64). `scratch` is a dynamic __local
 *          buffer of L * sizeof(int) bytes (clSetKernelArg(k, 2, L * 4, NULL)).
 *          Example: n = 1000, L = 256 -> global 1024, 4 workgroups, partial[0..3].
 *
 * SI features: dynamic LDS (a __local pointer argument = a 4-byte LDS address in the
 *              kernarg), ds_read/ds_write, s_barrier inside a loop, get_local_size
 *              (dispatch packet read), a shrinking active mask.
 */

__kernel void reduce_sum(__global const int *in, __global int *partial,
                         __local int *scratch, int n)
{
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    int lsize = get_local_size(0);

    scratch[lid] = (gid < n) ? in[gid] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int s = lsize / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
