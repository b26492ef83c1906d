/*
 * ids3d.cl -- every work-item builtin in a 3-D NDRange (in the style of the OpenCL CTS
 *             "basic/work_item_functions" test: each work-item records what it sees).
 *
 * Kernel:
 *   __kernel void ids3d(__global uint *out)
 *
 * Work-item (x, y, z) (global ids) writes the 16-word record
 *   out[16 * ((z' * gsy + y') * gsx + x') + k],  x' = x - goff0, ... (ids minus the offset),
 *   gsx = get_global_size(0), gsy = get_global_size(1), k =
 *    0..2  get_global_id(0..2)       3..5  get_local_id(0..2)     6..8  get_group_id(0..2)
 *    9..11 get_local_size(0..2)     12..14 get_num_groups(0..2)  15    get_work_dim()
 *          + 1000 * get_global_offset(0) + 100000 * get_global_offset(1)
 *          + 10000000 * get_global_offset(2)
 * so out must hold 16 * global_size(0) * global_size(1) * global_size(2) words.
 *
 * NDRange: 3-D, any global size that is a multiple of the local size; several workgroups per
 *          dimension are the point. Example: global (8, 6, 4), local (4, 3, 2): 8 workgroups
 *          of 24 work-items (less than one wavefront each).
 */

__kernel void ids3d(__global uint *out)
{
    size_t x = get_global_id(0) - get_global_offset(0);
    size_t y = get_global_id(1) - get_global_offset(1);
    size_t z = get_global_id(2) - get_global_offset(2);
    size_t flat = (z * get_global_size(1) + y) * get_global_size(0) + x;
    __global uint *rec = out + 16 * flat;

    for (uint d = 0; d < 3; ++d) {
        rec[0 + d] = get_global_id(d);
        rec[3 + d] = get_local_id(d);
        rec[6 + d] = get_group_id(d);
        rec[9 + d] = get_local_size(d);
        rec[12 + d] = get_num_groups(d);
    }
    rec[15] = get_work_dim() + 1000u * get_global_offset(0) + 100000u * get_global_offset(1)
              + 10000000u * get_global_offset(2);
}
