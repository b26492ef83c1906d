/*
 * atomics.cl -- every OpenCL 1.2 atomic function on __global and on __local int and uint,
 *               used the way users use them: counters, running min/max, bit sets, slot
 *               allocation, a lock-free update with an atomic_cmpxchg retry loop.
 *
 * Kernels:
 *   atomics_global(vals, bits, ctr, uctr, slots, xchg, n)
 *       vals: int[n], bits: int[n] (a bit position 0..47 each);
 *       ctr: int[NCTR], uctr: uint[NCTR] counters set by the host; for each i < n:
 *         ctr[0] += v, ctr[1] -= v, ctr[2]++ (its old value goes to slots[i]), ctr[3]--,
 *         ctr[4] = min, ctr[5] = max, ctr[6] &= ~(1 << bit), ctr[7] |= 1 << bit, ctr[8] ^= v,
 *         ctr[9] *= (2 v + 1) through an atomic_cmpxchg retry loop,
 *         ctr[10] counts the work-items whose atomic_cmpxchg(&ctr[11], 0, 1) saw 0 (one);
 *         uctr: the same with uint (unsigned min/max, atomic_inc/atomic_dec on uint), then
 *         uctr[9] = atomic_xchg(7), uctr[10]: 5 -> 9 by atomic_cmpxchg, uctr[11] counts the
 *         work-items that saw the 5;
 *         xchg[0] is swapped with i + 1 by every work-item, which stores what it got back in
 *         xchg[i + 1].
 *       Every final counter value is independent of the order of the atomics; the returned
 *       values are a permutation (slots: 0..n-1, xchg: the initial value and 1..n less the
 *       final one), so the case compares them sorted.
 *   atomics_local(vals, bits, out, slots, n)
 *       The same operations on __local int / uint counters, one set per workgroup, which
 *       work-item 0 copies to out[group * 2 NCTR ...] after a barrier; slots[i] gets the
 *       atomic_inc ticket of the work-item within its group; every work-item swaps its id
 *       into a __local word (initially -1) and stores what it received in slots[n + i],
 *       work-item 0 the value left in slots[2 n + group].
 *   bin_weights(bin, w, sums, n)     sums[bin[i]] += w[i] with a float add built from an
 *       atomic_cmpxchg loop on the bits (the weights are multiples of 1/8, so every order
 *       of additions gives the same sums).
 *   compact_positive(in, out, count, n)  stream compaction: every positive in[i] goes to
 *       out[atomic_inc(count)] (the order in out depends on the order of the atomics).
 *   compact_local(in, out, count, n)     the same for multiples of 3 with a __local
 *       counter per workgroup and one global atomic_add per workgroup (local size 64).
 *
 * NDRange: 1-D, local = 64 (16 for atomics_local), global = n rounded up; all check i < n.
 *
 * SI features: buffer_atomic_add/sub/smin/smax/umin/umax/and/or/xor/swap/cmpswap (glc when
 *              the result is used; LLVM's atomic optimizer turns uniform-address atomics into
 *              one lane's atomic after a s_ff1 / v_readlane loop) and the ds_*_rtn_* LDS
 *              atomics, ds_cmpst_rtn_b32.
 */

#define NCTR 12

__kernel void atomics_global(__global const int *vals, __global const int *bits,
                             __global int *ctr, __global uint *uctr, __global int *slots,
                             __global int *xchg, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int v = vals[i];
    int b = bits[i];
    int onebit = b < 32 ? 1 << b : 0;

    atomic_add(&ctr[0], v);
    atomic_sub(&ctr[1], v);
    slots[i] = atomic_inc(&ctr[2]);
    atomic_dec(&ctr[3]);
    atomic_min(&ctr[4], v);
    atomic_max(&ctr[5], v);
    atomic_and(&ctr[6], ~onebit);
    atomic_or(&ctr[7], onebit);
    atomic_xor(&ctr[8], v);

    int old = ctr[9];
    for (;;) {
        int seen = atomic_cmpxchg(&ctr[9], old, old * (2 * v + 1));
        if (seen == old)
            break;
        old = seen;
    }
    if (atomic_cmpxchg(&ctr[11], 0, 1) == 0)     /* "am I first?" */
        atomic_inc(&ctr[10]);

    uint u = (uint)v;
    atomic_add(&uctr[0], u);
    atomic_sub(&uctr[1], u);
    atomic_inc(&uctr[2]);
    atomic_dec(&uctr[3]);
    atomic_min(&uctr[4], u);
    atomic_max(&uctr[5], u);
    atomic_and(&uctr[6], ~(uint)onebit);
    atomic_or(&uctr[7], (uint)onebit);
    atomic_xor(&uctr[8], u);
    atomic_xchg(&uctr[9], 7u);                   /* everyone writes the same value */
    if (atomic_cmpxchg(&uctr[10], 5u, 9u) == 5u) /* the first one turns 5 into 9 */
        atomic_inc(&uctr[11]);

    xchg[i + 1] = atomic_xchg(&xchg[0], i + 1);
}

