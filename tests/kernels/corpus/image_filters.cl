/*
 * image_filters.cl -- 8- and 16-bit image filters written the way image-processing tutorials
 *                     write them: neighbours addressed with negative offsets from the centre
 *                     pixel, borders skipped or clamped, 2-D launches padded to the workgroup.
 *
 * Kernels (all: row-major w x h images, global = (w, h) rounded up to the local size, every
 * work-item checks its (x, y) against the image first):
 *   sobel_uchar(in, out, w, h)        |gx| + |gy| of the 3x3 Sobel operator, saturated to 255,
 *                                     neighbours read as in[(y-1)*w + x-1] and friends; the
 *                                     one-pixel border of out is left untouched.
 *   box_blur_uchar(in, out, w, h)     3x3 mean (rounded) with clamp(x-1, 0, w-1) borders.
 *   erode_uchar(in, out, w, h, r)     min over a (2r+1)^2 window, borders clamped with max/min,
 *                                     the window size from a kernel argument.
 *   blur121_ushort(in, out, w, h)     3x3 binomial (1 2 1) blur of a 16-bit image, clamped
 *                                     borders, weights summed in a uint.
 *   laplace_ushort(in, out, w, h)     4 c - left - right - up - down on the flattened index
 *                                     (in[i - 1], in[i - w]), clamped to 0..65535, border
 *                                     pixels copied.
 *
 * SI features: clang folds the constant -1 (or -w ... ) into the base of the buffer resource:
 *              the V# base becomes the pointer minus 1 and the 48-bit address wraps back
 *              into the buffer (the regression sobel_uchar checks). buffer_load_ubyte /
 *              ushort, buffer_store_byte / short.
 */

__kernel void sobel_uchar(__global const uchar *in, __global uchar *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;

    int gx = -in[(y - 1) * w + x - 1] + in[(y - 1) * w + x + 1]
             - 2 * in[y * w + x - 1] + 2 * in[y * w + x + 1]
             - in[(y + 1) * w + x - 1] + in[(y + 1) * w + x + 1];
    int gy = -in[(y - 1) * w + x - 1] - 2 * in[(y - 1) * w + x] - in[(y - 1) * w + x + 1]
             + in[(y + 1) * w + x - 1] + 2 * in[(y + 1) * w + x] + in[(y + 1) * w + x + 1];
    uint mag = abs(gx) + abs(gy);
    out[y * w + x] = (uchar)min(mag, 255u);
}

__kernel void box_blur_uchar(__global const uchar *in, __global uchar *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;

    uint sum = 0;
    for (int dy = -1; dy <= 1; dy++) {
        int yy = clamp(y + dy, 0, h - 1);
        for (int dx = -1; dx <= 1; dx++) {
            int xx = clamp(x + dx, 0, w - 1);
            sum += in[yy * w + xx];
        }
    }
    out[y * w + x] = (uchar)((sum + 4) / 9);
}

__kernel void erode_uchar(__global const uchar *in, __global uchar *out, int w, int h, int r)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;

    uchar m = 255;
    for (int dy = -r; dy <= r; dy++) {
        int yy = min(max(y + dy, 0), h - 1);
        for (int dx = -r; dx <= r; dx++) {
            int xx = min(max(x + dx, 0), w - 1);
            m = min(m, in[yy * w + xx]);
        }
    }
    out[y * w + x] = m;
}

__kernel void blur121_ushort(__global const ushort *in, __global ushort *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;

    int xl = clamp(x - 1, 0, w - 1), xr = clamp(x + 1, 0, w - 1);
    int yu = clamp(y - 1, 0, h - 1), yd = clamp(y + 1, 0, h - 1);
    uint top = in[yu * w + xl] + 2u * in[yu * w + x] + in[yu * w + xr];
    uint mid = in[y * w + xl] + 2u * in[y * w + x] + in[y * w + xr];
    uint bot = in[yd * w + xl] + 2u * in[yd * w + x] + in[yd * w + xr];
    out[y * w + x] = (ushort)((top + 2u * mid + bot + 8u) >> 4);
}

__kernel void laplace_ushort(__global const ushort *in, __global ushort *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;

    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[i] = in[i];
        return;
    }
    int v = 4 * in[i] - in[i - 1] - in[i + 1] - in[i - w] - in[i + w];
    out[i] = (ushort)clamp(v, 0, 65535);
}
