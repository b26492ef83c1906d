/*
 * matadd.cl -- element-wise matrix addition, integer and single-precision float
 *              (the "matrix addition" benchmark of the SCRATCH / MIAOW2.0 paper, one kernel
 *              per data type so the integer one needs no FP unit).
 *
 * Kernels (row-major width x height matrices, element (x, y) at index y * width + x):
 *   __kernel void matadd_int  (__global const int   *a, __global const int   *b,
 *                              __global int   *c, int width, int height)
 *   __kernel void matadd_float(__global const float *a, __global const float *b,
 *                              __global float *c, int width, int height)
 *
 * Computes c[y][x] = a[y][x] + b[y][x].
 *
 * NDRange: 2-D, global = (width, height) each rounded up to a multiple of the local size,
 *          local = (16, 16) (256 work-items, 4 wavefronts). Out-of-range work-items do nothing.
 *          Example: 64 x 48 -> global (64, 48), local (16, 16).
 *
 * SI features: 2-D work-item IDs (v0/v1, workgroup id x/y), integer multiply for the index,
 *              v_add_i32 (int) or v_add_f32 (float).
 */

__kernel void matadd_int(__global const int *a, __global const int *b,
                         __global int *c, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        int i = y * width + x;
        c[i] = a[i] + b[i];
    }
}

__kernel void matadd_float(__global const float *a, __global const float *b,
                           __global float *c, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        int i = y * width + x;
        c[i] = a[i] + b[i];
    }
}
