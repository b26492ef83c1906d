"""Vector ALU semantics: integer and bit operations.

Bitwise logic and bit fields, bit counts and searches, shifts, add/sub with carry, 24- and
32-bit multiplies, integer min/max/med3, sums of absolute differences, byte ops and the
integer packs (``v_cvt_pk_u16_u32``, ``v_cvt_pk_i16_i32``). Registered in
:data:`~gpgpu_hdl.emu.valu_common.VALU_OPS`; conventions in :mod:`gpgpu_hdl.emu.valu_ops`.
"""

from __future__ import annotations

import numpy as np

from .valu_common import BYTE, F64, I32, I64, M5, ONE, U32, U64, c32, register

__all__: list[str] = []

_M24 = c32(0xFFFFFF)
_HALF = c32(0xFFFF)
_M6 = np.array(63, U64)
_BYTE_SHIFTS = np.array([0, 8, 16, 24], U32)


def _bytes(x: np.ndarray) -> np.ndarray:
    """The four bytes of each ``uint32`` lane as a ``(lanes, 4)`` array, byte 0 first."""
    return (x[:, None] >> _BYTE_SHIFTS) & BYTE


def _pack_bytes(b: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_bytes` (values must be < 256)."""
    return np.bitwise_or.reduce(b.astype(U32) << _BYTE_SHIFTS, axis=1)


@register("v_cndmask_b32")
def _cndmask(_ctx, s0, s1, sel):
    return np.where(sel, s1, s0)


@register("v_not_b32")
def _not(_ctx, a):
    return ~a


@register("v_and_b32")
def _and(_ctx, a, b):
    return a & b


@register("v_or_b32")
def _or(_ctx, a, b):
    return a | b


@register("v_xor_b32")
def _xor(_ctx, a, b):
    return a ^ b


@register("v_bfi_b32")
def _bfi(_ctx, a, b, c):
    return (a & b) | (~a & c)


@register("v_bfm_b32")
def _bfm(_ctx, a, b):
    return ((np.left_shift(ONE, a & M5)) - ONE) << (b & M5)


def _bfe_parts(b, c):
    off = b & M5
    width = np.minimum(c & M5, 32 - off)          # the field stops at bit 31
    return off, width


@register("v_bfe_u32")
def _bfe_u32(_ctx, a, b, c):
    off, width = _bfe_parts(b, c)
    return (a >> off) & ((np.left_shift(ONE, width)) - ONE)


@register("v_bfe_i32")
def _bfe_i32(_ctx, a, b, c):
    """Width 0 gives 0; a field reaching past bit 31 is ``(int)a >> offset`` (CLRX)."""
    off, width = _bfe_parts(b, c)
    up = (32 - width) & M5                        # width 0 handled below
    field = (((a >> off) << up).view(I32) >> up.view(I32)).view(U32)
    return np.where(width == 0, U32(0), field)


@register("v_alignbit_b32")
def _alignbit(_ctx, a, b, c):
    wide = (a.astype(U64) << U64(32)) | b
    return (wide >> (c & M5).astype(U64)).astype(U32)


@register("v_alignbyte_b32")
def _alignbyte(_ctx, a, b, c):
    wide = (a.astype(U64) << U64(32)) | b
    return (wide >> ((c & c32(3)) * U32(8)).astype(U64)).astype(U32)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], U32)
_REV_SHIFTS = np.array([24, 16, 8, 0], U32)


@register("v_bfrev_b32")
def _bfrev(_ctx, a):
    return np.bitwise_or.reduce(_REV8[_bytes(a)] << _REV_SHIFTS, axis=1)


def _clz(x):
    """Count of leading zeros of nonzero ``uint32`` lanes (``int32``; 32 for 0)."""
    return 32 - np.frexp(x.astype(F64))[1]


@register("v_ffbh_u32")
def _ffbh_u32(_ctx, a):
    return np.where(a == 0, -1, _clz(a)).astype(U32)


@register("v_ffbh_i32")
def _ffbh_i32(_ctx, a):
    """Leading bits equal to the sign bit; -1 for 0 and -1 (no bit differs)."""
    y = a ^ (a.view(I32) >> 31).view(U32)
    return np.where(y == 0, -1, _clz(y)).astype(U32)


@register("v_ffbl_b32")
def _ffbl_b32(_ctx, a):
    low = a & (~a + ONE)
    return np.where(a == 0, -1, np.bitwise_count(low - ONE).astype(I32)).astype(U32)


@register("v_bcnt_u32_b32")
def _bcnt(_ctx, a, b):
    return np.bitwise_count(a) + b


_MBCNT_LO = np.array([((1 << n) - 1) & 0xFFFFFFFF for n in range(64)], U32)
_MBCNT_HI = np.array([((1 << n) - 1) >> 32 for n in range(64)], U32)


@register("v_mbcnt_lo_u32_b32")
def _mbcnt_lo(ctx, a, b):
    return np.bitwise_count(a & _MBCNT_LO[ctx.lane]) + b


@register("v_mbcnt_hi_u32_b32")
def _mbcnt_hi(ctx, a, b):
    return np.bitwise_count(a & _MBCNT_HI[ctx.lane]) + b


# --- shifts: the amount is masked to [4:0] ([5:0] for the 64-bit forms) ---------------------

@register("v_lshl_b32")
def _lshl(_ctx, a, b):
    return a << (b & M5)


@register("v_lshlrev_b32")
def _lshlrev(_ctx, a, b):
    return b << (a & M5)


@register("v_lshr_b32")
def _lshr(_ctx, a, b):
    return a >> (b & M5)


@register("v_lshrrev_b32")
def _lshrrev(_ctx, a, b):
    return b >> (a & M5)


@register("v_ashr_i32")
def _ashr(_ctx, a, b):
    return (a.view(I32) >> (b & M5).view(I32)).view(U32)


@register("v_ashrrev_i32")
def _ashrrev(_ctx, a, b):
    return (b.view(I32) >> (a & M5).view(I32)).view(U32)


@register("v_lshl_b64")
def _lshl_b64(_ctx, a, b):
    return a << (b.astype(U64) & _M6)


@register("v_lshr_b64")
def _lshr_b64(_ctx, a, b):
    return a >> (b.astype(U64) & _M6)


@register("v_ashr_i64")
def _ashr_i64(_ctx, a, b):
    return (a.view(I64) >> (b.astype(U64) & _M6).view(I64)).view(U64)


# --- add/sub with carry (VCC or a VOP3b SGPR pair) ------------------------------------------

@register("v_add_i32")
def _add_i32(_ctx, a, b):
    d = a + b
    return d, d < a


@register("v_sub_i32")
def _sub_i32(_ctx, a, b):
    return a - b, b > a


@register("v_subrev_i32")
def _subrev_i32(_ctx, a, b):
    return b - a, a > b


@register("v_addc_u32")
def _addc(_ctx, a, b, cin):
    s = a.astype(U64) + b + cin
    return s.astype(U32), s > U64(0xFFFFFFFF)


@register("v_subb_u32")
def _subb(_ctx, a, b, cin):
    return a - b - cin.astype(U32), b.astype(U64) + cin > a


@register("v_subbrev_u32")
def _subbrev(_ctx, a, b, cin):
    return b - a - cin.astype(U32), a.astype(U64) + cin > b


# --- multiplies --------------------------------------------------------------------------

def _i24(x):
    """Sign-extended low 24 bits as ``int64``."""
    return ((x << U32(8)).view(I32) >> 8).astype(I64)


def _u24(x):
    return (x & _M24).astype(U64)


@register("v_mul_lo_u32", "v_mul_lo_i32")
def _mul_lo(_ctx, a, b):
    return a * b


@register("v_mul_hi_u32")
def _mul_hi_u32(_ctx, a, b):
    return ((a.astype(U64) * b) >> U64(32)).astype(U32)


@register("v_mul_hi_i32")
def _mul_hi_i32(_ctx, a, b):
    return ((a.view(I32).astype(I64) * b.view(I32)) >> 32).astype(U32)


@register("v_mul_u32_u24")
def _mul_u24(_ctx, a, b):
    return (_u24(a) * _u24(b)).astype(U32)


@register("v_mul_hi_u32_u24")
def _mul_hi_u24(_ctx, a, b):
    return ((_u24(a) * _u24(b)) >> U64(32)).astype(U32)


@register("v_mul_i32_i24")
def _mul_i24(_ctx, a, b):
    return (_i24(a) * _i24(b)).astype(U32)


@register("v_mul_hi_i32_i24")
def _mul_hi_i24(_ctx, a, b):
    return ((_i24(a) * _i24(b)) >> 32).astype(U32)


@register("v_mad_u32_u24")
def _mad_u24(_ctx, a, b, c):
    return (_u24(a) * _u24(b)).astype(U32) + c


@register("v_mad_i32_i24")
def _mad_i24(_ctx, a, b, c):
    return (_i24(a) * _i24(b)).astype(U32) + c


# --- integer min/max/med3 ----------------------------------------------------------------

def _int_minmax(view, reduce):
    def op(_ctx, *srcs):
        acc = srcs[0].view(view)
        for s in srcs[1:]:
            acc = reduce(acc, s.view(view))
        return acc.view(U32)
    return op


for _name, _view, _reduce in (("min_i32", I32, np.minimum), ("max_i32", I32, np.maximum),
                              ("min_u32", U32, np.minimum), ("max_u32", U32, np.maximum)):
    register(f"v_{_name}", f"v_{_name[:3]}3{_name[3:]}")(_int_minmax(_view, _reduce))


def _int_med3(view):
    def op(_ctx, a, b, c):
        x, y, z = a.view(view), b.view(view), c.view(view)
        return np.maximum(np.minimum(x, y), np.minimum(np.maximum(x, y), z)).view(U32)
    return op


register("v_med3_i32")(_int_med3(I32))
register("v_med3_u32")(_int_med3(U32))


# --- sums of absolute differences and byte ops ---------------------------------------------

def _absdiff(x, y):
    return np.where(x > y, x - y, y - x)


@register("v_sad_u8")
def _sad_u8(_ctx, a, b, c):
    return _absdiff(_bytes(a), _bytes(b)).sum(axis=1, dtype=U32) + c


@register("v_sad_hi_u8")
def _sad_hi_u8(_ctx, a, b, c):
    return (_absdiff(_bytes(a), _bytes(b)).sum(axis=1, dtype=U32) << U32(16)) + c


@register("v_sad_u16")
def _sad_u16(_ctx, a, b, c):
    return _absdiff(a & _HALF, b & _HALF) + _absdiff(a >> U32(16), b >> U32(16)) + c


@register("v_sad_u32")
def _sad_u32(_ctx, a, b, c):
    return _absdiff(a, b) + c


def _msad(src_bytes, ref_bytes):
    """Masked SAD: bytes whose reference byte is 0 do not count (summed over the last axis)."""
    diff = _absdiff(src_bytes, ref_bytes)
    return np.where(ref_bytes != 0, diff, U32(0)).sum(axis=-1, dtype=U32)


@register("v_msad_u8")
def _msad_u8(_ctx, a, b, c):
    return _msad(_bytes(a), _bytes(b)) + c


_QSAD_WINDOW = np.arange(4)[:, None] + np.arange(4)[None, :]
_QSAD_SHIFTS = np.array([0, 16, 32, 48], U64)


@register("v_mqsad_pk_u16_u8")
def _mqsad_pk_u16_u8(_ctx, a, b, c):
    """Four masked SADs of S0 bytes [j+3:j] against S1, each accumulated onto the 16-bit
    field j of S2 and truncated to 16 bits (SI's ``v_mqsad_u8``)."""
    a_bytes = np.concatenate([_bytes(a.astype(U32)), _bytes((a >> U64(32)).astype(U32))],
                             axis=1)                            # (lanes, 8)
    windows = a_bytes[:, _QSAD_WINDOW]                           # (lanes, 4, 4)
    sads = _msad(windows, _bytes(b)[:, None, :])                 # (lanes, 4)
    acc = ((c[:, None] >> _QSAD_SHIFTS) & U64(0xFFFF)).astype(U32)
    fields = ((sads + acc) & _HALF).astype(U64)
    return np.bitwise_or.reduce(fields << _QSAD_SHIFTS, axis=1)


@register("v_lerp_u8")
def _lerp_u8(_ctx, a, b, c):
    """Per byte: (a + b + (c & 1)) >> 1, the rounding bit being bit 0 of each S2 byte."""
    return _pack_bytes((_bytes(a) + _bytes(b) + (_bytes(c) & U32(1))) >> U32(1))


@register("v_cvt_pk_u16_u32")
def _cvt_pk_u16_u32(_ctx, a, b):
    return np.minimum(a, _HALF) | (np.minimum(b, _HALF) << U32(16))


@register("v_cvt_pk_i16_i32")
def _cvt_pk_i16_i32(_ctx, a, b):
    lo = np.clip(a.view(I32), -32768, 32767).view(U32) & _HALF
    hi = np.clip(b.view(I32), -32768, 32767).view(U32) & _HALF
    return lo | (hi << U32(16))
