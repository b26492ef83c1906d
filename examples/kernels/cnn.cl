/*
 * cnn.cl -- one fixed-point convolutional-neural-network layer: 3 x 3 convolution, bias,
 *           ReLU and 2 x 2 max pooling, fused in one kernel (the integer CNN benchmark of the
 *           SCRATCH / MIAOW2.0 paper, reduced to one input channel).
 *
 * Kernel:
 *   __kernel void cnn_layer(__global const int *in, __global int *out,
 *                           int width, int height, int nmaps)
 *
 * `in` is a row-major width x height single-channel image. The layer has nmaps output feature
 * maps (nmaps is clamped to CNN_MAX_MAPS = 8); map f uses the 3 x 3 filter cnn_weights[f]
 * and the bias cnn_bias[f], both program-scope __constant tables below, in Q4 fixed point
 * (16 = 1.0). With the "valid" convolution (no padding)
 *   conv_f(x, y) = (cnn_bias[f] + sum_{ky, kx in 0..2} cnn_weights[f][ky][kx]
 *                                                     * in[(y + ky) * width + x + kx]) >> 4
 * (arithmetic shift, i.e. floor division by 16) for 0 <= x < width - 2, 0 <= y < height - 2,
 * the output is ow x oh per map with ow = (width - 2) / 2, oh = (height - 2) / 2 and
 *   out[(f * oh + oy) * ow + ox] = max over dy, dx in {0, 1} of relu(conv_f(2ox + dx, 2oy + dy))
 * where relu(v) = max(v, 0). Each work-item loads its 4 x 4 input patch once and produces
 * one pooled pixel of every map.
 *
 * NDRange: 2-D, global = (ow, oh) each rounded up to a multiple of the local size,
 *          local = (8, 8) (one wavefront). Out-of-range work-items do nothing.
 *          Example: 34 x 34 image, nmaps = 8 -> 16 x 16 x 8 output, global (16, 16),
 *          local (8, 8).
 *
 * SI features: __constant data in .rodata addressed through R_AMDGPU_ABS32_LO/HI
 *              relocations (the loader must patch them) and read with scalar loads
 *              (s_load_dwordx8 / s_load_dword) at a uniform, loop-carried index; 16-byte
 *              buffer loads of the patch rows; integer multiply-add, arithmetic shift,
 *              v_max_i32 / v_max3_i32 for ReLU and pooling.
 */

#define CNN_MAX_MAPS 8
#define CNN_SHIFT 4

__constant int cnn_weights[CNN_MAX_MAPS][3][3] = {
    { {   0,   0,   0 }, {   0,  16,   0 }, {   0,   0,   0 } },  /* identity      */
    { {   2,   2,   2 }, {   2,   2,   2 }, {   2,   2,   2 } },  /* box blur      */
    { { -16,   0,  16 }, { -32,   0,  32 }, { -16,   0,  16 } },  /* Sobel x       */
    { { -16, -32, -16 }, {   0,   0,   0 }, {  16,  32,  16 } },  /* Sobel y       */
    { {   0,  16,   0 }, {  16, -64,  16 }, {   0,  16,   0 } },  /* Laplacian     */
    { {   0, -16,   0 }, { -16,  80, -16 }, {   0, -16,   0 } },  /* sharpen       */
    { { -32, -16,   0 }, { -16,  16,  16 }, {   0,  16,  32 } },  /* emboss        */
    { {   1,   2,   1 }, {   2,   4,   2 }, {   1,   2,   1 } },  /* Gaussian blur */
};

__constant int cnn_bias[CNN_MAX_MAPS] = { 0, -8, 4, 4, 0, -16, 8, 2 };

__kernel void cnn_layer(__global const int *in, __global int *out,
                        int width, int height, int nmaps)
{
    int ox = get_global_id(0);
    int oy = get_global_id(1);
    int ow = (width - 2) / 2;
    int oh = (height - 2) / 2;
    if (ox >= ow || oy >= oh)
        return;

    /* The 4 x 4 input patch covering the four 3 x 3 windows of this pooled pixel. */
    int patch[4][4];
    int base = (2 * oy) * width + 2 * ox;
    for (int py = 0; py < 4; ++py)
        for (int px = 0; px < 4; ++px)
            patch[py][px] = in[base + py * width + px];

    if (nmaps > CNN_MAX_MAPS)
        nmaps = CNN_MAX_MAPS;
    for (int f = 0; f < nmaps; ++f) {
        int pooled = 0;                     /* ReLU outputs are >= 0 */
        for (int dy = 0; dy < 2; ++dy) {
            for (int dx = 0; dx < 2; ++dx) {
                int acc = cnn_bias[f];
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx)
                        acc += cnn_weights[f][ky][kx] * patch[dy + ky][dx + kx];
                int act = max(acc >> CNN_SHIFT, 0);     /* ReLU */
                pooled = max(pooled, act);              /* 2 x 2 max pooling */
            }
        }
        out[(f * oh + oy) * ow + ox] = pooled;
    }
}
