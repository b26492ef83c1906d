# amaranth: UnusedElaboratable=no
"""The harness of the FP32 sub-unit tests (``test_arith``, ``test_cmp``, ``test_cvt``,
``test_trans``): every sub-unit has the ports of :class:`gpgpu_hdl.cu.fpu.common.FpSubUnit`, so
one set of drivers serves them all.

- :func:`golden` evaluates :data:`VALU_OPS` on the operands and MODE of each
  :class:`~tests.simulation.Vector`, 64 lanes per call; :func:`check` compares a run with it.
- :func:`stream` feeds a pipeline one vector per cycle (:func:`stream_ops`: the vectors of
  some ops through a unit built for them); :func:`handshake` runs vectors the lane's way
  (``start``, wait for ``done``, the outputs held after it).
- :func:`check_ops_argument`, :func:`check_unbuilt_ops_give_zero` and
  :func:`check_pipeline_timing` are the contracts every sub-unit shares.
- MODE values (:func:`mode_bits`, :data:`MODES`) and the f32 operands of the compare and
  converter tests (:data:`F32_CORNERS`, :func:`random_f32`).

Plain helpers for the test modules to import; the shared fixtures are in ``tests/conftest.py``.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from amaranth.hdl import Cat, Module, Mux, Signal

from gpgpu_hdl.cu.fpu.ops import fp_member
from gpgpu_hdl.emu.context import FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, f32
from tests.golden import lane_outputs, waves
from tests.simulation import Vector, by_op, simulate

#: Clock period of the sub-unit simulations (seconds).
CLOCK = 1e-6


# --- MODE -----------------------------------------------------------------------------------

def mode_bits(denorm: int, ieee: int = 1) -> int:
    """MODE with the f32 FP_DENORM field ``denorm`` (0 flush in and out, 1 flush out, 2 flush
    in, 3 preserve) and the IEEE bit ``ieee`` (f64 denormals kept, DX10_CLAMP set): with
    ``ieee`` 1, LLVM's default MODE but for the f32 setting."""
    return 0x1C0 | denorm << 4 | ieee << 9


#: Every f32 FP_DENORM setting, IEEE off then on.
MODES = tuple(mode_bits(d, i) for i in (0, 1) for d in range(4))
#: Every f32 FP_DENORM setting with IEEE on.
DENORM_MODES = tuple(mode_bits(d) for d in range(4))


def describe_mode(mode: int) -> str:
    m = FpMode(mode)
    return (f"flush_in={int(m.flush_in_f32)} flush_out={int(m.flush_out_f32)} "
            f"ieee={int(m.ieee)}")


# --- operands ---------------------------------------------------------------------------------

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


def sample_every_op(ops, cases, seed: int) -> list[Vector]:
    """24 of the vectors ``cases(name, 16)`` of each of ``ops``, shuffled: a sample of every
    op for the unit built with all of them."""
    rng = random.Random(seed)
    vectors = [v for name in ops for v in rng.sample(cases(name, 16), 24)]
    rng.shuffle(vectors)
    return vectors


# --- the golden model ---------------------------------------------------------------------------

def n_sources(name: str) -> int:
    """Operands the golden model takes: the table's typed source slots, plus the old
    destination of an accumulating op (``v_mac_f32``, ``v_cvt_pkaccum_u8_f32``) and the literal
    of ``v_madmk_f32``/``v_madak_f32``."""
    info = TABLE.by_mnemonic(name)
    n = sum(1 for t in (info.src0, info.src1, info.src2) if t is not None)
    return n + bool(info.flags & {"acc", "lit"})


def golden(vectors: list[Vector], *, mode: int | None = None) -> list[tuple[int, int]]:
    """(result, flag) of the golden model per vector: VOPC gives result 0 and the compare as
    flag, ``v_div_scale`` its VCC bit as flag, every other op flag 0; ``cin`` is the VCC bit
    of an op that reads VCC (``v_div_fmas_f32``). ``mode`` evaluates every vector under that
    MODE instead of its own. Evaluated 64 lanes per call, grouped by op and MODE."""
    out: list[tuple[int, int] | None] = [None] * len(vectors)
    groups: dict[tuple[str, int], list[int]] = {}
    for i, v in enumerate(vectors):
        groups.setdefault((v.name, v.mode if mode is None else mode), []).append(i)
    for (name, bits), indices in groups.items():
        fn, n = VALU_OPS[name], n_sources(name)
        reads_vcc = "vcc" in TABLE.by_mnemonic(name).reads
        ctx = LaneContext(mode=FpMode(bits))
        for chunk, padded in waves(indices):
            args = [np.array([vectors[i].srcs[k] for i in padded], np.uint32) for k in range(n)]
            if reads_vcc:
                args.append(np.array([vectors[i].cin for i in padded], bool))
            with np.errstate(all="ignore"):         # as the emulator's machine runs them
                res = fn(ctx, *args)
            for i, outputs in zip(chunk, lane_outputs(res), strict=False):
                out[i] = outputs
    return out


