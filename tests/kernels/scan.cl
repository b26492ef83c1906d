/*
 * scan.cl -- inclusive prefix sum of 32-bit integers, work-efficient across blocks
 *            (the classic three-phase GPU scan: Hillis-Steele scan of each block in __local
 *            memory, a scan of the block totals, and a uniform add; GPU Gems 3 ch. 39 style).
 *
 * Kernels (SCAN_BLOCK = 128 work-items per workgroup, required):
 *   __kernel void scan_block(__global const int *in, __global int *out, __global int *sums,
 *                            int n)
 *       out[i] = in[g*128] + ... + in[i] for i in block g (elements >= n count as 0, and are
 *       not written); sums[g] = the block's total (written by its last work-item).
 *   __kernel void scan_add(__global int *out, __global const int *scanned_sums, int n)
 *       out[i] += scanned_sums[g - 1] for every block g > 0.
 *
 * The host scans n elements with
 *     scan_block(in, out, sums, n)             global = n rounded up to 128, local = 128
 *     scan_block(sums, sums_scan, dummy, nb)   global = 128, local = 128 (nb = blocks <= 128)
 *     scan_add(out, sums_scan, n)              global = n rounded up to 128, local = 128
 * Sums wrap around modulo 2^32.
 * Example: n = 1000 -> 8 blocks of 128.
 *
 * The block scan is double-buffered in a static __local int[2][128] with one barrier per
 * round (log2(128) = 7 rounds).
 */

#define SCAN_BLOCK 128

__kernel __attribute__((reqd_work_group_size(SCAN_BLOCK, 1, 1)))
void scan_block(__global const int *in, __global int *out, __global int *sums, int n)
{
    __local int buf[2][SCAN_BLOCK];
    int lid = get_local_id(0);
    int gid = get_global_id(0);

    int src = 0;
    buf[src][lid] = (gid < n) ? in[gid] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int offset = 1; offset < SCAN_BLOCK; offset <<= 1) {
        int dst = 1 - src;
        int v = buf[src][lid];
        if (lid >= offset)
            v += buf[src][lid - offset];
        buf[dst][lid] = v;
        src = dst;
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (gid < n)
        out[gid] = buf[src][lid];
    if (lid == SCAN_BLOCK - 1)
        sums[get_group_id(0)] = buf[src][lid];
}

__kernel __attribute__((reqd_work_group_size(SCAN_BLOCK, 1, 1)))
void scan_add(__global int *out, __global const int *scanned_sums, int n)
{
    int gid = get_global_id(0);
    int g = get_group_id(0);
    if (g > 0 && gid < n)
        out[gid] += scanned_sums[g - 1];
}
