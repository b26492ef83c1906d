/*
 * matmul.cl -- dense matrix multiplication C = A * B, integer and single-precision float.
 *
 * All matrices are row-major: A is M x K, B is K x N, C is M x N;
 * element (row r, column c) of a matrix with `cols` columns is at index r * cols + c.
 *
 * Kernels:
 *   __kernel void matmul_int  (__global const int   *a, __global const int   *b,
 *                              __global int   *c, int m, int n, int k)
 *   __kernel void matmul_float(__global const float *a, __global const float *b,
 *                              __global float *c, int m, int n, int k)
 *       Straightforward version: one work-item per element of C, inner product over k
 *       read directly from global memory (integer results wrap around modulo 2^32).
 *       NDRange: 2-D, global = (n, m) each rounded up to a multiple of the local size,
 *       local = (8, 8) (one wavefront). Work-item (x, y) computes C[y][x]; out-of-range
 *       work-items do nothing. Example: 32 x 32 x 32 -> global (32, 32), local (8, 8).
 *
 *   __kernel void matmul_float_tiled(__global const float *a, __global const float *b,
 *                                    __global float *c, int m, int n, int k)
 *       Same result as matmul_float, but A and B are staged through 16 x 16 __local tiles
 *       with barriers between phases (the classic shared-memory matrix multiply of the
 *       NVIDIA programming guide / AMD APP SDK MatrixMultiplication). Any m, n, k work
 *       (tiles are zero-padded at the edges).
 *       NDRange: 2-D, global = (n, m) rounded up to multiples of 16, local = (16, 16)
 *       -- the local size MUST be exactly 16 x 16.
 *       Example: m = n = k = 32 -> global (32, 32), local (16, 16), 4 workgroups.
 *
 * SI features: integer multiply (v_mul_lo_u32) and FP32 multiply-add (v_mac_f32), loops with
 *              uniform trip counts; the tiled kernel adds static LDS (2 KiB), ds_write_b32,
 *              ds_read2_b32 and s_barrier across 4 wavefronts inside a loop.
 */

__kernel void matmul_int(__global const int *a, __global const int *b,
                         __global int *c, int m, int n, int k)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row < m && col < n) {
        int sum = 0;
        for (int i = 0; i < k; ++i)
            sum += a[row * k + i] * b[i * n + col];
        c[row * n + col] = sum;
    }
}

__kernel void matmul_float(__global const float *a, __global const float *b,
                           __global float *c, int m, int n, int k)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int i = 0; i < k; ++i)
            sum += a[row * k + i] * b[i * n + col];
        c[row * n + col] = sum;
    }
}

#define MM_TILE 16

__kernel void matmul_float_tiled(__global const float *a, __global const float *b,
                                 __global float *c, int m, int n, int k)
{
    __local float ta[MM_TILE][MM_TILE];
    __local float tb[MM_TILE][MM_TILE];

    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int col = get_group_id(0) * MM_TILE + tx;
    int row = get_group_id(1) * MM_TILE + ty;

    float sum = 0.0f;
    for (int t = 0; t < k; t += MM_TILE) {
        /* Each work-item loads one element of the A tile and one of the B tile. */
        int ac = t + tx;
        int br = t + ty;
        ta[ty][tx] = (row < m && ac < k) ? a[row * k + ac] : 0.0f;
        tb[ty][tx] = (br < k && col < n) ? b[br * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int i = 0; i < MM_TILE; ++i)
            sum += ta[ty][i] * tb[i][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n)
        c[row * n + col] = sum;
}
