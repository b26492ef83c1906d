/*
 * bitonic.cl -- one step of a bitonic sorting network (AMD APP SDK BitonicSort).
 *
 * Kernel:
 *   __kernel void bitonic_step(__global uint *data, uint stage, uint pass, uint direction)
 *
 * Sorts n = 2^k unsigned integers in place when the host runs
 *     for (stage = 0; stage < k; ++stage)
 *         for (pass = 0; pass <= stage; ++pass)
 *             enqueue bitonic_step(data, stage, pass, direction)   -- k(k+1)/2 launches
 * with direction = 1 for ascending order, 0 for descending. In one step, work-item t
 * compare-exchanges the pair (left, right = left + d), d = 2^(stage - pass),
 * left = (t % d) + (t / d) * 2d; the pair is put in the requested order, reversed when
 * bit `stage` of t is set (t / 2^stage is odd), which builds the bitonic sequences.
 *
 * NDRange: 1-D, global = n / 2 (one work-item per compare-exchange pair), local = 64
 *          (or n / 2 if smaller). The global size MUST be exactly n / 2; there is no guard.
 *          Example: n = 1024 -> global 512, local 64, 55 launches.
 *
 * SI features: shifts and bit-field ops (the divisions and modulos are by powers of two),
 *              unsigned min/max and v_cndmask: LLVM if-converts both if/else pairs, so the
 *              kernel has no branch at all. One v_mul_lo_u32 remains for (t / d) * 2d.
 */

__kernel void bitonic_step(__global uint *data, uint stage, uint pass, uint direction)
{
    uint tid = get_global_id(0);
    uint sort_increasing = direction;

    uint pair_distance = 1u << (stage - pass);
    uint block_width = 2 * pair_distance;

    uint left_id = (tid % pair_distance) + (tid / pair_distance) * block_width;
    uint right_id = left_id + pair_distance;

    uint left = data[left_id];
    uint right = data[right_id];

    uint same_direction_block_width = 1u << stage;
    if ((tid / same_direction_block_width) % 2 == 1)
        sort_increasing = 1 - sort_increasing;

    uint greater, lesser;
    if (left > right) {
        greater = left;
        lesser = right;
    } else {
        greater = right;
        lesser = left;
    }

    if (sort_increasing) {
        data[left_id] = lesser;
        data[right_id] = greater;
    } else {
        data[left_id] = greater;
        data[right_id] = lesser;
    }
}
