"""Vector ALU semantics: f32 and f64 arithmetic.

Add, multiply, mad/fma (legacy forms included), ldexp, min/max/med3, rounding and fraction,
frexp, the transcendentals (models in :mod:`gpgpu_hdl.emu.fp`) and the cube map helpers.
Registered in :data:`~gpgpu_hdl.emu.valu_common.VALU_OPS`; conventions in
:mod:`gpgpu_hdl.emu.valu_ops`.
"""

from __future__ import annotations

import numpy as np

from . import fp
from .fp import res_f32, res_f64, src_f32, src_f64
from .valu_common import F32, F64, I32, U32, U64, c32, register

__all__: list[str] = []

_NAN32 = c32(fp.F32_NAN)
_NAN64 = np.array(fp.F64_NAN, U64)
_FLT_MAX = float(np.finfo(F32).max)
_DBL_MAX = float(np.finfo(F64).max)


@register("v_add_f32")
def _add_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, a) + src_f32(ctx, b))


@register("v_sub_f32")
def _sub_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, a) - src_f32(ctx, b))


@register("v_subrev_f32")
def _subrev_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, b) - src_f32(ctx, a))


@register("v_mul_f32")
def _mul_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, a) * src_f32(ctx, b))


def _legacy_mul(x, y):
    """DX9 multiply: 0 times anything (inf and NaN included) is +0 (LLVM fmul_legacy)."""
    return np.where((x == 0) | (y == 0), F32(0.0), x * y)


@register("v_mul_legacy_f32")
def _mul_legacy_f32(ctx, a, b):
    return res_f32(ctx, _legacy_mul(src_f32(ctx, a), src_f32(ctx, b)))


def _mad(ctx, a, b, c, legacy=False):
    """Unfused a*b + c; inputs, product and result always flushed (see fp module)."""
    x, y, z = (src_f32(ctx, s, always_flush=True) for s in (a, b, c))
    p = _legacy_mul(x, y) if legacy else x * y
    p = fp.flush_f32(p.view(U32)).view(F32)
    return res_f32(ctx, p + z, always_flush=True)


@register("v_mad_f32")
def _mad_f32(ctx, a, b, c):
    return _mad(ctx, a, b, c)


@register("v_mac_f32")
def _mac_f32(ctx, a, b, d_old):
    return _mad(ctx, a, b, d_old)


@register("v_madmk_f32")
def _madmk_f32(ctx, s0, s1, k):
    return _mad(ctx, s0, k, s1)


@register("v_madak_f32")
def _madak_f32(ctx, s0, s1, k):
    return _mad(ctx, s0, s1, k)


@register("v_mad_legacy_f32")
def _mad_legacy_f32(ctx, a, b, c):
    """+0 product when a factor is zero, then the ordinary add (so -0 in S2 gives +0)."""
    return _mad(ctx, a, b, c, legacy=True)


@register("v_mac_legacy_f32")
def _mac_legacy_f32(ctx, a, b, d_old):
    return _mad(ctx, a, b, d_old, legacy=True)


@register("v_mullit_f32")
def _mullit_f32(ctx, a, b, c):
    """Legacy product when S2 > 0 (NaN is not), else -FLT_MAX (CLRX; R600's MUL_LIT)."""
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    return res_f32(ctx, np.where(z > 0, _legacy_mul(x, y), F32(-_FLT_MAX)))


@register("v_fma_f32")
def _fma_f32(ctx, a, b, c):
    return res_f32(ctx, fp.fma_f32(src_f32(ctx, a), src_f32(ctx, b), src_f32(ctx, c)))


@register("v_add_f64")
def _add_f64(ctx, a, b):
    return res_f64(ctx, src_f64(ctx, a) + src_f64(ctx, b))


@register("v_mul_f64")
def _mul_f64(ctx, a, b):
    return res_f64(ctx, src_f64(ctx, a) * src_f64(ctx, b))


@register("v_fma_f64")
def _fma_f64(ctx, a, b, c):
    return res_f64(ctx, fp.fma_f64(src_f64(ctx, a), src_f64(ctx, b), src_f64(ctx, c)))


