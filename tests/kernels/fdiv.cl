/*
 * fdiv.cl -- single-precision division, reciprocal and square root (a typical "normalise and
 *            take the magnitude" kernel). Built twice by the suite: with clang's defaults,
 *            where OpenCL 1.2 allows 2.5 ulp for x / y and 3 ulp for sqrt, and with
 *            -cl-fp32-correctly-rounded-divide-sqrt, where both must be correctly rounded.
 *
 * Kernel:
 *   __kernel void fdiv_sqrt(__global const float *a, __global const float *b,
 *                           __global float *quot, __global float *recip,
 *                           __global float *root, int n)
 *       quot[i] = a[i] / b[i];  recip[i] = 1.0f / b[i];  root[i] = sqrt(fabs(a[i]))
 *
 * NDRange: 1-D, global = n rounded up to a multiple of 64, local = 64.
 *          Example: n = 1000 -> global 1024, local 64.
 *
 * SI features: default build: v_rcp_f32 + v_mul_f32 (with pre-scaling for huge denominators)
 *              and v_sqrt_f32; correctly rounded build: v_div_scale_f32 / v_div_fmas_f32 /
 *              v_div_fixup_f32 with v_fma_f32 refinement, and a corrected square root.
 */

__kernel void fdiv_sqrt(__global const float *a, __global const float *b,
                        __global float *quot, __global float *recip,
                        __global float *root, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        quot[i] = a[i] / b[i];
        recip[i] = 1.0f / b[i];
        root[i] = sqrt(fabs(a[i]));
    }
}
