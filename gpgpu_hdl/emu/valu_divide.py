"""Vector ALU semantics: the steps of the compiler's expanded sequences.

``v_div_scale``, ``v_div_fmas`` and ``v_div_fixup`` (f32 and f64), whose composition is a
correctly rounded division (the case list below), and ``v_trig_preop_f64``, the chunks of 2/pi
for sin/cos range reduction. Registered in :data:`~gpgpu_hdl.emu.valu_common.VALU_OPS`;
conventions in :mod:`gpgpu_hdl.emu.valu_ops`.
"""

from __future__ import annotations

import numpy as np

from . import fp
from .fp import res_f32, res_f64, src_f32, src_f64
from .valu_common import F32, F64, I32, I64, M5, U64, register

__all__: list[str] = []

# LLVM 19's correctly rounded f32 division q = n / d (tahiti):
#     ds      = v_div_scale_f32(d, d, n)          den, scaled
#     ns, vcc = v_div_scale_f32(n, d, n)          num, scaled; vcc = "rescale the quotient"
#     r = v_rcp_f32(ds); denormals on; r = fma(fma(-ds, r, 1), r, r)
#     q = ns * r; q = fma(fma(-ds, q, ns), r, q); t = fma(-ds, q, ns); denormals restored
#     q = v_div_fixup_f32(v_div_fmas_f32(t, r, q, vcc), d, n)
# f64 is alike but takes VCC as "exactly one of n, d was scaled" (SI's div_scale VCC output
# is unusable, LLVM compares the high dwords instead), which these definitions satisfy too.
#
# v_div_scale(S0, S1 = d, S2 = n) for finite nonzero n, d; first matching case wins
# (E = 64 for f32, 128 for f64; thresholds in the table below; exp(x) = floor(log2 |x|),
# also for denormals; "x denormal" and "n/d denormal" compare the exact values):
#   1. exp(n) - exp(d) >= 96/768 (quotient near overflow): VCC; S0 == d is scaled by 2^E
#   2. d denormal: S0 scaled by 2^E (both operands: the quotient is unchanged)
#   3. |d| > 2^126/2^1022 (1/d denormal) and n/d denormal: VCC; S0 == d scaled by 2^-E
#   4. |d| > 2^126/2^1022: S0 scaled by 2^-E (both)
#   5. n/d denormal: VCC; S0 == n scaled by 2^E
#   6. |n| < 2^-103/2^-969 (residuals would be denormal): S0 scaled by 2^E (both)
#   otherwise (and for zero/inf/NaN operands, left to v_div_fixup) S0 unchanged, no VCC.
# v_div_fmas undoes the scale when VCC is set: fma * 2^E when |S2| (the scaled quotient)
# >= 2 (case 1), fma * 2^-E otherwise (cases 3 and 5), with a single rounding.

_DIV_PARAMS = {  # exp diff, denormal bound, 1/d-denormal bound, tiny numerator, 2^E
    False: (96, 2.0 ** -126, 2.0 ** 126, 2.0 ** -103, 2.0 ** 64),
    True: (768, 2.0 ** -1022, 2.0 ** 1022, 2.0 ** -969, 2.0 ** 128),
}


def _div_scale(ctx, s0, s1, s2, f64):
    if f64:
        x, d, n = (src_f64(ctx, s) for s in (s0, s1, s2))
    else:
        x, d, n = (src_f32(ctx, s).astype(F64) for s in (s0, s1, s2))
    diff, den_min, huge, tiny_num, up = _DIV_PARAMS[f64]
    ad, an = np.abs(d), np.abs(n)
    normal = (ad > 0) & (an > 0) & (ad < np.inf) & (an < np.inf)
    big_q = np.frexp(an)[1] - np.frexp(ad)[1] >= diff
    d_den = ad < den_min
    d_huge = ad > huge
    q_den = an * (1.0 / den_min) < ad                      # exact (or inf: false)
    n_tiny = an < tiny_num
    vcc = (big_q | (q_den & ~d_den)) & normal
    scaled = (big_q | d_den | d_huge | q_den | n_tiny) & normal
    if np.count_nonzero(scaled):
        down = 1.0 / up
        is_d, is_n = x == d, x == n
        factor = np.where(
            big_q, np.where(is_d, up, 1.0), np.where(
                d_den, up, np.where(
                    d_huge, np.where(q_den, np.where(is_d, down, 1.0), down), np.where(
                        q_den, np.where(is_n, up, 1.0), up))))
        x = x * np.where(scaled, factor, 1.0)
    elif f64:
        x = x.copy()
    if f64:
        return res_f64(ctx, x), vcc
    return res_f32(ctx, x.astype(F32)), vcc


@register("v_div_scale_f32")
def _div_scale_f32(ctx, s0, s1, s2):
    return _div_scale(ctx, s0, s1, s2, False)


@register("v_div_scale_f64")
def _div_scale_f64(ctx, s0, s1, s2):
    return _div_scale(ctx, s0, s1, s2, True)


