"""Vector ALU semantics: conversions.

Float to and from integers (saturating, NaN to 0), between f16, f32 and f64, the ubyte and
offset forms, and the packing conversions. Registered in
:data:`~gpgpu_hdl.emu.valu_common.VALU_OPS`; conventions in :mod:`gpgpu_hdl.emu.valu_ops`.
"""

from __future__ import annotations

import numpy as np

from . import fp
from .fp import res_f32, res_f64, src_f32, src_f64
from .valu_common import BYTE, F32, F64, I32, I64, U32, U64, c32, register

__all__: list[str] = []


def _to_int(v, lo, hi):
    """Saturate integral float64 values to [lo, hi]; NaN gives 0. Returns ``uint32`` bits."""
    v = np.clip(v, lo, hi)
    return np.where(np.isnan(v), 0.0, v).astype(I64).astype(U32)


_I32_RANGE = (-2147483648.0, 2147483647.0)
_U32_RANGE = (0.0, 4294967295.0)


@register("v_cvt_i32_f32")
def _cvt_i32_f32(ctx, a):
    return _to_int(np.trunc(src_f32(ctx, a).astype(F64)), *_I32_RANGE)


@register("v_cvt_u32_f32")
def _cvt_u32_f32(ctx, a):
    return _to_int(np.trunc(src_f32(ctx, a).astype(F64)), *_U32_RANGE)


@register("v_cvt_rpi_i32_f32")
def _cvt_rpi_i32_f32(ctx, a):
    """floor(x + 0.5), exact (binary64), saturated; NaN gives 0 (CLRX's NaN rule, ±INT_MAX by
    sign, is not followed: the project uses 0 for every float-to-int conversion)."""
    return _to_int(np.floor(src_f32(ctx, a).astype(F64) + 0.5), *_I32_RANGE)


@register("v_cvt_flr_i32_f32")
def _cvt_flr_i32_f32(ctx, a):
    return _to_int(np.floor(src_f32(ctx, a).astype(F64)), *_I32_RANGE)


@register("v_cvt_i32_f64")
def _cvt_i32_f64(ctx, a):
    return _to_int(np.trunc(src_f64(ctx, a)), *_I32_RANGE)


@register("v_cvt_u32_f64")
def _cvt_u32_f64(ctx, a):
    return _to_int(np.trunc(src_f64(ctx, a)), *_U32_RANGE)


@register("v_cvt_f32_i32")
def _cvt_f32_i32(_ctx, a):
    return a.view(I32).astype(F32).view(U32)


@register("v_cvt_f32_u32")
def _cvt_f32_u32(_ctx, a):
    return a.astype(F32).view(U32)


@register("v_cvt_f64_i32")
def _cvt_f64_i32(_ctx, a):
    return a.view(I32).astype(F64).view(U64)


@register("v_cvt_f64_u32")
def _cvt_f64_u32(_ctx, a):
    return a.astype(F64).view(U64)


@register("v_cvt_f32_f64")
def _cvt_f32_f64(ctx, a):
    return res_f32(ctx, src_f64(ctx, a).astype(F32))


@register("v_cvt_f64_f32")
def _cvt_f64_f32(ctx, a):
    return res_f64(ctx, src_f32(ctx, a).astype(F64))


@register("v_cvt_f16_f32")
def _cvt_f16_f32(ctx, a):
    return fp.f32_to_f16(src_f32(ctx, a))


@register("v_cvt_f32_f16")
def _cvt_f32_f16(ctx, a):
    return res_f32(ctx, fp.f16_to_f32(a))


@register("v_cvt_off_f32_i4")
def _cvt_off_f32_i4(_ctx, a):
    """The signed 4-bit value S0[3:0] divided by 16: -0.5 .. 0.4375."""
    i4 = (((a & c32(15)) ^ c32(8)).view(I32) - 8)
    return (i4 * F32(1.0 / 16.0)).astype(F32).view(U32)


def _ubyte_op(k):
    def op(_ctx, a):
        return ((a >> U32(8 * k)) & BYTE).astype(F32).view(U32)
    return op


for _k in range(4):
    register(f"v_cvt_f32_ubyte{_k}")(_ubyte_op(_k))


def _sat_round(x, lo, hi):
    """RNE-round float64 values and saturate to [lo, hi]; NaN gives 0 (``int64``)."""
    v = np.clip(np.rint(x), lo, hi)
    return np.where(np.isnan(v), 0.0, v).astype(I64)


@register("v_cvt_pknorm_i16_f32")
def _cvt_pknorm_i16_f32(ctx, a, b):
    """rne(x * 32767) saturated to [-32767, 32767] per half (CLRX)."""
    lo = _sat_round(src_f32(ctx, a).astype(F64) * 32767.0, -32767.0, 32767.0)
    hi = _sat_round(src_f32(ctx, b).astype(F64) * 32767.0, -32767.0, 32767.0)
    return ((lo & 0xFFFF) | ((hi & 0xFFFF) << 16)).astype(U32)


@register("v_cvt_pknorm_u16_f32")
def _cvt_pknorm_u16_f32(ctx, a, b):
    lo = _sat_round(src_f32(ctx, a).astype(F64) * 65535.0, 0.0, 65535.0)
    hi = _sat_round(src_f32(ctx, b).astype(F64) * 65535.0, 0.0, 65535.0)
    return (lo | (hi << 16)).astype(U32)


@register("v_cvt_pkrtz_f16_f32")
def _cvt_pkrtz_f16_f32(ctx, a, b):
    lo = fp.f32_to_f16(src_f32(ctx, a), rtz=True)
    hi = fp.f32_to_f16(src_f32(ctx, b), rtz=True)
    return lo | (hi << U32(16))


def _pk_u8(ctx, a, sel, base):
    """rne(S0) saturated to [0, 255] (NaN: 0) into byte ``sel & 3`` of ``base``."""
    byte = _sat_round(src_f32(ctx, a).astype(F64), 0.0, 255.0).astype(U32)
    shift = (sel & c32(3)) * U32(8)
    return (base & ~(BYTE << shift)) | (byte << shift)


@register("v_cvt_pk_u8_f32")
def _cvt_pk_u8_f32(ctx, a, b, c):
    return _pk_u8(ctx, a, b, c)


@register("v_cvt_pkaccum_u8_f32")
def _cvt_pkaccum_u8_f32(ctx, a, b, d_old):
    """Like ``v_cvt_pk_u8_f32`` with the old destination as the other bytes."""
    return _pk_u8(ctx, a, b, d_old)
