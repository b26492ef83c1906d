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
import struct
from typing import NamedTuple

import numpy as np
import pytest
from amaranth.back import rtlil
from amaranth.hdl import Cat
from amaranth.sim import Simulator

from gpgpu_hdl.cu.fpu.arith import (ADD_OPS, FMA_OPS, MAD_OPS, MUL_OPS, FpAdd, FpFma, FpMul,
                                    FpMulAdd)
from gpgpu_hdl.cu.fpu.ops import SUBUNIT_OF, fp_member
from gpgpu_hdl.emu.context import WAVE_SIZE, FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS

M32 = 0xFFFF_FFFF
#: FP_DENORM f32 settings: 0 flush in and out, 1 flush out, 2 flush in, 3 preserve.
DENORM = (0, 1, 2, 3)


def f32(x: float) -> int:
    """The bits of ``x`` rounded to binary32."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def mode(denorm: int) -> FpMode:
    """LLVM's default MODE (f64 denormals kept, DX10_CLAMP, IEEE) with this f32 setting."""
    return FpMode(0x3C0 | denorm << 4)


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
                p = f32(float(np.float32(struct.unpack("<f", struct.pack("<I", a))[0])
                              * np.float32(struct.unpack("<f", struct.pack("<I", b))[0])))
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


# --- vectors, golden model, simulation -----------------------------------------------------

class Vec(NamedTuple):
    name: str
    src: tuple[int, int, int]
    cin: int
    denorm: int


def n_sources(name: str) -> int:
    """Source arrays the golden model takes (the mad family always three)."""
    return 2 if name in ADD_OPS or name in ("v_mul_f32", "v_mul_legacy_f32") else 3


def vectors(name: str, operands, denorms=DENORM, cins=(0,)) -> list[Vec]:
    out = []
    for ops, d, cin in itertools.product(operands, denorms, cins):
        ops = tuple(ops) + (0,) * (3 - len(ops))
        out.append(Vec(name, ops, cin, d))
    return out


def golden(vecs: list[Vec], as_op: str | None = None, denorm: int | None = None) -> list[int]:
    """The golden model's result of each vector, 64 lanes per call (grouped by op and MODE);
    ``as_op``/``denorm`` evaluate another instruction or MODE on the same operands."""
    out = [0] * len(vecs)
    groups: dict[tuple[str, int], list[int]] = {}
    for i, v in enumerate(vecs):
        key = (as_op or v.name, v.denorm if denorm is None else denorm)
        groups.setdefault(key, []).append(i)
    for (name, d), idx in groups.items():
        fn = VALU_OPS[name]
        ctx = LaneContext(mode=mode(d))
        for start in range(0, len(idx), WAVE_SIZE):
            chunk = idx[start:start + WAVE_SIZE]
            cols = [np.array([vecs[i].src[k] for i in chunk], np.uint32) for k in range(3)]
            srcs = cols[:n_sources(name)]
            extra = ([np.array([vecs[i].cin for i in chunk], bool)]
                     if name == "v_div_fmas_f32" else [])
            with np.errstate(all="ignore"):
                res = fn(ctx, *srcs, *extra)
            for i, r in zip(chunk, res, strict=True):
                out[i] = int(r)
    return out


def _ports(unit):
    return Cat(unit.op.as_value(), unit.src0, unit.src1, unit.src2, unit.cin, unit.flush_in,
               unit.flush_out)


def _pack(unit, v: Vec) -> int:
    md = mode(v.denorm)
    width = len(unit.op.as_value())
    bits = fp_member(v.name).value
    for k, value in enumerate((*v.src, v.cin, int(md.flush_in_f32), int(md.flush_out_f32))):
        bits |= value << (width + 32 * k if k < 3 else width + 96 + (k - 3))
    return bits