__kernel void atomics_local(__global const int *vals, __global const int *bits,
                            __global int *out, __global int *slots, int n)
{
    __local int c[NCTR];
    __local uint uc[NCTR];
    __local int swap;
    int i = get_global_id(0);
    int lid = get_local_id(0);

    if (lid == 0) {
        for (int k = 0; k < NCTR; k++) {
            c[k] = 0;
            uc[k] = 0;
        }
        c[4] = INT_MAX;
        c[5] = INT_MIN;
        c[6] = -1;
        c[9] = 1;
        uc[4] = UINT_MAX;
        uc[6] = 0xFFFFFFFFu;
        uc[9] = 1;
        swap = -1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    if (i < n) {
        int v = vals[i];
        int b = bits[i];
        int onebit = b < 32 ? 1 << b : 0;

        atomic_add(&c[0], v);
        atomic_sub(&c[1], v);
        slots[i] = atomic_inc(&c[2]);
        atomic_dec(&c[3]);
        atomic_min(&c[4], v);
        atomic_max(&c[5], v);
        atomic_and(&c[6], ~onebit);
        atomic_or(&c[7], onebit);
        atomic_xor(&c[8], v);
        int old = c[9];
        for (;;) {
            int seen = atomic_cmpxchg(&c[9], old, old * (2 * v + 1));
            if (seen == old)
                break;
            old = seen;
        }
        if (atomic_cmpxchg(&c[11], 0, 1) == 0)
            atomic_inc(&c[10]);

        uint u = (uint)v;
        atomic_add(&uc[0], u);
        atomic_sub(&uc[1], u);
        atomic_inc(&uc[2]);
        atomic_dec(&uc[3]);
        atomic_min(&uc[4], u);
        atomic_max(&uc[5], u);
        atomic_and(&uc[6], ~(uint)onebit);
        atomic_or(&uc[7], (uint)onebit);
        atomic_xor(&uc[8], u);
        uint prev = atomic_xchg(&uc[9], u | 1u);
        atomic_add(&uc[10], prev & 1u);          /* every prev is odd: counts the swaps */
        atomic_cmpxchg(&uc[11], 0u, 1u);
        slots[n + i] = atomic_xchg(&swap, i);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    if (lid == 0) {
        __global int *o = out + 2 * NCTR * get_group_id(0);
        for (int k = 0; k < NCTR; k++) {
            o[k] = c[k];
            o[NCTR + k] = (int)uc[k];
        }
        o[NCTR + 9] = (int)(uc[9] & 1u);       /* which u | 1 is left depends on the order */
        slots[2 * n + get_group_id(0)] = swap;
    }
}

/* atomic float add the way users write it without cl_ext_float_atomics: retry an
   atomic_cmpxchg on the bits until no other work-item got in between */
static void atomic_add_float(volatile __global float *p, float v)
{
    uint old_bits, new_bits;
    do {
        float old = *p;
        old_bits = as_uint(old);
        new_bits = as_uint(old + v);
    } while (atomic_cmpxchg((volatile __global uint *)p, old_bits, new_bits) != old_bits);
}

__kernel void bin_weights(__global const int *bin, __global const float *w,
                          __global float *sums, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_add_float(&sums[bin[i]], w[i]);
}

__kernel void compact_positive(__global const int *in, __global int *out,
                               __global int *count, int n)
{
    int i = get_global_id(0);
    if (i < n && in[i] > 0)
        out[atomic_inc(count)] = in[i];
}

__kernel void compact_local(__global const int *in, __global int *out, __global int *count,
                            int n)
{
    __local int lcount, base;
    __local int buf[64];
    int i = get_global_id(0), l = get_local_id(0);
    if (l == 0)
        lcount = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = i < n ? in[i] : 0;
    if (i < n && v % 3 == 0)
        buf[atomic_inc(&lcount)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        base = atomic_add(count, lcount);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < lcount)
        out[base + l] = buf[l];
}
