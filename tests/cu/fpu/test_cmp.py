# amaranth: UnusedElaboratable=no
"""The FP32 compare sub-unit (:mod:`gpgpu_hdl.cu.fpu.cmp`) against the golden model.

Each op group (compares, ``v_cmp_class``, min/max, min3/max3/med3) runs in one simulation
of an :class:`FpCmp` built for that group, one vector per cycle (the unit takes a ``start``
every cycle), and every result is compared with :data:`VALU_OPS` evaluated on the same
operands and MODE, 64 lanes per call. Operands: corner values (signed zeros, ones, halves,
denormals, the normal range ends, infinities, quiet and signalling NaNs with payloads) crossed
with each other, plus seeded random bit patterns and random floats, under the four f32
FP_DENORM settings and, for min/max, both IEEE settings.

The simulation harness here (:func:`simulate`, :func:`golden`, :func:`check`) is shared with
``test_cvt.py``.
"""

from __future__ import annotations

import itertools
import random
import struct
from typing import NamedTuple

import numpy as np
import pytest
from amaranth.back import rtlil
from amaranth.hdl import Cat
from amaranth.sim import Simulator

from gpgpu_hdl.cu.fpu.cmp import CMP_CONDITIONS, FpCmp
from gpgpu_hdl.cu.fpu.ops import FP_OPS, SUBUNIT_OF, fp_member
from gpgpu_hdl.emu.context import WAVE_SIZE, FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.table import TABLE

M32 = 0xFFFF_FFFF


