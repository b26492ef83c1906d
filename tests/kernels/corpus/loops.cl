/*
 * loops.cl -- loops whose trip counts come from the data, and reversed / strided indexing.
 *
 * Kernels:
 *   csr_spmv(row_ptr, col, val, x, y, nrows)   y = A x for a CSR sparse matrix: row r sums
 *       val[k] * x[col[k]] for k = row_ptr[r] .. row_ptr[r+1]-1 in order (rows of 0 to 24
 *       entries, so the lanes of a wave leave the loop at different times).
 *   collatz(start, steps, peak, n)             the number of 3x+1 steps until 1 and the
 *       largest value reached, for each start value (a while loop on the data).
 *   rle_expand(offsets, counts, symbols, out, nruns)  run-length decoding: run r writes
 *       symbols[r] counts[r] times from out[offsets[r]] (offsets: exclusive prefix sum).
 *   reverse_stride(in, out, n, stride, offset) out[n-1-i] = in[i * stride + offset] minus
 *       the sum of in[offset + i * stride - k * stride] for k = 1..min(i, 3), read by a
 *       loop counting down.
 *   strided_sum(in, out, n, len)               out[i] = sum of in[j] for j = i, i + n, i + 2n
 *       ... < len (the grid-stride pattern), plus a countdown loop over the same elements
 *       in reverse order with alternating sign (ints, exact).
 *
 * NDRange: 1-D, global = the item count rounded up to 64, local = 64.
 *
 * SI features: divergent loops with s_and_saveexec / s_andn2 exit masks, the loop ends when
 *              EXEC runs out (s_cbranch_execz / execnz); negative-stride addressing.
 */

__kernel void csr_spmv(__global const int *row_ptr, __global const int *col,
                       __global const float *val, __global const float *x, __global float *y,
                       int nrows)
{
    int r = get_global_id(0);
    if (r >= nrows)
        return;
    float sum = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++)
        sum += val[k] * x[col[k]];
    y[r] = sum;
}

__kernel void collatz(__global const uint *start, __global int *steps, __global uint *peak,
                      int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint v = start[i];
    uint top = v;
    int count = 0;
    while (v > 1) {
        v = (v & 1) ? 3 * v + 1 : v / 2;
        top = max(top, v);
        count++;
    }
    steps[i] = count;
    peak[i] = top;
}

__kernel void rle_expand(__global const int *offsets, __global const int *counts,
                         __global const uchar *symbols, __global uchar *out, int nruns)
{
    int r = get_global_id(0);
    if (r >= nruns)
        return;
    int start = offsets[r];
    uchar s = symbols[r];
    for (int k = 0; k < counts[r]; k++)
        out[start + k] = s;
}

__kernel void reverse_stride(__global const int *in, __global int *out, int n, int stride,
                             int offset)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int base = offset + i * stride;
    int v = in[base];
    for (int k = min(i, 3); k >= 1; k--)
        v -= in[base - k * stride];
    out[n - 1 - i] = v;
}

__kernel void strided_sum(__global const int *in, __global int *out, int n, int len)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int sum = 0;
    int last = i;
    for (int j = i; j < len; j += n) {
        sum += in[j];
        last = j;
    }
    int alt = 0;
    int sign = 1;
    for (int j = last; j >= 0; j -= n) {
        alt += sign * in[j];
        sign = -sign;
    }
    out[2 * i] = sum;
    out[2 * i + 1] = alt;
}
