# amaranth: UnusedElaboratable=no
"""The FP32 adder, multiplier and multiply-adds (:mod:`gpgpu_hdl.cu.fpu.arith`) against the
golden model.

:class:`FpAdd`, :class:`FpMul` and :class:`FpFma` are pipelines that take a new operation
every cycle, so each unit runs one simulation over all its vectors (every op, every f32
FP_DENORM setting, one vector per cycle), and every result is compared with
:data:`VALU_OPS` evaluated on the same operands and MODE, 64 lanes per call. The unfused
multiply-adds run through :class:`FpMulAdd` with the lane's handshake (start, hold, done);
their two halves are also streamed alone: ``FpMul`` with ``mad`` and ``FpAdd`` with
``force_flush`` must equal ``v_mul_f32``/``v_mul_legacy_f32``/``v_add_f32`` with f32
denormals flushed in and out, whatever their ``flush_in``/``flush_out`` say.

Operands: f32 corners (signed zeros, ones, infinities, quiet and signalling NaNs, smallest and
largest denormals, the normal range ends and the neighbours of 2^-126, values whose sum or
product is a tie, overflows or underflows) crossed with each other, plus seeded random bit
patterns, random floats of moderate exponents, sparse significands (exact ties), near
cancellations and operands around the underflow and overflow thresholds.
"""

from __future__ import annotations

import functools
import itertools
import random

import numpy as np
import pytest
from amaranth.back import rtlil

from gpgpu_hdl.cu.fpu.arith import (ADD_OPS, FMA_OPS, MAD_OPS, MUL_OPS, FpAdd, FpFma, FpMul,
                                    FpMulAdd)
from gpgpu_hdl.cu.fpu.ops import SUBUNIT_OF
from tests.bits import b32, f32
from tests.cu.fpu.harness import (check, check_ops_argument, golden, handshake, mode_bits,
                                  stream)
from tests.simulation import Vector, by_op

#: FP_DENORM f32 settings: 0 flush in and out, 1 flush out, 2 flush in, 3 preserve.
DENORM = (0, 1, 2, 3)


#: f32 corner values.
CORNERS = (
    0x0000_0000, 0x8000_0000, f32(1.0), f32(-1.0), 0x7F80_0000, 0xFF80_0000,
    0x7FC0_0000, 0xFFC1_2345, 0x7F80_0001, 0xFFA0_0000,           # quiet, signalling NaNs
    0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x807F_FFFF, 0x0040_0000, 0x0000_0003,
    0x0080_0000, 0x8080_0000, 0x0080_0001, 0x7F7F_FFFF, 0xFF7F_FFFF, 0x7F00_0000,
    0x3F80_0001, 0x3F7F_FFFF, 0xBF80_0001, f32(2.0**-24), f32(2.0**-25), 0xB380_0001,
    f32(2.0), f32(-2.0), f32(1.5), f32(3.0), f32(0.1), 0x3FFF_FFFF, f32(2.0**24),
    f32(2.0**64), f32(2.0**-64), f32(2.0**-100), f32(-(2.0**100)), 0x4B80_0001,
)


# --- operand generators --------------------------------------------------------------------

def rand_float(rng: random.Random, lo: int = 100, hi: int = 154) -> int:
    """A random normal float with a biased exponent in [lo, hi]."""
    return rng.getrandbits(1) << 31 | rng.randint(lo, hi) << 23 | rng.getrandbits(23)


def sparse_float(rng: random.Random, lo: int = 110, hi: int = 144) -> int:
    """A float whose significand has few bits set: sums and products are often exact ties."""
    mant = 0
    for _ in range(rng.randint(0, 3)):
        mant |= 1 << rng.randrange(23)
    if rng.getrandbits(1):
        mant |= rng.choice((1, 0x7FFFFF, 0x400000, 0x7FFFFE))
    return rng.getrandbits(1) << 31 | rng.randint(lo, hi) << 23 | mant


def random_operand(rng: random.Random) -> int:
    kind = rng.randrange(8)
    if kind == 0:
        return rng.getrandbits(32)
    if kind == 1:
        return rng.choice(CORNERS)
    if kind == 2:
        return sparse_float(rng)
    if kind == 3:                              # denormal or tiny normal
        return rng.getrandbits(1) << 31 | rng.randint(0, 3) << 23 | rng.getrandbits(23)
    if kind == 4:                              # near overflow
        return rng.getrandbits(1) << 31 | rng.randint(250, 254) << 23 | rng.getrandbits(23)
    return rand_float(rng)


