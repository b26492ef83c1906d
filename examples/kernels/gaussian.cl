/*
 * gaussian.cl -- Gaussian elimination, one elimination step per pair of launches
 *                (Rodinia "gaussian", kernels Fan1 and Fan2).
 *
 * Kernels (a: row-major size x size matrix, b: right-hand side of length size,
 *          m: size x size multiplier matrix, all float):
 *   __kernel void fan1(__global float *m, __global float *a, __global float *b,
 *                      int size, int t)
 *       For every row i = t + 1 + gid (gid < size - 1 - t):
 *           m[i * size + t] = a[i * size + t] / a[t * size + t]
 *       (b is unused; the argument list is Rodinia's).
 *       NDRange: 1-D, global = (size - 1 - t) rounded up to a multiple of 64 (or simply
 *       size rounded up), local = 64.
 *   __kernel void fan2(__global float *m, __global float *a, __global float *b,
 *                      int size, int t)
 *       For every row i = t + 1 + gx (gx < size - 1 - t) and column j = t + gy
 *       (gy < size - t):
 *           a[i * size + j] -= m[i * size + t] * a[t * size + j]
 *       and, by the work-items with gy = 0: b[i] -= m[i * size + t] * b[t].
 *       NDRange: 2-D, global = (size, size) each rounded up to a multiple of 8,
 *       local = (8, 8).
 *
 * The host reduces a to upper-triangular form with
 *     for (t = 0; t < size - 1; ++t) { fan1(m, a, b, size, t); fan2(m, a, b, size, t); }
 * (fan2 must see fan1's results: separate launches, in order) and then back-substitutes
 * on the CPU. No pivoting: a[t][t] must not become 0 (use a diagonally dominant matrix).
 * Example: size = 16 -> 15 steps; fan1 global 64 / local 64, fan2 global (16, 16) / local (8, 8).
 *
 * SI features: FP32 division (OpenCL's 2.5 ulp division: v_rcp_f32 + v_mul_f32, with a
 *              v_cmp_gt_f32 / v_cndmask pre-scaling for huge denominators), FP32 multiply-add
 *              (v_mad_f32), 2-D IDs, read-modify-write of global memory.
 */

__kernel void fan1(__global float *m, __global float *a, __global float *b,
                   int size, int t)
{
    int gid = get_global_id(0);
    if (gid < size - 1 - t) {
        int row = gid + t + 1;
        m[row * size + t] = a[row * size + t] / a[t * size + t];
    }
}

__kernel void fan2(__global float *m, __global float *a, __global float *b,
                   int size, int t)
{
    int gx = get_global_id(0);
    int gy = get_global_id(1);
    if (gx < size - 1 - t && gy < size - t) {
        int row = gx + 1 + t;
        int col = gy + t;
        a[row * size + col] -= m[row * size + t] * a[t * size + col];
        if (gy == 0)
            b[row] -= m[row * size + t] * b[t];
    }
}
