/*
 * vecadd.cl -- element-wise integer vector addition (the "hello world" of GPGPU benchmarks).
 *
 * Kernel:
 *   __kernel void vecadd(__global const int *a, __global const int *b, __global int *c, int n)
 *
 * Computes c[i] = a[i] + b[i] for 0 <= i < n (32-bit wrap-around).
 *
 * NDRange: 1-D, global = n rounded up to a multiple of the local size, local = 64
 *          (one wavefront per workgroup). Work-items with i >= n do nothing, so any n works.
 *          Example: n = 1000 -> global 1024, local 64.
 *
 * SI features: global loads/stores (MUBUF addr64), integer add, one EXEC-masked branch.
 */

__kernel void vecadd(__global const int *a, __global const int *b, __global int *c, int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
