"""The f32/f64 arithmetic of the vector ALU (:mod:`gpgpu_hdl.emu.valu_float`) against
independent models.

- add/sub/mul against numpy binary32 arithmetic (the IEEE-754 definition);
- input and output denormal flushing per MODE, ``v_mad``/``v_mac`` that always flush, f64
  denormals, and canonical NaN results;
- ``v_mad``/``v_mac``/``v_madmk``/``v_madak`` (two roundings) and ``v_fma_f32/f64`` (one
  rounding) against exact ``fractions.Fraction`` results rounded by the reference rounding,
  on random operands and on products at or next to rounding ties;
- the DX9 legacy multiplies, IEEE min/max NaN and signed-zero rules, min3/max3/med3;
- trunc/floor/ceil/rndne/fract, frexp and ldexp against Python's ``math``;
- rcp and sqrt correctly rounded (``Fraction``), rcp/rsq/log/sqrt/exp special values, and
  exp/log/rsq/sin/cos within 0.5 ulp of 60-digit ``decimal`` references;
- the cube map ops against CLRX's pseudo-code.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from gpgpu_hdl.emu.context import FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from tests.bits import M32, b32, b64, f32, f64, sext
from tests.emu.valu_models import (CTX, DEN_NEG, DEN_POS, DENORM, INF32, NINF32, NON_IEEE, QNAN32,
                                   QNAN64, RNG, D, decimal_pi, ftz32, lanes, rand_f32, rand_f64,
                                   rn32, rn64, round_fraction, run, zipped)

pytestmark = pytest.mark.usefixtures("valu_environment")

TINY = f32(2.0 ** -126)                          # smallest normal


def is_nan32(b: int) -> bool:
    """Whether the binary32 ``b`` is a NaN."""
    return (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0


def canon32(b: int) -> int:
    """``b``, or the canonical quiet NaN if ``b`` is a NaN."""
    return QNAN32 if is_nan32(b) else b


def np32(bits) -> np.ndarray:
    """binary32 bit patterns as a float32 array."""
    return np.asarray(bits, np.uint32).view(np.float32)


# ---------------------------------------------------------------------------------------------
# f32 arithmetic, flushing, NaN

def test_add_mul_match_ieee_binary32():
    a, b = rand_f32(64, -60, 60), rand_f32(64, -60, 60)
    fa, fb = np32(a), np32(b)
    assert np.array_equal(VALU_OPS["v_add_f32"](DENORM, a, b), (fa + fb).view(np.uint32))
    assert np.array_equal(VALU_OPS["v_sub_f32"](DENORM, a, b), (fa - fb).view(np.uint32))
    assert np.array_equal(VALU_OPS["v_subrev_f32"](DENORM, a, b), (fb - fa).view(np.uint32))
    assert np.array_equal(VALU_OPS["v_mul_f32"](DENORM, a, b), (fa * fb).view(np.uint32))


def test_input_and_output_flushing():
    # input denormals: 1.0 + denormal is 1.0 either way, but denormal + denormal is not
    assert [int(x) for x in run("v_add_f32", [DEN_POS], [DEN_POS])] == [0]
    assert [int(x) for x in run("v_add_f32", [DEN_POS], [DEN_POS], ctx=DENORM)] == [10]
    assert [int(x) for x in run("v_mul_f32", [DEN_NEG], [f32(2.0 ** 100)])] == [0x80000000]
    assert [int(x) for x in run("v_mul_f32", [DEN_NEG], [f32(2.0 ** 100)], ctx=DENORM)] == \
        [f32(-(2.0 ** -127) * 2.0 ** 100)]
    # output denormals: 2^-126 * 0.5 and 2^-126 - 2^-127 * 1.5 are denormal results
    half, big, small = f32(0.5), f32(1.5 * 2.0 ** -126), f32(-(2.0 ** -126))
    assert [int(x) for x in run("v_mul_f32", [TINY, TINY | 0x80000000], [half, half])] == \
        [0, 0x80000000]
    assert [int(x) for x in run("v_mul_f32", [TINY], [half], ctx=DENORM)] == [f32(2.0 ** -127)]
    assert [int(x) for x in run("v_add_f32", [big], [small])] == [0]
    assert [int(x) for x in run("v_add_f32", [big], [small], ctx=DENORM)] == [f32(2.0 ** -127)]
    # flush-out only (MODE denorm field 1) keeps denormal inputs
    out_only = LaneContext(FpMode(0x3D0))
    assert [int(x) for x in run("v_add_f32", [DEN_POS], [f32(2.0 ** -126)], ctx=out_only)] == \
        [TINY + 5]
    # mad always flushes: inputs, product and result, even with denormals enabled
    for ctx in (CTX, DENORM):
        assert [int(x) for x in run("v_mad_f32", [DEN_POS], [f32(2.0 ** 30)], [0],
                                    ctx=ctx)] == [0]
        assert [int(x) for x in run("v_mad_f32", [TINY], [half], [f32(2.0 ** -126)],
                                    ctx=ctx)] == [TINY]        # product 2^-127 flushed
        assert [int(x) for x in run("v_mac_f32", [TINY], [half], [0], ctx=ctx)] == [0]
    # f64 denormals are kept by default and flushed with FP_DENORM[7:6] = 0
    d64 = lanes([1], np.uint64)
    assert int(VALU_OPS["v_add_f64"](CTX, d64, d64)[0]) == 2
    assert int(VALU_OPS["v_add_f64"](LaneContext(FpMode(0x300)), d64, d64)[0]) == 0


def test_nan_results_are_canonical():
    inf, ninf = INF32, NINF32
    payload = [0x7F800001, 0xFFC12345, 0x7FFFFFFF]
    assert [int(x) for x in run("v_add_f32", [inf], [ninf])] == [QNAN32]
    assert [int(x) for x in run("v_mul_f32", [0], [inf])] == [QNAN32]
    assert [int(x) for x in run("v_add_f32", payload, [f32(1.0)] * 3)] == [QNAN32] * 3
    # a NaN x loses every |.| >= comparison, so x is the major axis: 2 * NaN
    assert [int(x) for x in run("v_cubema_f32", payload, [0] * 3, [f32(9.0)] * 3)] == [QNAN32] * 3
    got = VALU_OPS["v_fma_f64"](CTX, lanes([0xFFF0000000000001], np.uint64),
                                lanes([f64(1.0)], np.uint64), lanes([0], np.uint64))
    assert int(got[0]) == QNAN64
    assert [int(x) for x in run("v_cvt_f16_f32", payload)] == [0x7E00] * 3


def _mad_reference(a, b, c):
    p = ftz32(rn32(Fraction(b32(a)) * Fraction(b32(b))))
    return ftz32(rn32(Fraction(b32(p)) + Fraction(b32(c))))


def _fma_reference(fa: float, fb: float, fc: float, rn):
    """IEEE-754 fusedMultiplyAdd: exact rational result, one rounding by ``rn``; returns a
    float (NaN for invalid operations)."""
    if math.isnan(fa) or math.isnan(fb) or math.isnan(fc):
        return math.nan
    if math.isinf(fa) or math.isinf(fb):
        if fa == 0 or fb == 0:
            return math.nan                                        # inf * 0
        prod = math.copysign(math.inf, fa) * math.copysign(1.0, fb)
        return math.nan if math.isinf(fc) and fc != prod else prod
    if math.isinf(fc):
        return fc
    exact = Fraction(fa) * Fraction(fb) + Fraction(fc)
    if exact != 0:
        return rn(exact)
    both_neg = math.copysign(1, fa) * math.copysign(1, fb) < 0 and math.copysign(1, fc) < 0
    return -0.0 if (fa == 0 or fb == 0) and fc == 0 and both_neg else 0.0


def _fma32_reference(a, b, c):
    r = _fma_reference(b32(a), b32(b), b32(c), lambda x: round_fraction(x, 23, -126, 127))
    return QNAN32 if math.isnan(r) else f32(r)


def test_unfused_mad_differs_from_fused_fma():
    # a*b = 1 + 2^-11 + 2^-24 is a binary32 tie; c removes the leading 1
    a = b = f32(1.0 + 2.0 ** -12)
    c = f32(-1.0)
    mad = int(run("v_mad_f32", [a], [b], [c])[0])
    fma = int(run("v_fma_f32", [a], [b], [c])[0])
    assert mad == _mad_reference(a, b, c) == f32(2.0 ** -11)
    assert fma == _fma32_reference(a, b, c) == f32(2.0 ** -11 + 2.0 ** -24)
    assert mad != fma
    assert [int(x) for x in run("v_madmk_f32", [a], [c], [b])] == [mad]     # S0*K + S1
    assert [int(x) for x in run("v_madak_f32", [a], [b], [c])] == [mad]     # S0*S1 + K
    assert [int(x) for x in run("v_mac_f32", [a], [b], [c])] == [mad]


def test_mad_against_reference():
    a, b, c = rand_f32(64, -70, 50), rand_f32(64, -70, 50), rand_f32(64, -126, 0)
    got = VALU_OPS["v_mad_f32"](CTX, a, b, c)
    assert [int(x) for x in got] == [_mad_reference(*map(int, t)) for t in zipped(a, b, c)]


def _fma32_hard_cases():
    """Exact products on binary32 ties (or just off them) with small addends, and
    denormal-range results."""
    out = []
    for k in range(1, 40, 2):
        for j in (1, 3, 5, 7):
            a, b = 1.0 + k * 2.0 ** -12, 1.0 + j * 2.0 ** -12       # k*j odd: tie product
            scale = 2.0 ** int(RNG.integers(-60, 60))
            for c in (0.0, 2.0 ** -100, -(2.0 ** -100), 2.0 ** -47, -(2.0 ** -47)):
                out.append((f32(a * scale), f32(b), f32(c * scale)))
    for _ in range(64):                                            # denormal results
        a = float(np.float32(RNG.uniform(1, 2) * 2.0 ** -70))
        b = float(np.float32(RNG.uniform(1, 2) * 2.0 ** -70))
        c = float(np.float32(RNG.uniform(-1, 1) * 2.0 ** -130))
        out.append((f32(a), f32(b), f32(c)))
    out.append((f32(2.0 ** 127), f32(3.0), f32(-(2.0 ** 127))))        # exactly 2^128: inf
    out.append((f32(3.4e38), f32(1.0000001), 0))                         # overflow to inf
    out.append((f32(2.0 ** 64), f32(2.0 ** 64), NINF32))                  # finite * finite - inf
    out.append((0x80000000, f32(5.0), 0))                                  # -0*5 + 0 = +0
    out.append((0x80000000, f32(5.0), 0x80000000))                         # -0*5 + -0 = -0
    out.append((f32(1.0 + 2.0 ** -23), f32(1.0 - 2.0 ** -23), f32(-1.0)))  # exact -2^-46
    return out


def test_fma_f32_is_correctly_rounded():
    cases = _fma32_hard_cases()
    cases += list(zipped(*(map(int, rand_f32(192, -40, 40)) for _ in range(3))))
    cases += list(zipped(map(int, rand_f32(64, -60, 0)), map(int, rand_f32(64, -60, 0)),
                      map(int, rand_f32(64, -130, -100))))
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        a, b, c = (lanes([t[k] for t in chunk]) for k in range(3))
        got = VALU_OPS["v_fma_f32"](DENORM, a, b, c)[:len(chunk)]
        assert [int(x) for x in got] == [_fma32_reference(*t) for t in chunk]


def _fma64_reference(a, b, c):
    r = _fma_reference(b64(a), b64(b), b64(c), lambda x: round_fraction(x, 52, -1022, 1023))
    return QNAN64 if math.isnan(r) else f64(r)


def _fma64_hard_cases():
    out = []
    for k in range(1, 24, 2):
        for j in (1, 3, 5):
            a, b = 1.0 + k * 2.0 ** -27, 1.0 + j * 2.0 ** -26       # tie product
            scale = 2.0 ** int(RNG.integers(-300, 300))
            for c in (0.0, 2.0 ** -90, -(2.0 ** -90), 2.0 ** -60, -(2.0 ** -60)):
                out.append((f64(a * scale), f64(b), f64(c * scale)))
    for _ in range(40):
        x, y = (float(v) for v in RNG.uniform(1, 2, 2))
        p = x * y
        out.append((f64(x), f64(y), f64(-p)))                        # exact product error
        e = float(RNG.integers(-1074, -1000))
        out.append((f64(x * 2.0 ** (e / 2)), f64(y * 2.0 ** (e / 2)),
                    f64(float(RNG.uniform(-1, 1)) * 2.0 ** -1060)))   # denormal results
    # c + RN(a*b) is a tie that the product's rounding error (below w's precision) breaks
    a, b = 1.0 - 2.0 ** -53, (1.0 + 2.0 ** -52) * 2.0 ** -53
    for sc in (1.0, 2.0 ** -700, 2.0 ** 700):
        out += [(f64(a * sc), f64(b), f64(sc)), (f64(-a * sc), f64(b), f64(-sc))]
    big = 2.0 ** 1000
    out += [(f64(big), f64(2.0 ** 24), f64(-1.7976931348623157e308)),  # product overflows
            (f64(1.7976931348623157e308), f64(1.0000000000000002), f64(0.0)),
            (f64(2.0 ** 600), f64(2.0 ** 600), f64(-math.inf)),
            (f64(-0.0), f64(3.0), f64(0.0)), (f64(-0.0), f64(3.0), f64(-0.0)),
            (f64(math.inf), f64(0.0), f64(1.0)), (f64(math.inf), f64(2.0), f64(-math.inf)),
            (f64(5e-324), f64(0.5), f64(0.0)), (f64(5e-324), f64(1.5), f64(5e-324)),
            (f64(2.0 ** -540), f64(2.0 ** -540), f64(2.0 ** -1074))]
    return out


def test_fma_f64_is_correctly_rounded():
    cases = _fma64_hard_cases()
    cases += list(zipped(*(map(int, rand_f64(128, -300, 300)) for _ in range(3))))
    cases += list(zipped(map(int, rand_f64(64)), map(int, rand_f64(64)), map(int, rand_f64(64))))
    for i in range(0, len(cases), 64):
        chunk = cases[i:i + 64]
        a, b, c = (lanes([t[k] for t in chunk], np.uint64) for k in range(3))
        got = VALU_OPS["v_fma_f64"](CTX, a, b, c)[:len(chunk)]
        assert [int(x) for x in got] == [_fma64_reference(*t) for t in chunk]


def test_legacy_multiplies():
    inf, nan = INF32, QNAN32
    one, two, m0 = f32(1.0), f32(2.0), 0x80000000
    # 0 times anything (inf, NaN) is +0 under the DX9 rules
    assert [int(x) for x in run("v_mul_legacy_f32", [0, m0, inf, nan, two],
                                [inf, nan, 0, m0, two])] == [0, 0, 0, 0, f32(4.0)]
    assert [int(x) for x in run("v_mad_legacy_f32", [0, two], [inf, two], [one, one])] == \
        [one, f32(5.0)]
    assert [int(x) for x in run("v_mac_legacy_f32", [nan], [0], [f32(3.0)])] == [f32(3.0)]
    assert [int(x) for x in run("v_mullit_f32", [two, two, two, 0], [two, two, two, inf],
                                [one, 0, nan, one])] == \
        [f32(4.0), f32(-3.4028234663852886e38), f32(-3.4028234663852886e38), 0]


# ---------------------------------------------------------------------------------------------
# min / max

def test_min_max_ieee_nan_rules_and_signed_zero():
    one, two, m0, p0 = f32(1.0), f32(2.0), 0x80000000, 0
    qnan, snan = 0x7FC00001, 0x7F800001
    a = [one, qnan, one, qnan, m0, p0, snan, one]
    b = [two, one, qnan, qnan, p0, m0, one, snan]
    assert [int(x) for x in run("v_min_f32", a, b)] == [one, one, one, QNAN32, m0, m0,
                                                        QNAN32, QNAN32]
    assert [int(x) for x in run("v_max_f32", a, b)] == [two, one, one, QNAN32, p0, p0,
                                                        QNAN32, QNAN32]
    # without IEEE mode a signalling NaN is just a NaN: the other operand wins
    assert [int(x) for x in run("v_min_f32", a, b, ctx=NON_IEEE)][6:] == [one, one]
    d = [f64(1.0), 0x7FF8000000000001, f64(-0.0), 0x7FF0000000000001]
    e = [f64(-1.0), f64(3.0), f64(0.0), f64(3.0)]
    got = VALU_OPS["v_min_f64"](CTX, lanes(d, np.uint64), lanes(e, np.uint64))
    assert [int(x) for x in got[:4]] == [f64(-1.0), f64(3.0), f64(-0.0), QNAN64]
    got = VALU_OPS["v_max_f64"](CTX, lanes(d, np.uint64), lanes(e, np.uint64))
    assert [int(x) for x in got[:4]] == [f64(1.0), f64(3.0), f64(0.0), QNAN64]
    # legacy: s0 < s1 ? s0 : s1, so any NaN yields s1
    assert [int(x) for x in run("v_min_legacy_f32", [qnan, one, m0], [one, qnan, p0])] == \
        [one, QNAN32, p0]
    assert [int(x) for x in run("v_max_legacy_f32", [qnan, one, p0], [one, qnan, m0])] == \
        [one, QNAN32, m0]


def test_min3_max3_med3_f32():
    vals = [f32(v) for v in (-2.5, 1.0, 7.0, -0.0, 0.0, 3.0)]
    a = [x for x in vals for _ in vals for _ in vals][:64]
    b = [y for _ in vals for y in vals for _ in vals][:64]
    c = [z for _ in vals for _ in vals for z in vals][:64]
    f = b32
    assert [f(x) for x in run("v_min3_f32", a, b, c)] == \
        [min(f(x), f(y), f(z)) for x, y, z in zipped(a, b, c)]
    assert [f(x) for x in run("v_max3_f32", a, b, c)] == \
        [max(f(x), f(y), f(z)) for x, y, z in zipped(a, b, c)]
    assert [f(x) for x in run("v_med3_f32", a, b, c)] == \
        [sorted((f(x), f(y), f(z)))[1] for x, y, z in zipped(a, b, c)]
    nan, one, two = QNAN32, f32(1.0), f32(2.0)
    assert [int(x) for x in run("v_med3_f32", [nan, one, nan], [one, nan, nan],
                                [two, two, two])] == [one, one, two]   # any NaN: min3
    assert [int(x) for x in run("v_max3_f32", [nan], [nan], [nan])] == [QNAN32]


# ---------------------------------------------------------------------------------------------
# rounding, fract, frexp and ldexp

def test_rounding_ops_and_fract():
    vals = [1.5, -1.5, 2.5, -2.5, 0.3, -0.3, -0.0, 1e20, -1e-30, 8388609.5, math.inf, math.nan]
    bits = [f32(v) for v in vals]
    fv = [b32(b) for b in bits]

    def keep(fn):
        return [canon32(f32(float(fn(x)))) if math.isfinite(x) else canon32(f32(x)) for x in fv]

    assert [int(x) for x in run("v_trunc_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(math.trunc(x), x))
    assert [int(x) for x in run("v_floor_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(math.floor(x), x) if math.floor(x) == 0 else math.floor(x))
    assert [int(x) for x in run("v_ceil_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(math.ceil(x), x) if math.ceil(x) == 0 else math.ceil(x))
    assert [int(x) for x in run("v_rndne_f32", bits, ctx=DENORM)] == \
        keep(lambda x: math.copysign(round(x), x) if round(x) == 0 else round(x))
    almost_one = b32(f32(1.0) - 1)

    def fract(x):
        if not math.isfinite(x):
            return QNAN32
        return rn32(min(Fraction(x) - math.floor(x), Fraction(almost_one)))

    assert [int(x) for x in run("v_fract_f32", bits, ctx=DENORM)] == [fract(x) for x in fv]
    assert int(run("v_fract_f32", [f32(-(2.0 ** -30))])[0]) == f32(almost_one)
    d = [f64(v) for v in (-1e-300, 2.75, -2.75, math.inf)]
    got = VALU_OPS["v_fract_f64"](CTX, lanes(d, np.uint64))[:4]
    assert [int(x) for x in got] == [f64(1.0) - 1, f64(0.75), f64(0.25), QNAN64]


def test_frexp_and_ldexp():
    vals = [1.0, 0.75, -6.0, 2.0 ** -130, 0.0, -0.0, math.inf, math.nan, 3.4e38]
    bits = [f32(v) for v in vals]
    exps = [math.frexp(v)[1] & M32 if math.isfinite(v) else M32 for v in vals]
    assert [int(x) for x in run("v_frexp_exp_i32_f32", bits, ctx=DENORM)] == exps
    mants = [f32(math.frexp(v)[0]) if math.isfinite(v) else QNAN32 for v in vals]
    assert [int(x) for x in run("v_frexp_mant_f32", bits, ctx=DENORM)] == mants
    d = [f64(v) for v in vals]
    assert [int(x) for x in VALU_OPS["v_frexp_exp_i32_f64"](CTX, lanes(d, np.uint64))[:9]] \
        == exps
    assert [int(x) for x in VALU_OPS["v_frexp_mant_f64"](CTX, lanes(d, np.uint64))[:9]] == \
        [f64(math.frexp(v)[0]) if math.isfinite(v) else QNAN64 for v in vals]
    xs = [f32(v) for v in (1.5, 1.5, 1.5, -3.0, 1.0, 2.0 ** -126, 3.0, 3.0)]
    ns = [1, -127, 200, -150, -149, -1, -100000, 0x7FFFFFFF]
    expect = [rn32(Fraction(b32(x)) * Fraction(2) ** sext(n)) for x, n in zipped(xs[:-1], ns[:-1])]
    expect.append(INF32)                          # 3 * 2^(2^31 - 1) overflows
    assert [int(x) for x in run("v_ldexp_f32", xs, ns, ctx=DENORM)] == expect
    got = VALU_OPS["v_ldexp_f64"](CTX, lanes([f64(1.5)], np.uint64), lanes([-1075, 1024, 3]))
    assert [b64(x) for x in got[:3]] == [2.0 ** -1074, math.inf, 12.0]


# ---------------------------------------------------------------------------------------------
# transcendentals

def _ulp32(x: float) -> float:
    x = abs(x)
    return 2.0 ** max(math.frexp(x)[1] - 24, -149) if x else 2.0 ** -149


def _close_to_reference(got_bits, ref: D) -> bool:
    """Within 0.5 ulp (+2^-20 ulp slack for the binary64 model) of the exact reference."""
    got = b32(got_bits)
    return abs(D(got) - ref) <= D(_ulp32(got)) * (D("0.5") + D(2) ** -20)


def _sin(x: D) -> D:
    x = x % (2 * decimal_pi())
    term, total, k = x, x, 1
    while abs(term) > D(10) ** -55:
        term = -term * x * x / ((2 * k) * (2 * k + 1))
        total += term
        k += 1
    return total


def test_rcp_and_sqrt_are_correctly_rounded():
    xs = [int(v) for v in rand_f32(64, -125, 125)]
    xs[:6] = [f32(v) for v in (3.0, 0.1, 7.0, 2.0 ** -126, 1.5 * 2.0 ** 126, 1.0)]
    assert [int(x) for x in run("v_rcp_f32", xs, ctx=DENORM)] == \
        [rn32(1 / Fraction(b32(x))) for x in xs]
    assert [int(x) for x in run("v_rcp_iflag_f32", xs, ctx=DENORM)] == \
        [rn32(1 / Fraction(b32(x))) for x in xs]
    pos = [x & 0x7FFFFFFF for x in xs]
    for x, r in zipped(pos, run("v_sqrt_f32", pos)):
        fx, fr = Fraction(b32(x)), Fraction(b32(r))
        half = Fraction(_ulp32(b32(r))) / 2
        assert (fr - half) ** 2 < fx < (fr + half) ** 2      # nearest: no ties for sqrt
    d = [int(v) for v in rand_f64(32, -1000, 1000)]
    assert [int(x) for x in VALU_OPS["v_rcp_f64"](CTX, lanes(d, np.uint64))[:32]] == \
        [rn64(1 / Fraction(b64(v))) for v in d]
    dp = [v & 0x7FFFFFFFFFFFFFFF for v in d]
    got = VALU_OPS["v_sqrt_f64"](CTX, lanes(dp, np.uint64))[:32]
    for x, r in zipped(dp, got):
        fx, fr = Fraction(b64(x)), Fraction(b64(r))
        half = (Fraction(b64(int(r) + 1)) - fr) / 2
        assert (fr - half) ** 2 < fx < (fr + half) ** 2
    rsq = VALU_OPS["v_rsq_f64"](CTX, lanes(dp, np.uint64))[:32]
    for x, r in zipped(dp, rsq):
        ref = 1 / D(b64(x)).sqrt()
        assert abs(D(b64(r)) - ref) < D(math.ulp(b64(r)))


def test_special_values_of_reciprocals():
    z, mz, inf, ninf, one = 0, 0x80000000, INF32, NINF32, f32(1.0)
    fmax = f32(3.4028234663852886e38)
    assert [int(x) for x in run("v_rcp_f32", [z, mz, inf, ninf])] == [inf, ninf, z, mz]
    assert [int(x) for x in run("v_rcp_clamp_f32", [z, mz])] == [fmax, fmax | 0x80000000]
    assert [int(x) for x in run("v_rcp_legacy_f32", [z, mz, inf, DEN_POS])] == [z, mz, z, z]
    assert [int(x) for x in run("v_rsq_f32", [z, mz, inf, f32(-1.0), f32(4.0)])] == \
        [inf, ninf, z, QNAN32, f32(0.5)]
    assert [int(x) for x in run("v_rsq_clamp_f32", [z, mz])] == [fmax, fmax | 0x80000000]
    assert [int(x) for x in run("v_rsq_legacy_f32", [z, f32(4.0)])] == [z, f32(0.5)]
    # v_rsq/v_log ignore MODE and always flush denormal inputs
    assert [int(x) for x in run("v_rsq_f32", [DEN_POS], ctx=DENORM)] == [inf]
    assert [int(x) for x in run("v_log_f32", [DEN_POS], ctx=DENORM)] == [ninf]
    assert [int(x) for x in run("v_log_f32", [z, one, f32(-2.0), inf, f32(8.0)])] == \
        [ninf, z, QNAN32, inf, f32(3.0)]
    assert [int(x) for x in run("v_log_clamp_f32", [z])] == [fmax | 0x80000000]
    assert [int(x) for x in run("v_sqrt_f32", [mz, f32(-4.0), inf])] == [mz, QNAN32, inf]
    assert [int(x) for x in run("v_exp_f32", [f32(-126.0), f32(-126.5), f32(3.0), ninf, inf],
                                ctx=DENORM)] == [TINY, z, f32(8.0), z, inf]
    dmax = f64(1.7976931348623157e308)
    got = VALU_OPS["v_rcp_clamp_f64"](CTX, lanes([0, 1 << 63], np.uint64))[:2]
    assert [int(x) for x in got] == [dmax, dmax | (1 << 63)]
    got = VALU_OPS["v_rsq_clamp_f64"](CTX, lanes([0], np.uint64))[:1]
    assert int(got[0]) == dmax


def test_exp_log_rsq_accuracy():
    xs = [f32(float(v)) for v in RNG.uniform(-120, 120, 40)] + [f32(0.5), f32(-0.25)]
    ln2 = D(2).ln()
    for x, r in zipped(xs, run("v_exp_f32", xs)):
        assert _close_to_reference(r, (D(b32(x)) * ln2).exp()), hex(x)
    pos = [int(v) for v in rand_f32(42, -120, 120) & np.uint32(0x7FFFFFFF)]
    for x, r in zipped(pos, run("v_log_f32", pos)):
        assert _close_to_reference(r, D(b32(x)).ln() / ln2), hex(x)
    for x, r in zipped(pos, run("v_rsq_f32", pos)):
        assert _close_to_reference(r, 1 / D(b32(x)).sqrt()), hex(x)


def test_sin_cos_take_revolutions():
    exact = [0.0, 0.25, 0.5, 0.75, 1.0, -0.25, 1.0 / 12, 5.25, -256.0, -0.0]
    bits = [f32(v) for v in exact]
    assert [int(x) for x in run("v_sin_f32", bits)] == \
        [f32(v) for v in (0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.5, 1.0, -0.0, -0.0)]
    assert [int(x) for x in run("v_cos_f32", bits[:6] + bits[7:])] == \
        [f32(v) for v in (1.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0)]
    xs = [f32(float(v)) for v in RNG.uniform(-3, 3, 24)] + [f32(1e-6), f32(100.3)]
    two_pi = 2 * decimal_pi()
    for x, r in zipped(xs, run("v_sin_f32", xs)):
        assert _close_to_reference(r, _sin(D(b32(x)) * two_pi)), hex(x)
    for x, r in zipped(xs, run("v_cos_f32", xs)):
        assert _close_to_reference(r, _sin(D(b32(x)) * two_pi + decimal_pi() / 2)), hex(x)
    # out of the [-256, 256] input range, and non-finite inputs
    assert [int(x) for x in run("v_sin_f32", [f32(300.25), INF32, QNAN32])] == [0, QNAN32, QNAN32]
    assert [int(x) for x in run("v_cos_f32", [f32(300.5), NINF32])] == [f32(1.0), QNAN32]


# ---------------------------------------------------------------------------------------------
# cube map

def test_cube_ops():
    vecs = [(1.0, 2.0, 3.0), (1.0, 2.0, -3.0), (1.0, -5.0, 3.0), (4.0, -2.0, 3.0),
            (-4.0, 2.0, 3.0), (2.0, 2.0, 2.0), (-2.0, 2.0, -2.0), (3.0, -3.0, 1.0),
            (-0.0, 0.0, -0.0), (7.0, 1.0, -7.0)]
    x, y, z = ([f32(v[k]) for v in vecs] for k in range(3))

    def ref(a, b, c):                           # (id, sc, tc, ma) per CLRX's pseudo-code
        if abs(c) >= abs(a) and abs(c) >= abs(b):
            return (5.0 if c < 0 else 4.0), (-a if c < 0 else a), -b, 2 * c
        if abs(b) >= abs(a):
            return (3.0 if b < 0 else 2.0), a, (-c if b < 0 else c), 2 * b
        return (1.0 if a < 0 else 0.0), (c if a < 0 else -c), -b, 2 * a

    expect = [ref(*v) for v in vecs]
    for k, name in enumerate(("v_cubeid_f32", "v_cubesc_f32", "v_cubetc_f32", "v_cubema_f32")):
        assert [int(r) for r in run(name, x, y, z)] == [f32(e[k]) for e in expect], name