@register("v_ldexp_f32")
def _ldexp_f32(ctx, a, b):
    """a * 2^b with one rounding; b is a signed 32-bit integer."""
    n = np.clip(b.view(I32), -400, 400)                 # beyond that the result saturates
    return res_f32(ctx, np.ldexp(src_f32(ctx, a).astype(F64), n).astype(F32))


@register("v_ldexp_f64")
def _ldexp_f64(ctx, a, b):
    return res_f64(ctx, np.ldexp(src_f64(ctx, a), np.clip(b.view(I32), -2200, 2200)))


# --- min / max ---------------------------------------------------------------------------

_QUIET32 = c32(0x00400000)
_QUIET64 = np.array(0x0008000000000000, U64)


def _fminmax(ctx, a, b, is_max, f64):
    """IEEE minNum/maxNum with -0 < +0; returns the result as a float array."""
    if f64:
        x, y, quiet, nan, ut = src_f64(ctx, a), src_f64(ctx, b), _QUIET64, _NAN64, U64
    else:
        x, y, quiet, nan, ut = src_f32(ctx, a), src_f32(ctx, b), _QUIET32, _NAN32, U32
    r = np.fmax(x, y) if is_max else np.fmin(x, y)   # one NaN: the other operand
    eq = x == y
    if np.count_nonzero(eq):                         # equal values: only ±0 differ in bits
        xb, yb = x.view(ut), y.view(ut)
        r = np.where(eq, (xb & yb) if is_max else (xb | yb), r.view(ut)).view(x.dtype)
    if ctx.mode.ieee and np.count_nonzero(np.isnan(x + y)):     # some NaN (or inf - inf)
        snan = (np.isnan(x) & ((x.view(ut) & quiet) == 0)) | \
               (np.isnan(y) & ((y.view(ut) & quiet) == 0))
        r = np.where(snan, nan, r.view(ut)).view(x.dtype)
    return r


def _fminmax_op(is_max, f64):
    res = res_f64 if f64 else res_f32

    def op(ctx, a, b):
        return res(ctx, _fminmax(ctx, a, b, is_max, f64))
    return op


register("v_min_f32")(_fminmax_op(False, False))
register("v_max_f32")(_fminmax_op(True, False))
register("v_min_f64")(_fminmax_op(False, True))
register("v_max_f64")(_fminmax_op(True, True))


@register("v_min3_f32")
def _min3_f32(ctx, a, b, c):
    ab = _fminmax(ctx, a, b, False, False).view(U32)
    return res_f32(ctx, _fminmax(ctx, ab, c, False, False))


@register("v_max3_f32")
def _max3_f32(ctx, a, b, c):
    ab = _fminmax(ctx, a, b, True, False).view(U32)
    return res_f32(ctx, _fminmax(ctx, ab, c, True, False))


@register("v_med3_f32")
def _med3_f32(ctx, a, b, c):
    """Any NaN: ``min3``; otherwise the max of the two operands that are not ``max3``."""
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    top = _fminmax(ctx, _fminmax(ctx, a, b, True, False).view(U32), c, True, False)
    med = np.where(top == x, _fminmax(ctx, b, c, True, False),
                   np.where(top == y, _fminmax(ctx, a, c, True, False),
                            _fminmax(ctx, a, b, True, False)))
    nan = np.isnan(x) | np.isnan(y) | np.isnan(z)
    if np.count_nonzero(nan):
        ab = _fminmax(ctx, a, b, False, False).view(U32)
        med = np.where(nan, _fminmax(ctx, ab, c, False, False), med)
    return res_f32(ctx, med)


@register("v_min_legacy_f32")
def _min_legacy_f32(ctx, a, b):
    x, y = src_f32(ctx, a), src_f32(ctx, b)
    return res_f32(ctx, np.where(x < y, x, y))


@register("v_max_legacy_f32")
def _max_legacy_f32(ctx, a, b):
    x, y = src_f32(ctx, a), src_f32(ctx, b)
    return res_f32(ctx, np.where(x > y, x, y))


