/*
 * autocorr.cl -- autocorrelation of an integer signal (ERCBench "autocorr", one of the five
 *                FlexGrip benchmarks).
 *
 * Kernel:
 *   __kernel void autocorr(__global const int *x, __global int *r, int n, int nlags)
 *
 * Computes, for every lag 0 <= lag < nlags (nlags <= n):
 *   r[lag] = sum_{i = 0}^{n - 1 - lag} x[i] * x[i + lag]      (wraps around modulo 2^32)
 * One work-item per lag, so work-items of a wavefront run loops of different lengths.
 *
 * NDRange: 1-D, global = nlags rounded up to a multiple of the local size, local = 64.
 *          Work-items with lag >= nlags do nothing.
 *          Example: n = 256, nlags = 256 -> global 256, local 64.
 *
 * SI features: integer multiply-accumulate, a loop with a per-lane trip count (divergent
 *              loop exit through EXEC masking).
 */

__kernel void autocorr(__global const int *x, __global int *r, int n, int nlags)
{
    int lag = get_global_id(0);
    if (lag >= nlags)
        return;

    int sum = 0;
    for (int i = 0; i + lag < n; ++i)
        sum += x[i] * x[i + lag];
    r[lag] = sum;
}
