/*
 * subword.cl -- 8- and 16-bit buffers: RGBA -> grey conversion of an 8-bit image (the
 *               standard first image-processing kernel) and mixed char/short/uchar arithmetic.
 *
 * Kernels:
 *   __kernel void rgba_to_grey(__global const uchar *rgba, __global uchar *grey, int npixels)
 *       grey[p] = (77 * R + 150 * G + 29 * B + 128) >> 8 with R, G, B = rgba[4p + 0, 1, 2]
 *       (alpha ignored). One byte is stored per work-item, so neighbouring work-items
 *       write neighbouring bytes of the same dword.
 *   __kernel void mix_small(__global const char *c, __global const short *s,
 *                           __global const uchar *u, __global short *out16,
 *                           __global char *out8, __global uchar *outu, int n)
 *       out16[i] = (short)(s[i] * 3 - c[i])            (int arithmetic, truncated to 16 bits)
 *       out8[i]  = (char)(c[i] >> 1) ^ (char)u[i]      (arithmetic shift of a signed char)
 *       outu[i]  = add_sat(u[i], (uchar)(c[i] & 0x7F)) (saturating 8-bit add)
 *
 * NDRange (both): 1-D, global = count rounded up to a multiple of 64, local = 64.
 *          Example: 1000 pixels -> global 1024, local 64.
 *
 * SI features: buffer_load_ubyte / sbyte / ushort (the product is truncated to 16 bits, so
 *              the sign of s[i] is not needed), buffer_store_byte / short.
 */

__kernel void rgba_to_grey(__global const uchar *rgba, __global uchar *grey, int npixels)
{
    int p = get_global_id(0);
    if (p < npixels) {
        uint r = rgba[4 * p + 0], g = rgba[4 * p + 1], b = rgba[4 * p + 2];
        grey[p] = (uchar)((77u * r + 150u * g + 29u * b + 128u) >> 8);
    }
}

__kernel void mix_small(__global const char *c, __global const short *s,
                        __global const uchar *u, __global short *out16,
                        __global char *out8, __global uchar *outu, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        out16[i] = (short)(s[i] * 3 - c[i]);
        out8[i] = (char)(c[i] >> 1) ^ (char)u[i];
        outu[i] = add_sat(u[i], (uchar)(c[i] & 0x7F));
    }
}
