/*
 * histogram.cl -- 32-bit histograms with atomics (the global-atomic version every GPU tutorial
 *                 starts with, and the AMD APP SDK / CUDA-samples "histogram256" scheme with
 *                 per-workgroup sub-histograms in __local memory).
 *
 * Kernels:
 *   __kernel void histogram_global(__global const uint *data, __global uint *hist,
 *                                  __global uint *total, int n, uint nbins)
 *       Grid-stride loop over data[0 .. n-1]: for every element v,
 *         atomic_inc(&hist[v % nbins]);  atomic_add(total, v & 0xFF);
 *       hist (nbins words) and total (1 word) must be zeroed by the host.
 *   __kernel void histogram_local(__global const uint *data, __global uint *hist, int n)
 *       256 bins of the low byte of each element: every workgroup counts its grid-stride share
 *       into a __local uint[256] with atomic_inc, then adds its sub-histogram to hist with
 *       atomic_add (hist zeroed by the host). Works for any local size.
 *
 * NDRange (both): 1-D, any global size (grid-stride loop), local = 64.
 *          Example: n = 1536 -> global 256, local 64 (each work-item sees 6 elements).
 *
 * Results are independent of the order in which the atomics happen.
 *
 * SI features: atomic_inc compiles to buffer_atomic_add / ds_add_u32 of 1. LLVM's atomic
 *              optimizer turns the uniform-address atomic_add(total, ...) into a loop over the
 *              active lanes (s_ff1_i32_b64, v_readlane_b32, s_add_i32) and one
 *              buffer_atomic_add issued by the first lane (v_mbcnt_lo/hi); buffer_wbinvl1.
 */

__kernel void histogram_global(__global const uint *data, __global uint *hist,
                               __global uint *total, int n, uint nbins)
{
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        uint v = data[i];
        atomic_inc(&hist[v % nbins]);
        atomic_add(total, v & 0xFFu);
    }
}

#define NBINS_LOCAL 256

__kernel void histogram_local(__global const uint *data, __global uint *hist, int n)
{
    __local uint sub[NBINS_LOCAL];
    int lid = get_local_id(0);
    int lsize = get_local_size(0);

    for (int b = lid; b < NBINS_LOCAL; b += lsize)
        sub[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&sub[data[i] & 0xFFu]);
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int b = lid; b < NBINS_LOCAL; b += lsize) {
        uint count = sub[b];
        if (count != 0)
            atomic_add(&hist[b], count);
    }
}
