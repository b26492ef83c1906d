/*
 * gemm.cl -- general matrix multiply C = alpha * A * B + beta * C, single precision
 *            (PolyBench/GPU "GEMM", OpenCL version: one work-item per element of C, the
 *            accumulation done in place in global memory).
 *
 * Kernel:
 *   __kernel void gemm(__global float *a, __global float *b, __global float *c,
 *                      float alpha, float beta, int ni, int nj, int nk)
 *
 * A is ni x nk, B is nk x nj, C is ni x nj, all row-major. Work-item (j, i) computes
 *   c[i][j] = beta * c[i][j];  then for k = 0 .. nk-1:  c[i][j] += alpha * a[i][k] * b[k][j]
 * in that order (the product alpha * a[i][k] is formed first, as written).
 *
 * NDRange: 2-D, global = (nj, ni) each rounded up to a multiple of the local size,
 *          local = (32, 8) (PolyBench/GPU's DIM_LOCAL_WORK_GROUP_X/Y). Out-of-range
 *          work-items do nothing.
 *          Example: ni = 32, nj = 64, nk = 24 -> global (64, 32), local (32, 8).
 */

typedef float DATA_TYPE;

__kernel void gemm(__global DATA_TYPE *a, __global DATA_TYPE *b, __global DATA_TYPE *c,
                   DATA_TYPE alpha, DATA_TYPE beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < ni) && (j < nj)) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++)
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
}
