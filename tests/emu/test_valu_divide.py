"""The division helpers and ``v_trig_preop_f64`` of the vector ALU
(:mod:`gpgpu_hdl.emu.valu_divide`) against independent models.

- ``v_trig_preop_f64``: the 53-bit segments of 2/pi from a 420-digit ``decimal`` pi,
  large-exponent skipping and the 2^128 scaling included;
- LLVM 19's f32 division sequence (``-cl-fp32-correctly-rounded-divide-sqrt``, tahiti, in the
  flushing and denormal modes) and SI's f64 sequence, composed of ``v_div_scale``,
  ``v_rcp``, ``v_fma``, ``v_div_fmas`` and ``v_div_fixup``, correctly rounded against
  ``fractions.Fraction`` on random operands, quotients on and next to ties, denormal and
  near-overflow quotients and special values;
- ``v_div_scale`` flags and scaling cases, ``v_div_fmas`` scaling with one rounding, and
  ``v_div_fixup`` special cases.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest

from gpgpu_hdl.emu.context import FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from tests.bits import b32, b64, f32, f64
from tests.emu.valu_models import (CTX, DEN_POS, DENORM, INF32, NINF32, QNAN32, QNAN64, RNG, D,
                                   decimal_pi, ftz32, lanes, rand_f32, rand_f64, rand_u32, rn32,
                                   rn64, round_fraction, run, zipped)

pytestmark = pytest.mark.usefixtures("valu_environment")


# ---------------------------------------------------------------------------------------------
# trig_preop

def test_trig_preop_returns_bits_of_two_over_pi():
    with decimal.localcontext() as ctx:
        ctx.prec = 420
        ref_bits = int(2 / _pi_precise(420) * D(2) ** 1300)   # floor(2/pi * 2^1300)

    def chunk(shift):
        return (ref_bits >> (1300 - 53 - shift)) & ((1 << 53) - 1)

    segs = list(range(32))
    x = [f64(1.0)] * 32
    got = VALU_OPS["v_trig_preop_f64"](CTX, lanes(x, np.uint64), lanes(segs))[:32]
    expect = [math.ldexp(chunk(53 * s), -53 - 53 * s) if 53 * s < 1120 else 0.0 for s in segs]
    assert [b64(g) for g in got] == expect
    # large S0 skips exponent - 1077 leading bits; exponent >= 1968 adds 2^128
    for e in (1078, 1500, 1968, 2000):
        xv = lanes([e << 52], np.uint64)
        got = VALU_OPS["v_trig_preop_f64"](CTX, xv, lanes([1]))[0]
        shift = 53 + e - 1077
        scale = -53 - shift + (128 if e >= 1968 else 0)
        assert b64(got) == (math.ldexp(chunk(shift), scale) if shift < 1120 else 0.0), e


def _pi_precise(digits: int) -> D:
    with decimal.localcontext() as ctx:
        ctx.prec = digits + 5
        return decimal_pi()


# ---------------------------------------------------------------------------------------------
# division: the sequences LLVM 19 emits (-cl-fp32-correctly-rounded-divide-sqrt, tahiti)

def _neg32(x):
    return x ^ np.uint32(0x80000000)


def llvm_fdiv_f32(n, d, outer=CTX):
    """v_div_scale x2, v_rcp, s_setreg(denormals on), 5 fma + mul, s_setreg(back),
    v_div_fmas, v_div_fixup."""
    inner = LaneContext(FpMode(outer.mode.bits | 0x30))
    one = lanes([f32(1.0)])
    ds, _ = VALU_OPS["v_div_scale_f32"](outer, d, d, n)
    r = VALU_OPS["v_rcp_f32"](outer, ds)
    ns, vcc = VALU_OPS["v_div_scale_f32"](outer, n, d, n)
    e = VALU_OPS["v_fma_f32"](inner, _neg32(ds), r, one)
    r = VALU_OPS["v_fma_f32"](inner, e, r, r)
    q = VALU_OPS["v_mul_f32"](inner, ns, r)
    t = VALU_OPS["v_fma_f32"](inner, _neg32(ds), q, ns)
    q = VALU_OPS["v_fma_f32"](inner, t, r, q)
    t = VALU_OPS["v_fma_f32"](inner, _neg32(ds), q, ns)
    x = VALU_OPS["v_div_fmas_f32"](outer, t, r, q, vcc)
    return VALU_OPS["v_div_fixup_f32"](outer, x, d, n)


def _div_reference32(n, d, flush):
    fn, fd = b32(ftz32(n) if flush else n), b32(ftz32(d) if flush else d)
    if math.isnan(fn) or math.isnan(fd) or (fn == 0 and fd == 0) or \
            (math.isinf(fn) and math.isinf(fd)):
        return QNAN32
    sign = math.copysign(1, fn) * math.copysign(1, fd) < 0
    if fd == 0 or math.isinf(fn):
        return NINF32 if sign else INF32
    if math.isinf(fd) or fn == 0:
        return 0x80000000 if sign else 0
    q = rn32(Fraction(fn) / Fraction(fd))
    return ftz32(q) if flush else q


def _division_operands32():
    """Random operands plus quotients on and next to binary32 ties, denormal-range and
    near-overflow quotients, tiny/huge/denormal operands and special values."""
    cases = list(zipped(map(int, rand_f32(64, -126, 127)), map(int, rand_f32(64, -126, 127))))
    cases += list(zipped(map(int, rand_u32(64)), map(int, rand_u32(64))))    # any bit pattern
    for _ in range(320):
        d = float(np.float32(RNG.uniform(1, 2) * 2.0 ** int(RNG.choice(
            [-149, -140, -130, -127, -20, 0, 20, 100, 126, 127]))))
        qe = int(RNG.choice([-160, -150, -140, -127, -126, -103, -5, 0, 5, 95, 126, 127, 130]))
        q = (int(RNG.integers(1 << 23, 1 << 24)) + 0.5) * 2.0 ** (qe - 23)
        n = np.float32(d * q * (1 + float(RNG.choice([0.0, 1e-9, -1e-9]))))
        if np.isfinite(n) and d != 0:
            cases.append((f32(float(n)) ^ int(RNG.integers(0, 2)) << 31, f32(d)))
    specials = [0, 0x80000000, INF32, NINF32, QNAN32, DEN_POS, f32(1.0), f32(3.0),
                f32(3.4e38), f32(2.0 ** -126)]
    cases += [(a, b) for a in specials for b in specials]
    return cases


@pytest.mark.parametrize("mode", [0x3C0, 0x3F0], ids=["llvm_ftz", "denormals"])
def test_llvm_f32_division_is_correctly_rounded(mode):
    outer = LaneContext(FpMode(mode))
    flush = mode == 0x3C0
    cases = _division_operands32()
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        n, d = lanes([c[0] for c in chunk]), lanes([c[1] for c in chunk])
        got = llvm_fdiv_f32(n, d, outer)[:len(chunk)]
        assert [int(x) for x in got] == [_div_reference32(a, b, flush) for a, b in chunk]


def llvm_fdiv_f64(n, d, ctx=CTX):
    """The SI f64 sequence: VCC is recomputed from the high dwords of the scaled operands
    (SI's div_scale VCC output is not used)."""
    neg = np.uint64(1 << 63)
    one = lanes([f64(1.0)], np.uint64)
    hi = np.uint64(32)
    ds, _ = VALU_OPS["v_div_scale_f64"](ctx, d, d, n)
    r = VALU_OPS["v_rcp_f64"](ctx, ds)
    vcc = (d >> hi) == (ds >> hi)
    e = VALU_OPS["v_fma_f64"](ctx, ds ^ neg, r, one)
    r = VALU_OPS["v_fma_f64"](ctx, r, e, r)
    ns, _ = VALU_OPS["v_div_scale_f64"](ctx, n, d, n)
    e = VALU_OPS["v_fma_f64"](ctx, ds ^ neg, r, one)
    r = VALU_OPS["v_fma_f64"](ctx, r, e, r)
    vcc = ((n >> hi) == (ns >> hi)) ^ vcc
    q = VALU_OPS["v_mul_f64"](ctx, ns, r)
    t = VALU_OPS["v_fma_f64"](ctx, ds ^ neg, q, ns)
    x = VALU_OPS["v_div_fmas_f64"](ctx, t, r, q, vcc)
    return VALU_OPS["v_div_fixup_f64"](ctx, x, d, n)


def _div_reference64(n, d):
    fn, fd = b64(n), b64(d)
    if math.isnan(fn) or math.isnan(fd) or (fn == 0 and fd == 0) or \
            (math.isinf(fn) and math.isinf(fd)):
        return QNAN64
    sign = math.copysign(1, fn) * math.copysign(1, fd) < 0
    if fd == 0 or math.isinf(fn):
        return f64(-math.inf if sign else math.inf)
    if math.isinf(fd) or fn == 0:
        return f64(-0.0 if sign else 0.0)
    return rn64(Fraction(fn) / Fraction(fd))


def test_llvm_f64_division_is_correctly_rounded():
    cases = list(zipped(map(int, rand_f64(64, -1000, 1000)), map(int, rand_f64(64, -1000, 1000))))
    for _ in range(130):
        d = float(RNG.uniform(1, 2)) * 2.0 ** int(RNG.choice([-1074, -1060, -1023, -600, 0, 600,
                                                              1000, 1023]))
        qe = int(RNG.choice([-1090, -1074, -1050, -1022, -970, -5, 0, 770, 1000, 1023, 1030]))
        q = Fraction(int(RNG.integers(1 << 52, 1 << 53)) * 2 + 1, 2) * Fraction(2) ** (qe - 52)
        n = round_fraction(Fraction(d) * q, 52, -1022, 1023)
        if math.isfinite(n) and d != 0:
            cases.append((f64(n) ^ (int(RNG.integers(0, 2)) << 63), f64(d)))
    specials = [0, 1 << 63, f64(math.inf), QNAN64, 1, f64(1.0), f64(1e308), f64(3.0)]
    cases += [(a, b) for a in specials for b in specials]
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        n = lanes([c[0] for c in chunk], np.uint64)
        d = lanes([c[1] for c in chunk], np.uint64)
        got = llvm_fdiv_f64(n, d)[:len(chunk)]
        assert [int(x) for x in got] == [_div_reference64(a, b) for a, b in chunk]


def test_div_scale_flags_and_div_fmas_scaling():
    big, one, tiny = f32(2.0 ** 100), f32(1.0), f32(2.0 ** -120)
    # quotient near overflow: the denominator is scaled by 2^64, VCC set on both calls
    d, vcc = run("v_div_scale_f32", [tiny], [tiny], [big])
    assert [int(x) for x in d] == [f32(2.0 ** -56)] and list(vcc) == [True]
    n, vcc = run("v_div_scale_f32", [big], [tiny], [big])
    assert [int(x) for x in n] == [big] and list(vcc) == [True]
    # denormal quotient: only the numerator is scaled
    n, vcc = run("v_div_scale_f32", [tiny], [big], [tiny])
    assert [int(x) for x in n] == [f32(2.0 ** -56)] and list(vcc) == [True]
    # ordinary operands: unchanged, no flag
    n, vcc = run("v_div_scale_f32", [f32(3.0)], [f32(7.0)], [f32(3.0)])
    assert [int(x) for x in n] == [f32(3.0)] and list(vcc) == [False]
    # div_fmas: 2^64 when |S2| >= 2, 2^-64 otherwise, only with VCC, one rounding
    a, b = f32(1.0 + 2.0 ** -23), f32(1.0 + 2.0 ** -22)
    got = run("v_div_fmas_f32", [a, a, a, a], [b, b, b, b], [f32(2.0), f32(0.5), f32(2.0), 0],
              [True, True, False, True], ctx=DENORM)
    expect = [rn32((Fraction(b32(a)) * Fraction(b32(b)) + c) * s) for c, s in
              ((2, Fraction(2) ** 64), (Fraction(1, 2), Fraction(2) ** -64), (2, 1),
               (0, Fraction(2) ** -64))]
    assert [int(x) for x in got] == expect
    assert int(run("v_div_fmas_f32", [f32(2.0 ** -62)], [one], [f32(2.0 ** -120)], [True],
                   ctx=DENORM)[0]) == rn32(Fraction(2) ** -126 + Fraction(2) ** -184)


def test_div_scale_cases_that_scale_both_operands():
    # d denormal (denormals on): both operands x2^64, no VCC
    for s0 in (f32(2.0 ** -60), 0x00000100):
        out, vcc = run("v_div_scale_f32", [s0], [0x00000100], [f32(2.0 ** -60)], ctx=DENORM)
        assert [int(x) for x in out] == [rn32(Fraction(b32(s0)) * 2 ** 64)]
        assert list(vcc) == [False]
    # |d| > 2^126: both x2^-64; tiny numerator (< 2^-103): both x2^64
    for s0, d, n, factor in ((f32(2.0 ** 127), f32(2.0 ** 127), f32(8.0), Fraction(1, 2 ** 64)),
                             (f32(8.0), f32(2.0 ** 127), f32(8.0), Fraction(1, 2 ** 64)),
                             (f32(2.0 ** -110), f32(3.0), f32(2.0 ** -110), 2 ** 64),
                             (f32(3.0), f32(3.0), f32(2.0 ** -110), 2 ** 64)):
        out, vcc = run("v_div_scale_f32", [s0], [d], [n])
        assert [int(x) for x in out] == [rn32(Fraction(b32(s0)) * factor)]
        assert list(vcc) == [False]
    # |d| > 2^126 with a denormal quotient: only d scaled (by 2^-64), VCC
    out, vcc = run("v_div_scale_f32", [f32(2.0 ** 127)] * 2, [f32(2.0 ** 127)] * 2,
                   [f32(2.0 ** -10)] * 2)
    assert [int(x) for x in out][0] == f32(2.0 ** 63) and list(vcc) == [True, True]
    f64s = [f64(2.0 ** -1000), f64(3.0), f64(2.0 ** -1000)]
    out, vcc = VALU_OPS["v_div_scale_f64"](CTX, *(lanes([v], np.uint64) for v in f64s))
    assert b64(out[0]) == 2.0 ** -872 and not vcc[0]


def test_div_fixup_special_cases():
    one, two, inf, nan = f32(1.0), f32(2.0), INF32, QNAN32
    q = [one, one, one, one, one, one, nan, f32(-0.75), one, one]
    d = [0, 0, inf, inf, two, f32(2.0 ** 100), two, f32(-2.0), nan, two]
    n = [0, f32(-3.0), inf, f32(3.0), 0x80000000, f32(2.0 ** -60), two, f32(1.5), one, inf]
    expect = [QNAN32, NINF32, QNAN32, 0, 0x80000000, 0, INF32, f32(-0.75), QNAN32, INF32]
    assert [int(x) for x in run("v_div_fixup_f32", q, d, n)] == expect
    q64 = [f64(1.0), f64(1.0), f64(5.0)]
    d64 = [f64(2.0 ** 600), f64(-0.0), f64(-2.0)]
    n64 = [f64(2.0 ** -600), f64(1.0), f64(10.0)]
    got = VALU_OPS["v_div_fixup_f64"](CTX, lanes(q64, np.uint64), lanes(d64, np.uint64),
                                      lanes(n64, np.uint64))
    assert [b64(x) for x in got[:3]] == [0.0, -math.inf, -5.0]