def near(rng: random.Random, x: int, spread: int) -> int:
    """A float close to ``x`` in magnitude (exponent within ``spread``), random sign."""
    exp = min(254, max(0, (x >> 23 & 0xFF) - rng.randint(0, spread)))
    mant = x & 0x7FFFFF
    if rng.getrandbits(1):
        mant ^= rng.getrandbits(rng.randint(1, 23))
    else:
        mant = rng.getrandbits(23) if rng.getrandbits(1) else mant
    return rng.getrandbits(1) << 31 | exp << 23 | mant


def add_pairs(rng: random.Random, n: int) -> list[tuple[int, int]]:
    pairs = []
    for _ in range(n):
        kind = rng.randrange(5)
        if kind == 0:
            a = rand_float(rng, 1, 254)
            pairs.append((a, near(rng, a, 30)))
        elif kind == 1:                          # cancellation: close magnitudes
            a = rand_float(rng, 1, 254) if rng.getrandbits(1) else sparse_float(rng)
            b = a ^ 1 << 31 ^ rng.choice((0, 1, 2, 3, rng.getrandbits(8), rng.getrandbits(23)))
            pairs.append((a, b))
        elif kind == 2:
            a = sparse_float(rng)
            pairs.append((a, sparse_float(rng, (a >> 23 & 0xFF) - 26, (a >> 23 & 0xFF) + 2)))
        elif kind == 3:                          # around the denormal range
            top = rng.choice((2, 26))
            pairs.append((rng.getrandbits(1) << 31 | rng.randint(0, top) << 23
                          | rng.getrandbits(23),
                          rng.getrandbits(1) << 31 | rng.randint(0, top) << 23
                          | rng.getrandbits(23)))
        else:
            pairs.append((random_operand(rng), random_operand(rng)))
    return pairs


def mul_pairs(rng: random.Random, n: int) -> list[tuple[int, int]]:
    pairs = []
    for _ in range(n):
        kind = rng.randrange(5)
        if kind == 0:
            pairs.append((rand_float(rng), rand_float(rng)))
        elif kind == 1:
            pairs.append((sparse_float(rng), sparse_float(rng)))
        elif kind == 2:                          # products around the denormal range
            ea = rng.randint(0, 254)
            eb = min(254, max(0, 127 - 126 - ea + 127 + rng.randint(-30, 4)))
            pairs.append((rng.getrandbits(1) << 31 | ea << 23 | rng.getrandbits(23),
                          rng.getrandbits(1) << 31 | eb << 23 | rng.getrandbits(23)))
        elif kind == 3:                          # products around the overflow threshold
            ea = rng.randint(127, 254)
            eb = min(254, max(0, 254 - ea + 127 + rng.randint(-2, 2)))
            pairs.append((rng.getrandbits(1) << 31 | ea << 23 | rng.getrandbits(23),
                          rng.getrandbits(1) << 31 | eb << 23 | rng.getrandbits(23)))
        else:
            pairs.append((random_operand(rng), random_operand(rng)))
    return pairs


def with_exp(rng: random.Random, exp: int, sparse: bool = False) -> int:
    """A random-signed float of biased exponent ``exp`` (clamped to [0, 254])."""
    mant = sparse_float(rng) & 0x7FFFFF if sparse else rng.getrandbits(23)
    return rng.getrandbits(1) << 31 | min(254, max(0, exp)) << 23 | mant


def fma_triples(rng: random.Random, n: int) -> list[tuple[int, int, int]]:
    triples = []
    for _ in range(n):
        kind = rng.randrange(8)
        a, b = mul_pairs(rng, 1)[0]
        if kind >= 6:                            # product at a chosen scale
            sparse = kind == 6
            ea = rng.randint(1, 254)
            ep = rng.choice((rng.randint(-30, 4), rng.randint(100, 150), rng.randint(250, 256)))
            a, b = with_exp(rng, ea, sparse), with_exp(rng, ep - ea + 127, sparse)
            c = with_exp(rng, ep + rng.randint(-30, 30), sparse)
            triples.append((a, b, c))
            continue
        if kind == 0:                            # c cancels the (rounded) product
            with np.errstate(all="ignore"):
                p = f32(float(np.float32(b32(a)) * np.float32(b32(b))))
            c = p ^ 1 << 31 ^ rng.choice((0, 0, 1, 2, rng.getrandbits(4)))
        elif kind == 1:                          # c at a nearby scale
            with np.errstate(all="ignore"):
                pe = (a >> 23 & 0xFF) + (b >> 23 & 0xFF) - 127
            c = near(rng, max(0, min(254, pe + rng.randint(-3, 30))) << 23
                     | rng.getrandbits(23), 60)
        elif kind == 2:
            a, b = sparse_float(rng), sparse_float(rng)
            ep = (a >> 23 & 0xFF) + (b >> 23 & 0xFF) - 127
            c = sparse_float(rng, ep - 30, ep + 30)
        else:
            c = random_operand(rng)
        triples.append((a, b, c))
    return triples