# --- rounding and fraction ---------------------------------------------------------------

def _round_op(fn, f64):
    if f64:
        def op(ctx, a):
            return res_f64(ctx, fn(src_f64(ctx, a)))
    else:
        def op(ctx, a):
            return res_f32(ctx, fn(src_f32(ctx, a)))
    return op


register("v_trunc_f32")(_round_op(np.trunc, False))
register("v_ceil_f32")(_round_op(np.ceil, False))
register("v_floor_f32")(_round_op(np.floor, False))
register("v_rndne_f32")(_round_op(np.rint, False))

_ALMOST_ONE32 = F32(np.nextafter(F32(1.0), F32(0.0)))
_ALMOST_ONE64 = np.nextafter(1.0, 0.0)


@register("v_fract_f32")
def _fract_f32(ctx, a):
    """min(x - floor(x), largest float below 1) as LLVM folds it; inf/NaN give NaN."""
    x = src_f32(ctx, a)
    return res_f32(ctx, np.minimum(x - np.floor(x), _ALMOST_ONE32))


@register("v_fract_f64")
def _fract_f64(ctx, a):
    """As ``v_fract_f32`` (SI silicon has a v_fract_f64 bug LLVM works around; the model is
    the intended result)."""
    x = src_f64(ctx, a)
    return res_f64(ctx, np.minimum(x - np.floor(x), _ALMOST_ONE64))


# --- frexp -------------------------------------------------------------------------------

def _frexp_exp(ctx, a, f64):
    x = src_f64(ctx, a) if f64 else src_f32(ctx, a)
    return np.where(np.isfinite(x), np.frexp(x)[1], -1).astype(U32)


def _frexp_mant(x):
    return np.where(np.isinf(x), np.nan, np.frexp(x)[0]).astype(x.dtype)


@register("v_frexp_exp_i32_f32")
def _frexp_exp_f32(ctx, a):
    """Exponent e with x = m * 2^e, 0.5 <= |m| < 1; 0 for zero; -1 for inf/NaN (GCN 1.0)."""
    return _frexp_exp(ctx, a, False)


@register("v_frexp_exp_i32_f64")
def _frexp_exp_f64(ctx, a):
    return _frexp_exp(ctx, a, True)


@register("v_frexp_mant_f32")
def _frexp_mant_f32(ctx, a):
    """Signed mantissa in [0.5, 1); zero stays zero; inf gives NaN (GCN 1.0)."""
    return res_f32(ctx, _frexp_mant(src_f32(ctx, a)))


@register("v_frexp_mant_f64")
def _frexp_mant_f64(ctx, a):
    return res_f64(ctx, _frexp_mant(src_f64(ctx, a)))


# --- transcendentals (models in fp) ------------------------------------------------------

def _clamp_inf(r, big):
    return np.where(np.isinf(r), np.copysign(big, r), r).astype(r.dtype)


@register("v_rcp_f32", "v_rcp_iflag_f32")
def _rcp_f32(ctx, a):
    return res_f32(ctx, fp.rcp_f32(src_f32(ctx, a)))


@register("v_rcp_clamp_f32")
def _rcp_clamp_f32(ctx, a):
    return res_f32(ctx, _clamp_inf(fp.rcp_f32(src_f32(ctx, a)), _FLT_MAX))


@register("v_rcp_legacy_f32")
def _rcp_legacy_f32(ctx, a):
    """rcp, but an infinite result (a zero input) becomes a zero with the input's sign."""
    x = src_f32(ctx, a)
    r = fp.rcp_f32(x)
    return res_f32(ctx, np.where(np.isinf(r), x * F32(0.0), r))


@register("v_rsq_f32")
def _rsq_f32(ctx, a):
    return res_f32(ctx, fp.rsq_f32(src_f32(ctx, a, always_flush=True)))


