"""Semantics of the vector ALU instructions (units ``valu``, ``fpu``, ``fpu64``).

:data:`VALU_OPS` maps every VOP1/VOP2/VOP3/VOPC mnemonic of the instruction table (except
the moves and lane operations the emulator core handles itself: ``v_nop``, ``v_clrexcp``,
``v_mov_b32``, ``v_readlane_b32``, ``v_readfirstlane_b32``, ``v_movrels_b32``,
``v_movreld_b32``, ``v_movrelsd_b32``) to a function computing all 64 lanes at once.

Calling convention: ``fn(ctx, *srcs, *extra)``.

* ``ctx`` is a :class:`~gpgpu_hdl.emu.context.LaneContext`.
* ``srcs``: one ``(64,)`` array per source slot the table gives a type (src0, src1, src2):
  ``uint32`` for ``b32``/``f32``/``f16`` (f16 in the low half), ``uint64`` for
  ``b64``/``f64``; raw bits with the VOP3 abs/neg modifiers already applied. Inputs are
  never modified. ``v_madmk_f32``/``v_madak_f32`` get ``(s0, s1, k)`` with ``k`` the literal
  broadcast; the accumulating ``v_mac_f32``/``v_mac_legacy_f32`` and
  ``v_cvt_pkaccum_u8_f32`` (which reads its destination too) get the old destination value as
  third source. The SGPR-pair source of ``v_cndmask_b32``/``v_addc_u32``/``v_subb_u32``/
  ``v_subbrev_u32`` (table src2, ``b64``: VCC in e32, an SGPR pair in e64) is not passed as a
  source; its per-lane bit arrives as the extra argument.
* ``extra``: ``bool`` arrays: ``cin`` for the ``carry_in`` ops, ``sel`` for
  ``v_cndmask_b32``, ``vcc`` for ``v_div_fmas_f32/f64``.
* Result: a fresh ``uint32`` (32-bit destination) or ``uint64`` (64-bit destination) array;
  a ``bool`` array for VOPC (the core writes it to VCC/SDST/EXEC); ``(d, flag)`` for the
  ``vop3b`` ops (carry/borrow out, or the ``v_div_scale`` VCC flag). Output modifiers and
  EXEC masking are the core's job.

The floating-point contract (denormals, NaN, rounding, transcendental models) is in
:mod:`gpgpu_hdl.emu.fp`. Where a definition had to be chosen, the function says so; sources
are CLRX ``doc/GcnInstrs*.md``, LLVM's AMDGPU constant folding and AMD's later ISA guides.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import fp
from .fp import res_f32, res_f64, src_f32, src_f64

__all__ = ["VALU_OPS"]

#: Mnemonic -> semantic function.
VALU_OPS: dict[str, Callable[..., object]] = {}


def _op(*names: str) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Register the decorated function under each of ``names``."""

    def register(fn: Callable[..., object]) -> Callable[..., object]:
        for name in names:
            if name in VALU_OPS:
                raise ValueError(f"{name} registered twice")
            VALU_OPS[name] = fn
        return fn

    return register


_U32 = np.uint32
_U64 = np.uint64
_I32 = np.int32
_I64 = np.int64
_F32 = np.float32
_F64 = np.float64


def _c32(v: int) -> np.ndarray:
    return np.array(v, _U32)


_ONE = _c32(1)
_NAN32 = _c32(fp.F32_NAN)
_NAN64 = np.array(fp.F64_NAN, _U64)
_ABS32 = _c32(0x7FFFFFFF)
_ABS64 = np.array(0x7FFFFFFFFFFFFFFF, _U64)
_M5 = _c32(31)
_M24 = _c32(0xFFFFFF)
_BYTE = _c32(0xFF)
_HALF = _c32(0xFFFF)
_M6 = np.array(63, _U64)
_BYTE_SHIFTS = np.array([0, 8, 16, 24], _U32)
_FLT_MAX = float(np.finfo(_F32).max)
_DBL_MAX = float(np.finfo(_F64).max)


def _bytes(x: np.ndarray) -> np.ndarray:
    """The four bytes of each ``uint32`` lane as a ``(lanes, 4)`` array, byte 0 first."""
    return (x[:, None] >> _BYTE_SHIFTS) & _BYTE


