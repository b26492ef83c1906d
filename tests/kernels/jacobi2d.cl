/*
 * jacobi2d.cl -- 2-D Jacobi stencil, single precision (PolyBench/GPU "JACOBI2D": one time
 *                step is two launches, the stencil and the copy back).
 *
 * Kernels (A and B are n x n, row-major):
 *   __kernel void runJacobi2D_kernel1(__global float *A, __global float *B, int n)
 *       For interior points (1 <= i, j < n-1):
 *         B[i][j] = 0.2f * (A[i][j] + A[i][j-1] + A[i][j+1] + A[i+1][j] + A[i-1][j])
 *       (the five terms summed left to right, then scaled).
 *   __kernel void runJacobi2D_kernel2(__global float *A, __global float *B, int n)
 *       For interior points: A[i][j] = B[i][j].
 *
 * The host runs, for t = 0 .. tsteps-1: kernel1 then kernel2.
 * NDRange (both): 2-D, global = (n, n) each rounded up to a multiple of the local size,
 *          local = (32, 8). Work-item (j, i) handles element (i, j).
 *          Example: n = 40, 4 steps -> global (64, 40), local (32, 8), 8 launches.
 */

typedef float DATA_TYPE;

__kernel void runJacobi2D_kernel1(__global DATA_TYPE *A, __global DATA_TYPE *B, int n)
{
    int i = get_global_id(1);
    int j = get_global_id(0);

    if ((i >= 1) && (i < (n - 1)) && (j >= 1) && (j < (n - 1)))
        B[i * n + j] = 0.2f * (A[i * n + j] + A[i * n + (j - 1)] + A[i * n + (1 + j)]
                               + A[(1 + i) * n + j] + A[(i - 1) * n + j]);
}

__kernel void runJacobi2D_kernel2(__global DATA_TYPE *A, __global DATA_TYPE *B, int n)
{
    int i = get_global_id(1);
    int j = get_global_id(0);

    if ((i >= 1) && (i < (n - 1)) && (j >= 1) && (j < (n - 1)))
        A[i * n + j] = B[i * n + j];
}
