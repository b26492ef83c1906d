# amaranth: UnusedElaboratable=no
"""The FP32 divide / square-root / transcendental sub-unit (:mod:`gpgpu_hdl.cu.fpu.trans`)
against the golden model; the ``v_rsq_f32`` model (:func:`gpgpu_hdl.emu.fp.rsq_f32`) against
exact rational arithmetic and the ``v_exp_f32``, ``v_log_f32``, ``v_sin_f32`` and ``v_cos_f32``
models (:func:`gpgpu_hdl.emu.fp.exp2_f32`, :func:`~gpgpu_hdl.emu.fp.log2_f32`,
:func:`~gpgpu_hdl.emu.fp.sin_f32`, :func:`~gpgpu_hdl.emu.fp.cos_f32`) against their error
bounds.

The unit built with every op runs one simulation over all vectors (ops interleaved), one
operation at a time (``start``, then wait for ``done``); each result is compared with
:data:`VALU_OPS` evaluated on the same operands and MODE, 64 lanes per call. Operands: f32
corners (signed zeros, ones, infinities, quiet and signalling NaNs, the smallest and largest
denormals, the normal range ends, powers of two, significands 1.0 and 1.11...1, values with
exact results, values near 2^126/2^127/2^-126 where ``1/x`` becomes denormal or overflows,
the hardest ``rsq`` rounding case, the ends of exp's range, log's case boundaries 1/2, 1, 5/4
and the neighbours of 1, multiples of 1/4 revolution and their neighbours, sin/cos's range end
256) under the four f32 FP_DENORM settings, plus seeded random bit patterns and random floats
(log: many near 1; sin/cos: many small or near multiples of 1/4); the division helpers also get
operand pairs at each of their thresholds. Smaller builds (one op family each) run a sample.
The timing contract (``done``, :attr:`~FpTrans.latency`, stable outputs) is checked cycle by
cycle on a few vectors.
"""

from __future__ import annotations

import decimal
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from amaranth.back import rtlil

from gpgpu_hdl.cu.fpu.ops import FP_OPS, SUBUNIT_OF
from gpgpu_hdl.cu.fpu.trans import (
    EXP_TABLE, LOG_DOWN_TABLE, LOG_TABLE, TRANS_NOT_BUILT, TRIG_ATAN_TABLE, TRIG_START_TABLE,
    FpTrans)
from gpgpu_hdl.emu import fp
from gpgpu_hdl.emu.context import WAVE_SIZE
from tests.bits import b32, f32, f64
from tests.cu.fpu.harness import (
    DENORM_MODES, check, check_ops_argument, golden, handshake, input_ports, pack,
)
from tests.simulation import Vector, by_op, simulate

#: MODE with f32 FP_DENORM 0 (flush in and out), 1 (flush out), 2 (flush in), 3 (preserve).
MODES = DENORM_MODES

RCP_OPS = ("v_rcp_f32", "v_rcp_iflag_f32", "v_rcp_clamp_f32", "v_rcp_legacy_f32")
SQRT_OPS = ("v_sqrt_f32",)
RSQ_OPS = ("v_rsq_f32", "v_rsq_clamp_f32", "v_rsq_legacy_f32")
EXP_OPS = ("v_exp_f32",)
LOG_OPS = ("v_log_f32", "v_log_clamp_f32")
TRIG_OPS = ("v_sin_f32", "v_cos_f32")
UNARY_OPS = RCP_OPS + SQRT_OPS + RSQ_OPS + EXP_OPS + LOG_OPS + TRIG_OPS
DIV_OPS = ("v_div_scale_f32", "v_div_fixup_f32")
#: The op of each family run on every corner in every mode; the others get fewer vectors.
MAIN_OPS = ("v_rcp_f32", "v_sqrt_f32", "v_rsq_f32", "v_exp_f32")
#: Random operands per op in the default run (MODE does not matter to log: it always flushes
#: its input and its result is never denormal, so its corners run in two modes; sin and cos
#: too, their random operands in random modes).
N_RANDOM = dict.fromkeys(MAIN_OPS, 600) | {"v_log_f32": 200, "v_sin_f32": 150, "v_cos_f32": 150}

#: Hardest v_rsq_f32 input: 1/sqrt(x) is 2^-29 binary32 ulp from a rounding boundary (the only
#: significand, over both exponent parities, whose binary64 estimate is within 4 binary64 ulps
#: of a binary32 midpoint; found by an exhaustive search).
RSQ_HARD = 0x403A_18E3