# --- vectors -------------------------------------------------------------------------------

def vectors(name: str, operands, denorms=DENORM, cins=(0,)) -> list[Vector]:
    """``name`` on every operand tuple (padded to three) under every f32 FP_DENORM setting of
    ``denorms`` (IEEE mode) and every VCC bit of ``cins``."""
    out = []
    for ops, d, cin in itertools.product(operands, denorms, cins):
        ops = tuple(ops) + (0,) * (3 - len(ops))
        out.append(Vector(name, *ops, mode=mode_bits(d), cin=cin))
    return out


# --- the vector sets -----------------------------------------------------------------------

def corner_pairs() -> list[tuple[int, int]]:
    return list(itertools.product(CORNERS, CORNERS))


def corner_triples(rng: random.Random, n: int) -> list[tuple[int, int, int]]:
    return rng.sample(list(itertools.product(CORNERS, CORNERS, CORNERS)), n)


def cube_triples(rng: random.Random, n: int) -> list[tuple[int, int, int]]:
    """Cube-map coordinates: equal magnitudes (ties of the major axis), signs, specials."""
    out = []
    for _ in range(n):
        base = rng.choice((rand_float(rng), rng.choice(CORNERS), random_operand(rng)))
        vals = [rng.choice((base, base ^ 1 << 31, random_operand(rng), rand_float(rng),
                            rng.choice(CORNERS))) for _ in range(3)]
        out.append(tuple(vals))
    return out


def add_vectors(scale: int) -> list[Vector]:
    rng = random.Random(f"add{scale}")
    vecs = []
    for name in ADD_OPS:
        vecs += vectors(name, corner_pairs())
        vecs += vectors(name, add_pairs(rng, 400 * scale))
    return vecs


def mul_vectors(scale: int) -> list[Vector]:
    rng = random.Random(f"mul{scale}")
    vecs = []
    for name in ("v_mul_f32", "v_mul_legacy_f32"):
        vecs += vectors(name, corner_pairs())
        vecs += vectors(name, mul_pairs(rng, 400 * scale))
    positive = (0x3F80_0000, 0x0000_0001, 0x7F80_0000, 0x7FC0_0000, 0x8000_0000, 0xBF80_0000)
    lit = [(a, b, rng.choice(positive + (rng.getrandbits(32),)))
           for a, b in mul_pairs(rng, 150 * scale) + corner_pairs()[::9]]
    vecs += vectors("v_mullit_f32", lit)
    for name in ("v_cubeid_f32", "v_cubesc_f32", "v_cubetc_f32", "v_cubema_f32"):
        vecs += vectors(name, cube_triples(rng, 150 * scale) + corner_triples(rng, 150 * scale))
    return vecs


def fma_tie_triples(rng: random.Random, n: int) -> list[tuple[int, int, int]]:
    """Exact sums on (or next to) a rounding midpoint: a product with few bits plus half its
    ulp, or an addend plus a product of half its ulp (times 1, or 1 + 2^-23 for a near tie)."""
    triples = []
    for _ in range(n):
        if rng.getrandbits(1):
            a, b = sparse_float(rng, 100, 150), sparse_float(rng, 100, 150)
            p = (a >> 23 & 0xFF) + (b >> 23 & 0xFF) - 127           # product exponent
            c = rng.getrandbits(1) << 31 | min(254, max(1, p - 24 + rng.randint(0, 1))) << 23
        else:
            c = with_exp(rng, rng.randint(1, 254))
            half = (c >> 23 & 0xFF) - 24 + rng.choice((0, 0, 1, -1))
            ea = rng.randint(max(1, half - 100), min(254, half + 100))
            a = rng.getrandbits(1) << 31 | ea << 23
            b = rng.getrandbits(1) << 31 | min(254, max(1, half - ea + 127)) << 23
            b |= rng.choice((0, 0, 1, 0x400000))
        triples.append((a, b, c))
    return triples


