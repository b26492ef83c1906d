/*
 * conv2d.cl -- 2-D convolution of an image with a small square filter, borders clamped
 *              (AMD APP SDK SimpleConvolution; the "2D convolution" benchmark of the SCRATCH
 *              paper in its integer and single-precision float versions).
 *
 * Kernels (row-major width x height images, pixel (x, y) at y * width + x;
 *          fsize x fsize row-major filter, fsize odd, e.g. 3 or 5):
 *   __kernel void conv2d_int  (__global const int   *in, __global const int   *filter,
 *                              __global int   *out, int width, int height, int fsize)
 *   __kernel void conv2d_float(__global const float *in, __global const float *filter,
 *                              __global float *out, int width, int height, int fsize)
 *
 * Computes, with r = fsize / 2,
 *   out[y][x] = sum_{fy, fx in [0, fsize)} filter[fy][fx] * in[cy][cx],
 *   cy = clamp(y + fy - r, 0, height - 1), cx = clamp(x + fx - r, 0, width - 1)
 * i.e. a correlation (the filter is not flipped, as in the SDK), with pixels outside the
 * image replaced by the nearest edge pixel. Integer sums wrap around modulo 2^32; the float
 * sum is accumulated in the loop order above (fy outer, fx inner).
 *
 * NDRange: 2-D, global = (width, height) each rounded up to a multiple of the local size,
 *          local = (8, 8) (one wavefront). Out-of-range work-items do nothing.
 *          Example: 32 x 32 image, 3 x 3 filter -> global (32, 32), local (8, 8).
 *
 * SI features: nested loops with a runtime trip count, integer min/max (clamp), integer
 *              multiply (int) or FP32 multiply-add (float).
 */

__kernel void conv2d_int(__global const int *in, __global const int *filter,
                         __global int *out, int width, int height, int fsize)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    int r = fsize / 2;
    int sum = 0;
    for (int fy = 0; fy < fsize; ++fy) {
        int cy = clamp(y + fy - r, 0, height - 1);
        for (int fx = 0; fx < fsize; ++fx) {
            int cx = clamp(x + fx - r, 0, width - 1);
            sum += filter[fy * fsize + fx] * in[cy * width + cx];
        }
    }
    out[y * width + x] = sum;
}

__kernel void conv2d_float(__global const float *in, __global const float *filter,
                           __global float *out, int width, int height, int fsize)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    int r = fsize / 2;
    float sum = 0.0f;
    for (int fy = 0; fy < fsize; ++fy) {
        int cy = clamp(y + fy - r, 0, height - 1);
        for (int fx = 0; fx < fsize; ++fx) {
            int cx = clamp(x + fx - r, 0, width - 1);
            sum += filter[fy * fsize + fx] * in[cy * width + cx];
        }
    }
    out[y * width + x] = sum;
}