#: f32 corner operands of the unary ops.
CORNERS = (
    0x0000_0000, 0x8000_0000, f32(1.0), f32(-1.0), 0x7F80_0000, 0xFF80_0000,
    0x7FC0_0000, 0xFFC0_0001, 0x7F80_0001, 0x7FBF_FFFF,                          # NaNs
    0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x807F_FFFF, 0x0040_0000, 0x0000_0003,  # denormals
    0x0020_0000, 0x001F_FFFF, 0x0020_0001, 0x0010_0000, 0x0030_0000,             # 1/x near 2^128
    0x0080_0000, 0x8080_0000, 0x0080_0001, 0x7F7F_FFFF, 0xFF7F_FFFF,             # normal ends
    f32(2.0), f32(4.0), f32(0.5), f32(0.25), f32(16.0), f32(1 / 16), f32(2.0 ** 100),
    f32(2.25), f32(9.0), f32(0.0625 * 9), f32(3.0), f32(5.0), f32(7.0), f32(10.0), f32(0.1),
    f32(1 / 3), f32(-2.0), f32(-0.1),
    0x3FFF_FFFF, 0x3F7F_FFFF, 0x3F80_0001, 0x407F_FFFF, 0x4080_0001,             # 1.0, 1.11..1
    0x7E80_0000, 0x7E7F_FFFF, 0x7E80_0001, 0x7F00_0000, 0x7EFF_FFFF, 0x7F00_0001,  # 2^126, 2^127
    0x7F40_0000, 0x7E00_0000, 0x7EC0_0000, 0xFE80_0001, 0x0100_0000, 0x0180_0000,
    RSQ_HARD, RSQ_HARD - (2 << 23), RSQ_HARD + (40 << 23), 0x407F_FFFE,
    f32(-126.0), f32(-126.5), f32(128.0), 0x42FF_FFFF, 0xC2FC_0001, 0xC2FB_FFFF,   # exp range
    f32(127.5), f32(-125.75), f32(2.0 ** -30), f32(-(2.0 ** -30)), f32(-(2.0 ** -60)),
    f32(100.5), f32(-0.75), 0x3F7F_FFFF ^ 0x8000_0000, f32(1e-7),
)

#: More corners of v_log_f32: near 1, its case boundaries 1/2, 1, 5/4.
LOG_CORNERS = (
    0x3F80_0002, 0x3F80_0003, 0x3F7F_FFFE, 0x3F7F_FFFD, 0x3F00_0001, 0x3F7F_0000,
    f32(1.25), 0x3F9F_FFFF, 0x3FA0_0001, 0x3F9F_0000, 0x3F80_4000, 0x3F80_1235, 0x3F80_0100,
    f32(0.75), f32(1.5), 0x3F3F_FFFF, 0x4000_0001, f32(2.0 ** -126 * 1.5), f32(2.0 ** 127 * 1.75),
)

#: More corners of v_sin_f32/v_cos_f32 (revolutions): multiples of 1/4 and 1/8 and their
#: neighbours (exact results, the reduction's ties), the range end 256, 1/12 (sin = 1/2).
TRIG_CORNERS = (
    f32(0.25), f32(-0.25), f32(0.75), f32(1.25), f32(2.5), f32(-3.5), f32(0.125), f32(-0.375),
    0x3E7F_FFFF, 0x3E80_0001, 0x3EFF_FFFF, 0x3F00_0001, 0x3DFF_FFFF, 0x3E00_0001, 0x3F7F_FFFF,
    0x4380_0000, 0xC380_0000, 0x4380_0001, 0x437F_FFFF, f32(255.75), f32(1 / 12), f32(5 / 12),
    f32(1 / 6), f32(2.0 ** -20), f32(-(2.0 ** -100)), 0x0000_0002, 0x8000_0100, f32(100.3),
)


# --- operands -------------------------------------------------------------------------------

def random_f32(rng: random.Random) -> int:
    """A random operand: a bit pattern, a denormal, a NaN/inf, a float of moderate range, or a
    float at the ends of the exponent range (where 1/x is denormal or overflows)."""
    kind = rng.randrange(8)
    sign = rng.getrandbits(1) << 31
    if kind == 0:
        return rng.getrandbits(32)
    if kind == 1:
        return sign | rng.getrandbits(23)                                   # denormal (or 0)
    if kind == 2:
        return sign | 0x7F80_0000 | rng.getrandbits(23) * rng.getrandbits(1)   # inf/NaN
    if kind == 3:
        return sign | rng.choice((rng.randrange(250, 255), rng.randrange(1, 4))) << 23 \
            | rng.getrandbits(23)
    return f32(rng.uniform(0.5, 2.0) * 2.0 ** rng.randrange(-40, 40)) | sign


def random_exp_arg(rng: random.Random) -> int:
    """A random v_exp_f32 operand: mostly in its range [-126, 128), some near integers or
    tiny, some anything."""
    kind = rng.randrange(6)
    if kind == 0:
        return random_f32(rng)
    if kind == 1:
        return f32(rng.uniform(-1, 1) * 2.0 ** -rng.randrange(0, 60))
    if kind == 2:
        return f32(rng.randrange(-126, 128) + rng.choice((1, -1)) * 2.0 ** -rng.randrange(1, 24))
    return f32(rng.uniform(-126.5, 128.5))


def random_log_arg(rng: random.Random) -> int:
    """A random v_log_f32 operand: mostly positive floats, many near 1 (where the result is
    small), in (1, 5/4), in (1/2, 1), powers of two and their neighbours, some anything."""
    kind = rng.randrange(8)
    if kind == 0:
        return random_f32(rng)
    if kind == 1:
        return f32(1.0) + rng.choice((1, -1)) * rng.randrange(1, 1 << rng.randrange(1, 22))
    if kind == 2:
        return f32(rng.uniform(1.0, 1.25))
    if kind == 3:
        return f32(rng.uniform(0.5, 1.0))
    if kind == 4:
        return (rng.randrange(1, 255) << 23) + rng.randrange(-2, 3) & 0x7FFF_FFFF
    return random_f32(rng) & 0x7FFF_FFFF


