/*
 * scale_f64.cl -- double precision: widen, multiply, store (cl_khr_fp64).
 *
 * Kernel:
 *   __kernel void scale_f64(__global double *out, __global const float *x, float s, int n)
 *       For i < n: out[i] = (double)x[i] * (double)s. The product of two floats is exact in
 *       double, so every implementation gives the same bits.
 *
 * NDRange: 1-D, global = n rounded up to a multiple of 64, local = 64.
 *
 * The compute unit has no FP64 datapath: this kernel runs on the emulator and on PoCL, and on
 * the RTL it must stop at its first f64 instruction (IllegalInstruction).
 */

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void scale_f64(__global double *out, __global const float *x, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = (double)x[i] * (double)s;
}
