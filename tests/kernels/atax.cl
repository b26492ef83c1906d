/*
 * atax.cl -- y = A^T (A x), single precision (PolyBench/GPU "ATAX": matrix transpose and
 *            vector multiplication, two kernels).
 *
 * Kernels (A is nx x ny, row-major):
 *   __kernel void atax_kernel1(__global float *A, __global float *x, __global float *tmp,
 *                              int nx, int ny)
 *       tmp[i] = sum_{j = 0}^{ny-1} A[i][j] * x[j]          (accumulated into tmp[i], which
 *                                                            the host zeroes first)
 *       NDRange: 1-D, global = nx rounded up to a multiple of 64, local = 64.
 *   __kernel void atax_kernel2(__global float *A, __global float *y, __global float *tmp,
 *                              int nx, int ny)
 *       y[j] = sum_{i = 0}^{nx-1} A[i][j] * tmp[i]          (accumulated into y[j], zeroed)
 *       NDRange: 1-D, global = ny rounded up to a multiple of 64, local = 64.
 *
 * The host runs atax_kernel1 and then atax_kernel2 (the second reads tmp).
 * PolyBench/GPU uses a local size of 256; any size works, the kernels guard their index.
 * Example: nx = 96, ny = 80 -> kernel1 global 128, kernel2 global 128, local 64.
 */

typedef float DATA_TYPE;

__kernel void atax_kernel1(__global DATA_TYPE *A, __global DATA_TYPE *x, __global DATA_TYPE *tmp,
                           int nx, int ny)
{
    int i = get_global_id(0);

    if (i < nx) {
        for (int j = 0; j < ny; j++)
            tmp[i] += A[i * ny + j] * x[j];
    }
}

__kernel void atax_kernel2(__global DATA_TYPE *A, __global DATA_TYPE *y, __global DATA_TYPE *tmp,
                           int nx, int ny)
{
    int j = get_global_id(0);

    if (j < ny) {
        for (int i = 0; i < nx; i++)
            y[j] += A[i * ny + j] * tmp[i];
    }
}