def random_trig_arg(rng: random.Random) -> int:
    """A random v_sin_f32/v_cos_f32 operand (revolutions): in [-3, 3], in the range [-256,
    256], small (2**-1 .. 2**-140), near a multiple of 1/4, a denormal, some anything."""
    kind = rng.randrange(7)
    if kind == 0:
        return random_f32(rng)
    if kind == 1:
        return f32(rng.uniform(-256.5, 256.5))
    if kind == 2:
        return f32(rng.uniform(-1, 1) * 2.0 ** -rng.randrange(0, 140))
    if kind == 3:
        near = rng.choice((1, -1)) * 2.0 ** -rng.randrange(8, 34)
        return f32(rng.randrange(-1024, 1025) / 4 + near)
    if kind == 4:
        return rng.getrandbits(23) | rng.getrandbits(1) << 31
    return f32(rng.uniform(-3, 3))


def unary_cases(name: str, n_random: int) -> list[Vector]:
    """Corners in every mode (the main op of a family) or in two modes, then random operands in
    random modes; junk in the unused sources."""
    rng = random.Random(name)
    modes = MODES if name in MAIN_OPS else MODES[::3]
    corners = CORNERS + {**dict.fromkeys(LOG_OPS, LOG_CORNERS),
                         **dict.fromkeys(TRIG_OPS, TRIG_CORNERS)}.get(name, ())
    vectors = [Vector(name, x, rng.getrandbits(32), rng.getrandbits(32), mode)
               for x in corners for mode in modes]
    if name in SQRT_OPS + RSQ_OPS:
        # roots of positive values are the interesting ones
        vectors += [Vector(name, x & 0x7FFF_FFFF, 0, 0, rng.choice(MODES)) for x in CORNERS]
    for _ in range(n_random):
        if name in EXP_OPS:
            x = random_exp_arg(rng)
        elif name in LOG_OPS:
            x = random_log_arg(rng)
        elif name in TRIG_OPS:
            x = random_trig_arg(rng)
        else:
            x = random_f32(rng)
            if name not in RCP_OPS and rng.randrange(4):
                x &= 0x7FFF_FFFF
        vectors.append(Vector(name, x, rng.getrandbits(32), rng.getrandbits(32),
                              rng.choice(MODES)))
    return vectors


def _with_exp(bits: int, delta: int) -> int | None:
    """``bits`` times 2**delta if that is exact and a finite nonzero f32, else None."""
    x = b32(bits) * 2.0 ** delta
    if x == 0 or abs(x) > 3.4e38 or b32(f32(x)) != x:
        return None
    return f32(x)


def threshold_pairs(rng: random.Random) -> list[tuple[int, int]]:
    """(d, n) pairs at the thresholds of v_div_scale/v_div_fixup: exponent difference 96,
    |d| = 2^126, n/d = 2^-126, |n| = 2^-103, n/d = 2^-150 (with neighbours on both sides)."""
    pairs = []
    for _ in range(24):
        d = rng.getrandbits(32) & 0x7FFF_FFFF
        if not 0 < d < 0x7F80_0000:
            continue
        for delta in (-96, -95, -97, -126, -150, -149, 96):
            n = _with_exp(d, delta)
            if n is None:
                continue
            for nn in (n, n + 1, n - 1, n ^ 0x8000_0000):
                if 0 < nn & 0x7FFF_FFFF < 0x7F80_0000:
                    pairs.append((d | rng.getrandbits(1) << 31, nn))
    for d in (0x7E80_0000, 0x7E80_0001, 0x7E7F_FFFF, 0xFE80_0001):
        pairs += [(d, random_f32(rng)) for _ in range(6)] + [(d, d - (126 << 23))]
    for n in (0x0C00_0000, 0x0BFF_FFFF, 0x0C00_0001, 0x8BFF_FFFF):
        pairs += [(random_f32(rng), n) for _ in range(6)]
    return pairs


DIV_CORNERS = (0x0000_0000, 0x8000_0000, f32(1.0), f32(-3.0), 0x7F80_0000, 0xFF80_0000,
               0x7FC0_0000, 0x7F80_0001, 0x0000_0001, 0x807F_FFFF, 0x0080_0000, 0x7F7F_FFFF,
               0x7E80_0001, 0x0C00_0000, f32(2.0 ** -60), f32(2.0 ** 60))


def div_cases(name: str, n_random: int) -> list[Vector]:
    """(S0, d, n) triples: S0 equal to d, to n, or unrelated (v_div_scale), or a quotient
    estimate (v_div_fixup); corners crossed, thresholds, random."""
    rng = random.Random(name)
    pairs = [(d, n) for d in DIV_CORNERS for n in DIV_CORNERS]
    pairs += threshold_pairs(rng)
    pairs += [(random_f32(rng), random_f32(rng)) for _ in range(n_random)]
    vectors = []
    for d, n in pairs:
        if name == "v_div_scale_f32":
            s0 = rng.choice((d, n, d, n, random_f32(rng)))
        else:
            q = b32(n) / b32(d) if b32(d) not in (0.0,) else 0.0
            s0 = rng.choice((f32(q) if not math.isnan(q) and abs(q) < 3e38 else 0,
                             random_f32(rng), rng.choice(DIV_CORNERS)))
        vectors.append(Vector(name, s0, d, n, rng.choice(MODES)))
    return vectors


def cases(name: str, scale: int = 1) -> list[Vector]:
    if name in DIV_OPS:
        return div_cases(name, 1500 * scale)
    return unary_cases(name, N_RANDOM.get(name, 60) * scale)


@pytest.fixture(scope="module")
def full_results():
    """Every op's vectors through the unit built with all ops, interleaved."""
    vectors = [v for name in FpTrans.OPS for v in cases(name)]
    random.Random(0).shuffle(vectors)
    return by_op(vectors, handshake(FpTrans(), vectors))


