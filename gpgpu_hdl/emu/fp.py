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
    ``v_log_f32`` (log2 x), ``v_sin_f32`` and ``v_cos_f32`` (argument in revolutions:
    sin(2*pi*x)) are evaluated in binary64 and rounded once: correctly rounded except when
    the exact result lies within about 2^-28 ulp of a rounding boundary (error <= 0.5 ulp +
    2^-28 ulp; these rare cases follow the host libm).
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
    case list is in :mod:`gpgpu_hdl.emu.valu_ops`. These ops flush like any float op.
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


def log2_f32(x: np.ndarray) -> np.ndarray:
    """``v_log_f32`` model: log2(x) from binary64 (x < 0: NaN, ±0: -inf, log2(1) = +0)."""
    return np.log2(x.astype(np.float64)).astype(np.float32)


_TWO_PI = 2.0 * np.pi
_TRIG_RANGE = 256.0      # |x| > 256 revolutions is out of range: sin gives 0, cos gives 1


def _revolutions(x: np.ndarray) -> np.ndarray:
    """``x - rint(x)`` in [-0.5, 0.5] (exact in binary64), keeping the sign of x on zeros."""
    x64 = x.astype(np.float64)
    r = x64 - np.rint(x64)
    return np.where(r == 0.0, x64 * 0.0, r)


def sin_f32(x: np.ndarray) -> np.ndarray:
    """``v_sin_f32`` model: sin(2*pi*x), x in revolutions.

    The argument is reduced exactly to t in [-1/4, 1/4] revolutions (sin(2*pi*x) =
    sin(2*pi*t) by periodicity and sin(pi - y) = sin(y)), so exact zeros and ones come out
    exact. |x| > 256 gives +0 (out of the documented input range), inf/NaN give NaN.

    Parameters
    ----------
    x : numpy.ndarray
        ``float32`` revolutions (flushed per MODE).

    Returns
    -------
    numpy.ndarray
        ``float32``.
    """
    r = _revolutions(x)
    ar = np.abs(r)
    t = np.where(ar > 0.25, np.copysign(0.5 - ar, r), r)
    y = np.sin(_TWO_PI * t)
    y = np.where(np.abs(x) > _TRIG_RANGE, 0.0, y)
    return np.where(np.isfinite(x), y, np.nan).astype(np.float32)


def cos_f32(x: np.ndarray) -> np.ndarray:
    """``v_cos_f32`` model: cos(2*pi*x) = sin(2*pi*(1/4 - |t|)), t = x mod 1 in [-1/2, 1/2].

    |x| > 256 gives 1.0, inf/NaN give NaN (see :func:`sin_f32`).
    """
    r = _revolutions(x)
    y = np.sin(_TWO_PI * (0.25 - np.abs(r)))
    y = np.where(np.abs(x) > _TRIG_RANGE, 1.0, y)
    return np.where(np.isfinite(x), y, np.nan).astype(np.float32)


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