def _fmas_scale(vcc, quotient, f64):
    """Per-lane power of two undoing v_div_scale: 2^E when VCC and |S2| >= 2, 2^-E when VCC
    and |S2| < 2, none without VCC (None when no lane has VCC)."""
    if not np.count_nonzero(vcc):
        return None
    up = _DIV_PARAMS[f64][4]
    return np.where(vcc, np.where(np.abs(quotient) >= 2.0, up, 1.0 / up), 1.0)


@register("v_div_fmas_f32")
def _div_fmas_f32(ctx, a, b, c, vcc):
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    return res_f32(ctx, fp.fma_f32(x, y, z, _fmas_scale(vcc, z, False)))


@register("v_div_fmas_f64")
def _div_fmas_f64(ctx, a, b, c, vcc):
    x, y, z = (src_f64(ctx, s) for s in (a, b, c))
    return res_f64(ctx, fp.fma_f64(x, y, z, _fmas_scale(vcc, z, True)))


_TWO_POW_150 = 2.0 ** 150


def _div_fixup(ctx, s0, s1, s2, f64):
    """Special cases of n / d around the quotient estimate S0 (S1 = d, S2 = n), by priority:
    NaN operand, 0/0 or inf/inf: NaN; d = 0 or n = inf: ±inf; d = inf, n = 0 or an exact
    quotient below half the smallest denormal: ±0; a NaN estimate: ±inf; otherwise ±|S0|.
    The sign is sign(n) xor sign(d)."""
    src, res = (src_f64, res_f64) if f64 else (src_f32, res_f32)
    q, d, n = (src(ctx, s) for s in (s0, s1, s2))
    dz, nz, dinf, ninf = d == 0, n == 0, np.isinf(d), np.isinf(n)
    if f64:       # |n| * 2^1075 < |d|, exactly (the product saturates to inf)
        underflow = np.abs(n) * 2.0 ** 600 * 2.0 ** 475 < np.abs(d)
    else:
        underflow = np.abs(n).astype(F64) * _TWO_POW_150 < np.abs(d)
    nan = np.isnan(d) | np.isnan(n) | (dz & nz) | (dinf & ninf)
    inf = dz | ninf | np.isnan(q)
    zero = dinf | nz | underflow
    mag = np.abs(q)
    if np.count_nonzero(nan | inf | zero):
        mag = np.where(nan, np.nan, np.where(dz | ninf, np.inf,
                                             np.where(zero, 0.0, np.where(inf, np.inf, mag))))
        mag = mag.astype(q.dtype)
    return res(ctx, np.where(np.signbit(d) ^ np.signbit(n), -mag, mag))


@register("v_div_fixup_f32")
def _div_fixup_f32(ctx, s0, s1, s2):
    return _div_fixup(ctx, s0, s1, s2, False)


@register("v_div_fixup_f64")
def _div_fixup_f64(ctx, s0, s1, s2):
    return _div_fixup(ctx, s0, s1, s2, True)


# --- v_trig_preop_f64: 53-bit chunks of 2/pi ---------------------------------------------

_TWO_OVER_PI_BITS = 1184          # size of the hardware table (37 dwords)
_PREOP_SHIFTS = _TWO_OVER_PI_BITS - 64   # a chunk needs 64 table bits (LLVM: 0 beyond)


def _two_over_pi(nbits: int) -> int:
    """floor(2/pi * 2^nbits), from Machin's formula in integer arithmetic."""
    prec = nbits + 64

    def arctan_inv(k: int) -> int:                  # atan(1/k) * 2^prec
        total = term = (1 << prec) // k
        n, sign = 1, -1
        while term:
            term //= k * k
            n += 2
            total += sign * (term // n)
            sign = -sign
        return total

    pi = 4 * (4 * arctan_inv(5) - arctan_inv(239))
    return (2 << (prec + nbits)) // pi


def _preop_table() -> np.ndarray:
    bits = _two_over_pi(_TWO_OVER_PI_BITS)
    mask = (1 << 53) - 1
    return np.array([(bits >> (_TWO_OVER_PI_BITS - 53 - s)) & mask
                     for s in range(_PREOP_SHIFTS)], F64)


_PREOP = _preop_table()


@register("v_trig_preop_f64")
def _trig_preop_f64(ctx, a, b):
    """The 53 bits of 2/pi starting ``53*S1[4:0] + max(0, exp(S0) - 1077)`` bits after the
    binary point, scaled to their weight (times 2^128 when exp(S0) >= 1968); 0 past the
    1184-bit table; NaN for a NaN S0 (LLVM's constant folding)."""
    x = src_f64(ctx, a)
    exp = ((x.view(U64) >> U64(52)) & U64(0x7FF)).astype(I64)
    shift = (b & M5).astype(I64) * 53 + np.maximum(exp - 1077, 0)
    chunk = np.where(shift < _PREOP_SHIFTS, _PREOP[np.minimum(shift, _PREOP_SHIFTS - 1)], 0.0)
    scale = -53 - shift + np.where(exp >= 1968, 128, 0)
    return res_f64(ctx, np.where(np.isnan(x), np.nan, np.ldexp(chunk, scale.astype(I32))))