# --- every op against the golden model ----------------------------------------------------------

def test_ops_cover_the_trans_subunit():
    trans = [n for n in FP_OPS if SUBUNIT_OF[n] == "trans"]
    assert sorted(FpTrans.OPS) == sorted(UNARY_OPS + DIV_OPS)
    assert sorted(FpTrans.OPS + TRANS_NOT_BUILT) == sorted(trans)
    assert TRANS_NOT_BUILT == ()


@pytest.mark.parametrize("name", UNARY_OPS + DIV_OPS)
def test_op_matches_golden(name, full_results):
    check(*full_results[name], more_than=100)


@pytest.mark.parametrize("ops", [
    ("v_rcp_f32",), ("v_rcp_legacy_f32", "v_rcp_clamp_f32"), ("v_sqrt_f32",),
    ("v_rsq_legacy_f32",), ("v_sqrt_f32", "v_rcp_f32"), DIV_OPS, ("v_div_fixup_f32",),
    EXP_OPS, ("v_exp_f32", "v_div_scale_f32"), LOG_OPS, ("v_log_clamp_f32",),
    ("v_log_f32", "v_rsq_f32"), TRIG_OPS, ("v_cos_f32",), ("v_sin_f32", "v_exp_f32")])
def test_partial_builds_match_golden(ops):
    """Smaller builds (narrower registers, no root datapath, no recurrence) on a sample."""
    rng = random.Random(repr(ops))
    vectors = [v for name in ops for v in rng.sample(cases(name), 40)]
    check(vectors, handshake(FpTrans(ops=ops), vectors))


@pytest.mark.slow
@pytest.mark.parametrize("family", ["rcp", "sqrt", "rsq", "exp", "log", "trig", "div"])
def test_random_slow(family):
    ops = {"rcp": RCP_OPS, "sqrt": SQRT_OPS, "rsq": RSQ_OPS, "exp": EXP_OPS, "log": LOG_OPS,
           "trig": TRIG_OPS, "div": DIV_OPS}[family]
    vectors = [v for name in ops for v in cases(name, 20 if name in N_RANDOM or name in DIV_OPS
                                                else 40)]
    check(vectors, handshake(FpTrans(ops=ops), vectors))


# --- construction, structure, timing -------------------------------------------------------------

def test_constructor_errors():
    check_ops_argument(FpTrans, "v_rcp_f32", "v_mul_f32", "v_add_f32")


@pytest.mark.parametrize(("ops", "steps", "frac", "width"), [
    (None, 48, 48, 52), (RCP_OPS, 26, 23, 25), (("v_sqrt_f32", "v_rcp_f32"), 26, 26, 30),
    (("v_rsq_f32",), 26, 48, 52), (DIV_OPS, 0, 0, 0), ((), 0, 0, 0), (EXP_OPS, 48, 0, 0),
    (LOG_OPS, 48, 0, 0), (("v_log_clamp_f32", "v_rcp_f32"), 48, 23, 25), (TRIG_OPS, 48, 0, 0)])
def test_only_the_needed_hardware_is_built(ops, steps, frac, width):
    """``steps``: the longest iteration built (0: none)."""
    unit = FpTrans() if ops is None else FpTrans(ops=ops)
    latency = steps + FpTrans.ITER_OVERHEAD if steps else FpTrans.SHORT_LATENCY
    assert (unit.latency, unit.fraction_bits, unit.width) == (latency, frac, width)
    text = rtlil.convert(unit, name="top")
    assert ("rho" in text) == (width > 0)
    assert ("h3" in text) == any(n in unit.ops for n in SQRT_OPS + RSQ_OPS)
    assert ("ds_k" in text) == ("v_div_scale_f32" in unit.ops)
    assert ("df_value" in text) == ("v_div_fixup_f32" in unit.ops)
    assert ("exp_y" in text) == ("v_exp_f32" in unit.ops)
    assert ("log_w" in text) == any(n in unit.ops for n in LOG_OPS)
    assert ("trig_z" in text) == any(n in unit.ops for n in TRIG_OPS)
    if width:
        assert f"wire width {width} \\rho" in text