def fmas_triples(rng: random.Random, n: int) -> list[tuple[int, int, int]]:
    """``v_div_fmas`` operands whose 2^64- or 2^-64-scaled result is near the overflow or
    the denormal range, and S2 around 2 (which picks the scale)."""
    triples = []
    for _ in range(n):
        if rng.getrandbits(1):                   # scaled down: exact result near 2^-64..2^-90
            ep = rng.randint(37, 70)
            c = with_exp(rng, ep + rng.randint(-3, 3))
        else:                                    # scaled up: exact result near 2^64
            ep = rng.randint(185, 192)
            c = rng.choice((with_exp(rng, ep), f32(2.0), f32(-2.0), 0x3FFF_FFFF, 0x4000_0001))
        ea = rng.randint(max(1, ep - 126), min(254, ep + 126))
        triples.append((with_exp(rng, ea), with_exp(rng, ep - ea + 127), c))
    return triples


def fma_vectors(scale: int) -> list[Vector]:
    rng = random.Random(f"fma{scale}")
    vecs = vectors("v_fma_f32", corner_triples(rng, 250 * scale) + fma_triples(rng, 700 * scale)
                   + fma_tie_triples(rng, 150 * scale))
    vecs += vectors("v_div_fmas_f32", corner_triples(rng, 200 * scale)
                    + fma_triples(rng, 150 * scale) + fma_tie_triples(rng, 50 * scale)
                    + fmas_triples(rng, 200 * scale),
                    cins=(0, 1))
    return vecs


def mad_vectors(scale: int) -> list[Vector]:
    """Few vectors (the handshake is slow): corners and random, MODE cycled, all four."""
    rng = random.Random(f"mad{scale}")
    vecs = []
    for name in MAD_OPS:
        triples = corner_triples(rng, 24 * scale)
        triples += [(a, b, rng.choice((c, random_operand(rng))))
                    for a, b, c in fma_triples(rng, 40 * scale)]
        # denormal operands, products and sums (flushed at each step whatever MODE says)
        triples += [(with_exp(rng, rng.randint(0, 2)), with_exp(rng, rng.randint(100, 127)),
                     with_exp(rng, rng.randint(0, 2))) for _ in range(6 * scale)]
        triples += [(with_exp(rng, 100), with_exp(rng, rng.randint(27, 30)),
                     with_exp(rng, rng.randint(0, 3))) for _ in range(6 * scale)]
        vecs += [Vector(name, *t, mode=mode_bits(DENORM[i % 4]))
                 for i, t in enumerate(triples)]
    return vecs


# --- simulations (one per unit and vector set, shared by the tests) -------------------------

#: The pipelined units: the unit and its vector set.
PIPELINES = {"add": (FpAdd, add_vectors), "mul": (FpMul, mul_vectors),
             "fma": (FpFma, fma_vectors)}


@functools.cache
def results(kind: str, scale: int = 1) -> dict[str, tuple[list[Vector], list]]:
    """Per op, the vectors and results of one simulation: a pipeline streamed with its
    vector set, or (``"mad"``) :class:`FpMulAdd` with the lane's handshake."""
    if kind in PIPELINES:
        unit_class, vector_set = PIPELINES[kind]
        vecs = vector_set(scale)
        return by_op(vecs, stream(unit_class(), vecs))
    unit = FpMulAdd()
    vecs = mad_vectors(scale)
    # plain adds and multiplies through the shared units as well
    rng = random.Random(f"muladd{scale}")
    for name in ("v_add_f32", "v_subrev_f32", "v_mul_f32", "v_mul_legacy_f32",
                 "v_cubema_f32"):
        ops = mul_pairs(rng, 12) if name in MUL_OPS else add_pairs(rng, 12)
        vecs += [Vector(name, *(*t, rng.getrandbits(32))[:3], mode=mode_bits(DENORM[i % 4]))
                 for i, t in enumerate(ops)]
    rng.shuffle(vecs)                # every transition: add after mad, mad after add, ...
    return by_op(vecs, handshake(unit, vecs, latency_of=unit.latency_of))


# --- the tests -------------------------------------------------------------------------------

def test_op_lists_follow_the_table():
    assert {SUBUNIT_OF[n] for n in ADD_OPS} == {"add"}
    assert {SUBUNIT_OF[n] for n in MUL_OPS} == {"mul"}
    assert {SUBUNIT_OF[n] for n in FMA_OPS} == {"fma"}
    assert {SUBUNIT_OF[n] for n in MAD_OPS} == {"mad"}
    assert set(ADD_OPS + MUL_OPS + FMA_OPS + MAD_OPS) == {
        n for n, s in SUBUNIT_OF.items() if s in ("add", "mul", "fma", "mad")}