def stream(unit, vecs: list[Vec], extra=None) -> list[int]:
    """Results of ``unit`` fed one vector per cycle (``start`` every cycle). ``extra``: the
    name of a port held at 1 throughout (``FpMul.mad``, ``FpAdd.force_flush``)."""
    latency = unit.latency
    ports = _ports(unit)
    got = []

    async def bench(ctx):
        ctx.set(unit.start, 1)
        if extra is not None:
            ctx.set(getattr(unit, extra), 1)
        padded = vecs + [vecs[-1]] * (latency - 1)
        for i, v in enumerate(padded):
            ctx.set(ports, _pack(unit, v))
            await ctx.tick()
            if i >= latency - 1:
                assert ctx.get(unit.done)
                got.append(ctx.get(unit.result))

    sim = Simulator(unit)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return got


def handshake(unit, vecs: list[Vec], latency_of) -> list[int]:
    """Results of ``unit`` run the lane's way: ``start`` for one cycle, inputs held until
    ``done``, which must rise exactly ``latency_of(name)`` cycles after ``start``; the next
    vector starts in the cycle ``done`` is seen (with new inputs: the result must not move
    before the next start)."""
    ports = _ports(unit)
    got = []

    async def bench(ctx):
        for v in vecs:
            ctx.set(ports, _pack(unit, v))
            ctx.set(unit.start, 1)
            await ctx.tick()
            ctx.set(unit.start, 0)
            for _ in range(latency_of(v.name) - 1):
                assert not ctx.get(unit.done), v
                await ctx.tick()
            assert ctx.get(unit.done), v
            got.append(ctx.get(unit.result))
            await ctx.tick()                       # one idle cycle with other inputs
            assert ctx.get(unit.done) and ctx.get(unit.result) == got[-1], v
            ctx.set(ports, _pack(unit, v._replace(src=(0x3F80_0000, 0x4000_0000, 0))))
            await ctx.tick()
            assert ctx.get(unit.done) and ctx.get(unit.result) == got[-1], v

    sim = Simulator(unit)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return got


def check(name: str, vecs: list[Vec], got: list[int], want: list[int]) -> None:
    assert len(got) == len(vecs) == len(want) > 0
    bad = [f"{v.name}({', '.join(f'{s:#010x}' for s in v.src[:n_sources(v.name)])}"
           f"{f', vcc={v.cin}' if v.name == 'v_div_fmas_f32' else ''}) "
           f"FP_DENORM={v.denorm}: got {g:#010x}, expected {w:#010x}"
           for v, g, w in zip(vecs, got, want, strict=True) if v.name == name and g != w]
    total = sum(v.name == name for v in vecs)
    assert total > 0, name
    assert not bad, f"{len(bad)}/{total} wrong:\n" + "\n".join(bad[:8])


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


def add_vectors(scale: int) -> list[Vec]:
    rng = random.Random(f"add{scale}")
    vecs = []
    for name in ADD_OPS:
        vecs += vectors(name, corner_pairs())
        vecs += vectors(name, add_pairs(rng, 400 * scale))
    return vecs


def mul_vectors(scale: int) -> list[Vec]:
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


def fma_vectors(scale: int) -> list[Vec]:
    rng = random.Random(f"fma{scale}")
    vecs = vectors("v_fma_f32", corner_triples(rng, 250 * scale) + fma_triples(rng, 700 * scale)
                   + fma_tie_triples(rng, 150 * scale))
    vecs += vectors("v_div_fmas_f32", corner_triples(rng, 200 * scale)
                    + fma_triples(rng, 150 * scale) + fma_tie_triples(rng, 50 * scale)
                    + fmas_triples(rng, 200 * scale),
                    cins=(0, 1))
    return vecs


def mad_vectors(scale: int) -> list[Vec]:
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
        vecs += [Vec(name, t, 0, DENORM[i % 4]) for i, t in enumerate(triples)]
    return vecs


# --- simulations (one per unit and vector set, shared by the tests) -------------------------

@functools.cache
def add_results(scale: int = 1):
    vecs = add_vectors(scale)
    return vecs, stream(FpAdd(), vecs), golden(vecs)


@functools.cache
def mul_results(scale: int = 1):
    vecs = mul_vectors(scale)
    return vecs, stream(FpMul(), vecs), golden(vecs)