def test_timing_contract():
    """``done`` falls after a ``start``, rises after exactly 26 (exp, log, sin, cos: 48) steps
    plus :attr:`~FpTrans.ITER_OVERHEAD` cycles (:attr:`~FpTrans.SHORT_LATENCY` for a special
    operand or a division helper), then holds with stable outputs until the next ``start``;
    ``flag`` is 0 except for v_div_scale. The inputs change after ``start``: the unit
    registered them."""
    unit = FpTrans()
    vectors = [Vector("v_rcp_f32", f32(3.0), 0, 0, MODES[3]),
               Vector("v_div_scale_f32", f32(1e-35), f32(1e-35), f32(2.0 ** 100), MODES[3]),
               Vector("v_sqrt_f32", f32(2.0), 0, 0, MODES[0]),
               Vector("v_rsq_f32", 0, 0, 0, MODES[0]),
               Vector("v_rsq_clamp_f32", f32(0.1), 0, 0, MODES[3]),
               Vector("v_div_fixup_f32", f32(0.5), f32(2.0), f32(1.0), MODES[3]),
               Vector("v_rcp_legacy_f32", 0x7F7F_FFFF, 0, 0, MODES[2]),
               Vector("v_exp_f32", f32(-3.3), 0, 0, MODES[3]),
               Vector("v_exp_f32", f32(-127.0), 0, 0, MODES[3]),
               Vector("v_log_f32", f32(0.3), 0, 0, MODES[0]),
               Vector("v_log_clamp_f32", 0x8000_0001, 0, 0, MODES[3]),
               Vector("v_log_f32", f32(1.0), 0, 0, MODES[3]),
               Vector("v_log_f32", f32(-1.0), 0, 0, MODES[3]),
               Vector("v_sin_f32", f32(0.1), 0, 0, MODES[3]),
               Vector("v_cos_f32", f32(0.75), 0, 0, MODES[0]),
               Vector("v_sin_f32", f32(300.1), 0, 0, MODES[0]),
               Vector("v_cos_f32", f32(-1e-30), 0, 0, MODES[3])]
    short, digit, long = (FpTrans.SHORT_LATENCY, 26 + FpTrans.ITER_OVERHEAD,
                          48 + FpTrans.ITER_OVERHEAD)
    expected_cycles = [digit, short, digit, short, digit, short, digit, long, short, long, short,
                       long, short, long, short, short, long]
    trace = []

    async def testbench(ctx):
        for i, v in enumerate(vectors):
            ctx.set(input_ports(unit), pack(unit, v))
            await ctx.tick()
            # the lane moves on: the unit registered its inputs
            ctx.set(input_ports(unit), pack(unit, vectors[(i + 1) % len(vectors)], start=0))
            cycles = 1
            while not ctx.get(unit.done) and cycles < 60:
                await ctx.tick()
                cycles += 1
            outputs = (ctx.get(unit.result), ctx.get(unit.flag))
            for _ in range(3):                          # held until the next start
                await ctx.tick()
                assert ctx.get(unit.done) and (ctx.get(unit.result), ctx.get(unit.flag)) \
                    == outputs, v.describe()
            trace.append((cycles, outputs))

    simulate(unit, testbench, clock=1e-6)
    assert [c for c, _ in trace] == expected_cycles
    assert max(expected_cycles) == unit.latency
    want = golden(vectors)
    assert [o for _, o in trace] == want
    assert [f for _, f in want] == [0, 1] + [0] * 15
    assert [o for o, _ in want[-7:]] == [0xFF7F_FFFF, 0, fp.F32_NAN, f32(math.sin(0.2 * math.pi)),
                                         0, 0, f32(1.0)]


# --- the exact v_rsq_f32 model ----------------------------------------------------------------

def rsq_reference(bits: int) -> int:
    """Correctly rounded binary32 1/sqrt(x) by exact rational comparisons: the binary32 ``c``
    whose two neighbouring midpoints ``mu`` satisfy ``mu_lo**2 * x <= 1 <= mu_hi**2 * x``."""
    x = Fraction(b32(bits))
    c = f32(1 / math.sqrt(b32(bits)))
    while True:
        up, down = Fraction(b32(c + 1)), Fraction(b32(c - 1))
        here = Fraction(b32(c))
        if ((here + up) / 2) ** 2 * x < 1:
            c += 1
        elif ((here + down) / 2) ** 2 * x > 1:
            c -= 1
        else:
            return c


def test_rsq_model_is_correctly_rounded():
    rng = random.Random(11)
    xs = [rng.randrange(0x0080_0000, 0x7F80_0000) for _ in range(4000)]
    xs += [rng.randrange(1, 0x0080_0000) for _ in range(200)]        # denormals (not flushed)
    xs += [0x0080_0000, 0x7F7F_FFFF, f32(4.0), f32(0.25), 1, 0x007F_FFFF, RSQ_HARD,
           RSQ_HARD + (2 << 23), 0x407F_FFFE, 0x3F80_0001]
    want = [rsq_reference(b) for b in xs]
    assert [fp._rsq_f32_exact(b) for b in xs] == want
    arr = np.array(xs, np.uint32).view(np.float32)
    got = [int(b) for i in range(0, len(xs), WAVE_SIZE)
           for b in fp.rsq_f32(arr[i:i + WAVE_SIZE]).view(np.uint32)]
    assert got == want


def test_rsq_model_decides_the_hard_case_exactly():
    """The binary64 estimate of RSQ_HARD is within a binary64 ulp of a binary32 midpoint, so
    :func:`fp.rsq_f32` must take the exact path; its answer is the exact one."""
    r = 1 / math.sqrt(b32(RSQ_HARD))
    low = f64(r) & ((1 << 29) - 1)
    assert abs(low - (1 << 28)) <= 1
    x = np.array([RSQ_HARD, RSQ_HARD - (2 << 23)], np.uint32).view(np.float32)
    got = [int(b) for b in fp.rsq_f32(x).view(np.uint32)]
    assert got == [rsq_reference(RSQ_HARD), rsq_reference(RSQ_HARD - (2 << 23))]
    assert got[1] == got[0] + (1 << 23)                # x / 4: the result doubles exactly


