/*
 * private_arrays.cl -- small arrays in private memory indexed by run-time values: a digit
 *                      histogram per work-item, a lookup table built per work-item, an RPN
 *                      evaluator with a private stack, a sliding-window ring buffer.
 *
 * Kernels:
 *   digit_hist(in, mode, n)         counts the decimal digits of |in[i]| in uint cnt[10]
 *                                   (cnt[d]++ with d from the data); mode[i] = the most
 *                                   frequent digit (smallest on ties) * 100 + its count.
 *   private_lut(in, out, key, n)    int lut[16] filled with (k * key) ^ (k << 3), then
 *                                   out[i] = lut[in[i] & 15] + lut[(in[i] >> 4) & 15].
 *   rpn_eval(prog, out, len, n)     program i: len tokens prog[i * len ...]; a token >= 0
 *                                   pushes itself, -1 adds, -2 subtracts, -3 multiplies,
 *                                   -4 duplicates, -5 swaps the top two; int stack[8] with a
 *                                   data-dependent stack pointer; out[i] = the top.
 *   moving_max(in, out, len, win)   work-item i scans row i (len values) with a ring buffer
 *                                   int ring[8] of the last win values (win <= 8):
 *                                   out[i * len + j] = max of the window ending at j.
 *
 * NDRange: 1-D, local = 64; global = the item count rounded up to 64 (moving_max: the row
 *          count, a multiple of 64, with no bounds check, as such kernels are often written).
 *
 * SI features: dynamically indexed private arrays: in scratch (buffer_load/store_dword
 *              through the private-segment V#) or in VGPRs with v_movrels/v_movreld and M0.
 */

__kernel void digit_hist(__global const int *in, __global int *mode, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint cnt[10];
    for (int d = 0; d < 10; d++)
        cnt[d] = 0;
    uint v = abs(in[i]);
    do {
        cnt[v % 10]++;
        v /= 10;
    } while (v != 0);
    int best = 0;
    for (int d = 1; d < 10; d++)
        if (cnt[d] > cnt[best])
            best = d;
    mode[i] = best * 100 + (int)cnt[best];
}

__kernel void private_lut(__global const int *in, __global int *out, int key, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int lut[16];
    for (int k = 0; k < 16; k++)
        lut[k] = (k * key) ^ (k << 3);
    int x = in[i];
    out[i] = lut[x & 15] + lut[(x >> 4) & 15];
}

__kernel void rpn_eval(__global const int *prog, __global int *out, int len, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int stack[8];
    int sp = 0;
    for (int t = 0; t < len; t++) {
        int tok = prog[i * len + t];
        if (tok >= 0) {
            stack[sp++] = tok;
        } else if (tok == -4) {
            stack[sp] = stack[sp - 1];
            sp++;
        } else if (tok == -5) {
            int a = stack[sp - 1];
            stack[sp - 1] = stack[sp - 2];
            stack[sp - 2] = a;
        } else {
            int b = stack[--sp];
            int a = stack[sp - 1];
            stack[sp - 1] = tok == -1 ? a + b : tok == -2 ? a - b : a * b;
        }
    }
    out[i] = stack[sp - 1];
}

__kernel void moving_max(__global const int *in, __global int *out, int len, int win)
{
    int i = get_global_id(0);
    int ring[8];
    for (int j = 0; j < len; j++) {
        ring[j % win] = in[i * len + j];
        int m = ring[0];
        for (int k = 1; k < min(j + 1, win); k++)
            m = max(m, ring[k]);
        out[i * len + j] = m;
    }
}
