/*
 * mvt.cl -- matrix-vector product and transpose, single precision (PolyBench/GPU "MVT").
 *
 * Kernels (a is n x n, row-major):
 *   __kernel void mvt_kernel1(__global float *a, __global float *x1, __global float *y_1, int n)
 *       x1[i] += sum_{j} a[i][j] * y_1[j]      (accumulated into x1[i] in order j = 0, 1, ...)
 *   __kernel void mvt_kernel2(__global float *a, __global float *x2, __global float *y_2, int n)
 *       x2[i] += sum_{j} a[j][i] * y_2[j]      (column access: strided loads)
 *
 * The two kernels are independent. x1 and x2 hold initial values that are added to.
 * NDRange (both): 1-D, global = n rounded up to a multiple of 64, local = 64
 *          (PolyBench/GPU uses 256). Work-items with i >= n do nothing.
 *          Example: n = 100 -> global 128, local 64.
 */

typedef float DATA_TYPE;

__kernel void mvt_kernel1(__global DATA_TYPE *a, __global DATA_TYPE *x1, __global DATA_TYPE *y_1,
                          int n)
{
    int i = get_global_id(0);

    if (i < n) {
        for (int j = 0; j < n; j++)
            x1[i] += a[i * n + j] * y_1[j];
    }
}

__kernel void mvt_kernel2(__global DATA_TYPE *a, __global DATA_TYPE *x2, __global DATA_TYPE *y_2,
                          int n)
{
    int i = get_global_id(0);

    if (i < n) {
        for (int j = 0; j < n; j++)
            x2[i] += a[j * n + i] * y_2[j];
    }
}