def test_rsq_model_special_values():
    x = np.array([0, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, f32(-1.0), 0x7FC0_0000],
                 np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        got = fp.rsq_f32(x)
    assert got.view(np.uint32)[:3].tolist() == [0x7F80_0000, 0xFF80_0000, 0]
    assert np.isnan(got[3:]).all()
    with pytest.raises(ValueError):
        fp._rsq_f32_exact(0)


# --- the v_exp_f32 model ----------------------------------------------------------------------

def test_exp_tables_agree():
    """The hardware's ROM and the model's constants, computed independently, are equal."""
    assert EXP_TABLE == fp._EXP_TABLE and len(EXP_TABLE) == 48


def test_exp_model_error_bound():
    """Within 0.5 + 2^-22 ulp of 2^x (the documented bound), exact on integers, and equal to
    the correctly rounded binary64 evaluation (the former model) on these inputs."""
    rng = random.Random(13)
    xs = [random_exp_arg(rng) for _ in range(3000)] + [f32(float(i)) for i in range(-126, 128)]
    xs = [b for b in xs if -126 <= b32(b) < 128]
    arr = np.array(xs, np.uint32).view(np.float32)
    got = [int(b) for i in range(0, len(xs), WAVE_SIZE)
           for b in fp.exp2_f32(arr[i:i + WAVE_SIZE]).view(np.uint32)]
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        ln2 = decimal.Decimal(2).ln()
        slack = decimal.Decimal("0.5") + decimal.Decimal(2) ** -22
        for b, g in zip(xs, got, strict=True):
            exact = (decimal.Decimal(b32(b)) * ln2).exp()
            ulp = decimal.Decimal(2) ** ((g >> 23) - 150)
            assert abs(decimal.Decimal(b32(g)) - exact) <= slack * ulp, hex(b)
            if b32(b).is_integer():
                assert b32(g) == 2.0 ** b32(b), hex(b)
    with np.errstate(all="ignore"):
        binary64 = np.exp2(arr.astype(np.float64)).astype(np.float32).view(np.uint32)
    assert got == [int(b) for b in binary64]


def test_exp_model_special_values():
    x = np.array([0, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, f32(128.0),
                  0x42FF_FFFF, f32(-126.0), 0xC2FC_0001, 0x8000_0001], np.uint32)
    got = fp.exp2_f32(x.view(np.float32)).view(np.uint32).tolist()
    assert got == [f32(1.0), f32(1.0), 0x7F80_0000, 0, fp.F32_NAN, 0x7F80_0000,
                   f32(2.0 ** b32(0x42FF_FFFF)), 0x0080_0000, 0, f32(1.0)]
    assert got[6] == 0x7F7F_FFA7                 # 2^(128 - 2^-17): finite


# --- the v_log_f32 model ----------------------------------------------------------------------

#: The stated bound of :func:`fp.log2_f32` before its rounding, in ulps of the result.
LOG_BOUND = 2.0 ** -22


def test_log_tables_agree():
    """The hardware's ROMs and the model's constants, computed independently, are equal."""
    assert LOG_TABLE == fp._LOG_UP and len(LOG_TABLE) == 70
    assert LOG_DOWN_TABLE == fp._LOG_DOWN and len(LOG_DOWN_TABLE) == 21


def _log_args(rng: random.Random, n: int) -> list[int]:
    """Positive normal operands of every kind :func:`random_log_arg` makes, and the corners."""
    xs = [b for b in CORNERS + LOG_CORNERS if 0x0080_0000 <= b < 0x7F80_0000]
    while len(xs) < n:
        b = random_log_arg(rng)
        if 0x0080_0000 <= b < 0x7F80_0000:
            xs.append(b)
    return xs


def _ulp_at(x: decimal.Decimal) -> decimal.Decimal:
    """The binary32 ulp of the binade holding ``|x|`` (x nonzero, in the normal range)."""
    e = math.frexp(float(abs(x)))[1] - 1
    if decimal.Decimal(2) ** e > abs(x):                   # float() rounded up to a power of 2
        e -= 1
    return decimal.Decimal(2) ** (e - 23)


def test_log_model_error_bound():
    """Before its rounding the model is within 2^-22 ulp of log2(x) (50-digit reference), so
    the result is within 0.5 + 2^-22 ulp; powers of two are exact; and on these inputs it equals
    the correctly rounded binary64 evaluation (the former model)."""
    xs = _log_args(random.Random(17), 4000) + [f32(2.0 ** e) for e in range(-126, 128)]
    negative, r, u = fp._log2_fixed(np.array(xs, np.int64))
    arr = np.array(xs, np.uint32).view(np.float32)
    got = [int(b) for i in range(0, len(xs), WAVE_SIZE)
           for b in fp.log2_f32(arr[i:i + WAVE_SIZE]).view(np.uint32)]
    worst = 0.0
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        two = decimal.Decimal(2)
        ln2 = two.ln()
        for b, g, neg, rr, uu in zip(xs, got, negative, r, u, strict=True):
            exact = decimal.Decimal(b32(b)).ln() / ln2
            if exact == 0:
                assert rr == 0 and g == 0, hex(b)
                continue
            unrounded = (-1 if neg else 1) * decimal.Decimal(int(rr)) / two ** (56 + int(uu))
            err = abs(unrounded - exact) / _ulp_at(exact)
            worst = max(worst, float(err))
            assert err < decimal.Decimal(LOG_BOUND), hex(b)
            rounded = decimal.Decimal(b32(g))
            assert abs(rounded - exact) <= (decimal.Decimal("0.5") + decimal.Decimal(LOG_BOUND)) \
                * _ulp_at(rounded), hex(b)
            if b32(b) == 2.0 ** round(math.log2(b32(b))):
                assert b32(g) == math.log2(b32(b)), hex(b)
    assert worst > LOG_BOUND / 8                   # the inputs do reach the error the bound is for
    with np.errstate(all="ignore"):
        binary64 = np.log2(arr.astype(np.float64)).astype(np.float32).view(np.uint32)
    assert got == [int(b) for b in binary64]


@pytest.mark.slow
@pytest.mark.parametrize("field", [126, 127, 128, 1, 254])
def test_log_model_error_bound_exhaustive(field):
    """Every significand of one binade (126: (1/2, 1); 127: (1, 5/4) and [5/4, 2); 128 and the
    others: the general case) within the 2^-22 ulp bound before rounding, against binary64
    log1p/log2 (their own error, about 2^-28 ulp here, is far below the margin)."""
    worst = 0.0
    for start in range(0, 1 << 23, 1 << 20):
        mant = np.arange(start, start + (1 << 20), dtype=np.int64)
        bits = field << 23 | mant
        negative, r, u = fp._log2_fixed(bits)
        x = bits.astype(np.uint32).view(np.float32).astype(np.float64)
        ref = np.log1p(x - 1.0) / math.log(2.0) if field in (126, 127) else np.log2(x)
        got = np.where(negative, -1.0, 1.0) * r.astype(np.float64) * np.exp2(-(56.0 + u))
        nz = ref != 0
        assert (r[~nz] == 0).all()
        ulp = np.exp2(np.floor(np.log2(np.abs(ref[nz]))) - 23)
        worst = max(worst, float(np.max(np.abs(got[nz] - ref[nz]) / ulp)))
        assert ((r[nz] >= 1 << 54) & (r[nz] < 1 << 58)).all()
    assert worst < LOG_BOUND, math.log2(worst)


def test_log_model_special_values():
    x = np.array([0, 0x8000_0000, 0x0000_0001, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000,
                  f32(-2.0), f32(1.0), f32(8.0), f32(0.5), 0x0080_0000, 0x7F7F_FFFF,
                  0x3F80_0001, 0x3F7F_FFFF], np.uint32)
    got = fp.log2_f32(x.view(np.float32)).view(np.uint32).tolist()
    assert got == [0xFF80_0000, 0xFF80_0000, 0xFF80_0000, 0x7F80_0000, fp.F32_NAN, fp.F32_NAN,
                   fp.F32_NAN, 0, f32(3.0), f32(-1.0), f32(-126.0), f32(math.log2(b32(x[11]))),
                   f32(math.log1p(2.0 ** -23) / math.log(2)),
                   f32(math.log1p(-(2.0 ** -24)) / math.log(2))]


# --- the v_sin_f32 / v_cos_f32 model ----------------------------------------------------------

#: The stated bound of :func:`fp.sin_f32` and :func:`fp.cos_f32` before rounding, in ulps.
TRIG_BOUND = 2.0 ** -22


def test_trig_tables_agree():
    """The hardware's ROMs and the model's constants, computed independently, are equal."""
    assert TRIG_ATAN_TABLE == fp._TRIG_ATAN and TRIG_START_TABLE == fp._TRIG_INVK
    assert len(TRIG_ATAN_TABLE) == len(TRIG_START_TABLE) == 33


def _sin_2pi(t: Fraction) -> decimal.Decimal:
    """sin(2*pi*t) for |t| <= 1/4 to the context's precision (Taylor series)."""
    with decimal.localcontext() as ctx:
        ctx.prec += 10
        pi = 4 * (4 * _atan_inv(5) - _atan_inv(239))
        a = 2 * pi * decimal.Decimal(t.numerator) / decimal.Decimal(t.denominator)
        total, term, n = decimal.Decimal(0), a, 1
        while term:
            total += term
            term = -term * a * a / ((n + 1) * (n + 2))
            n += 2
            if abs(term) < abs(total) * decimal.Decimal(10) ** -(ctx.prec + 2):
                break
    return +total


def _atan_inv(n: int) -> decimal.Decimal:
    """atan(1/n) to the context's precision."""
    x = decimal.Decimal(1) / n
    total, term, k = x, x, 1
    while abs(term) > decimal.Decimal(10) ** -(decimal.getcontext().prec + 2):
        term = -term * x * x
        k += 2
        total += term / k
    return total


def trig_reference(bits: int, cos: bool) -> decimal.Decimal:
    """sin(2*pi*x) or cos(2*pi*x) for a finite binary32 ``x`` (exact reduction, then 50
    digits)."""
    x = Fraction(b32(bits))
    r = x - round(x)                                     # Python rounds half to even
    if cos:
        r = Fraction(1, 4) - abs(r)                      # cos(2 pi r) = sin(2 pi (1/4 - |r|))
    elif abs(r) > Fraction(1, 4):
        r = (1 if r > 0 else -1) * (Fraction(1, 2) - abs(r))
    return _sin_2pi(r)


def _ulp_or_denormal(x: decimal.Decimal) -> decimal.Decimal:
    return max(_ulp_at(x), decimal.Decimal(2) ** -149)


@pytest.mark.parametrize("cos", [False, True])
def test_sin_cos_model_error_bound(cos):
    """Before its rounding the model is within 2^-22 ulp of the exact value (50 digits), so the
    result is within 0.5 + 2^-22 ulp; on these inputs it is the correctly rounded value; exact
    results come out exact."""
    rng = random.Random(19 + cos)
    xs = [b for b in CORNERS + TRIG_CORNERS if b & 0x7FFF_FFFF <= 0x4380_0000]
    while len(xs) < 3000:
        b = random_trig_arg(rng)
        if b & 0x7FFF_FFFF <= 0x4380_0000:
            xs.append(b)
    arr = np.array(xs, np.uint32).view(np.float32)
    direct, negative, y, ks = fp._sin_cos_fixed(arr, cos)
    got = (fp.cos_f32 if cos else fp.sin_f32)(arr).view(np.uint32).tolist()
    worst = 0.0
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        for b, g, d, neg, yy, kk in zip(xs, got, direct, negative, y, ks, strict=True):
            exact = trig_reference(b, cos)
            if d >= 0:                                   # no iteration: an exact result
                assert exact in (0, 1) and b32(g) == exact and g == d, hex(b)
                if exact == 0:                           # sin: the sign of x - rint(x)
                    r = Fraction(b32(b)) - round(Fraction(b32(b)))
                    assert g >> 31 == (0 if cos else int(r < 0 or (r == 0 and b >> 31))), hex(b)
                continue
            unrounded = (-1 if neg else 1) * decimal.Decimal(int(yy)) / decimal.Decimal(2) ** (
                56 + int(kk))
            err = abs(unrounded - exact) / _ulp_or_denormal(exact)
            worst = max(worst, float(err))
            assert err < decimal.Decimal(TRIG_BOUND), hex(b)
            assert g == f32_rne(exact), hex(b)
    assert worst > TRIG_BOUND / 8


def f32_rne(x: decimal.Decimal) -> int:
    """The binary32 bits nearest ``x`` (ties to even, denormals included; |x| <= 1)."""
    sign = 0x8000_0000 if x < 0 else 0
    q = Fraction(abs(x))
    if q == 0:
        return sign
    e = max(q.numerator.bit_length() - q.denominator.bit_length() + 1, -125)
    while Fraction(2) ** (e - 1) > q and e > -125:       # q in [2**(e-1), 2**e), or denormal
        e -= 1
    while Fraction(2) ** e <= q:
        e += 1
    scaled = q * Fraction(2) ** (24 - e)                 # 24 significant bits
    n = round(scaled)                                    # half to even
    return sign | f32(float(n * Fraction(2) ** (e - 24)))


def test_sin_cos_exact_values():
    xs = [0.0, 0.25, 0.5, 0.75, 1.0, -0.25, 1 / 12, 5.25, -256.0, -0.0, 0.125, 256.0]
    arr = np.array([f32(v) for v in xs], np.uint32).view(np.float32)
    assert fp.sin_f32(arr).view(np.uint32).tolist() == [
        0, f32(1.0), 0, f32(-1.0), 0, f32(-1.0), f32(0.5), f32(1.0), 0x8000_0000, 0x8000_0000,
        f32(math.sqrt(0.5)), 0]
    assert fp.cos_f32(arr).view(np.uint32).tolist() == [
        f32(1.0), 0, f32(-1.0), 0, f32(1.0), 0, f32(math.sqrt(0.75)), 0, f32(1.0), f32(1.0),
        f32(math.sqrt(0.5)), f32(1.0)]
    special = np.array([0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, f32(300.25), f32(-256.5)],
                       np.uint32).view(np.float32)
    assert fp.sin_f32(special).view(np.uint32).tolist() == [fp.F32_NAN] * 3 + [0, 0]
    assert fp.cos_f32(special).view(np.uint32).tolist() == [fp.F32_NAN] * 3 + [f32(1.0)] * 2


@pytest.mark.slow
def test_sin_cos_model_error_bound_exhaustive():
    """Every reduced angle the model meets for |x| >= 1/8 (the multiples of 2**-26 in (0, 1/4]:
    sin of [1/8, 1/4], cos of [1/8, 1/4)), and a million small |x|, within the 2^-22 ulp bound
    before rounding, against binary64 sin (its own error, about 2^-28 ulp, far below the
    margin)."""
    worst = 0.0
    rng = np.random.default_rng(5)
    chunks = [(False, np.arange(0x3E00_0000, 0x3E80_0001, 1 << 20)),
              (True, np.arange(0x3E00_0000, 0x3E80_0000, 1 << 20))]
    for cos, starts in chunks:
        for start in starts:
            bits = np.arange(start, min(start + (1 << 20), 0x3E80_0001 - cos), dtype=np.int64)
            x = bits.astype(np.uint32).view(np.float32)
            t = 0.25 - x.astype(np.float64) if cos else x.astype(np.float64)
            worst = max(worst, _trig_worst(x, cos, t))
    for cos in (False, True):
        small = (rng.uniform(0.5, 1, 1 << 20) * np.exp2(-rng.integers(3, 130, 1 << 20)))
        x = small.astype(np.float32)
        t = 0.25 - x.astype(np.float64) if cos else x.astype(np.float64)
        worst = max(worst, _trig_worst(x[x > 0], cos, t[x > 0]))
    assert worst < TRIG_BOUND, math.log2(worst)


def _trig_worst(x: np.ndarray, cos: bool, t: np.ndarray) -> float:
    """The largest error before rounding, in ulps, of the model on ``x`` (revolutions in (0,
    1/4], iterating), ``t`` the reduced angle for sin(2*pi*t)."""
    direct, negative, y, ks = fp._sin_cos_fixed(x, cos)
    assert (direct < 0).all() and not negative.any()
    assert ((y >= 1 << 55) & (y < 1 << 57)).all()
    got = y.astype(np.float64) * np.exp2(-(56.0 + ks))
    ref = np.sin(2 * np.pi * t)
    ulp = np.exp2(np.floor(np.log2(ref)) - 23)
    return float(np.max(np.abs(got - ref) / ulp))
