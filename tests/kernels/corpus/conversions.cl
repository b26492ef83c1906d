/*
 * conversions.cl -- explicit conversions with rounding modes and saturation, as users write
 *                   them to turn floats into pixels and indices and back: convert_<type>[_sat]
 *                   [_rte|_rtz|_rtp|_rtn] between float and char/uchar/short/int/uint/long/
 *                   ulong, and int/uint/long/ulong to float with each rounding.
 *
 * Kernels:
 *   float_to_int(x, iout, lout, n)   x: float[n]; iout: int[NCI n]: convert_int with each
 *       rounding (the value in range), convert_int_sat / uint_sat / short_sat / uchar_sat /
 *       char_sat (rte and rtz) over the full float range, NaN and infinities; lout:
 *       long[NCL n]: convert_long / convert_long_sat_rtn / convert_ulong_sat.
 *   int_to_float(a, l, out, n)       a: int[n], l: long[n]; out: float[NCF n]:
 *       convert_float of int, uint, long, ulong with the default (rte), _rtz, _rtp, _rtn.
 *       Not for INT_MAX, UINT_MAX, nor long / ulong values within 2^39 of the top, whose
 *       nearest float lies past the type's maximum: libclc 19 converts that float back with
 *       an out-of-range float-to-int (poison; SI saturates) and gets the directed roundings
 *       wrong there (docs/corpus.md).
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64.
 *
 * SI features: v_cvt_i32_f32 / v_cvt_u32_f32 (truncating, saturating on SI), v_rndne /
 *              v_floor / v_ceil before them, v_cvt_f32_i32 / u32, libclc's and LLVM's
 *              expansions of 64-bit conversions and of the directed roundings.
 */

#define NCI 14
#define NCL 4
#define NCF 12

__kernel void float_to_int(__global const float *xs, __global int *iout, __global long *lout,
                           int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = xs[i];
    /* in range for the non-saturating forms (NaN tested first: libclc's clamp passes a NaN
       through, PoCL's returns the lower bound as fmin(fmax(x, lo), hi) does) */
    float r = isnan(x) ? 0.5f : clamp(x, -2.0e9f, 2.0e9f);
    __global int *o = iout + NCI * i;
    o[0] = convert_int(r);
    o[1] = convert_int_rte(r);
    o[2] = convert_int_rtn(r);
    o[3] = convert_int_rtp(r);
    o[4] = convert_int_sat(x);
    o[5] = convert_int_sat_rte(x);
    o[6] = (int)convert_uint_sat(x);
    o[7] = (int)convert_uint_sat_rtp(x);
    o[8] = convert_short_sat(x);
    o[9] = convert_ushort_sat_rte(x);
    o[10] = convert_uchar_sat(x);
    o[11] = convert_uchar_sat_rte(x * 255.0f);
    o[12] = convert_char_sat_rtn(x);
    o[13] = (int)(uint)clamp(r, 0.0f, 4.0e9f);
    __global long *p = lout + NCL * i;
    p[0] = convert_long(r * 4.0e9f);
    p[1] = convert_long_sat_rtn(x * 1.0e10f);
    p[2] = (long)convert_ulong_sat(x * 1.0e10f);
    p[3] = (long)convert_ulong_sat_rtp(x);
}

__kernel void int_to_float(__global const int *as, __global const long *ls,
                           __global float *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int a = as[i];
    long l = ls[i];
    __global float *o = out + NCF * i;
    o[0] = convert_float(a);
    o[1] = convert_float_rtz(a);
    o[2] = convert_float_rtp(a);
    o[3] = convert_float_rtn(a);
    o[4] = convert_float((uint)a);
    o[5] = convert_float_rtz((uint)a);
    o[6] = convert_float(l);
    o[7] = convert_float_rtz(l);
    o[8] = convert_float_rtp(l);
    o[9] = convert_float((ulong)l);
    o[10] = convert_float_rtn((ulong)l);
    o[11] = (float)(ulong)l - (float)l;
}