def f32(x: float) -> int:
    """The bits of ``x`` rounded to binary32."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


#: f32 corner values: zeros, ones, halves, ties, denormals, normal range ends, infinities,
#: NaNs (quiet, signalling, with payloads, negative).
F32_CORNERS = (
    0x0000_0000, 0x8000_0000, f32(1.0), f32(-1.0), f32(0.5), f32(-0.5), f32(1.5), f32(-1.5),
    f32(2.5), f32(-2.5), f32(3.0), 0x3F80_0001, 0x3F7F_FFFF,
    0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x807F_FFFF, 0x0040_0000, 0x8040_0000,
    0x0080_0000, 0x8080_0000, 0x7F7F_FFFF, 0xFF7F_FFFF,
    0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0xFFC0_0000, 0x7FC1_2345, 0x7F80_0001,
    0xFF80_0001, 0x7FA0_0000, 0x7FBF_FFFF,
)
#: A smaller set for crossing three operands.
F32_CORE = (0x0000_0000, 0x8000_0000, f32(1.0), f32(-1.0), f32(2.5), 0x0000_0001,
            0x807F_FFFF, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x7F80_0001, 0xFFA0_0000)


def mode_bits(denorm: int, ieee: int) -> int:
    """MODE with the f32 FP_DENORM field ``denorm`` (0 flush in and out, 1 flush out, 2 flush
    in, 3 preserve) and the IEEE bit ``ieee`` (f64 denormals kept, DX10_CLAMP set)."""
    return 0x1C0 | denorm << 4 | ieee << 9


MODES = tuple(mode_bits(d, i) for i in (0, 1) for d in range(4))
DENORM_MODES = tuple(mode_bits(d, 1) for d in range(4))


def describe_mode(mode: int) -> str:
    m = FpMode(mode)
    return (f"mode={mode:#x}(flush_in={int(m.flush_in_f32)} flush_out={int(m.flush_out_f32)} "
            f"ieee={int(m.ieee)})")


def random_f32(rng: random.Random) -> int:
    """A random f32 operand: a corner, a random bit pattern, a denormal, a NaN, or a float of
    moderate range (some of them small integers and halves)."""
    kind = rng.randrange(8)
    if kind == 0:
        return rng.choice(F32_CORNERS)
    if kind == 1:
        return rng.getrandbits(32)
    if kind == 2:
        return rng.getrandbits(23) | rng.getrandbits(1) << 31              # denormal
    if kind == 3:
        return 0x7F80_0000 | rng.getrandbits(23) | rng.getrandbits(1) << 31   # inf/NaN
    if kind == 4:
        return f32(rng.randrange(-64, 65) / rng.choice((1, 2, 4)))
    return f32(rng.uniform(-1, 1) * 2.0 ** rng.randrange(-40, 40))


def near(rng: random.Random, x: int) -> int:
    """An operand related to ``x``: equal, negated, or a neighbour."""
    return rng.choice((x, x ^ 0x8000_0000, (x + 1) & M32, (x - 1) & M32))


# --- the golden model ---------------------------------------------------------------------

class Vector(NamedTuple):
    """One set of sub-unit inputs."""

    name: str
    src0: int
    src1: int
    src2: int
    mode: int

    def describe(self) -> str:
        return (f"{self.name} src0={self.src0:#010x} src1={self.src1:#010x} "
                f"src2={self.src2:#010x} {describe_mode(self.mode)}")


def n_sources(name: str) -> int:
    """Operands the golden model takes: the table's typed source slots, plus the old
    destination of an accumulating op (``v_cvt_pkaccum_u8_f32``)."""
    info = TABLE.by_mnemonic(name)
    n = sum(1 for t in (info.src0, info.src1, info.src2) if t is not None)
    return n + ("acc" in info.flags)


def golden(vectors: list[Vector]) -> list[tuple[int, int]]:
    """(result, flag) of the golden model per vector: VOPC gives result 0 and the compare
    as flag, every other op flag 0. Evaluated 64 lanes per call, grouped by op and MODE."""
    out: list[tuple[int, int] | None] = [None] * len(vectors)
    groups: dict[tuple[str, int], list[int]] = {}
    for i, v in enumerate(vectors):
        groups.setdefault((v.name, v.mode), []).append(i)
    for (name, mode), indices in groups.items():
        fn, n = VALU_OPS[name], n_sources(name)
        ctx = LaneContext(mode=FpMode(mode))
        for start in range(0, len(indices), WAVE_SIZE):
            chunk = indices[start:start + WAVE_SIZE]
            padded = chunk + [chunk[0]] * (WAVE_SIZE - len(chunk))
            srcs = [np.array([vectors[i][1 + k] for i in padded], np.uint32) for k in range(n)]
            with np.errstate(all="ignore"):         # as the emulator's machine runs them
                res = fn(ctx, *srcs)
            if res.dtype == bool:
                values, flags = np.zeros(WAVE_SIZE, np.uint32), res
            else:
                values, flags = res, np.zeros(WAVE_SIZE, bool)
            for i, value, flag in zip(chunk, values, flags, strict=False):
                out[i] = (int(value), int(flag))
    return out


# --- the simulation -----------------------------------------------------------------------

def simulate(unit, vectors: list[Vector]) -> list[tuple[int, int]]:
    """(result, flag) of ``unit`` per vector, one ``start`` per cycle: the vector's result is
    read :attr:`latency` cycles after its ``start`` (``done`` must be high then)."""
    inputs = Cat(unit.start, unit.op, unit.src0, unit.src1, unit.src2, unit.cin,
                 unit.flush_in, unit.flush_out, unit.ieee)
    outputs = Cat(unit.result, unit.flag, unit.done)
    latency = unit.latency
    w = len(unit.op.as_value())             # operand fields follow start and op
    codes = {name: fp_member(name).value for name in {v.name for v in vectors}}
    reads = []

    async def testbench(ctx):
        for v in vectors:
            m = FpMode(v.mode)
            ctx.set(inputs, 1 | codes[v.name] << 1 | (v.src0 | v.src1 << 32 | v.src2 << 64
                                                      | m.flush_in_f32 << 97 | m.flush_out_f32 << 98
                                                      | m.ieee << 99) << (w + 1))
            await ctx.tick()
            reads.append(ctx.get(outputs))
        ctx.set(unit.start, 0)
        for _ in range(latency - 1):            # drain the pipeline
            await ctx.tick()
            reads.append(ctx.get(outputs))

    sim = Simulator(unit)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    got = reads[latency - 1:]
    assert all(o >> 33 for o in got), "done low when the result is due"
    return [(o & M32, o >> 32 & 1) for o in got]


def check(vectors: list[Vector], got: list[tuple[int, int]],
          want: list[tuple[int, int]] | None = None) -> None:
    """Assert ``got`` equals the golden model on every vector; the message lists up to 8
    failures with op, operands, MODE, got and expected."""
    if want is None:
        want = golden(vectors)
    assert len(got) == len(vectors) == len(want) > 0
    bad = [f"{v.describe()}: got=({g[0]:#010x}, {g[1]}) want=({w[0]:#010x}, {w[1]})"
           for v, g, w in zip(vectors, got, want, strict=True) if g != w]
    assert not bad, f"{len(bad)}/{len(vectors)} wrong:\n" + "\n".join(bad[:8])


# --- the compare unit's vectors -------------------------------------------------------------

CMP_OPS = tuple(n for n in FP_OPS if SUBUNIT_OF[n] == "cmp")
COMPARES = tuple(n for n in CMP_OPS if n.split("_")[2] in CMP_CONDITIONS)
CLASS_OPS = ("v_cmp_class_f32", "v_cmpx_class_f32")
MINMAX_OPS = ("v_min_f32", "v_max_f32", "v_min_legacy_f32", "v_max_legacy_f32")
MINMAX3_OPS = ("v_min3_f32", "v_max3_f32", "v_med3_f32")
GROUPS = {"compare": COMPARES, "class": CLASS_OPS, "minmax": MINMAX_OPS,
          "minmax3": MINMAX3_OPS}
N_RANDOM = 96


def _pairs(rng: random.Random, n_random: int) -> list[tuple[int, int]]:
    """Every pair of corners, then random pairs (a third of them equal or neighbours)."""
    pairs = list(itertools.product(F32_CORNERS, repeat=2))
    for _ in range(n_random):
        x = random_f32(rng)
        pairs.append((x, near(rng, x) if rng.randrange(3) == 0 else random_f32(rng)))
    return pairs


def cases(name: str, n_random: int = N_RANDOM) -> list[Vector]:
    """The vectors of one op (seeded by its name)."""
    rng = random.Random(name)
    if name in COMPARES:
        kind = name.split("_")[1]
        pairs = _pairs(rng, n_random)
        if kind == "cmp":       # every pair flushed and not (flush_out does not matter)
            return [Vector(name, x, y, rng.getrandbits(32), mode)
                    for x, y in pairs for mode in (rng.choice(MODES[0:4:2]),
                                                   rng.choice(MODES[1:4:2]))]
        pairs = rng.sample(pairs, 48) + pairs[len(F32_CORNERS) ** 2:]   # same logic: a sample
        return [Vector(name, x, y, rng.getrandbits(32), rng.choice(MODES)) for x, y in pairs]
    if name in CLASS_OPS:
        masks = [1 << k for k in range(10)] + [0x3FF, 0, M32 ^ 0x3FF]
        values = list(F32_CORNERS) + [random_f32(rng) for _ in range(n_random // 4)]
        return [Vector(name, x, mask | rng.getrandbits(22) << 10 * (mask != M32 ^ 0x3FF),
                       rng.getrandbits(32), rng.choice(MODES))
                for x in values for mask in masks]
    if name in MINMAX_OPS:
        modes = MODES if name in ("v_min_f32", "v_max_f32") else DENORM_MODES
        return [Vector(name, x, y, rng.getrandbits(32), mode)
                for x, y in _pairs(rng, n_random) for mode in modes]
    assert name in MINMAX3_OPS
    vectors = [Vector(name, *t, mode) for t in itertools.product(F32_CORE, repeat=3)
               for mode in (rng.choice(MODES[:4]), rng.choice(MODES[4:]))]
    for _ in range(4 * n_random):
        x = random_f32(rng)
        t = [x, near(rng, x), random_f32(rng)]
        rng.shuffle(t)
        vectors.append(Vector(name, *t, rng.choice(MODES)))
    return vectors


def run_group(ops, vectors: list[Vector]) -> dict[str, tuple[list[Vector], list]]:
    """Simulate an :class:`FpCmp` built for ``ops``; per op its vectors and results."""
    got = simulate(FpCmp(ops=ops), vectors)
    results: dict[str, tuple[list[Vector], list]] = {}
    for v, g in zip(vectors, got, strict=True):
        entry = results.setdefault(v.name, ([], []))
        entry[0].append(v)
        entry[1].append(g)
    return results


@pytest.fixture(scope="module")
def group_results():
    results = {}
    for ops in GROUPS.values():
        results |= run_group(ops, [v for name in ops for v in cases(name)])
    return results


# --- every op against the golden model --------------------------------------------------------

def test_groups_cover_every_cmp_op():
    assert sorted(n for ops in GROUPS.values() for n in ops) == sorted(CMP_OPS)
    assert len(COMPARES) == 64 and set(FpCmp.OPS) == set(CMP_OPS)


@pytest.mark.parametrize("name", CMP_OPS)
def test_op_matches_golden(name, group_results):
    vectors, got = group_results[name]
    assert len(vectors) > N_RANDOM
    check(vectors, got)


def test_full_unit_matches_golden():
    """A sample of every op through the unit built with all of them."""
    rng = random.Random(1)
    vectors = [v for name in CMP_OPS for v in rng.sample(cases(name, 16), 24)]
    rng.shuffle(vectors)
    check(vectors, simulate(FpCmp(), vectors))


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_group_random_slow(group):
    rng = random.Random(group)
    vectors = []
    for name in GROUPS[group]:
        for _ in range(2000 if group != "compare" else 300):
            x = random_f32(rng)
            y = near(rng, x) if rng.randrange(3) == 0 else random_f32(rng)
            vectors.append(Vector(name, x, y, random_f32(rng), rng.choice(MODES)))
    check(vectors, simulate(FpCmp(ops=GROUPS[group]), vectors))


# --- construction, structure, timing -----------------------------------------------------------

def test_constructor_errors():
    with pytest.raises(ValueError, match="string"):
        FpCmp(ops="v_min_f32")
    with pytest.raises(ValueError, match="v_add_f32"):
        FpCmp(ops=["v_min_f32", "v_add_f32"])
    with pytest.raises(ValueError, match="v_cvt_f32_i32"):
        FpCmp(ops=["v_cvt_f32_i32"])
    assert FpCmp().ops == frozenset(CMP_OPS)
    assert FpCmp(ops=()).ops == frozenset()
    assert FpCmp().latency == 2


@pytest.mark.parametrize(("ops", "comparators"), [
    ((), 0), (CLASS_OPS, 0), (("v_cmp_lt_f32",), 1), (("v_min_legacy_f32", "v_max_f32"), 1),
    (("v_med3_f32",), 3), (None, 3)])
def test_only_the_needed_comparators_are_built(ops, comparators):
    unit = FpCmp() if ops is None else FpCmp(ops=ops)
    assert unit.comparators == comparators
    text = rtlil.convert(unit, name="top")
    for pair, built in (("ab", comparators >= 1), ("ac", comparators == 3),
                        ("bc", comparators == 3)):
        assert (f"{pair}_mag_lt" in text) == built, pair
    assert ("cond" in text) == any(n in COMPARES for n in unit.ops)


def test_unbuilt_ops_give_zero():
    built = ("v_cmp_lt_f32", "v_max3_f32")
    rng = random.Random(3)
    vectors = [Vector(n, random_f32(rng), random_f32(rng), random_f32(rng), rng.choice(MODES))
               for n in CMP_OPS for _ in range(3)]
    got = simulate(FpCmp(ops=built), vectors)
    want = golden(vectors)
    for v, g, w in zip(vectors, got, want, strict=True):
        assert g == (w if v.name in built else (0, 0)), v.describe()


def test_timing_contract():
    """``done`` rises :attr:`latency` cycles after ``start`` and holds, with the outputs,
    until the cycle after the next ``start``, whatever the inputs do meanwhile."""
    unit = FpCmp()
    max_op = fp_member("v_max_f32")
    lt_op = fp_member("v_cmp_lt_f32")

    async def bench(ctx):
        assert ctx.get(unit.done) == 0
        ctx.set(unit.op, max_op)
        ctx.set(unit.src0, f32(1.0))
        ctx.set(unit.src1, f32(2.0))
        ctx.set(unit.start, 1)
        assert ctx.get(unit.done) == 0
        await ctx.tick()
        ctx.set(unit.start, 0)
        ctx.set(unit.op, lt_op)                 # the lane moves on: the unit registered them
        ctx.set(unit.src1, f32(-5.0))
        for _ in range(unit.latency - 1):
            assert ctx.get(unit.done) == 0
            await ctx.tick()
        assert ctx.get(unit.done) == 1
        assert ctx.get(unit.result) == f32(2.0) and ctx.get(unit.flag) == 0
        for _ in range(3):                      # outputs hold
            await ctx.tick()
            assert ctx.get(unit.done) == 1
            assert ctx.get(unit.result) == f32(2.0) and ctx.get(unit.flag) == 0
        ctx.set(unit.start, 1)
        ctx.set(unit.src1, f32(3.0))
        await ctx.tick()
        ctx.set(unit.start, 0)
        for _ in range(unit.latency - 1):
            assert ctx.get(unit.done) == 0
            await ctx.tick()
        assert ctx.get(unit.done) == 1
        assert ctx.get(unit.result) == 0 and ctx.get(unit.flag) == 1

    sim = Simulator(unit)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
