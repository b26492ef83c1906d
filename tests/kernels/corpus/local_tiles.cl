/*
 * local_tiles.cl -- __local memory used the way stencil tutorials use it: each workgroup
 *                   copies its part of a row plus a halo into a local tile (8- and 16-bit
 *                   elements), waits at a barrier, and reads neighbours at negative and
 *                   positive offsets from the tile; filter taps in a __constant table.
 *
 * Kernels:
 *   smooth_row_local(in, out, w, h, tile)   uchar image w x h, 2-D launch, local (lx, ly):
 *       5-tap binomial (1 4 6 4 1) / 16 along x with clamped borders, through a dynamic
 *       __local uchar tile of (lx + 4) * ly bytes (tile argument); work-items outside the
 *       image still load (clamped) and reach the barrier, only those inside store.
 *   diff_local(in, out, n)                  ushort[n] -> short[n]: out[i] = in[i] - in[i-1]
 *       (out[0] = 0) through a static __local ushort t[65] read at t[l] and t[l + 1].
 *   row_sums_local(in, out, w, h)           uint per row of a uchar image: each workgroup
 *       (64 x 1) reduces one row from a __local ushort partial-sum array by halving
 *       strides (tree reduction with barriers), any width.
 *
 * SI features: ds_write_b8 / ds_read_u8, ds_write_b16 / ds_read_u16, dynamic LDS after the
 *              static area (the tile argument), s_barrier in partial workgroups; clang
 *              unrolls the tap loop and folds the __constant taps into immediates.
 */

#define R 2

__constant uchar taps[2 * R + 1] = {1, 4, 6, 4, 1};

__kernel void smooth_row_local(__global const uchar *in, __global uchar *out, int w, int h,
                               __local uchar *tile)
{
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    int lw = get_local_size(0);
    int row = min(y, h - 1) * w;
    __local uchar *t = tile + ly * (lw + 2 * R);

    t[lx + R] = in[row + clamp(x, 0, w - 1)];
    if (lx < R)
        t[lx] = in[row + clamp(x - R, 0, w - 1)];
    if (lx >= lw - R)
        t[lx + 2 * R] = in[row + clamp(x + R, 0, w - 1)];
    barrier(CLK_LOCAL_MEM_FENCE);

    if (x < w && y < h) {
        uint s = 0;
        for (int k = -R; k <= R; k++)
            s += taps[k + R] * t[lx + R + k];
        out[y * w + x] = (uchar)((s + 8) >> 4);
    }
}

__kernel void diff_local(__global const ushort *in, __global short *out, int n)
{
    __local ushort t[65];
    int i = get_global_id(0), l = get_local_id(0);
    t[l + 1] = i < n ? in[i] : 0;
    if (l == 0)
        t[0] = i > 0 ? in[i - 1] : in[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n)
        out[i] = (short)(t[l + 1] - t[l]);
}

__kernel void row_sums_local(__global const uchar *in, __global uint *out, int w, int h)
{
    __local ushort part[64];
    int l = get_local_id(0);
    int y = get_group_id(0);
    uint s = 0;
    for (int x = l; x < w; x += 64)
        s += in[y * w + x];
    part[l] = (ushort)s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = 32; stride > 0; stride >>= 1) {
        if (l < stride)
            part[l] = part[l] + part[l + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0 && y < h)
        out[y] = part[0];
}