@pytest.mark.parametrize("name", ADD_OPS)
def test_add(name):
    check(*results("add")[name])


@pytest.mark.parametrize("name", MUL_OPS)
def test_mul(name):
    check(*results("mul")[name])


@pytest.mark.parametrize("name", FMA_OPS)
def test_fma(name):
    check(*results("fma")[name])


@pytest.mark.parametrize("name", MAD_OPS + ("v_add_f32", "v_subrev_f32", "v_mul_f32",
                                            "v_mul_legacy_f32", "v_cubema_f32"))
def test_mul_add_unit(name):
    check(*results("mad")[name])


@pytest.mark.parametrize("name", ["v_mul_f32", "v_mul_legacy_f32"])
def test_mul_mad_port_flushes(name):
    """``mad`` forces input and output flushing: every MODE acts as FP_DENORM = 0."""
    rng = random.Random(name)
    vecs = vectors(name, corner_pairs()[::3] + mul_pairs(rng, 200))
    got = stream(FpMul(ops=[name]), vecs, held=("mad",))
    check(vecs, got, golden(vecs, mode=mode_bits(0)))


def test_add_force_flush_port():
    rng = random.Random("force_flush")
    vecs = vectors("v_add_f32", corner_pairs()[::3] + add_pairs(rng, 200))
    got = stream(FpAdd(ops=["v_add_f32"]), vecs, held=("force_flush",))
    check(vecs, got, golden(vecs, mode=mode_bits(0)))


@pytest.mark.parametrize("cls", [FpAdd, FpMul, FpFma])
def test_handshake_timing(cls):
    """Done exactly ``latency`` cycles after start, result held after done while the inputs
    change; the same results as streaming."""
    unit = cls()
    rng = random.Random(cls.__name__)
    vecs = [Vector(rng.choice(cls.OPS), *(random_operand(rng) for _ in range(3)),
                   cin=rng.getrandbits(1), mode=mode_bits(rng.choice(DENORM)))
            for _ in range(12)]
    check(vecs, handshake(unit, vecs, latency_of=lambda _: unit.latency))


# --- construction -----------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [FpAdd, FpMul, FpFma, FpMulAdd])
def test_constructor_errors(cls):
    check_ops_argument(cls, cls.OPS[0], "v_rcp_f32")


@pytest.mark.parametrize(("ops", "has_mul", "has_add"), [
    (ADD_OPS, False, True),
    (MUL_OPS, True, False),
    (("v_mad_f32",), True, True),
    (("v_mul_f32", "v_sub_f32"), True, True),
])
def test_mul_add_builds_only_what_ops_need(ops, has_mul, has_add):
    unit = FpMulAdd(ops=ops)
    text = rtlil.convert(unit, name="top")
    assert ("module \\top.mul" in text) == has_mul
    assert ("module \\top.add" in text) == has_add
    assert bool(unit.mul_ops) == has_mul and bool(unit.add_ops) == has_add


@pytest.mark.parametrize("ops", [ADD_OPS, MUL_OPS[:2], MAD_OPS[2:4],
                                 ("v_mac_legacy_f32", "v_sub_f32")])
def test_mul_add_subsets(ops):
    """FpMulAdd built for a few ops (one or both submodules) still runs them right."""
    unit = FpMulAdd(ops=ops)
    rng = random.Random(repr(ops))
    vecs = [Vector(rng.choice(ops), *(random_operand(rng) for _ in range(3)),
                   mode=mode_bits(rng.choice(DENORM))) for _ in range(24)]
    vecs += [v._replace(name=name) for name in ops for v in vecs[:2]]
    assert {v.name for v in vecs} == set(ops)
    check(vecs, handshake(unit, vecs, latency_of=unit.latency_of))


def test_mul_add_submodule_ops():
    unit = FpMulAdd(ops=["v_mad_legacy_f32", "v_madmk_f32"])
    assert unit.mul_ops == {"v_mul_f32", "v_mul_legacy_f32"}
    assert unit.add_ops == {"v_add_f32"}
    assert unit.latency == FpMul.LATENCY + FpAdd.LATENCY
    assert unit.latency_of("v_madmk_f32") == unit.latency
    with pytest.raises(ValueError):
        unit.latency_of("v_mul_f32")
    assert FpMulAdd(ops=ADD_OPS).latency == FpAdd.LATENCY


# --- larger runs --------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("kind", ["add", "mul", "fma", "mad"])
def test_exhaustive_random(kind):
    for vecs, got in results(kind, 8).values():
        check(vecs, got)
