/*
 * grids.cl -- 2-D and 3-D launches whose global size is the problem size rounded up to the
 *             workgroup size, so the last workgroups in each dimension are partly outside the
 *             data and every work-item bounds-checks (if (x < w && y < h) ...).
 *
 * Kernels:
 *   tile_transpose(in, out, w, h)   out (w rows of h) = in (h rows of w) transposed
 *       through a __local float tile[TILE][TILE + 1] (TILE = 8, local size 8 x 8): loads
 *       and stores are both bounds-checked, the barrier is reached by every work-item,
 *       inside the data or not.
 *   grid_ids2d(out, w, h)            out[y * w + x] = packed (group id, local id) of both
 *       dimensions for the work-items inside w x h.
 *   gradient3d(vol, grad, w, h, d)  3-D central differences of a float volume (clamped at
 *       the faces): grad[3 (idx) + k] for k = x, y, z; out of range work-items do nothing.
 *
 * NDRange: tile_transpose and grid_ids2d 2-D with local (8, 8) / (16, 4); gradient3d 3-D
 *          with local (4, 4, 2); every global size rounded up to the local size (OpenCL 1.2
 *          requires the local size to divide it).
 *
 * SI features: workgroup ids in s8..s10 and local ids in v0..v2 for all three dimensions,
 *              partial workgroups where lanes exit early and the others meet at s_barrier,
 *              ds_write/ds_read with a padded stride.
 */

#define TILE 8

__kernel void tile_transpose(__global const float *in, __global float *out, int w, int h)
{
    __local float tile[TILE][TILE + 1];
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);

    if (x < w && y < h)
        tile[ly][lx] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);

    int ox = get_group_id(1) * TILE + lx;      /* column of out = row of in */
    int oy = get_group_id(0) * TILE + ly;      /* row of out = column of in */
    if (ox < h && oy < w)
        out[oy * h + ox] = tile[lx][ly];
}

__kernel void grid_ids2d(__global int *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < w && y < h)
        out[y * w + x] = (get_group_id(0) << 24) | (get_group_id(1) << 16) |
                         (get_local_id(0) << 8) | get_local_id(1);
}

__kernel void gradient3d(__global const float *vol, __global float *grad, int w, int h, int d)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= w || y >= h || z >= d)
        return;
    int idx = (z * h + y) * w + x;
    int xm = max(x - 1, 0), xp = min(x + 1, w - 1);
    int ym = max(y - 1, 0), yp = min(y + 1, h - 1);
    int zm = max(z - 1, 0), zp = min(z + 1, d - 1);
    grad[3 * idx + 0] = (vol[(z * h + y) * w + xp] - vol[(z * h + y) * w + xm]) * 0.5f;
    grad[3 * idx + 1] = (vol[(z * h + yp) * w + x] - vol[(z * h + ym) * w + x]) * 0.5f;
    grad[3 * idx + 2] = (vol[(zp * h + y) * w + x] - vol[(zm * h + y) * w + x]) * 0.5f;
}
