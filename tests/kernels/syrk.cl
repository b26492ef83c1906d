/*
 * syrk.cl -- symmetric rank-k update C = alpha * A A^T + beta * C, single precision
 *            (PolyBench/GPU "SYRK"; note the scalar arguments come first, as in the original).
 *
 * Kernel:
 *   __kernel void syrk_kernel(float alpha, float beta, __global float *a, __global float *c,
 *                             int m, int n)
 *
 * A is n x m, C is n x n, row-major. Work-item (j, i) (i, j < n) computes
 *   c[i][j] *= beta;  then for k = 0 .. m-1:  c[i][j] += alpha * a[i][k] * a[j][k]
 * (the whole square C, not only a triangle).
 *
 * Kernarg layout: alpha @0, beta @4, a @8, c @16, m @24, n @28 (pointers 8-aligned).
 * NDRange: 2-D, global = (n, n) each rounded up to a multiple of the local size,
 *          local = (32, 8). Example: n = 48, m = 20 -> global (64, 48), local (32, 8).
 */

typedef float DATA_TYPE;

__kernel void syrk_kernel(DATA_TYPE alpha, DATA_TYPE beta, __global DATA_TYPE *a,
                          __global DATA_TYPE *c, int m, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < n) && (j < n)) {
        c[i * n + j] *= beta;
        for (int k = 0; k < m; k++)
            c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
    }
}