def _pack_bytes(b: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_bytes` (values must be < 256)."""
    return np.bitwise_or.reduce(b.astype(_U32) << _BYTE_SHIFTS, axis=1)


# =============================================================================================
# Integer and bit operations
# =============================================================================================

@_op("v_cndmask_b32")
def _cndmask(_ctx, s0, s1, sel):
    return np.where(sel, s1, s0)


@_op("v_not_b32")
def _not(_ctx, a):
    return ~a


@_op("v_and_b32")
def _and(_ctx, a, b):
    return a & b


@_op("v_or_b32")
def _or(_ctx, a, b):
    return a | b


@_op("v_xor_b32")
def _xor(_ctx, a, b):
    return a ^ b


@_op("v_bfi_b32")
def _bfi(_ctx, a, b, c):
    return (a & b) | (~a & c)


@_op("v_bfm_b32")
def _bfm(_ctx, a, b):
    return ((np.left_shift(_ONE, a & _M5)) - _ONE) << (b & _M5)


def _bfe_parts(b, c):
    off = b & _M5
    width = np.minimum(c & _M5, 32 - off)          # the field stops at bit 31
    return off, width


@_op("v_bfe_u32")
def _bfe_u32(_ctx, a, b, c):
    off, width = _bfe_parts(b, c)
    return (a >> off) & ((np.left_shift(_ONE, width)) - _ONE)


@_op("v_bfe_i32")
def _bfe_i32(_ctx, a, b, c):
    """Width 0 gives 0; a field reaching past bit 31 is ``(int)a >> offset`` (CLRX)."""
    off, width = _bfe_parts(b, c)
    up = (32 - width) & _M5                        # width 0 handled below
    field = (((a >> off) << up).view(_I32) >> up.view(_I32)).view(_U32)
    return np.where(width == 0, _U32(0), field)


@_op("v_alignbit_b32")
def _alignbit(_ctx, a, b, c):
    wide = (a.astype(_U64) << _U64(32)) | b
    return (wide >> (c & _M5).astype(_U64)).astype(_U32)


@_op("v_alignbyte_b32")
def _alignbyte(_ctx, a, b, c):
    wide = (a.astype(_U64) << _U64(32)) | b
    return (wide >> ((c & _c32(3)) * _U32(8)).astype(_U64)).astype(_U32)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], _U32)
_REV_SHIFTS = np.array([24, 16, 8, 0], _U32)


@_op("v_bfrev_b32")
def _bfrev(_ctx, a):
    return np.bitwise_or.reduce(_REV8[_bytes(a)] << _REV_SHIFTS, axis=1)


def _clz(x):
    """Count of leading zeros of nonzero ``uint32`` lanes (``int32``; 32 for 0)."""
    return 32 - np.frexp(x.astype(_F64))[1]


@_op("v_ffbh_u32")
def _ffbh_u32(_ctx, a):
    return np.where(a == 0, -1, _clz(a)).astype(_U32)


@_op("v_ffbh_i32")
def _ffbh_i32(_ctx, a):
    """Leading bits equal to the sign bit; -1 for 0 and -1 (no bit differs)."""
    y = a ^ (a.view(_I32) >> 31).view(_U32)
    return np.where(y == 0, -1, _clz(y)).astype(_U32)


@_op("v_ffbl_b32")
def _ffbl_b32(_ctx, a):
    low = a & (~a + _ONE)
    return np.where(a == 0, -1, np.bitwise_count(low - _ONE).astype(_I32)).astype(_U32)


@_op("v_bcnt_u32_b32")
def _bcnt(_ctx, a, b):
    return np.bitwise_count(a) + b


_MBCNT_LO = np.array([((1 << n) - 1) & 0xFFFFFFFF for n in range(64)], _U32)
_MBCNT_HI = np.array([((1 << n) - 1) >> 32 for n in range(64)], _U32)


@_op("v_mbcnt_lo_u32_b32")
def _mbcnt_lo(ctx, a, b):
    return np.bitwise_count(a & _MBCNT_LO[ctx.lane]) + b


@_op("v_mbcnt_hi_u32_b32")
def _mbcnt_hi(ctx, a, b):
    return np.bitwise_count(a & _MBCNT_HI[ctx.lane]) + b


# --- shifts: the amount is masked to [4:0] ([5:0] for the 64-bit forms) ---------------------

@_op("v_lshl_b32")
def _lshl(_ctx, a, b):
    return a << (b & _M5)


@_op("v_lshlrev_b32")
def _lshlrev(_ctx, a, b):
    return b << (a & _M5)


@_op("v_lshr_b32")
def _lshr(_ctx, a, b):
    return a >> (b & _M5)


@_op("v_lshrrev_b32")
def _lshrrev(_ctx, a, b):
    return b >> (a & _M5)


@_op("v_ashr_i32")
def _ashr(_ctx, a, b):
    return (a.view(_I32) >> (b & _M5).view(_I32)).view(_U32)


@_op("v_ashrrev_i32")
def _ashrrev(_ctx, a, b):
    return (b.view(_I32) >> (a & _M5).view(_I32)).view(_U32)


@_op("v_lshl_b64")
def _lshl_b64(_ctx, a, b):
    return a << (b.astype(_U64) & _M6)


@_op("v_lshr_b64")
def _lshr_b64(_ctx, a, b):
    return a >> (b.astype(_U64) & _M6)


@_op("v_ashr_i64")
def _ashr_i64(_ctx, a, b):
    return (a.view(_I64) >> (b.astype(_U64) & _M6).view(_I64)).view(_U64)


# --- add/sub with carry (VCC or a VOP3b SGPR pair) ------------------------------------------

@_op("v_add_i32")
def _add_i32(_ctx, a, b):
    d = a + b
    return d, d < a


@_op("v_sub_i32")
def _sub_i32(_ctx, a, b):
    return a - b, b > a


@_op("v_subrev_i32")
def _subrev_i32(_ctx, a, b):
    return b - a, a > b


@_op("v_addc_u32")
def _addc(_ctx, a, b, cin):
    s = a.astype(_U64) + b + cin
    return s.astype(_U32), s > _U64(0xFFFFFFFF)


@_op("v_subb_u32")
def _subb(_ctx, a, b, cin):
    return a - b - cin.astype(_U32), b.astype(_U64) + cin > a


@_op("v_subbrev_u32")
def _subbrev(_ctx, a, b, cin):
    return b - a - cin.astype(_U32), a.astype(_U64) + cin > b


# --- multiplies --------------------------------------------------------------------------

def _i24(x):
    """Sign-extended low 24 bits as ``int64``."""
    return ((x << _U32(8)).view(_I32) >> 8).astype(_I64)


def _u24(x):
    return (x & _M24).astype(_U64)


@_op("v_mul_lo_u32", "v_mul_lo_i32")
def _mul_lo(_ctx, a, b):
    return a * b


@_op("v_mul_hi_u32")
def _mul_hi_u32(_ctx, a, b):
    return ((a.astype(_U64) * b) >> _U64(32)).astype(_U32)


@_op("v_mul_hi_i32")
def _mul_hi_i32(_ctx, a, b):
    return ((a.view(_I32).astype(_I64) * b.view(_I32)) >> 32).astype(_U32)


@_op("v_mul_u32_u24")
def _mul_u24(_ctx, a, b):
    return (_u24(a) * _u24(b)).astype(_U32)


@_op("v_mul_hi_u32_u24")
def _mul_hi_u24(_ctx, a, b):
    return ((_u24(a) * _u24(b)) >> _U64(32)).astype(_U32)


@_op("v_mul_i32_i24")
def _mul_i24(_ctx, a, b):
    return (_i24(a) * _i24(b)).astype(_U32)


@_op("v_mul_hi_i32_i24")
def _mul_hi_i24(_ctx, a, b):
    return ((_i24(a) * _i24(b)) >> 32).astype(_U32)


@_op("v_mad_u32_u24")
def _mad_u24(_ctx, a, b, c):
    return (_u24(a) * _u24(b)).astype(_U32) + c


@_op("v_mad_i32_i24")
def _mad_i24(_ctx, a, b, c):
    return (_i24(a) * _i24(b)).astype(_U32) + c


# --- integer min/max/med3 ----------------------------------------------------------------

def _int_minmax(view, reduce):
    def op(_ctx, *srcs):
        acc = srcs[0].view(view)
        for s in srcs[1:]:
            acc = reduce(acc, s.view(view))
        return acc.view(_U32)
    return op


for _name, _view, _reduce in (("min_i32", _I32, np.minimum), ("max_i32", _I32, np.maximum),
                              ("min_u32", _U32, np.minimum), ("max_u32", _U32, np.maximum)):
    _op(f"v_{_name}", f"v_{_name[:3]}3{_name[3:]}")(_int_minmax(_view, _reduce))


def _int_med3(view):
    def op(_ctx, a, b, c):
        x, y, z = a.view(view), b.view(view), c.view(view)
        return np.maximum(np.minimum(x, y), np.minimum(np.maximum(x, y), z)).view(_U32)
    return op


_op("v_med3_i32")(_int_med3(_I32))
_op("v_med3_u32")(_int_med3(_U32))


# --- sums of absolute differences and byte ops ---------------------------------------------

def _absdiff(x, y):
    return np.where(x > y, x - y, y - x)


@_op("v_sad_u8")
def _sad_u8(_ctx, a, b, c):
    return _absdiff(_bytes(a), _bytes(b)).sum(axis=1, dtype=_U32) + c


@_op("v_sad_hi_u8")
def _sad_hi_u8(_ctx, a, b, c):
    return (_absdiff(_bytes(a), _bytes(b)).sum(axis=1, dtype=_U32) << _U32(16)) + c


@_op("v_sad_u16")
def _sad_u16(_ctx, a, b, c):
    return _absdiff(a & _HALF, b & _HALF) + _absdiff(a >> _U32(16), b >> _U32(16)) + c


@_op("v_sad_u32")
def _sad_u32(_ctx, a, b, c):
    return _absdiff(a, b) + c


def _msad(src_bytes, ref_bytes):
    """Masked SAD: bytes whose reference byte is 0 do not count (summed over the last axis)."""
    diff = _absdiff(src_bytes, ref_bytes)
    return np.where(ref_bytes != 0, diff, _U32(0)).sum(axis=-1, dtype=_U32)


@_op("v_msad_u8")
def _msad_u8(_ctx, a, b, c):
    return _msad(_bytes(a), _bytes(b)) + c


_QSAD_WINDOW = np.arange(4)[:, None] + np.arange(4)[None, :]
_QSAD_SHIFTS = np.array([0, 16, 32, 48], _U64)


@_op("v_mqsad_pk_u16_u8")
def _mqsad_pk_u16_u8(_ctx, a, b, c):
    """Four masked SADs of S0 bytes [j+3:j] against S1, each accumulated onto the 16-bit
    field j of S2 and truncated to 16 bits (SI's ``v_mqsad_u8``)."""
    a_bytes = np.concatenate([_bytes(a.astype(_U32)), _bytes((a >> _U64(32)).astype(_U32))],
                             axis=1)                            # (lanes, 8)
    windows = a_bytes[:, _QSAD_WINDOW]                           # (lanes, 4, 4)
    sads = _msad(windows, _bytes(b)[:, None, :])                 # (lanes, 4)
    acc = ((c[:, None] >> _QSAD_SHIFTS) & _U64(0xFFFF)).astype(_U32)
    fields = ((sads + acc) & _HALF).astype(_U64)
    return np.bitwise_or.reduce(fields << _QSAD_SHIFTS, axis=1)


@_op("v_lerp_u8")
def _lerp_u8(_ctx, a, b, c):
    """Per byte: (a + b + (c & 1)) >> 1, the rounding bit being bit 0 of each S2 byte."""
    return _pack_bytes((_bytes(a) + _bytes(b) + (_bytes(c) & _U32(1))) >> _U32(1))


@_op("v_cvt_pk_u16_u32")
def _cvt_pk_u16_u32(_ctx, a, b):
    return np.minimum(a, _HALF) | (np.minimum(b, _HALF) << _U32(16))


@_op("v_cvt_pk_i16_i32")
def _cvt_pk_i16_i32(_ctx, a, b):
    lo = np.clip(a.view(_I32), -32768, 32767).view(_U32) & _HALF
    hi = np.clip(b.view(_I32), -32768, 32767).view(_U32) & _HALF
    return lo | (hi << _U32(16))


# =============================================================================================
# f32 / f64 arithmetic
# =============================================================================================

@_op("v_add_f32")
def _add_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, a) + src_f32(ctx, b))


@_op("v_sub_f32")
def _sub_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, a) - src_f32(ctx, b))


@_op("v_subrev_f32")
def _subrev_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, b) - src_f32(ctx, a))


@_op("v_mul_f32")
def _mul_f32(ctx, a, b):
    return res_f32(ctx, src_f32(ctx, a) * src_f32(ctx, b))


def _legacy_mul(x, y):
    """DX9 multiply: 0 times anything (inf and NaN included) is +0 (LLVM fmul_legacy)."""
    return np.where((x == 0) | (y == 0), _F32(0.0), x * y)


@_op("v_mul_legacy_f32")
def _mul_legacy_f32(ctx, a, b):
    return res_f32(ctx, _legacy_mul(src_f32(ctx, a), src_f32(ctx, b)))


def _mad(ctx, a, b, c, legacy=False):
    """Unfused a*b + c; inputs, product and result always flushed (see fp module)."""
    x, y, z = (src_f32(ctx, s, always_flush=True) for s in (a, b, c))
    p = _legacy_mul(x, y) if legacy else x * y
    p = fp.flush_f32(p.view(_U32)).view(_F32)
    return res_f32(ctx, p + z, always_flush=True)


@_op("v_mad_f32")
def _mad_f32(ctx, a, b, c):
    return _mad(ctx, a, b, c)


@_op("v_mac_f32")
def _mac_f32(ctx, a, b, d_old):
    return _mad(ctx, a, b, d_old)


@_op("v_madmk_f32")
def _madmk_f32(ctx, s0, s1, k):
    return _mad(ctx, s0, k, s1)


@_op("v_madak_f32")
def _madak_f32(ctx, s0, s1, k):
    return _mad(ctx, s0, s1, k)


@_op("v_mad_legacy_f32")
def _mad_legacy_f32(ctx, a, b, c):
    """+0 product when a factor is zero, then the ordinary add (so -0 in S2 gives +0)."""
    return _mad(ctx, a, b, c, legacy=True)


@_op("v_mac_legacy_f32")
def _mac_legacy_f32(ctx, a, b, d_old):
    return _mad(ctx, a, b, d_old, legacy=True)


@_op("v_mullit_f32")
def _mullit_f32(ctx, a, b, c):
    """Legacy product when S2 > 0 (NaN is not), else -FLT_MAX (CLRX; R600's MUL_LIT)."""
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    return res_f32(ctx, np.where(z > 0, _legacy_mul(x, y), _F32(-_FLT_MAX)))


@_op("v_fma_f32")
def _fma_f32(ctx, a, b, c):
    return res_f32(ctx, fp.fma_f32(src_f32(ctx, a), src_f32(ctx, b), src_f32(ctx, c)))


@_op("v_add_f64")
def _add_f64(ctx, a, b):
    return res_f64(ctx, src_f64(ctx, a) + src_f64(ctx, b))


@_op("v_mul_f64")
def _mul_f64(ctx, a, b):
    return res_f64(ctx, src_f64(ctx, a) * src_f64(ctx, b))


@_op("v_fma_f64")
def _fma_f64(ctx, a, b, c):
    return res_f64(ctx, fp.fma_f64(src_f64(ctx, a), src_f64(ctx, b), src_f64(ctx, c)))


@_op("v_ldexp_f32")
def _ldexp_f32(ctx, a, b):
    """a * 2^b with one rounding; b is a signed 32-bit integer."""
    n = np.clip(b.view(_I32), -400, 400)                 # beyond that the result saturates
    return res_f32(ctx, np.ldexp(src_f32(ctx, a).astype(_F64), n).astype(_F32))


@_op("v_ldexp_f64")
def _ldexp_f64(ctx, a, b):
    return res_f64(ctx, np.ldexp(src_f64(ctx, a), np.clip(b.view(_I32), -2200, 2200)))


# --- min / max ---------------------------------------------------------------------------

_QUIET32 = _c32(0x00400000)
_QUIET64 = np.array(0x0008000000000000, _U64)


def _fminmax(ctx, a, b, is_max, f64):
    """IEEE minNum/maxNum with -0 < +0; returns the result as a float array."""
    if f64:
        x, y, quiet, nan, ut = src_f64(ctx, a), src_f64(ctx, b), _QUIET64, _NAN64, _U64
    else:
        x, y, quiet, nan, ut = src_f32(ctx, a), src_f32(ctx, b), _QUIET32, _NAN32, _U32
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


_op("v_min_f32")(_fminmax_op(False, False))
_op("v_max_f32")(_fminmax_op(True, False))
_op("v_min_f64")(_fminmax_op(False, True))
_op("v_max_f64")(_fminmax_op(True, True))


@_op("v_min3_f32")
def _min3_f32(ctx, a, b, c):
    ab = _fminmax(ctx, a, b, False, False).view(_U32)
    return res_f32(ctx, _fminmax(ctx, ab, c, False, False))


@_op("v_max3_f32")
def _max3_f32(ctx, a, b, c):
    ab = _fminmax(ctx, a, b, True, False).view(_U32)
    return res_f32(ctx, _fminmax(ctx, ab, c, True, False))


@_op("v_med3_f32")
def _med3_f32(ctx, a, b, c):
    """Any NaN: ``min3``; otherwise the max of the two operands that are not ``max3``."""
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    top = _fminmax(ctx, _fminmax(ctx, a, b, True, False).view(_U32), c, True, False)
    med = np.where(top == x, _fminmax(ctx, b, c, True, False),
                   np.where(top == y, _fminmax(ctx, a, c, True, False),
                            _fminmax(ctx, a, b, True, False)))
    nan = np.isnan(x) | np.isnan(y) | np.isnan(z)
    if np.count_nonzero(nan):
        ab = _fminmax(ctx, a, b, False, False).view(_U32)
        med = np.where(nan, _fminmax(ctx, ab, c, False, False), med)
    return res_f32(ctx, med)


@_op("v_min_legacy_f32")
def _min_legacy_f32(ctx, a, b):
    x, y = src_f32(ctx, a), src_f32(ctx, b)
    return res_f32(ctx, np.where(x < y, x, y))


@_op("v_max_legacy_f32")
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


_op("v_trunc_f32")(_round_op(np.trunc, False))
_op("v_ceil_f32")(_round_op(np.ceil, False))
_op("v_floor_f32")(_round_op(np.floor, False))
_op("v_rndne_f32")(_round_op(np.rint, False))

_ALMOST_ONE32 = _F32(np.nextafter(_F32(1.0), _F32(0.0)))
_ALMOST_ONE64 = np.nextafter(1.0, 0.0)


@_op("v_fract_f32")
def _fract_f32(ctx, a):
    """min(x - floor(x), largest float below 1) as LLVM folds it; inf/NaN give NaN."""
    x = src_f32(ctx, a)
    return res_f32(ctx, np.minimum(x - np.floor(x), _ALMOST_ONE32))


@_op("v_fract_f64")
def _fract_f64(ctx, a):
    """As ``v_fract_f32`` (SI silicon has a v_fract_f64 bug LLVM works around; the model is
    the intended result)."""
    x = src_f64(ctx, a)
    return res_f64(ctx, np.minimum(x - np.floor(x), _ALMOST_ONE64))


# --- frexp -------------------------------------------------------------------------------

def _frexp_exp(ctx, a, f64):
    x = src_f64(ctx, a) if f64 else src_f32(ctx, a)
    return np.where(np.isfinite(x), np.frexp(x)[1], -1).astype(_U32)


def _frexp_mant(x):
    return np.where(np.isinf(x), np.nan, np.frexp(x)[0]).astype(x.dtype)


@_op("v_frexp_exp_i32_f32")
def _frexp_exp_f32(ctx, a):
    """Exponent e with x = m * 2^e, 0.5 <= |m| < 1; 0 for zero; -1 for inf/NaN (GCN 1.0)."""
    return _frexp_exp(ctx, a, False)


@_op("v_frexp_exp_i32_f64")
def _frexp_exp_f64(ctx, a):
    return _frexp_exp(ctx, a, True)


@_op("v_frexp_mant_f32")
def _frexp_mant_f32(ctx, a):
    """Signed mantissa in [0.5, 1); zero stays zero; inf gives NaN (GCN 1.0)."""
    return res_f32(ctx, _frexp_mant(src_f32(ctx, a)))


@_op("v_frexp_mant_f64")
def _frexp_mant_f64(ctx, a):
    return res_f64(ctx, _frexp_mant(src_f64(ctx, a)))


# --- transcendentals (models in fp) ------------------------------------------------------

def _clamp_inf(r, big):
    return np.where(np.isinf(r), np.copysign(big, r), r).astype(r.dtype)


@_op("v_rcp_f32", "v_rcp_iflag_f32")
def _rcp_f32(ctx, a):
    return res_f32(ctx, fp.rcp_f32(src_f32(ctx, a)))


@_op("v_rcp_clamp_f32")
def _rcp_clamp_f32(ctx, a):
    return res_f32(ctx, _clamp_inf(fp.rcp_f32(src_f32(ctx, a)), _FLT_MAX))


@_op("v_rcp_legacy_f32")
def _rcp_legacy_f32(ctx, a):
    """rcp, but an infinite result (a zero input) becomes a zero with the input's sign."""
    x = src_f32(ctx, a)
    r = fp.rcp_f32(x)
    return res_f32(ctx, np.where(np.isinf(r), x * _F32(0.0), r))


@_op("v_rsq_f32")
def _rsq_f32(ctx, a):
    return res_f32(ctx, fp.rsq_f32(src_f32(ctx, a, always_flush=True)))


@_op("v_rsq_clamp_f32")
def _rsq_clamp_f32(ctx, a):
    """rsq with ±inf clamped to ±FLT_MAX (as LLVM expands rsq_clamp on newer chips)."""
    return res_f32(ctx, _clamp_inf(fp.rsq_f32(src_f32(ctx, a, always_flush=True)), _FLT_MAX))


@_op("v_rsq_legacy_f32")
def _rsq_legacy_f32(ctx, a):
    """rsq with a +inf result replaced by 0 (CLRX)."""
    r = fp.rsq_f32(src_f32(ctx, a, always_flush=True))
    return res_f32(ctx, np.where(r == np.inf, _F32(0.0), r))


@_op("v_sqrt_f32")
def _sqrt_f32(ctx, a):
    return res_f32(ctx, fp.sqrt_f32(src_f32(ctx, a)))


@_op("v_exp_f32")
def _exp_f32(ctx, a):
    return res_f32(ctx, fp.exp2_f32(src_f32(ctx, a)))


@_op("v_log_f32")
def _log_f32(ctx, a):
    return res_f32(ctx, fp.log2_f32(src_f32(ctx, a, always_flush=True)))


@_op("v_log_clamp_f32")
def _log_clamp_f32(ctx, a):
    """log2 with -inf clamped to -FLT_MAX (CLRX)."""
    r = fp.log2_f32(src_f32(ctx, a, always_flush=True))
    return res_f32(ctx, np.where(r == -np.inf, _F32(-_FLT_MAX), r))


@_op("v_sin_f32")
def _sin_f32(ctx, a):
    return res_f32(ctx, fp.sin_f32(src_f32(ctx, a)))


@_op("v_cos_f32")
def _cos_f32(ctx, a):
    return res_f32(ctx, fp.cos_f32(src_f32(ctx, a)))


@_op("v_rcp_f64")
def _rcp_f64(ctx, a):
    return res_f64(ctx, fp.rcp_f64(src_f64(ctx, a)))


@_op("v_rcp_clamp_f64")
def _rcp_clamp_f64(ctx, a):
    return res_f64(ctx, _clamp_inf(fp.rcp_f64(src_f64(ctx, a)), _DBL_MAX))


@_op("v_rsq_f64")
def _rsq_f64(ctx, a):
    return res_f64(ctx, fp.rsq_f64(src_f64(ctx, a)))


@_op("v_rsq_clamp_f64")
def _rsq_clamp_f64(ctx, a):
    return res_f64(ctx, _clamp_inf(fp.rsq_f64(src_f64(ctx, a)), _DBL_MAX))


@_op("v_sqrt_f64")
def _sqrt_f64(ctx, a):
    return res_f64(ctx, fp.sqrt_f64(src_f64(ctx, a)))


# --- cube map helpers (LLVM's ConstantFoldAMDGCNCubeIntrinsic, = CLRX) ---------------------

def _cube(ctx, a, b, c):
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    z_major = (az >= ax) & (az >= ay)
    y_major = ~z_major & (ay >= ax)          # NaNs compare false and end up x-major
    return x, y, z, z_major, y_major


@_op("v_cubeid_f32")
def _cubeid(ctx, a, b, c):
    """Face id: 4/5 for +z/-z major, 2/3 for y, 0/1 for x ("negative" means < 0)."""
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    face = np.where(zm, np.where(z < 0, 5.0, 4.0),
                    np.where(ym, np.where(y < 0, 3.0, 2.0), np.where(x < 0, 1.0, 0.0)))
    return face.astype(_F32).view(_U32)


@_op("v_cubesc_f32")
def _cubesc(ctx, a, b, c):
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    return res_f32(ctx, np.where(zm, np.where(z < 0, -x, x),
                                 np.where(ym, x, np.where(x < 0, z, -z))))


@_op("v_cubetc_f32")
def _cubetc(ctx, a, b, c):
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    return res_f32(ctx, np.where(zm, -y, np.where(ym, np.where(y < 0, -z, z), -y)))


@_op("v_cubema_f32")
def _cubema(ctx, a, b, c):
    x, y, z, zm, ym = _cube(ctx, a, b, c)
    return res_f32(ctx, np.where(zm, z, np.where(ym, y, x)) * _F32(2.0))


# =============================================================================================
# Conversions
# =============================================================================================

def _to_int(v, lo, hi):
    """Saturate integral float64 values to [lo, hi]; NaN gives 0. Returns ``uint32`` bits."""
    v = np.clip(v, lo, hi)
    return np.where(np.isnan(v), 0.0, v).astype(_I64).astype(_U32)


_I32_RANGE = (-2147483648.0, 2147483647.0)
_U32_RANGE = (0.0, 4294967295.0)


@_op("v_cvt_i32_f32")
def _cvt_i32_f32(ctx, a):
    return _to_int(np.trunc(src_f32(ctx, a).astype(_F64)), *_I32_RANGE)


@_op("v_cvt_u32_f32")
def _cvt_u32_f32(ctx, a):
    return _to_int(np.trunc(src_f32(ctx, a).astype(_F64)), *_U32_RANGE)


@_op("v_cvt_rpi_i32_f32")
def _cvt_rpi_i32_f32(ctx, a):
    """floor(x + 0.5), exact (binary64), saturated; NaN gives 0 (CLRX's NaN rule, ±INT_MAX by
    sign, is not followed: the project uses 0 for every float-to-int conversion)."""
    return _to_int(np.floor(src_f32(ctx, a).astype(_F64) + 0.5), *_I32_RANGE)


@_op("v_cvt_flr_i32_f32")
def _cvt_flr_i32_f32(ctx, a):
    return _to_int(np.floor(src_f32(ctx, a).astype(_F64)), *_I32_RANGE)


@_op("v_cvt_i32_f64")
def _cvt_i32_f64(ctx, a):
    return _to_int(np.trunc(src_f64(ctx, a)), *_I32_RANGE)


@_op("v_cvt_u32_f64")
def _cvt_u32_f64(ctx, a):
    return _to_int(np.trunc(src_f64(ctx, a)), *_U32_RANGE)


@_op("v_cvt_f32_i32")
def _cvt_f32_i32(_ctx, a):
    return a.view(_I32).astype(_F32).view(_U32)


@_op("v_cvt_f32_u32")
def _cvt_f32_u32(_ctx, a):
    return a.astype(_F32).view(_U32)


@_op("v_cvt_f64_i32")
def _cvt_f64_i32(_ctx, a):
    return a.view(_I32).astype(_F64).view(_U64)


@_op("v_cvt_f64_u32")
def _cvt_f64_u32(_ctx, a):
    return a.astype(_F64).view(_U64)


@_op("v_cvt_f32_f64")
def _cvt_f32_f64(ctx, a):
    return res_f32(ctx, src_f64(ctx, a).astype(_F32))


@_op("v_cvt_f64_f32")
def _cvt_f64_f32(ctx, a):
    return res_f64(ctx, src_f32(ctx, a).astype(_F64))


@_op("v_cvt_f16_f32")
def _cvt_f16_f32(ctx, a):
    return fp.f32_to_f16(src_f32(ctx, a))


@_op("v_cvt_f32_f16")
def _cvt_f32_f16(ctx, a):
    return res_f32(ctx, fp.f16_to_f32(a))


@_op("v_cvt_off_f32_i4")
def _cvt_off_f32_i4(_ctx, a):
    """The signed 4-bit value S0[3:0] divided by 16: -0.5 .. 0.4375."""
    i4 = (((a & _c32(15)) ^ _c32(8)).view(_I32) - 8)
    return (i4 * _F32(1.0 / 16.0)).astype(_F32).view(_U32)


def _ubyte_op(k):
    def op(_ctx, a):
        return ((a >> _U32(8 * k)) & _BYTE).astype(_F32).view(_U32)
    return op


for _k in range(4):
    _op(f"v_cvt_f32_ubyte{_k}")(_ubyte_op(_k))


def _sat_round(x, lo, hi):
    """RNE-round float64 values and saturate to [lo, hi]; NaN gives 0 (``int64``)."""
    v = np.clip(np.rint(x), lo, hi)
    return np.where(np.isnan(v), 0.0, v).astype(_I64)


@_op("v_cvt_pknorm_i16_f32")
def _cvt_pknorm_i16_f32(ctx, a, b):
    """rne(x * 32767) saturated to [-32767, 32767] per half (CLRX)."""
    lo = _sat_round(src_f32(ctx, a).astype(_F64) * 32767.0, -32767.0, 32767.0)
    hi = _sat_round(src_f32(ctx, b).astype(_F64) * 32767.0, -32767.0, 32767.0)
    return ((lo & 0xFFFF) | ((hi & 0xFFFF) << 16)).astype(_U32)


@_op("v_cvt_pknorm_u16_f32")
def _cvt_pknorm_u16_f32(ctx, a, b):
    lo = _sat_round(src_f32(ctx, a).astype(_F64) * 65535.0, 0.0, 65535.0)
    hi = _sat_round(src_f32(ctx, b).astype(_F64) * 65535.0, 0.0, 65535.0)
    return (lo | (hi << 16)).astype(_U32)


@_op("v_cvt_pkrtz_f16_f32")
def _cvt_pkrtz_f16_f32(ctx, a, b):
    lo = fp.f32_to_f16(src_f32(ctx, a), rtz=True)
    hi = fp.f32_to_f16(src_f32(ctx, b), rtz=True)
    return lo | (hi << _U32(16))


def _pk_u8(ctx, a, sel, base):
    """rne(S0) saturated to [0, 255] (NaN: 0) into byte ``sel & 3`` of ``base``."""
    byte = _sat_round(src_f32(ctx, a).astype(_F64), 0.0, 255.0).astype(_U32)
    shift = (sel & _c32(3)) * _U32(8)
    return (base & ~(_BYTE << shift)) | (byte << shift)


@_op("v_cvt_pk_u8_f32")
def _cvt_pk_u8_f32(ctx, a, b, c):
    return _pk_u8(ctx, a, b, c)


@_op("v_cvt_pkaccum_u8_f32")
def _cvt_pkaccum_u8_f32(ctx, a, b, d_old):
    """Like ``v_cvt_pk_u8_f32`` with the old destination as the other bytes."""
    return _pk_u8(ctx, a, b, d_old)


# =============================================================================================
# Division helpers
# =============================================================================================
#
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
        x, d, n = (src_f32(ctx, s).astype(_F64) for s in (s0, s1, s2))
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
    return res_f32(ctx, x.astype(_F32)), vcc


@_op("v_div_scale_f32")
def _div_scale_f32(ctx, s0, s1, s2):
    return _div_scale(ctx, s0, s1, s2, False)


@_op("v_div_scale_f64")
def _div_scale_f64(ctx, s0, s1, s2):
    return _div_scale(ctx, s0, s1, s2, True)


def _fmas_scale(vcc, quotient, f64):
    """Per-lane power of two undoing v_div_scale: 2^E when VCC and |S2| >= 2, 2^-E when VCC
    and |S2| < 2, none without VCC (None when no lane has VCC)."""
    if not np.count_nonzero(vcc):
        return None
    up = _DIV_PARAMS[f64][4]
    return np.where(vcc, np.where(np.abs(quotient) >= 2.0, up, 1.0 / up), 1.0)


@_op("v_div_fmas_f32")
def _div_fmas_f32(ctx, a, b, c, vcc):
    x, y, z = (src_f32(ctx, s) for s in (a, b, c))
    return res_f32(ctx, fp.fma_f32(x, y, z, _fmas_scale(vcc, z, False)))


@_op("v_div_fmas_f64")
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
        underflow = np.abs(n).astype(_F64) * _TWO_POW_150 < np.abs(d)
    nan = np.isnan(d) | np.isnan(n) | (dz & nz) | (dinf & ninf)
    inf = dz | ninf | np.isnan(q)
    zero = dinf | nz | underflow
    mag = np.abs(q)
    if np.count_nonzero(nan | inf | zero):
        mag = np.where(nan, np.nan, np.where(dz | ninf, np.inf,
                                             np.where(zero, 0.0, np.where(inf, np.inf, mag))))
        mag = mag.astype(q.dtype)
    return res(ctx, np.where(np.signbit(d) ^ np.signbit(n), -mag, mag))


@_op("v_div_fixup_f32")
def _div_fixup_f32(ctx, s0, s1, s2):
    return _div_fixup(ctx, s0, s1, s2, False)


@_op("v_div_fixup_f64")
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
                     for s in range(_PREOP_SHIFTS)], _F64)


_PREOP = _preop_table()


@_op("v_trig_preop_f64")
def _trig_preop_f64(ctx, a, b):
    """The 53 bits of 2/pi starting ``53*S1[4:0] + max(0, exp(S0) - 1077)`` bits after the
    binary point, scaled to their weight (times 2^128 when exp(S0) >= 1968); 0 past the
    1184-bit table; NaN for a NaN S0 (LLVM's constant folding)."""
    x = src_f64(ctx, a)
    exp = ((x.view(_U64) >> _U64(52)) & _U64(0x7FF)).astype(_I64)
    shift = (b & _M5).astype(_I64) * 53 + np.maximum(exp - 1077, 0)
    chunk = np.where(shift < _PREOP_SHIFTS, _PREOP[np.minimum(shift, _PREOP_SHIFTS - 1)], 0.0)
    scale = -53 - shift + np.where(exp >= 1968, 128, 0)
    return res_f64(ctx, np.where(np.isnan(x), np.nan, np.ldexp(chunk, scale.astype(_I32))))


# =============================================================================================
# Compares (VOPC and their VOP3 forms)
# =============================================================================================

def _lg(a, b):
    return (a < b) | (a > b)


_FLOAT_CONDS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "f": lambda a, b: np.zeros(a.shape, bool),
    "lt": np.less,
    "eq": np.equal,
    "le": np.less_equal,
    "gt": np.greater,
    "lg": _lg,
    "ge": np.greater_equal,
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~(a >= b),
    "nlg": lambda a, b: ~_lg(a, b),
    "ngt": lambda a, b: ~(a > b),
    "nle": lambda a, b: ~(a <= b),
    "neq": np.not_equal,                      # unordered: true on NaN
    "nlt": lambda a, b: ~(a < b),
    "tru": lambda a, b: np.ones(a.shape, bool),
}

_INT_CONDS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "f": _FLOAT_CONDS["f"],
    "lt": np.less,
    "eq": np.equal,
    "le": np.less_equal,
    "gt": np.greater,
    "ne": np.not_equal,
    "ge": np.greater_equal,
    "t": _FLOAT_CONDS["tru"],
}


def _float_cmp(cond, src):
    def op(ctx, a, b):
        return cond(src(ctx, a), src(ctx, b))
    return op


def _int_cmp(cond, view):
    def op(_ctx, a, b):
        return cond(a.view(view), b.view(view))
    return op


for _cond_name, _cond in _FLOAT_CONDS.items():
    for _t, _src in (("f32", src_f32), ("f64", src_f64)):
        _op(*(f"v_{kind}_{_cond_name}_{_t}" for kind in ("cmp", "cmpx", "cmps", "cmpsx")))(
            _float_cmp(_cond, _src))

for _cond_name, _cond in _INT_CONDS.items():
    for _t, _view in (("i32", _I32), ("u32", _U32), ("i64", _I64), ("u64", _U64)):
        _op(f"v_cmp_{_cond_name}_{_t}", f"v_cmpx_{_cond_name}_{_t}")(_int_cmp(_cond, _view))


# Class of a raw value from its magnitude bits: zero, denormal, normal, inf, sNaN, qNaN
# (searchsorted over the category edges), then the class bit number by sign:
# 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
_CLASS_EDGES32 = np.array([1, 0x00800000, 0x7F800000, 0x7F800001, 0x7FC00000], _U32)
_CLASS_EDGES64 = np.array([1, 0x0010000000000000, 0x7FF0000000000000, 0x7FF0000000000001,
                           0x7FF8000000000000], _U64)
_CLASS_BIT = np.array([6, 7, 8, 9, 0, 1,           # positive: by category
                       5, 4, 3, 2, 0, 1], _U32)    # negative


def _class_op(f64):
    if f64:
        edges, absmask, sign_shift = _CLASS_EDGES64, _ABS64, _U64(63)
    else:
        edges, absmask, sign_shift = _CLASS_EDGES32, _ABS32, _U32(31)

    def op(_ctx, a, mask):
        """True when the class of the raw S0 (no flushing) is set in the mask S1."""
        category = np.searchsorted(edges, a & absmask, side="right")
        bit = _CLASS_BIT[category + 6 * (a >> sign_shift).astype(np.intp)]
        return ((mask >> bit) & _ONE) != 0
    return op


_op("v_cmp_class_f32", "v_cmpx_class_f32")(_class_op(False))
_op("v_cmp_class_f64", "v_cmpx_class_f64")(_class_op(True))
