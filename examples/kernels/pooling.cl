/*
 * pooling.cl -- 2 x 2 pooling with stride 2 on an integer feature map: max, median and
 *               average pooling, one kernel each (the three pooling benchmarks of the
 *               SCRATCH / MIAOW2.0 paper).
 *
 * Kernels (row-major in_width x in_height input; output ow x oh with ow = in_width / 2,
 *          oh = in_height / 2, an odd last row/column is dropped):
 *   __kernel void maxpool2x2   (__global const int *in, __global int *out,
 *                               int in_width, int in_height)
 *   __kernel void medianpool2x2(__global const int *in, __global int *out,
 *                               int in_width, int in_height)
 *   __kernel void avgpool2x2   (__global const int *in, __global int *out,
 *                               int in_width, int in_height)
 *
 * For output pixel (ox, oy) the window is a = in[2oy][2ox], b = in[2oy][2ox+1],
 * c = in[2oy+1][2ox], d = in[2oy+1][2ox+1], and out[oy * ow + ox] is
 *   maxpool2x2:    max(a, b, c, d)
 *   medianpool2x2: (m1 + m2) / 2, where m1 <= m2 are the two middle values of the sorted
 *                  window (m1 = max(min(a,b), min(c,d)), m2 = min(max(a,b), max(c,d)));
 *                  C integer division, i.e. truncated toward zero
 *   avgpool2x2:    (a + b + c + d) / 4, C integer division (truncated toward zero)
 *
 * NDRange: 2-D, global = (ow, oh) each rounded up to a multiple of the local size,
 *          local = (8, 8) (one wavefront). Out-of-range work-items do nothing.
 *          Example: 64 x 64 input -> 32 x 32 output, global (32, 32), local (8, 8).
 *
 * SI features: integer min/max (v_max_i32 / v_min_i32, v_max3_i32), shift/add sequences for
 *              the signed divisions, 8-byte buffer loads (buffer_load_dwordx2, only 4-byte
 *              aligned); no multiplies beyond the index arithmetic.
 */

__kernel void maxpool2x2(__global const int *in, __global int *out,
                         int in_width, int in_height)
{
    int ox = get_global_id(0);
    int oy = get_global_id(1);
    int ow = in_width / 2;
    int oh = in_height / 2;
    if (ox >= ow || oy >= oh)
        return;

    int i = (2 * oy) * in_width + 2 * ox;
    int a = in[i], b = in[i + 1];
    int c = in[i + in_width], d = in[i + in_width + 1];
    out[oy * ow + ox] = max(max(a, b), max(c, d));
}

__kernel void medianpool2x2(__global const int *in, __global int *out,
                            int in_width, int in_height)
{
    int ox = get_global_id(0);
    int oy = get_global_id(1);
    int ow = in_width / 2;
    int oh = in_height / 2;
    if (ox >= ow || oy >= oh)
        return;

    int i = (2 * oy) * in_width + 2 * ox;
    int a = in[i], b = in[i + 1];
    int c = in[i + in_width], d = in[i + in_width + 1];
    /* Partial sorting network: the two middle elements of {a, b, c, d}. */
    int m1 = max(min(a, b), min(c, d));
    int m2 = min(max(a, b), max(c, d));
    out[oy * ow + ox] = (m1 + m2) / 2;
}

__kernel void avgpool2x2(__global const int *in, __global int *out,
                         int in_width, int in_height)
{
    int ox = get_global_id(0);
    int oy = get_global_id(1);
    int ow = in_width / 2;
    int oh = in_height / 2;
    if (ox >= ow || oy >= oh)
        return;

    int i = (2 * oy) * in_width + 2 * ox;
    int a = in[i], b = in[i + 1];
    int c = in[i + in_width], d = in[i + in_width + 1];
    out[oy * ow + ox] = (a + b + c + d) / 4;
}
