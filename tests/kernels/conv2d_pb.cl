/*
 * conv2d_pb.cl -- 3 x 3 2-D convolution with fixed coefficients, single precision
 *                 (PolyBench/GPU "2DCONV").
 *
 * Kernel:
 *   __kernel void Convolution2D_kernel(__global float *A, __global float *B, int ni, int nj)
 *
 * A and B are ni x nj, row-major. For every interior element (0 < i < ni-1, 0 < j < nj-1):
 *   B[i][j] = c11*A[i-1][j-1] + c21*A[i-1][j] + c31*A[i-1][j+1]
 *           + c12*A[i  ][j-1] + c22*A[i  ][j] + c32*A[i  ][j+1]
 *           + c13*A[i+1][j-1] + c23*A[i+1][j] + c33*A[i+1][j+1]
 * summed left to right, with the PolyBench coefficients below. Border elements of B are not
 * written.
 *
 * NDRange: 2-D, global = (nj, ni) each rounded up to a multiple of the local size,
 *          local = (32, 8). Work-item (j, i) handles B[i][j].
 *          Example: ni = 40, nj = 60 -> global (64, 40), local (32, 8).
 */

typedef float DATA_TYPE;

__kernel void Convolution2D_kernel(__global DATA_TYPE *A, __global DATA_TYPE *B, int ni, int nj)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    DATA_TYPE c11 = +0.2f, c21 = +0.5f, c31 = -0.8f;
    DATA_TYPE c12 = -0.3f, c22 = +0.6f, c32 = -0.9f;
    DATA_TYPE c13 = +0.4f, c23 = +0.7f, c33 = +0.10f;

    if ((i < ni - 1) && (j < nj - 1) && (i > 0) && (j > 0)) {
        B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c21 * A[(i - 1) * nj + (j + 0)]
                      + c31 * A[(i - 1) * nj + (j + 1)]
                      + c12 * A[(i + 0) * nj + (j - 1)] + c22 * A[(i + 0) * nj + (j + 0)]
                      + c32 * A[(i + 0) * nj + (j + 1)]
                      + c13 * A[(i + 1) * nj + (j - 1)] + c23 * A[(i + 1) * nj + (j + 0)]
                      + c33 * A[(i + 1) * nj + (j + 1)];
    }
}