def check(vectors: list[Vector], got: list[tuple[int, int]],
          want: list[tuple[int, int]] | None = None, *, more_than: int = 0) -> None:
    """Assert there are more than ``more_than`` vectors and ``got`` equals ``want`` (default:
    the golden model) on every one; the message lists up to 8 failures with op, operands,
    MODE, got and expected."""
    if want is None:
        want = golden(vectors)
    assert len(got) == len(vectors) == len(want) > more_than
    bad = [f"{v.describe()} ({describe_mode(v.mode)}): got=({g[0]:#010x}, {g[1]}) "
           f"want=({w[0]:#010x}, {w[1]})"
           for v, g, w in zip(vectors, got, want, strict=True) if g != w]
    assert not bad, f"{len(bad)}/{len(vectors)} wrong:\n" + "\n".join(bad[:8])


# --- driving a sub-unit -------------------------------------------------------------------------

def input_ports(unit) -> Cat:
    """Every input of a sub-unit, in the order :func:`pack` fills them."""
    return Cat(unit.start, unit.op, unit.src0, unit.src1, unit.src2, unit.cin,
               unit.flush_in, unit.flush_out, unit.ieee)


@functools.cache
def _op_code(name: str) -> int:
    return fp_member(name).value


def pack(unit, v: Vector, start: int = 1) -> int:
    """The value of :func:`input_ports` that applies ``v`` (MODE as the flush and IEEE
    inputs), with ``start``."""
    m = FpMode(v.mode)
    fields = (v.src0 | v.src1 << 32 | v.src2 << 64 | v.cin << 96 | m.flush_in_f32 << 97
              | m.flush_out_f32 << 98 | m.ieee << 99)
    return start | _op_code(v.name) << 1 | fields << (len(unit.op.as_value()) + 1)


def stream(unit, vectors: list[Vector], *, held=()) -> list[tuple[int, int]]:
    """(result, flag) of a pipelined ``unit`` per vector, one ``start`` per cycle: the
    vector's result is read :attr:`latency` cycles after its ``start`` (``done`` must be high
    then). ``held`` names 1-bit inputs held at 1 throughout (``FpMul.mad``,
    ``FpAdd.force_flush``)."""
    inputs = input_ports(unit)
    outputs = Cat(unit.result, unit.flag, unit.done)
    latency = unit.latency
    words = [pack(unit, v) for v in vectors]
    reads = []

    async def testbench(ctx):
        for name in held:
            ctx.set(getattr(unit, name), 1)
        for word in words:
            ctx.set(inputs, word)
            await ctx.tick()
            reads.append(ctx.get(outputs))
        ctx.set(unit.start, 0)
        for _ in range(latency - 1):            # drain the pipeline
            await ctx.tick()
            reads.append(ctx.get(outputs))

    simulate(unit, testbench, clock=CLOCK)
    got = reads[latency - 1:]
    assert all(o >> 33 for o in got), "done low when the result is due"
    return [(o & M32, o >> 32 & 1) for o in got]


def stream_ops(unit_class, ops, cases) -> dict[str, tuple[list[Vector], list]]:
    """Per op of ``ops``, its vectors ``cases(name)`` and their results, streamed through one
    ``unit_class(ops=ops)``."""
    vectors = [v for name in ops for v in cases(name)]
    return by_op(vectors, stream(unit_class(ops=ops), vectors))


