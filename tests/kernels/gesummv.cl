/*
 * gesummv.cl -- scalar, vector and matrix multiplication y = alpha * A x + beta * B x,
 *               single precision (PolyBench/GPU "GESUMMV").
 *
 * Kernel:
 *   __kernel void gesummv_kernel(__global float *a, __global float *b, __global float *x,
 *                                __global float *y, __global float *tmp,
 *                                float alpha, float beta, int n)
 *
 * a and b are n x n, row-major. Work-item i (i < n) accumulates, in order j = 0 .. n-1,
 *   tmp[i] += a[i][j] * x[j];   y[i] += b[i][j] * x[j];
 * into the initial values of tmp[i] and y[i] (the host zeroes them), then
 *   y[i] = alpha * tmp[i] + beta * y[i].
 *
 * NDRange: 1-D, global = n rounded up to a multiple of 64, local = 64 (PolyBench/GPU: 256).
 *          Example: n = 100 -> global 128, local 64.
 */

typedef float DATA_TYPE;

__kernel void gesummv_kernel(__global DATA_TYPE *a, __global DATA_TYPE *b, __global DATA_TYPE *x,
                             __global DATA_TYPE *y, __global DATA_TYPE *tmp,
                             DATA_TYPE alpha, DATA_TYPE beta, int n)
{
    int i = get_global_id(0);

    if (i < n) {
        for (int j = 0; j < n; j++) {
            tmp[i] += a[i * n + j] * x[j];
            y[i] += b[i * n + j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}