@register("v_rsq_clamp_f32")
def _rsq_clamp_f32(ctx, a):
    """rsq with ±inf clamped to ±FLT_MAX (as LLVM expands rsq_clamp on newer chips)."""
    return res_f32(ctx, _clamp_inf(fp.rsq_f32(src_f32(ctx, a, always_flush=True)), _FLT_MAX))


@register("v_rsq_legacy_f32")
def _rsq_legacy_f32(ctx, a):
    """rsq with a +inf result replaced by 0 (CLRX)."""
    r = fp.rsq_f32(src_f32(ctx, a, always_flush=True))
    return res_f32(ctx, np.where(r == np.inf, F32(0.0), r))


@register("v_sqrt_f32")
def _sqrt_f32(ctx, a):
    return res_f32(ctx, fp.sqrt_f32(src_f32(ctx, a)))


@register("v_exp_f32")
def _exp_f32(ctx, a):
    return res_f32(ctx, fp.exp2_f32(src_f32(ctx, a)))


@register("v_log_f32")
def _log_f32(ctx, a):
    return res_f32(ctx, fp.log2_f32(src_f32(ctx, a, always_flush=True)))


@register("v_log_clamp_f32")
def _log_clamp_f32(ctx, a):
    """log2 with -inf clamped to -FLT_MAX (CLRX)."""
    r = fp.log2_f32(src_f32(ctx, a, always_flush=True))
    return res_f32(ctx, np.where(r == -np.inf, F32(-_FLT_MAX), r))


@register("v_sin_f32")
def _sin_f32(ctx, a):
    return res_f32(ctx, fp.sin_f32(src_f32(ctx, a)))


@register("v_cos_f32")
def _cos_f32(ctx, a):
    return res_f32(ctx, fp.cos_f32(src_f32(ctx, a)))


@register("v_rcp_f64")
def _rcp_f64(ctx, a):
    return res_f64(ctx, fp.rcp_f64(src_f64(ctx, a)))


@register("v_rcp_clamp_f64")
def _rcp_clamp_f64(ctx, a):
    return res_f64(ctx, _clamp_inf(fp.rcp_f64(src_f64(ctx, a)), _DBL_MAX))


@register("v_rsq_f64")
def _rsq_f64(ctx, a):
    return res_f64(ctx, fp.rsq_f64(src_f64(ctx, a)))


@register("v_rsq_clamp_f64")
def _rsq_clamp_f64(ctx, a):
    return res_f64(ctx, _clamp_inf(fp.rsq_f64(src_f64(ctx, a)), _DBL_MAX))


@register("v_sqrt_f64")
def _sqrt_f64(ctx, a):
    return res_f64(ctx, fp.sqrt_f64(src_f64(ctx, a)))


# --- cube map helpers (LLVM's ConstantFoldAMDGCNCubeIntrinsic, = CLRX) ---------------------

def _cube(ctx, a, b, c):
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    z_major = (az >= ax) & (az >= ay)
    y_major = ~z_major & (ay >= ax)          # NaNs compare false and end up x-major
    return x, y, z, z_major, y_major


@register("v_cubeid_f32")
def _cubeid(ctx, a, b, c):
    """Face id: 4/5 for +z/-z major, 2/3 for y, 0/1 for x ("negative" means < 0)."""
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    face = np.where(zm, np.where(z < 0, 5.0, 4.0),
                    np.where(ym, np.where(y < 0, 3.0, 2.0), np.where(x < 0, 1.0, 0.0)))
    return face.astype(F32).view(U32)


@register("v_cubesc_f32")
def _cubesc(ctx, a, b, c):
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    return res_f32(ctx, np.where(zm, np.where(z < 0, -x, x),
                                 np.where(ym, x, np.where(x < 0, z, -z))))


@register("v_cubetc_f32")
def _cubetc(ctx, a, b, c):
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    return res_f32(ctx, np.where(zm, -y, np.where(ym, np.where(y < 0, -z, z), -y)))


@register("v_cubema_f32")
def _cubema(ctx, a, b, c):
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    return res_f32(ctx, np.where(zm, z, np.where(ym, y, x)) * F32(2.0))
