"""The conversions of the vector ALU (:mod:`gpgpu_hdl.emu.valu_convert`) against independent
models.

- float to int (f32 and f64 sources): truncation, floor and round-half-up, saturation, NaN
  to zero, with flushing of denormal inputs;
- int to float: round to nearest even against ``fractions.Fraction``, unsigned bytes, the
  4-bit offset format;
- f32 <-> f64 against ``Fraction`` rounding, with denormal flushing per MODE;
- f16 <-> f32 against ``struct``'s binary16 and a round-toward-zero search over every finite
  half (``v_cvt_pkrtz_f16_f32``);
- packed normalised 16-bit and byte conversions against Python's round-half-even.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from gpgpu_hdl.emu.valu_ops import VALU_OPS
from tests.bits import M32, b32, b64, f32, f64, sext
from tests.emu.valu_models import (CTX, DEN_POS, DENORM, QNAN32, ftz32, lanes, rand_u32, rn32, run,
                                   zipped)

pytestmark = pytest.mark.usefixtures("valu_environment")


def test_float_to_int_conversions_saturate_and_map_nan_to_zero():
    vals = [1.5, -1.5, 2.5, -2.5, 0.49999997, -0.5, 1e10, -1e10, 4294967295.0, 2147483520.0,
            -2147483648.0, math.inf, -math.inf, math.nan, -0.0, 3e-45, 4294967040.0]
    bits = [f32(v) for v in vals]
    fv = [b32(b) for b in bits]

    def sat(x, lo, hi):
        return 0 if math.isnan(x) else max(lo, min(hi, x))

    def expect(fn, lo, hi):
        return [int(sat(fn(x) if math.isfinite(x) else x, lo, hi)) & M32 for x in fv]

    assert [int(x) for x in run("v_cvt_i32_f32", bits)] == expect(math.trunc, -2**31, 2**31 - 1)
    assert [int(x) for x in run("v_cvt_u32_f32", bits)] == expect(math.trunc, 0, 2**32 - 1)
    assert [int(x) for x in run("v_cvt_flr_i32_f32", bits, ctx=DENORM)] == \
        expect(math.floor, -2**31, 2**31 - 1)
    assert [int(x) for x in run("v_cvt_rpi_i32_f32", bits)] == \
        expect(lambda x: math.floor(Fraction(x) + Fraction(1, 2)), -2**31, 2**31 - 1)
    # flushing matters for floor of a negative denormal
    assert int(run("v_cvt_flr_i32_f32", [0x80000001])[0]) == 0
    assert int(run("v_cvt_flr_i32_f32", [0x80000001], ctx=DENORM)[0]) == M32
    dv = [1.9, -1.9, 3e9, -3e9, 5e9, math.nan, -0.7]
    d = lanes([f64(v) for v in dv], np.uint64)
    assert [int(x) for x in VALU_OPS["v_cvt_i32_f64"](CTX, d)[:7]] == \
        [int(sat(math.trunc(x) if math.isfinite(x) else x, -2**31, 2**31 - 1)) & M32 for x in dv]
    assert [int(x) for x in VALU_OPS["v_cvt_u32_f64"](CTX, d)[:7]] == \
        [int(sat(math.trunc(x) if math.isfinite(x) else x, 0, 2**32 - 1)) for x in dv]


def test_int_to_float_conversions_round_to_nearest_even():
    vals = [0, 1, M32, 0x80000000, 0x7FFFFFFF, 16777217, 16777219, 0x89ABCDEF] + \
        [int(v) for v in rand_u32(40)]
    assert [int(x) for x in run("v_cvt_f32_u32", vals)] == [rn32(Fraction(v)) for v in vals]
    assert [int(x) for x in run("v_cvt_f32_i32", vals)] == [rn32(Fraction(sext(v))) for v in vals]
    assert [int(x) for x in run("v_cvt_f64_i32", vals)] == [f64(float(sext(v))) for v in vals]
    assert [int(x) for x in run("v_cvt_f64_u32", vals)] == [f64(float(v)) for v in vals]
    for k in range(4):
        assert [int(x) for x in run(f"v_cvt_f32_ubyte{k}", vals)] == \
            [f32(float((v >> (8 * k)) & 0xFF)) for v in vals]
    assert [b32(x) for x in run("v_cvt_off_f32_i4", list(range(16)))] == \
        [((i ^ 8) - 8) / 16 for i in range(16)]


def test_f32_f64_conversions():
    d = [f64(v) for v in (1.0 / 3.0, 1e300, -1e-300, 2.0 ** -130, 3.4028235677973366e38)]
    got = VALU_OPS["v_cvt_f32_f64"](DENORM, lanes(d, np.uint64))[:5]
    assert [int(x) for x in got] == [rn32(Fraction(b64(v))) for v in d]
    got = VALU_OPS["v_cvt_f32_f64"](CTX, lanes(d, np.uint64))[:5]
    assert [int(x) for x in got] == [ftz32(rn32(Fraction(b64(v)))) for v in d]
    s = [f32(v) for v in (0.1, -3.0, 1e38)] + [DEN_POS]
    assert [int(x) for x in run("v_cvt_f64_f32", s, ctx=DENORM)] == [f64(b32(v)) for v in s]
    assert int(run("v_cvt_f64_f32", [DEN_POS])[0]) == 0


def test_half_precision_conversions():
    vals = [0.1, -2.5, 65504.0, 65519.99, 65520.0, 1e5, 2.0 ** -24, 2.0 ** -25,
            1.5 * 2.0 ** -25, 3.0 * 2.0 ** -26, 6e-8, -1e-10, math.inf, -0.0]
    bits = [f32(v) for v in vals]

    def half(x):
        try:
            return struct.unpack("<H", struct.pack("<e", b32(f32(x))))[0]
        except OverflowError:
            return 0x7C00 | (0x8000 if x < 0 else 0)

    assert [int(x) for x in run("v_cvt_f16_f32", bits)] == [half(v) for v in vals]
    h = [0x0001, 0x03FF, 0x3C00, 0xC000, 0x7BFF, 0xFC00, 0x8000, 0x7E01 | 0xFFFF0000]
    exp = [f32(struct.unpack("<e", struct.pack("<H", v & 0xFFFF))[0]) for v in h[:-1]]
    assert [int(x) for x in run("v_cvt_f32_f16", h)] == exp + [QNAN32]

    finite_halves = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)

    def rtz_half(x):
        """The largest-magnitude binary16 not beyond x (toward zero)."""
        if math.isinf(x) or math.isnan(x):
            return half(x)
        bits16 = int(np.searchsorted(finite_halves, abs(x), side="right")) - 1
        return bits16 | (0x8000 if math.copysign(1, x) < 0 else 0)

    lo = [0.1, -2.5, 70000.0, -1e9, 1.0 + 2.0 ** -11, -(1.0 + 3 * 2.0 ** -12), 3e-8, math.inf]
    hi = [1.0 / 3, 65504.0, -65519.0, 2.0 ** -24 * 1.99, 0.0, -0.0, 1e-3, -math.inf]
    got = run("v_cvt_pkrtz_f16_f32", [f32(v) for v in lo], [f32(v) for v in hi])
    assert [int(x) for x in got] == [rtz_half(b32(f32(x))) | (rtz_half(b32(f32(y))) << 16)
                                     for x, y in zipped(lo, hi)]


def test_packed_normalised_and_byte_conversions():
    vals = [0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -7.0, 0.25 / 32767, 1.5 / 65535, math.nan,
            0.99999, -0.99999, 2.5 / 65535, 0.5 / 32767]
    bits = [f32(v) for v in vals]

    def rne(x):
        return 0 if math.isnan(x) else round(Fraction(x))        # Python round: half even

    def norm_i(x):
        return max(-32767, min(32767, rne(x * 32767 if math.isfinite(x) else x))) & 0xFFFF

    def norm_u(x):
        return max(0, min(65535, rne(x * 65535 if math.isfinite(x) else x)))

    f = [b32(b) for b in bits]
    rev = bits[::-1]
    assert [int(x) for x in run("v_cvt_pknorm_i16_f32", bits, rev)] == \
        [norm_i(x) | (norm_i(y) << 16) for x, y in zipped(f, f[::-1])]
    assert [int(x) for x in run("v_cvt_pknorm_u16_f32", bits, rev)] == \
        [norm_u(x) | (norm_u(y) << 16) for x, y in zipped(f, f[::-1])]
    u8 = [0.5, 1.5, 2.5, 254.5, 255.5, 300.0, -3.0, math.nan, 17.49, math.inf, -math.inf, 7.0]
    sel = list(range(12))
    base = [int(v) for v in rand_u32(12)]

    def byte(x):
        return 0 if math.isnan(x) else max(0, min(255, rne(x) if math.isfinite(x) else x))

    expect = [(bb & ~(0xFF << 8 * (s & 3)) & M32) | (int(byte(x)) << 8 * (s & 3))
              for x, s, bb in zipped(u8, sel, base)]
    assert [int(x) for x in run("v_cvt_pk_u8_f32", [f32(v) for v in u8], sel, base)] == expect
    assert [int(x) for x in run("v_cvt_pkaccum_u8_f32", [f32(v) for v in u8], sel, base)] == \
        expect
