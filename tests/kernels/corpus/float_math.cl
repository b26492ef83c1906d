/*
 * float_math.cl -- the exactly specified float built-ins users reach for: rounding
 *                  (floor, ceil, trunc, round, rint), sign manipulation (fabs, copysign,
 *                  sign), fmin/fmax/fdim/maxmag/minmag, step, fma, fmod, fract, modf, frexp,
 *                  ldexp, ilogb, nextafter; results that have one correct value each.
 *
 * Kernel:
 *   float_math(x, y, fout, iout, n)   x, y: float[n]; fout: float[NF n], iout: int[NI n],
 *       row i holds the results for (x[i], y[i]); see the column list in the code.
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64.
 *
 * SI features: v_floor/ceil/trunc/rndne_f32, v_fract_f32, v_frexp_mant/exp, v_ldexp_f32,
 *              v_fma_f32, v_cmp_class_f32, v_bfi_b32 (copysign), libclc's integer code for
 *              nextafter and fmod.
 */

#define NF 22
#define NI 3

__kernel void float_math(__global const float *xs, __global const float *ys,
                         __global float *fout, __global int *iout, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = xs[i], y = ys[i];
    __global float *f = fout + NF * i;
    __global int *k = iout + NI * i;

    f[0] = floor(x);
    f[1] = ceil(x);
    f[2] = trunc(x);
    f[3] = round(x);
    f[4] = rint(x);
    f[5] = fabs(x);
    f[6] = copysign(x, y);
    f[7] = sign(x);
    f[8] = fmin(x, y);
    f[9] = fmax(x, y);
    f[10] = fdim(x, y);
    f[11] = maxmag(x, y);
    f[12] = minmag(x, y);
    f[13] = step(y, x);
    f[14] = fma(x, y, -x);
    f[15] = fmod(x, y);
    float ip;
    f[16] = fract(x, &ip);
    f[17] = ip;
    float whole;
    f[18] = modf(x, &whole) + whole * 0.0f;
    int e;
    f[19] = frexp(x, &e);
    k[0] = e;
    f[20] = ldexp(y, i % 41 - 20);
    f[21] = nextafter(x, y);
    k[1] = ilogb(y);
    k[2] = isless(x, y) | (isgreaterequal(x, y) << 1) | (isunordered(x, y) << 2) |
           (signbit(x) << 3) | (isfinite(y) << 4) | (isnormal(x) << 5);
}
