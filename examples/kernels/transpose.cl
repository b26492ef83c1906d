/*
 * transpose.cl -- matrix transpose through __local memory tiles (AMD APP SDK MatrixTranspose,
 *                 NVIDIA "transposeCoalesced"/"transposeNoBankConflicts").
 *
 * Kernel:
 *   __kernel void transpose(__global float *out, __global const float *in,
 *                           int width, int height)
 *
 * `in` is a row-major height x width matrix (element (x, y) at y * width + x); `out` receives
 * its transpose, a row-major width x height matrix: out[x * height + y] = in[y * width + x].
 * Each 16 x 16 workgroup reads one tile with coalesced loads into a __local tile, waits at a
 * barrier, and writes the tile back transposed, again with coalesced stores. The tile row is
 * padded to 17 words so the column-wise LDS reads hit 16 different banks (no bank conflicts).
 * The kernel only moves data (no FP arithmetic), so any 32-bit element type works.
 *
 * NDRange: 2-D, global = (width, height) each rounded up to a multiple of 16,
 *          local = (16, 16) -- the local size MUST be exactly 16 x 16.
 *          Example: 64 x 48 -> global (64, 48), local (16, 16), 12 workgroups.
 *
 * SI features: static LDS (16 x 17 x 4 = 1088 bytes), ds_write/ds_read, s_barrier across
 *              4 wavefronts, workgroup IDs x/y, 2-D local IDs (v0, v1).
 */

#define TILE_DIM 16

__kernel void transpose(__global float *out, __global const float *in,
                        int width, int height)
{
    __local float tile[TILE_DIM][TILE_DIM + 1];

    int lx = get_local_id(0);
    int ly = get_local_id(1);
    int bx = get_group_id(0) * TILE_DIM;
    int by = get_group_id(1) * TILE_DIM;

    /* Coalesced read of the input tile starting at column bx, row by. */
    int x = bx + lx;
    int y = by + ly;
    if (x < width && y < height)
        tile[ly][lx] = in[y * width + x];

    barrier(CLK_LOCAL_MEM_FENCE);

    /* Coalesced write of the transposed tile: output row = input column. */
    x = by + lx;
    y = bx + ly;
    if (x < height && y < width)
        out[y * height + x] = tile[lx][ly];
}