@functools.cache
def fma_results(scale: int = 1):
    vecs = fma_vectors(scale)
    return vecs, stream(FpFma(), vecs), golden(vecs)


@functools.cache
def mad_results(scale: int = 1):
    unit = FpMulAdd()
    vecs = mad_vectors(scale)
    # plain adds and multiplies through the shared units as well
    rng = random.Random(f"muladd{scale}")
    for name in ("v_add_f32", "v_subrev_f32", "v_mul_f32", "v_mul_legacy_f32",
                 "v_cubema_f32"):
        ops = mul_pairs(rng, 12) if name in MUL_OPS else add_pairs(rng, 12)
        vecs += [Vec(name, (*t, rng.getrandbits(32))[:3], 0, DENORM[i % 4])
                 for i, t in enumerate(ops)]
    rng.shuffle(vecs)                # every transition: add after mad, mad after add, ...
    return vecs, handshake(unit, vecs, unit.latency_of), golden(vecs)


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
    check(name, *add_results())


@pytest.mark.parametrize("name", MUL_OPS)
def test_mul(name):
    check(name, *mul_results())


@pytest.mark.parametrize("name", FMA_OPS)
def test_fma(name):
    check(name, *fma_results())


@pytest.mark.parametrize("name", MAD_OPS + ("v_add_f32", "v_subrev_f32", "v_mul_f32",
                                            "v_mul_legacy_f32", "v_cubema_f32"))
def test_mul_add_unit(name):
    check(name, *mad_results())


@pytest.mark.parametrize("name", ["v_mul_f32", "v_mul_legacy_f32"])
def test_mul_mad_port_flushes(name):
    """``mad`` forces input and output flushing: every MODE acts as FP_DENORM = 0."""
    rng = random.Random(name)
    vecs = vectors(name, corner_pairs()[::3] + mul_pairs(rng, 200))
    got = stream(FpMul(ops=[name]), vecs, extra="mad")
    check(name, vecs, got, golden(vecs, denorm=0))


def test_add_force_flush_port():
    rng = random.Random("force_flush")
    vecs = vectors("v_add_f32", corner_pairs()[::3] + add_pairs(rng, 200))
    got = stream(FpAdd(ops=["v_add_f32"]), vecs, extra="force_flush")
    check("v_add_f32", vecs, got, golden(vecs, denorm=0))


@pytest.mark.parametrize("cls", [FpAdd, FpMul, FpFma])
def test_handshake_timing(cls):
    """Done exactly ``latency`` cycles after start, result held after done while the inputs
    change; the same results as streaming."""
    unit = cls()
    rng = random.Random(cls.__name__)
    vecs = [Vec(rng.choice(cls.OPS), tuple(random_operand(rng) for _ in range(3)),
                rng.getrandbits(1), rng.choice(DENORM)) for _ in range(12)]
    got = handshake(unit, vecs, lambda _: unit.latency)
    want = golden(vecs)
    for name in {v.name for v in vecs}:
        check(name, vecs, got, want)


# --- construction -----------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [FpAdd, FpMul, FpFma, FpMulAdd])
def test_constructor_errors(cls):
    with pytest.raises(ValueError, match="string"):
        cls(ops="v_add_f32")
    with pytest.raises(ValueError, match="does not implement"):
        cls(ops=["v_rcp_f32"])
    assert cls().ops == frozenset(cls.OPS)


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
    vecs = [Vec(rng.choice(ops), tuple(random_operand(rng) for _ in range(3)), 0,
                rng.choice(DENORM)) for _ in range(24)]
    vecs += [v._replace(name=name) for name in ops for v in vecs[:2]]
    got = handshake(unit, vecs, unit.latency_of)
    want = golden(vecs)
    for name in ops:
        check(name, vecs, got, want)


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
    results = {"add": add_results, "mul": mul_results, "fma": fma_results,
               "mad": mad_results}[kind](8)
    for name in dict.fromkeys(v.name for v in results[0]):
        check(name, *results)
