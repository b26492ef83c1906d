"""Floating-point helpers of the vector ALU golden model, and the project's FP contract.

The semantic functions in :mod:`gpgpu_hdl.emu.valu_ops` work on raw bit patterns (``uint32``
for f32/f16 operands, ``uint64`` for f64) and use this module for everything that is not a
bit manipulation. The RTL is built to match this model bit for bit, so the rules below are
the contract.

FP contract
-----------
Denormals
    ``MODE.FP_DENORM`` is honoured dynamically (LLVM flips it around its division sequence).
    With ``flush_in_f32`` every f32 *source* of a float operation is flushed to a signed zero
    before use; with ``flush_out_f32`` every f32 *result* is flushed to a signed zero after
    rounding (tininess is judged on the rounded result). f64 likewise with the f64 flags
    (the LLVM default, ``FLOAT_MODE=0xC0``, flushes f32 and preserves f64). Exceptions:

    * ``v_mad_f32``, ``v_mac_f32``, ``v_madmk_f32``, ``v_madak_f32``, ``v_mad_legacy_f32`` and
      ``v_mac_legacy_f32`` flush inputs, the rounded product and the result whatever MODE
      says (SI's mad datapath has no denormal support; LLVM only selects them when f32
      denormals are off).
    * ``v_log_f32``, ``v_log_clamp_f32``, ``v_rsq_f32``, ``v_rsq_clamp_f32`` and
      ``v_rsq_legacy_f32`` always flush denormal inputs; ``v_exp_f32`` returns +0 for
      x < -126, i.e. it never produces a denormal (CLRX ``GcnInstrsVop1.md``).
    * ``v_cmp_class_*`` classifies the raw operand (no flushing); the other compares flush
      their inputs like any float op.
    * f16 values (``v_cvt_f16_f32`` result, ``v_cvt_f32_f16`` source, ``v_cvt_pkrtz_f16_f32``)
      are never flushed (GCN 1.0 keeps f16 denormals).
    * Pure bit moves (``v_cndmask_b32``, logic ops) and integer ops do not look at floats.

    Which operands count as float inputs is given by the instruction table's operand types
    (``f32``/``f64``); ``b32`` operands of float ops (``v_ldexp``'s exponent, class masks,
    byte selectors) are integers.
Rounding
    Round to nearest even only; ``MODE.FP_ROUND`` is ignored. Conversions to integer truncate
    (``v_cvt_*_i32/u32``), floor (``v_cvt_flr``) or floor(x + 0.5) (``v_cvt_rpi``, computed
    exactly, not as an f32 add), and saturate; a NaN source gives 0.
NaN
    Every NaN produced by a float operation (arithmetic, min/max, conversions, sign edits
    such as ``v_cubesc``, even a NaN operand passed through) is the canonical quiet NaN
    ``0x7FC00000`` (f32), ``0x7FF8000000000000`` (f64) or ``0x7E00`` (f16); sign and payload
    are never propagated.
min/max
    ``v_min/max_f32/f64``: IEEE-754-2008 minNum/maxNum. A quiet NaN operand yields the other
    operand, two NaNs yield NaN, and in IEEE mode (``MODE.IEEE``) a signalling NaN operand
    yields NaN. ``-0 < +0``: ``min(-0, +0) = -0``, ``max(-0, +0) = +0``. ``v_min3/max3`` are
    nested ``v_min/max``; ``v_med3_f32`` returns ``min3`` when any operand is NaN, otherwise
    the operand that is neither ``max3`` (AMD's published pseudo-code). The ``_legacy``
    forms are ``s0 < s1 ? s0 : s1`` and ``s0 > s1 ? s0 : s1`` (so a NaN gives ``s1``).
Multiply-add
    ``v_mad_f32`` and friends are unfused: round the product, flush it, round the sum.
    ``v_fma_f32`` and ``v_fma_f64`` are fused and correctly rounded (:func:`fma_f32`,
    :func:`fma_f64`). Legacy multiplies (``v_mul_legacy``, ``v_mad/mac_legacy``,
    ``v_mullit``) treat ``0 * anything`` (even inf or NaN) as +0.
Transcendentals
    Each has one model function here (see ``*_f32``/``*_f64`` below), which a later FP32
    hardware model can replace. ``v_rcp_f32`` and ``v_sqrt_f32`` evaluate the function in
    binary64 from the (flushed) binary32 input and round once to binary32, so they are
    correctly rounded. ``v_rsq_f32`` is correctly rounded too, exactly, as the FP32 hardware
    computes it (a binary64 estimate, and an integer square root deciding the rounding
    wherever the estimate is within a few binary64 ulps of a rounding boundary).
    ``v_exp_f32`` (2^x) is the FP32 hardware's shift-and-add algorithm in integer arithmetic
    (:func:`exp2_f32`): relative error below 2^-46 before one rounding, so within
    0.5 ulp + 2^-22 ulp and correctly rounded unless 2^x is that close to a rounding boundary.
    ``v_log_f32`` (log2 x) is the FP32 hardware's shift-and-add algorithm too
    (:func:`log2_f32`: the factors 1 + 2^-k, with the deviation from 1 and the sum kept at
    the result's scale): error below 2^-22 ulp before one rounding, so within 0.5 ulp +
    2^-22 ulp and correctly rounded unless log2 x is that close to a rounding boundary.
    ``v_sin_f32`` and ``v_cos_f32`` (argument in revolutions: sin(2*pi*x)) reduce the
    argument exactly and run the FP32 hardware's CORDIC (:func:`sin_f32`: rotations by
    atan(2^-k) in revolutions, started at the angle's scale): error below 2^-22 ulp before
    one rounding, so within 0.5 ulp + 2^-22 ulp and correctly rounded unless the result is
    that close to a rounding boundary, with exact zeros at multiples of 1/2 (sin) and odd
    multiples of 1/4 (cos).
    ``v_rcp_f64``, ``v_sqrt_f64`` and ``v_rsq_f64`` are correctly rounded. Real SI silicon
    is only accurate to about 1 ulp, so bit-exact agreement with it is not a goal.
Division helpers
    ``v_div_scale``, ``v_div_fmas`` and ``v_div_fixup`` follow AMD's later published
    pseudo-code (the SI manual has none, CLRX's is incomplete) with the scale factors of
    CLRX's GCN 1.0 description: 2^64 for f32, 2^128 for f64 (AMD's RDNA pages print 2^32 and
    2^64 for ``v_div_fmas``, which does not undo ``v_div_scale``). ``v_div_fmas`` is one
    fused multiply-add with a single rounding of ``fma * 2^k``, where ``k = 0`` without VCC,
    ``+64`` (f64: ``+128``) with VCC and ``|S2| >= 2`` (S2 is the scaled quotient, so a large
    one means the denominator was scaled up) and ``-64`` (``-128``) with VCC and
    ``|S2| < 2``. They are defined so that the exact sequences LLVM 19 emits for f32 and f64
    division give the correctly rounded quotient (with f32 denormals flushed or kept); the
    case list is in :mod:`gpgpu_hdl.emu.valu_divide`. These ops flush like any float op.
Other definitions
    ``v_sin/cos_f32`` accept [-256, 256] revolutions (AMD's documented range); beyond it sin
    gives +0 and cos 1.0 (CLRX states [-1, 1] for GCN 1.0; LLVM always reduces first).
    ``v_fract`` is ``min(x - floor(x), largest float below 1)`` as LLVM folds it (SI's
    v_fract_f64 bug is not modelled). ``v_frexp_exp`` gives -1 and ``v_frexp_mant`` NaN for
    inf/NaN (GCN 1.0, per CLRX). Packed conversions (``v_cvt_pknorm_*``, ``v_cvt_pk_u8``)
    round to nearest even and saturate, NaN gives 0. ``v_trig_preop_f64`` reads a 1184-bit
    2/pi table and returns 0 past it (LLVM's constant folding).
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

__all__ = [
    "F16_NAN", "F32_NAN", "F64_NAN",
    "flush_f32", "flush_f64", "src_f32", "src_f64", "res_f32", "res_f64",
    "fma_f32", "fma_f64",
    "rcp_f32", "rsq_f32", "sqrt_f32", "exp2_f32", "log2_f32", "sin_f32", "cos_f32",
    "rcp_f64", "rsq_f64", "sqrt_f64",
    "f16_to_f32", "f32_to_f16",
]

#: Canonical quiet NaNs.
F16_NAN = 0x7E00
F32_NAN = 0x7FC00000
F64_NAN = 0x7FF8000000000000

# 0-d constant arrays: numpy combines them with (64,) arrays faster than scalars.
_U32 = np.uint32
_U64 = np.uint64
_SIGN32 = np.array(0x80000000, _U32)
_MANT32 = np.array(0x007FFFFF, _U32)
_ONE32 = np.array(1, _U32)
_ABS32 = np.array(0x7FFFFFFF, _U32)
_NAN32 = np.array(F32_NAN, _U32)
_SIGN64 = np.array(0x8000000000000000, _U64)
_MANT64 = np.array(0x000FFFFFFFFFFFFF, _U64)
_ONE64 = np.array(1, _U64)
_ABS64 = np.array(0x7FFFFFFFFFFFFFFF, _U64)
_NAN64 = np.array(F64_NAN, _U64)
_LOW28 = np.array(0x0FFFFFFF, _U64)


# ---------------------------------------------------------------------------------------------
# Denormal flushing and the input/output stages of every float operation
# ---------------------------------------------------------------------------------------------

def flush_f32(bits: np.ndarray) -> np.ndarray:
    """Replace f32 denormals by a zero of the same sign.

    Parameters
    ----------
    bits : numpy.ndarray
        ``uint32`` f32 bit patterns. Not modified.

    Returns
    -------
    numpy.ndarray
        ``uint32`` bit patterns; ``bits`` itself when it holds no denormal.
    """
    den = ((bits & _ABS32) - _ONE32) < _MANT32          # magnitude in [1, 0x7FFFFF]
    if not np.count_nonzero(den):
        return bits
    return np.where(den, bits & _SIGN32, bits)


def flush_f64(bits: np.ndarray) -> np.ndarray:
    """Replace f64 denormals by a zero of the same sign (see :func:`flush_f32`)."""
    den = ((bits & _ABS64) - _ONE64) < _MANT64
    if not np.count_nonzero(den):
        return bits
    return np.where(den, bits & _SIGN64, bits)


def src_f32(ctx, bits: np.ndarray, always_flush: bool = False) -> np.ndarray:
    """Input stage of an f32 source: flush per ``ctx.mode`` and view as ``float32``.

    Parameters
    ----------
    ctx : LaneContext
        Supplies ``mode.flush_in_f32``.
    bits : numpy.ndarray
        ``uint32`` operand (not modified; the result may be a view of it).
    always_flush : bool
        Flush whatever MODE says (mad family, log, rsq).

    Returns
    -------
    numpy.ndarray
        ``float32`` values.
    """
    if always_flush or ctx.mode.flush_in_f32:
        bits = flush_f32(bits)
    return bits.view(np.float32)


def src_f64(ctx, bits: np.ndarray) -> np.ndarray:
    """Input stage of an f64 source: flush per ``ctx.mode.flush_in_f64``, view as float64."""
    if ctx.mode.flush_in_f64:
        bits = flush_f64(bits)
    return bits.view(np.float64)


def res_f32(ctx, value: np.ndarray, always_flush: bool = False) -> np.ndarray:
    """Output stage of an f32 result: flush per ``ctx.mode``, canonicalise NaNs.

    Parameters
    ----------
    ctx : LaneContext
        Supplies ``mode.flush_out_f32``.
    value : numpy.ndarray
        ``float32`` result, a fresh array that aliases no operand (it may be reused).
    always_flush : bool
        Flush whatever MODE says.

    Returns
    -------
    numpy.ndarray
        ``uint32`` result bits.
    """
    bits = value.view(np.uint32)
    if always_flush or ctx.mode.flush_out_f32:
        bits = flush_f32(bits)
    nan = np.isnan(value)
    if np.count_nonzero(nan):
        bits = np.where(nan, _NAN32, bits)
    return bits


def res_f64(ctx, value: np.ndarray) -> np.ndarray:
    """Output stage of an f64 result (see :func:`res_f32`)."""
    bits = value.view(np.uint64)
    if ctx.mode.flush_out_f64:
        bits = flush_f64(bits)
    nan = np.isnan(value)
    if np.count_nonzero(nan):
        bits = np.where(nan, _NAN64, bits)
    return bits


# ---------------------------------------------------------------------------------------------
# Fused multiply-add
# ---------------------------------------------------------------------------------------------

def fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray,
            scale: np.ndarray | None = None) -> np.ndarray:
    """Correctly rounded ``a*b + c`` (times ``scale``) in binary32, one rounding.

    The product of two binary32 values is exact in binary64, so ``s = RN64(a*b + c)`` has
    one rounding. Rounding ``s`` to binary32 is then correct unless ``s`` is exactly a
    binary32 rounding boundary (a midpoint) that the exact value is not: RN64 is monotonic
    and the midpoints are binary64 numbers, so it cannot carry the exact value across one.
    Midpoints have their 28 low binary64 mantissa bits clear; only for such lanes the sum
    is recomputed rounded to odd (TwoSum error term; when inexact and the last bit is even,
    step one ulp towards the exact value), which is provably a correct pre-rounding for a
    final rounding to 24 bits or fewer (53 >= 24 + 2), binary32 denormals included. No
    flushing is done here.

    Parameters
    ----------
    a, b, c : numpy.ndarray
        ``float32`` operands.
    scale : numpy.ndarray, optional
        ``float64`` powers of two (per lane) applied to the exact result before the
        rounding; used by ``v_div_fmas_f32`` (2^64, 2^-64 or 1).

    Returns
    -------
    numpy.ndarray
        ``float32`` results (NaN/inf per IEEE-754 fma).
    """
    p = a.astype(np.float64) * b.astype(np.float64)        # exact: 24 + 24 bits
    c64 = c.astype(np.float64)
    s = p + c64
    if scale is not None:
        s = s * scale                                      # exact power-of-two scaling
    if np.count_nonzero((s.view(np.uint64) & _LOW28) == 0):
        if scale is not None:
            p = p * scale
            c64 = c64 * scale
        bv = s - p
        t = (p - (s - bv)) + (c64 - bv)                    # s + t == p + c exactly
        sb = s.view(np.int64)
        fix = (np.abs(t) > 0) & ((sb & 1) == 0)            # inexact with even last bit
        if np.count_nonzero(fix):
            step = np.where((t > 0) == (s > 0), 1, -1)     # towards the exact value
            s = np.where(fix, sb + step, sb).view(np.float64)
    return s.astype(np.float32)


_SPLIT = 134217729.0                 # 2^27 + 1, Veltkamp splitter for binary64
_TINY_PRODUCT = 2.0 ** -968          # below this Dekker's product error may be inexact
_HUGE = 2.0 ** 1022
_HUGE_FACTOR = 2.0 ** 995            # splitting a larger factor may overflow
_MIN_SAFE_SCALED = 2.0 ** -1021      # scaled results below this need the exact path
_MIN_NORMAL = 2.0 ** -1022           # splitting a denormal factor is not error-free


def _fraction_to_f64(x: Fraction) -> float:
    """Round an exact rational to the nearest binary64 (ties to even, with denormals)."""
    if x == 0:
        return 0.0
    try:
        return x.numerator / x.denominator           # Python int division rounds correctly
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def fma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray,
            scale: np.ndarray | None = None) -> np.ndarray:
    """Correctly rounded binary64 ``a*b + c`` (times ``scale``), one rounding.

    Error-free transformations: Dekker's TwoProduct (Veltkamp splitting) gives ``a*b = p + e``
    exactly, TwoSum gives ``p + c = s + t1``, ``t1 + e = w + werr`` and ``s + w = r + rerr``,
    so ``a*b + c = r + rerr + werr`` exactly and ``r = RN(s + w)``. ``r`` is certified to be
    the correctly rounded result when ``werr == 0`` (the usual case: then ``s + w`` is the
    exact value) or when ``|rerr| + |werr|`` is below half the smaller gap around ``r``.
    The rare lanes without a certificate (operands or products near the underflow or
    overflow thresholds, exact-cancellation corner cases, scaled results that leave the
    normal range) are computed exactly with :class:`fractions.Fraction` and rounded by
    Python's correctly rounded integer division.

    Parameters
    ----------
    a, b, c : numpy.ndarray
        ``float64`` operands.
    scale : numpy.ndarray, optional
        ``float64`` powers of two applied to the exact result before rounding
        (``v_div_fmas_f64``).

    Returns
    -------
    numpy.ndarray
        ``float64`` results (NaN/inf per IEEE-754 fma).
    """
    p = a * b
    ga = a * _SPLIT
    ah = ga - (ga - a)
    al = a - ah
    gb = b * _SPLIT
    bh = gb - (gb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bv = s - p
    t1 = (p - (s - bv)) + (c - bv)
    w = t1 + e
    wv = w - t1
    werr = (t1 - (w - wv)) + (e - wv)
    r = s + w
    out = r if scale is None else r * scale

    aa, ab, ap = np.abs(a), np.abs(b), np.abs(p)
    ok = ((ap >= _TINY_PRODUCT) & (ap < _HUGE) & (np.minimum(aa, ab) >= _MIN_NORMAL)
          & (np.maximum(aa, ab) < _HUGE_FACTOR) & (np.abs(s) < _HUGE))
    uncertain = werr != 0
    if np.count_nonzero(uncertain):
        rv = r - s
        rerr = (s - (r - rv)) + (w - rv)
        ar = np.abs(r)
        half_gap = (ar - np.nextafter(ar, 0.0)) * 0.5
        ok &= ~uncertain | ((np.abs(rerr) + np.abs(werr)) < half_gap)
    if scale is not None:
        ao = np.abs(out)
        ok &= (scale == 1.0) | ((ao >= _MIN_SAFE_SCALED) & (ao < _HUGE))
    if np.count_nonzero(ok) == ok.size:
        return out
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    zero_product = (a == 0) | (b == 0)
    exact = finite & zero_product                      # 0*b + c needs one rounding only
    ok |= exact
    special = ~finite
    if np.count_nonzero(special | exact):
        # a or b inf/NaN: the product is exactly inf/NaN; only c non-finite: the result is c
        direct = np.where(np.isfinite(a) & np.isfinite(b), c, p + c)
        direct = np.where(exact, p + c, direct)
        if scale is not None:
            direct = direct * scale
        out = np.where(special | exact, direct, out)
    slow = np.flatnonzero(~ok & finite)
    if slow.size:
        for i in slow:
            x = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
            if scale is not None:
                x *= Fraction(float(scale[i]))
            out[i] = _fraction_to_f64(x)
    return out


# ---------------------------------------------------------------------------------------------
# Transcendental models (one function per instruction family)
# ---------------------------------------------------------------------------------------------

def rcp_f32(x: np.ndarray) -> np.ndarray:
    """``v_rcp_f32`` model: 1/x, correctly rounded (binary64 quotient rounded once more).

    Parameters
    ----------
    x : numpy.ndarray
        ``float32`` input, already flushed as the instruction requires.

    Returns
    -------
    numpy.ndarray
        ``float32``; 1/±0 = ±inf, 1/±inf = ±0.
    """
    return (1.0 / x.astype(np.float64)).astype(np.float32)


_LOW29 = np.array(0x1FFFFFFF, _U64)
_HALF29 = 1 << 28                    # the low 29 binary64 mantissa bits of a binary32 midpoint
_RSQ_MARGIN = 4                      # binary64 ulps the estimate may be off (it is off < 2)
_RSQ_K = 40                          # 2**K / sqrt(sig) has at least 28 bits for sig < 2**25


def _rsq_f32_exact(bits: int) -> int:
    """Correctly rounded binary32 1/sqrt(x) of a positive finite binary32 ``x``, exactly.

    Integer arithmetic only: with ``x = sig * 2**e`` (``e`` made even), the truncated root
    ``y = isqrt(2**(2K) // sig) = floor(2**K / sqrt(sig))`` has at least 28 bits, it is exact
    when ``y*y*sig == 2**(2K)``, and ``y`` with that sticky bit is rounded to 24 bits (nearest
    even). The result is always a normal number (``2**-64 <= 1/sqrt(x) < 2**75``).

    Parameters
    ----------
    bits : int
        The binary32 pattern of ``x``, ``0 < x < inf`` (a denormal is not flushed here).

    Returns
    -------
    int
        The binary32 pattern of the result.
    """
    exp, mant = bits >> 23 & 0xFF, bits & 0x7FFFFF
    if not 0 < bits < 0x7F800000:
        raise ValueError(f"_rsq_f32_exact needs a positive finite nonzero input, not {bits:#x}")
    sig, e = (mant | 1 << 23, exp - 150) if exp else (mant, -149)
    if e & 1:
        sig, e = sig << 1, e - 1
    y = math.isqrt((1 << 2 * _RSQ_K) // sig)          # floor(sqrt(floor(a/b))) = floor(sqrt(a/b))
    inexact = y * y * sig != 1 << 2 * _RSQ_K
    shift = y.bit_length() - 24
    keep, rest = y >> shift, y & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and (inexact or keep & 1)):
        keep += 1
    scale = shift - e // 2 - _RSQ_K                    # result = keep * 2**scale
    if keep >> 24:
        keep, scale = keep >> 1, scale + 1
    return (scale + 150) << 23 | (keep & 0x7FFFFF)


def rsq_f32(x: np.ndarray) -> np.ndarray:
    """``v_rsq_f32`` model: 1/sqrt(x) correctly rounded (x < 0: NaN, ±0: ±inf, +inf: +0).

    ``r = RN64(1 / RN64(sqrt(x)))`` is within 2 binary64 ulps of the exact value, so rounding
    it to binary32 is correct unless a binary32 midpoint (low 29 binary64 mantissa bits
    ``2**28``) lies within that distance; those rare lanes are computed exactly by
    :func:`_rsq_f32_exact`.

    Parameters
    ----------
    x : numpy.ndarray
        ``float32`` input, already flushed as the instruction requires.

    Returns
    -------
    numpy.ndarray
        ``float32`` results.
    """
    r = 1.0 / np.sqrt(x.astype(np.float64))
    out = r.astype(np.float32)
    low = (r.view(np.uint64) & _LOW29).astype(np.int64) - _HALF29
    unsure = np.flatnonzero((np.abs(low) <= _RSQ_MARGIN) & (x > 0) & (x < np.inf))
    if unsure.size:
        bits = out.view(np.uint32)
        for i in unsure:
            bits[i] = _rsq_f32_exact(int(x[i:i + 1].view(np.uint32)[0]))
    return out


def sqrt_f32(x: np.ndarray) -> np.ndarray:
    """``v_sqrt_f32`` model: correctly rounded sqrt (x < 0: NaN, sqrt(-0) = -0)."""
    return np.sqrt(x.astype(np.float64)).astype(np.float32)


_EXP_F = 52                          # fraction bits of the reduced argument
_EXP_G = 54                          # fraction bits of the product
_EXP_STEPS = 48                      # factors (1 + 2**-k), k = 1..48


def _log2_table(frac_bits: int, steps: int) -> tuple[int, ...]:
    """``round(log2(1 + 2**-k) * 2**frac_bits)`` (nearest even) for k = 1..steps."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        ln2 = decimal.Decimal(2).ln()
        scale = decimal.Decimal(2) ** frac_bits
        return tuple(int(((1 + decimal.Decimal(2) ** -k).ln() / ln2 * scale)
                         .to_integral_value(decimal.ROUND_HALF_EVEN))
                     for k in range(1, steps + 1))


#: log2(1 + 2**-k) in units of 2**-52, k = 1..48: the constants of v_exp_f32.
_EXP_TABLE: tuple[int, ...] = _log2_table(_EXP_F, _EXP_STEPS)


def exp2_f32(x: np.ndarray) -> np.ndarray:
    """``v_exp_f32`` model: 2^x by the FP32 hardware's shift-and-add algorithm.

    +0 for x < -126 (never a denormal), +inf for x >= 128, NaN for NaN. Otherwise, with
    ``X = floor(x * 2**52) = i * 2**52 + r`` (``0 <= r < 2**52``, exact in binary64: a
    non-integer ``x * 2**52`` is below 2**24), the greedy digit recurrence

    .. code::

        Y = 2**54
        for k in 1..48:
            if r >= _EXP_TABLE[k - 1]: r -= _EXP_TABLE[k - 1]; Y += Y >> k

    leaves ``Y * 2**-54`` = 2^(x - i) times a relative error below 2^-46 (input truncation
    ln2 * 2^-52, final remainder r < 24 * 2^-52, the 48 rounded constants 48 * 2^-53 in the
    exponent, the truncated shifts 48 * 2^-54), and ``Y * 2**(i - 54)`` is rounded once to
    binary32 (nearest even): within 0.5 + 2^-22 ulp of 2^x, correctly rounded unless 2^x is
    that close to a rounding boundary.

    Parameters
    ----------
    x : numpy.ndarray
        ``float32`` input, flushed per MODE.

    Returns
    -------
    numpy.ndarray
        ``float32`` results.
    """
    x64 = x.astype(np.float64)
    ok = (x64 >= -126.0) & (x64 < 128.0)
    big = np.floor(np.where(ok, x64, 0.0) * 2.0 ** _EXP_F).astype(np.int64)
    i = big >> _EXP_F
    r = big & ((1 << _EXP_F) - 1)
    y = np.full(x.shape, 1 << _EXP_G, np.int64)
    for k, c in enumerate(_EXP_TABLE, start=1):
        take = r >= c
        r = np.where(take, r - c, r)
        y = np.where(take, y + (y >> k), y)
    # round y * 2**(i - 54), y in [2**54, 2**55), to 24 bits
    drop = _EXP_G - 23
    keep = y >> drop
    rest = y & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    keep = keep + ((rest > half) | ((rest == half) & ((keep & 1) == 1)))
    carry = keep >> 24
    biased = i + 127 + carry
    bits = (biased << 23 | ((keep >> carry) & 0x7FFFFF)).astype(np.uint32)
    bits = np.where(biased >= 255, np.uint32(0x7F800000), bits)
    bits = np.where(x64 >= 128.0, np.uint32(0x7F800000), bits)
    bits = np.where(ok | (x64 >= 128.0), bits, np.uint32(0))
    bits = np.where(np.isnan(x64), _NAN32, bits)
    return bits.astype(np.uint32).view(np.float32)


_LOG_F = 52                          # fraction bits of the scaled deviation W
_LOG_A = 56                          # fraction bits of the sum R, relative to the result's scale
_LOG_STEPS = 48                      # factors (1 + 2**-k), k = ks .. ks + 47
_LOG_KMAX = 23 + _LOG_STEPS - 1      # the largest k (ks <= 23)


def _log2_factor_table(kind: str, frac_bits: int, kmin: int, kmax: int) -> tuple[int, ...]:
    """``round(T_k * 2**(k + frac_bits))`` (nearest even) for k = kmin..kmax, where ``T_k`` is
    ``log2(1 + 2**-k)`` (``kind="up"``) or ``-log2(1 - 2**-k)`` (``kind="down"``): the constants
    with a fixed relative precision (each is ``2**frac_bits`` times a number in [1, 2))."""
    with decimal.localcontext() as ctx:
        ctx.prec = 90
        ln2 = decimal.Decimal(2).ln()
        out = []
        for k in range(kmin, kmax + 1):
            t = decimal.Decimal(2) ** -k
            v = (1 + t).ln() if kind == "up" else -(1 - t).ln()
            out.append(int((v / ln2 * decimal.Decimal(2) ** (k + frac_bits))
                           .to_integral_value(decimal.ROUND_HALF_EVEN)))
        return tuple(out)


#: v_log_f32: log2(1 + 2**-k) * 2**(k + 56), k = 1..70, and -log2(1 - 2**-c) * 2**(c + 56),
#: c = 2..22 (rounded to nearest).
_LOG_UP: tuple[int, ...] = _log2_factor_table("up", _LOG_A, 1, _LOG_KMAX)
_LOG_DOWN: tuple[int, ...] = _log2_factor_table("down", _LOG_A, 2, 22)
_LOG_DOWN_ARRAY = np.array((0, 0, *_LOG_DOWN), np.int64)       # indexed by c
_LOG_STEP = np.arange(_LOG_STEPS)[:, None]
#: The addends ``UP[ks + i] >> (shift + i)`` of step i, indexed by (ks, shift, i).
_LOG_TERMS = (np.array((0, *_LOG_UP), np.int64)[np.arange(24)[:, None, None] + _LOG_STEP.T]
              >> (np.arange(8)[None, :, None] + _LOG_STEP.T))


def _bit_length(v: np.ndarray) -> np.ndarray:
    """``int.bit_length`` of each non-negative ``int64`` below 2**53 (exact: ``frexp``)."""
    return np.frexp(v.astype(np.float64))[1].astype(np.int64)


def log2_f32(x: np.ndarray) -> np.ndarray:
    """``v_log_f32`` model: log2(x) by the FP32 hardware's shift-and-add algorithm.

    NaN for NaN and x < 0 (-inf included, -0 excluded), -inf for ±0, +inf for +inf, and
    ``e`` exactly for ``x = 2**e`` (+0 for 1). Otherwise (x normal: the input is flushed)
    ``x = 2**E * x'`` with ``x'`` in (1/2, 1), so ``log2(x) = E - log2(1/x')``; only for x in
    (1, 5/4), where that would cancel, ``x' = x * (1 - 2**-c)`` instead, with ``2**-(c+1) <=
    x - 1 < 2**-c``, and ``log2(x) = D[c] - log2(1/x')``, ``D[c] = -log2(1 - 2**-c)``.
    ``log2(1/x')`` comes from the greedy factorization ``x' * prod(1 + 2**-k) <= 1`` over
    ``k = ks .. ks + 47``, with the deviation ``s = 1 - x' * prod`` kept scaled as
    ``W = s * 2**(k + 52)``, an integer below 2**53::

        for k in ks .. ks + 47:
            T = W + (W >> k)            # 2**(k+52) * (1 - x' * prod * (1 + 2**-k)) + 2**52
            if T >= 2**52: W = T - 2**52; S += UP[k] >> (k - u)
            W = 2 * W

    ``ks`` is 1, but ``c`` for x in (1, 5/4) and the leading zeros of the 24-bit ``1 - x'``
    for x in (1/2, 1): it skips factors that are never taken, so that the last one is
    ``2**-47`` relative to the result. ``S`` sums the taken ``log2(1 + 2**-k)`` in units of
    ``2**-(56 + u)``, a scale making the result ``R = |log2 x| * 2**(56 + u)`` lie in [2**54,
    2**58): ``u = ks`` near 1, else ``2 - bitlen(|E| + 1)``; ``UP[k]`` is ``log2(1 + 2**-k) *
    2**(k + 56)`` rounded to an integer (57 bits). Then ``R = S`` for x in (1/2, 1),
    ``DOWN[c] - S`` for x in (1, 5/4) (``DOWN[c] = D[c] * 2**(c + 56)`` rounded), and
    ``|E| * 2**(56 + u) -+ S`` otherwise; ``R * 2**-(56 + u)`` with its sign is rounded once
    to binary32, nearest even (:func:`_log2_fixed` returns it unrounded).

    Error before that rounding: below 2^-22 ulp of the result. The final deviation ``s`` leaves out
    ``log2(1/(1 - s)) <= 1.4427 * 2**-(ks+47)``, the result being at least ``2**-(u+1)``
    (``2**-(u+2)`` where ``ks > u``): at most 1.4427 * 2^-23 ulp; the truncated ``W >> k`` (less
    than 2**-(52+k) each in ``s``), the 48 truncated ``UP[k] >> (k - u)`` and the rounded constants
    add less than 0.4 * 2^-23 ulp. Measured over every significand of each case: 2^-22.42 ulp at
    most. So the result is within 0.5 + 2^-22 ulp of log2(x) and correctly rounded unless log2(x) is
    that close to a rounding boundary.

    Parameters
    ----------
    x : numpy.ndarray
        ``float32`` input, already flushed (``v_log_f32`` always flushes denormals; an
        unflushed one counts as zero).

    Returns
    -------
    numpy.ndarray
        ``float32`` results.
    """
    bits = x.view(np.uint32).astype(np.int64)
    exp = bits >> 23 & 0xFF
    ok = (bits >> 31 == 0) & (exp > 0) & (exp < 255)       # positive normal
    special = np.where(exp == 0, 0xFF80_0000, np.where(bits == 0x7F80_0000, 0x7F80_0000, F32_NAN))
    negative, r, u = _log2_fixed(np.where(ok, bits, 0x3F80_0000))     # the others as 1.0
    # round r * 2**-(56 + u) to 24 bits: r is 0 (x = 1) or in [2**54, 2**58)
    top = _bit_length(r >> (_LOG_A - 2))                    # its leading bit is 2**(53 + top)
    drop = _LOG_A - 26 + top
    keep = r >> drop
    rest = r & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    keep = keep + ((rest > half) | ((rest == half) & ((keep & 1) == 1)))
    carry = keep >> 24
    biased = 124 + top - u + carry
    out = negative.astype(np.int64) << 31 | biased << 23 | ((keep >> carry) & 0x7FFFFF)
    out = np.where(r == 0, 0, out)
    return np.where(ok, out, special).astype(np.uint32).view(np.float32)


def _log2_fixed(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unrounded result of :func:`log2_f32` for positive normal binary32 ``bits``
    (``int64``): ``(negative, r, u)`` with ``log2(x) ~ (-1 if negative else 1) * r * 2**-(56 +
    u)``, ``r`` 0 (x = 1) or in [2**54, 2**58)."""
    mant = bits & 0x7FFFFF
    e = (bits >> 23) - 127
    pow2 = mant == 0
    big_e = e + 1 - pow2
    below = (big_e == 0) & ~pow2                             # x in (1/2, 1)
    c = 23 - _bit_length(mant)
    above = (e == 0) & (c >= 2) & ~pow2                     # x in (1, 5/4)
    v = np.where(pow2, 0, (1 << 23) - mant)                 # 2**24 * (1 - x') unless above
    ks = np.where(below, 24 - _bit_length(v), np.where(above, c, 1))
    w = np.where(above, ((1 << 23) - (mant << c) + mant) << (_LOG_F - 23),
                 v << (_LOG_F - 24 + ks))
    mag = np.abs(big_e)
    u_e = 2 - _bit_length(mag + 1)
    u = np.where(below | above, ks, u_e)
    one = 1 << _LOG_F
    k = ks + _LOG_STEP
    takes = np.empty(k.shape, bool)
    for i in range(_LOG_STEPS):
        t = w >> k[i]
        t += w
        take = np.greater_equal(t, one, out=takes[i])
        t &= one - 1                 # t - 1: t < 2 (the hardware keeps W's 52 fraction bits)
        w = np.where(take, t, w)
        w <<= 1
    s = (_LOG_TERMS[ks, ks - u] * takes.T).sum(axis=1)
    negative = below | (~above & (big_e < 0))
    base = np.where(above, _LOG_DOWN_ARRAY[np.where(above, c, 0)], mag << (_LOG_A + u_e))
    r = np.where(below, s, np.where(negative, base + s, base - s))
    return negative, r, u


_TRIG_X = 56                         # fraction bits of x and y (y: relative to 2**-ks)
_TRIG_Z = 58                         # fraction bits of z (revolutions, relative to 2**-ks)
_TRIG_STEPS = 48                     # rotations by atan(2**-k), k = ks .. ks + 47
_TRIG_KCAP = 32                      # beyond k = 32 the scaled constants no longer change


def _decimal_pi() -> decimal.Decimal:
    """pi to the context's precision (Machin's formula)."""
    def arctan_inv(n: int) -> decimal.Decimal:
        x = decimal.Decimal(1) / n
        s, t, k = x, x, 1
        while True:
            t = -t * x * x
            k += 2
            if abs(t) < decimal.Decimal(10) ** -(decimal.getcontext().prec + 2):
                return s
            s += t / k
    return 16 * arctan_inv(5) - 4 * arctan_inv(239)


def _trig_tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``ATAN[k] = round(atan(2**-k) / (2*pi) * 2**(k + 58))`` for k = 0..32 (revolutions, with
    a fixed relative precision) and ``INVK[ks] = round(2**56 / prod(sqrt(1 + 2**-2k), k = ks ..
    ks + 47))`` for ks = 0..32 (nearest even)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        two = decimal.Decimal(2)
        pi = _decimal_pi()
        atan = []
        for k in range(_TRIG_KCAP + 1):
            y = two ** -k
            v, term, n = (pi / 4, 0, 0) if k == 0 else (decimal.Decimal(0), y, 0)
            while term > decimal.Decimal(10) ** -82:        # the arctan series (k >= 1)
                v += term / (2 * n + 1) * (-1) ** n
                term *= y * y
                n += 1
            atan.append(int((v / (2 * pi) * two ** (k + _TRIG_Z))
                            .to_integral_value(decimal.ROUND_HALF_EVEN)))
        invk = []
        for ks in range(_TRIG_KCAP + 1):
            gain = decimal.Decimal(1)
            for k in range(ks, ks + _TRIG_STEPS):
                gain *= (1 + two ** (-2 * k)).sqrt()
            invk.append(int((two ** _TRIG_X / gain).to_integral_value(decimal.ROUND_HALF_EVEN)))
    return tuple(atan), tuple(invk)


#: v_sin_f32/v_cos_f32: the CORDIC angles (revolutions) and start values (see _trig_tables).
_TRIG_ATAN, _TRIG_INVK = _trig_tables()
_TRIG_INVK_ARRAY = np.array(_TRIG_INVK, np.int64)
_TRIG_STEP = np.arange(_TRIG_STEPS)
#: z's decrement at step i: ATAN[min(ks + i, 32)] >> i, indexed by (min(ks, 32), i).
_TRIG_TERMS = (np.array(_TRIG_ATAN, np.int64)[
    np.minimum(np.arange(_TRIG_KCAP + 1)[:, None] + _TRIG_STEP, _TRIG_KCAP)] >> _TRIG_STEP)


def _sin_cos_f32(x: np.ndarray, cos: bool) -> np.ndarray:
    """``sin(2*pi*x)`` (``cos`` false) or ``cos(2*pi*x)`` by the FP32 hardware's algorithm,
    as ``float32`` (see :func:`sin_f32`)."""
    direct, negative, ys, ks = _sin_cos_fixed(x, cos)
    run = direct < 0
    # round ys * 2**-(ks + 56), ys in [2**55, 2**57), to binary32 (denormals included)
    top = np.where(run, ys >> _TRIG_X, 1)
    e = top - 1 - ks                                     # the leading bit's weight is 2**e
    drop = np.minimum(_TRIG_X + top - np.where(e >= -126, 24, 150 + e), 63)
    keep = ys >> drop
    rest = ys & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    keep = keep + ((rest > half) | ((rest == half) & ((keep & 1) == 1)))
    out = (np.maximum(e + 126, 0) << 23) + keep          # a carry steps the exponent
    out = out | negative.astype(np.int64) << 31
    return np.where(run, out, direct).astype(np.uint32).view(np.float32)


def _sin_cos_fixed(x: np.ndarray, cos: bool) -> tuple[np.ndarray, ...]:
    """The unrounded result of :func:`_sin_cos_f32`: ``(direct, negative, y, ks)``, where
    ``direct`` is the result's bits for the operands that do not iterate and -1 for the others,
    whose result is ``(-1 if negative else 1) * y * 2**-(ks + 56)``."""
    b = x.view(np.uint32).astype(np.int64)
    sx = b >> 31
    mag = b & 0x7FFF_FFFF
    ef = mag >> 23
    finite = ef < 255
    # NaN/inf: NaN; |x| > 256: sin +0, cos 1; a zero: sin the zero, cos 1
    special = np.where(finite, 0x3F80_0000 if cos else 0, F32_NAN)
    if not cos:
        special = np.where(finite & (mag == 0), sx << 31, special)
    active = finite & (mag != 0) & (mag <= 0x4380_0000)
    sig = np.where(ef > 0, mag & 0x7FFFFF | 1 << 23, mag & 0x7FFFFF)
    e2 = np.maximum(ef, 1) - 150                         # x = sig * 2**e2
    fixed = e2 >= -26                                    # |x| >= 1/8: a multiple of 2**-26
    xi = np.where(fixed & active, sig, 0) << np.where(fixed, e2 + 26, 0)
    frac = xi & ((1 << 26) - 1)
    rneg = (frac > 1 << 25) | ((frac == 1 << 25) & ((xi >> 26 & 1) == 1))
    a = np.where(rneg, (1 << 26) - frac, frac)           # |x - rint(x)| * 2**26
    if cos:                                              # cos(2 pi a) = sin(2 pi (1/4 - a))
        c = (1 << 24) - a
        negative = fixed & (c < 0)
        t = np.abs(c)
    else:                                                # sin(2 pi a) = sin(2 pi (1/2 - a))
        negative = (sx == 1) ^ (fixed & rneg)
        t = np.minimum(a, (1 << 25) - a)
    # start: t in [2**-(ks+3), 2**-(ks+2)) (or ks = 0), z = t * 2**(ks + 58)
    ks = np.maximum(0, 24 - _bit_length(t))
    z = t << (ks + _TRIG_Z - 26)
    small = ~fixed                                       # |x| < 1/8
    if cos:                                              # t = 1/4 - |x|, z rounded down
        sh = e2 + _TRIG_Z
        up = np.where(sh >= 0, sig << np.maximum(sh, 0), -(-sig >> np.minimum(-sh, 63)))
        z = np.where(small, (1 << (_TRIG_Z - 2)) - up, z)
        ks = np.where(small, 0, ks)
    else:                                                # t = |x|
        bl = _bit_length(sig)
        z = np.where(small, sig << np.maximum(_TRIG_Z - 2 - bl, 0), z)
        ks = np.where(small, -e2 - bl - 2, ks)
    zero = active & fixed & (t == 0)                    # sin(n/2), cos(n/2 + 1/4): a zero
    special = np.where(zero, 0 if cos else negative.astype(np.int64) << 31, special)
    run = active & ~zero
    ks = np.where(run, ks, 0)
    z = np.where(run, z, 1)
    # rotations by -+atan(2**-k) towards z = 0 from (1/K, 0), y kept at the scale 2**-ks
    kc = np.minimum(ks, _TRIG_KCAP)
    xs = _TRIG_INVK_ARRAY[kc]
    ys = np.zeros_like(xs)
    terms = np.ascontiguousarray(_TRIG_TERMS[kc].T)     # (step, lane)
    shift_y = np.minimum(2 * ks + _TRIG_STEP[:, None], 63)
    for i in range(_TRIG_STEPS):
        d = z >> 63
        d |= 1                                           # the direction: -1 or 1
        dx = ys >> shift_y[i]
        dx *= d
        dy = xs >> i
        dy *= d
        xs -= dx
        ys += dy
        z -= terms[i] * d
    return np.where(run, -1, special), negative, ys, ks


def sin_f32(x: np.ndarray) -> np.ndarray:
    """``v_sin_f32`` model: sin(2*pi*x), x in revolutions, by the FP32 hardware's CORDIC.

    NaN for inf/NaN; +0 for |x| > 256 (out of the documented range); a zero keeps its sign.
    Otherwise the argument is reduced exactly: ``r = x - rint(x)`` (ties to even) in [-1/2,
    1/2] and ``t = min(|r|, 1/2 - |r|)`` in [0, 1/4], the result ``sign(r) * sin(2*pi*t)``
    (``sign(x)`` when r = 0; ``t = 0`` gives that signed zero, so sin(n/2) is an exact zero).
    For |x| >= 1/8 ``|r|`` is a multiple of 2**-26; below, ``t = |x|``.

    ``sin(2*pi*t)`` is computed by CORDIC with a relative-precision start: with ``t`` in
    [2**-(ks+3), 2**-(ks+2)) (``ks = 0`` for t >= 1/8, so ks up to 146 for a denormal x),
    ``z = t * 2**(ks + 58)``, ``x = INVK[ks]`` (2**56 divided by the gain of the 48 rotations),
    ``y = 0``, and for ``k = ks .. ks + 47`` (step ``i = k - ks``), ``d = -1 if z < 0 else 1``::

        x -= d * (y >> (ks + k))      y += d * (x >> i)      z -= d * (ATAN[k] >> i)

    (all three from the old values; ``ATAN[k] = atan(2**-k) / (2*pi) * 2**(k+58)`` rounded,
    constant from k = 32; shifts are arithmetic, by at most 63). ``y * 2**-(ks + 56)``, in
    [2**-(ks+1), 2**-(ks-1)), is sin(2*pi*t) and is rounded once to binary32 (nearest even;
    a denormal result, from a denormal x, rounded at its own precision).

    Error before that rounding: below 2^-22 ulp of the result (the angle left in ``z``,
    ``|z| <= ATAN[ks+47] >> 47``, is at most 2^-23 ulp; the truncated shifts and rounded
    constants add the rest). Measured: 2^-22.96 ulp at most over every multiple of 2**-26 in
    (0, 1/4] (all values of ``t`` for |x| >= 1/8). So the result is within 0.5 + 2^-22 ulp of
    sin(2*pi*x) and correctly rounded unless that is this close to a rounding boundary;
    sin(1/4) = 1 and sin(1/12) = 1/2 come out exact.

    Parameters
    ----------
    x : numpy.ndarray
        ``float32`` revolutions (flushed per MODE).

    Returns
    -------
    numpy.ndarray
        ``float32``.
    """
    return _sin_cos_f32(x, cos=False)


def cos_f32(x: np.ndarray) -> np.ndarray:
    """``v_cos_f32`` model: cos(2*pi*x) = sin(2*pi*(1/4 - |r|)), r = x - rint(x).

    Computed as :func:`sin_f32` computes ``sin(2*pi*t)``, with ``t = |1/4 - |r||`` and the
    sign of ``1/4 - |r|`` (+0 when it is 0). For |x| < 1/8, ``t = 1/4 - |x|`` is not a short
    binary number: ``z = 2**56 - ceil(|x| * 2**58)`` (ks = 0), i.e. ``t`` rounded down to a
    multiple of 2**-58. |x| > 256 and ±0 give 1.0, inf/NaN give NaN.
    """
    return _sin_cos_f32(x, cos=True)


def rcp_f64(x: np.ndarray) -> np.ndarray:
    """``v_rcp_f64`` model: correctly rounded 1/x."""
    return 1.0 / x


def _rsq_round(x: float, r: float) -> float:
    """Correctly rounded 1/sqrt(x) from an estimate ``r`` within a few ulps. The exact
    result is never a midpoint (its square 1/x would need an odd square denominator), so
    comparing squared midpoints times x with 1 decides the rounding exactly."""
    fx = Fraction(x)
    while True:
        up, down = math.nextafter(r, math.inf), math.nextafter(r, 0.0)
        if ((Fraction(r) + Fraction(up)) / 2) ** 2 * fx < 1:
            r = up
        elif ((Fraction(r) + Fraction(down)) / 2) ** 2 * fx > 1:
            r = down
        else:
            return r


def rsq_f64(x: np.ndarray) -> np.ndarray:
    """``v_rsq_f64`` model: correctly rounded 1/sqrt(x) (binary64 estimate, then an exact
    rounding decision per finite positive lane)."""
    r = 1.0 / np.sqrt(x)
    finite = np.flatnonzero((x > 0) & np.isfinite(x) & np.isfinite(r))
    if len(finite):
        r = r.copy()
        r[finite] = [_rsq_round(float(a), float(b))
                     for a, b in zip(x[finite], r[finite], strict=True)]
    return r


def sqrt_f64(x: np.ndarray) -> np.ndarray:
    """``v_sqrt_f64`` model: correctly rounded sqrt."""
    return np.sqrt(x)


# ---------------------------------------------------------------------------------------------
# Half precision
# ---------------------------------------------------------------------------------------------

_NAN16 = np.array(F16_NAN, np.uint16)


def f16_to_f32(bits: np.ndarray) -> np.ndarray:
    """Exact f16 -> f32 of the low 16 bits of ``uint32`` operands (NaN canonicalised).

    Returns
    -------
    numpy.ndarray
        ``float32`` values (a NaN stays a NaN; the caller's output stage canonicalises it).
    """
    return bits.astype(np.uint16).view(np.float16).astype(np.float32)


def f32_to_f16(x: np.ndarray, rtz: bool = False) -> np.ndarray:
    """f32 -> f16 bit patterns, round to nearest even or toward zero, no flushing.

    Parameters
    ----------
    x : numpy.ndarray
        ``float32`` values.
    rtz : bool
        Round toward zero (``v_cvt_pkrtz_f16_f32``): a finite value never becomes inf.

    Returns
    -------
    numpy.ndarray
        ``uint32`` holding the f16 pattern in the low 16 bits; NaN is ``0x7E00``.
    """
    h = x.astype(np.float16)
    hb = h.view(np.uint16)
    if rtz:
        # RNE rounded away from zero (including overflow to inf): step one ulp back.
        hb = np.where(np.abs(h.astype(np.float32)) > np.abs(x), hb - np.uint16(1), hb)
    hb = np.where(np.isnan(x), _NAN16, hb)
    return hb.astype(np.uint32)