def handshake(unit, vectors: list[Vector], *, latency_of=None) -> list[tuple[int, int]]:
    """(result, flag) of ``unit`` per vector, run the lane's way: ``start`` for one cycle,
    then wait for ``done``, which must rise within :attr:`latency` cycles (exactly
    ``latency_of(name)`` cycles after ``start`` when that is given); the outputs must then
    hold for a cycle with the same inputs and one with other operands, before the next
    vector starts."""
    top = Module()
    top.submodules.unit = unit
    age = Signal(range(64), name="age")             # 1 in the cycle after start
    top.d.sync += age.eq(Mux(unit.start, 1, age + (age < 63)))
    inputs, latency = input_ports(unit), unit.latency
    got = []

    async def testbench(ctx):
        for v in vectors:
            ctx.set(inputs, pack(unit, v))
            await ctx.tick()
            ctx.set(unit.start, 0)
            if ctx.get(unit.done):
                cycles, *outputs = 1, 1, ctx.get(unit.result), ctx.get(unit.flag)
                await ctx.tick()
            else:                               # the values of the cycle done rose in
                cycles, *outputs = await ctx.tick().sample(
                    age, unit.done, unit.result, unit.flag).until(unit.done | (age > latency))
            assert outputs[0], f"no done within {latency} cycles: {v.describe()}"
            if latency_of is not None:
                assert cycles == latency_of(v.name), (
                    f"done after {cycles} cycles, not {latency_of(v.name)}: {v.describe()}")
            got.append(tuple(outputs[1:]))
            # held: the cycle after done (same inputs), then one with other operands
            assert [ctx.get(unit.done), ctx.get(unit.result), ctx.get(unit.flag)] == outputs, \
                v.describe()
            ctx.set(inputs, pack(unit, v._replace(src0=f32(1.0), src1=f32(2.0), src2=0),
                                 start=0))
            await ctx.tick()
            assert [ctx.get(unit.done), ctx.get(unit.result), ctx.get(unit.flag)] == outputs, \
                v.describe()

    simulate(top, testbench, clock=CLOCK)
    return got


# --- contracts every sub-unit shares ------------------------------------------------------------

def check_ops_argument(cls, own: str, *foreign: str) -> None:
    """``cls(ops=...)`` refuses a string, and a list holding an op it does not implement (alone
    or with ``own``, one of its ops) with a message naming that op; without ``ops`` it builds
    all of ``cls.OPS``."""
    with pytest.raises(ValueError, match="string"):
        cls(ops=own)
    for op in foreign:
        for ops in ([op], [own, op]):
            with pytest.raises(ValueError, match=f"{cls.__name__} does not implement '{op}'"):
                cls(ops=ops)
    assert cls().ops == frozenset(cls.OPS)


def check_unbuilt_ops_give_zero(unit, vectors: list[Vector]) -> None:
    """Streamed through ``unit``, the vectors of its ops match the golden model and those of
    the ops it was not built for give result 0 and flag 0."""
    got, want = stream(unit, vectors), golden(vectors)
    for v, g, w in zip(vectors, got, want, strict=True):
        assert g == (w if v.name in unit.ops else (0, 0)), v.describe()


def check_pipeline_timing(unit, first: Vector, moved_on: Vector,
                          second: Vector) -> list[tuple[int, int]]:
    """``done`` rises :attr:`latency` cycles after ``start`` and holds, with the outputs, until
    the cycle after the next ``start``, whatever the inputs do meanwhile: ``first`` starts, in
    the next cycle the inputs change to ``moved_on`` (``start`` low: the unit registered
    them), ``second`` starts three cycles after ``first``'s result. Returns the (result, flag)
    of ``first`` and ``second``, which must be the golden model's."""
    inputs = input_ports(unit)
    got = []

    async def bench(ctx):
        assert ctx.get(unit.done) == 0
        ctx.set(inputs, pack(unit, first))
        assert ctx.get(unit.done) == 0
        await ctx.tick()
        ctx.set(inputs, pack(unit, moved_on, start=0))
        for k, v in enumerate((first, second)):
            if k:                               # after the first's results held
                ctx.set(inputs, pack(unit, second))
                await ctx.tick()
                ctx.set(unit.start, 0)
            for _ in range(unit.latency - 1):
                assert ctx.get(unit.done) == 0, v.describe()
                await ctx.tick()
            outputs = (1, ctx.get(unit.result), ctx.get(unit.flag))
            assert ctx.get(unit.done) == 1, v.describe()
            got.append(outputs[1:])
            for _ in range(3):                  # the outputs hold
                await ctx.tick()
                assert (ctx.get(unit.done), ctx.get(unit.result),
                        ctx.get(unit.flag)) == outputs, v.describe()

    simulate(unit, bench, clock=CLOCK)
    assert got == golden([first, second])
    return got
