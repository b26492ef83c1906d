/*
 * mixed_double.cl -- double precision mixed into float code the way it creeps in: an
 *                    unsuffixed constant (0.1 is a double), a double accumulator over float
 *                    data, float <-> double conversions, double division and sqrt.
 *                    Needs FP64 (cl_khr_fp64), which the RTL does not build: these run on the
 *                    emulator against PoCL only.
 *
 * Kernels:
 *   scale_const(in, out, n)          out[i] = in[i] * 0.1 + 1.0 / 3.0: the float is promoted,
 *                                    the expression computed in double, rounded once to float.
 *   row_stats(x, mean, stddev, rows, cols)  per row: double sum and sum of squares of the
 *                                    float elements, mean = sum / cols, stddev =
 *                                    sqrt(sumsq / cols - mean * mean), both stored as float.
 *   lerp_double(a, b, t, out, n)     out[i] = (float)(a + (b - a) * (double)t[i]) with
 *                                    double a, b from by-value double arguments.
 *
 * NDRange: 1-D, global = the item count rounded up to 64, local = 64.
 *
 * SI features: v_cvt_f64_f32 / v_cvt_f32_f64, v_add/mul/fma_f64, the f64 division
 *              sequence (v_div_scale_f64, v_rcp_f64, v_div_fmas_f64, v_div_fixup_f64) and
 *              sqrt (v_rsq_f64 with Newton steps).
 */

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void scale_const(__global const float *in, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    out[i] = in[i] * 0.1 + 1.0 / 3.0;
}

__kernel void row_stats(__global const float *x, __global float *mean, __global float *stddev,
                        int rows, int cols)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    double sum = 0.0, sumsq = 0.0;
    for (int c = 0; c < cols; c++) {
        float v = x[r * cols + c];
        sum += v;
        sumsq += (double)v * v;
    }
    double m = sum / cols;
    mean[r] = (float)m;
    stddev[r] = (float)sqrt(sumsq / cols - m * m);
}

__kernel void lerp_double(double a, double b, __global const float *t, __global float *out,
                          int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    out[i] = (float)(a + (b - a) * (double)t[i]);
}
