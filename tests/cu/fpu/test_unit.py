# amaranth: UnusedElaboratable=no
"""One lane's FP unit (:class:`gpgpu_hdl.cu.fpu.unit.FpLaneUnit`) against the golden model.

The sub-units have their own tests; this one checks what the lane adds around them: routing
an operation to its sub-unit, the start/done handshake (operations of different latencies back
to back), the VOP3 input modifiers ``abs``/``neg`` and the output modifiers ``omod``/``clamp``
under MODE. The expected values come from the emulator itself: the semantic function of
:data:`VALU_OPS` on operands passed through the emulator's own input-modifier reader, and its
result through the emulator's own output-modifier stage (``emu.program``), as for a VOP3
instruction with those fields.
"""

from __future__ import annotations

import random
import types

import numpy as np
import pytest

from gpgpu_hdl.cu.fpu.ops import FP_OPS, fp_member
from gpgpu_hdl.cu.fpu.unit import FLOAT_RESULT_OPS, FP_BUILT_OPS, FpLaneUnit
from gpgpu_hdl.emu import operands, program
from gpgpu_hdl.emu.context import FpMode, LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.table import TABLE
from tests.bits import f32
from tests.simulation import simulate

INFO = {e.mnemonic: e for e in TABLE}

#: One or two operations of every sub-unit, mad and fma included.
OPS = ("v_add_f32", "v_subrev_f32", "v_mul_f32", "v_mad_f32", "v_mac_f32", "v_fma_f32",
       "v_cmp_lt_f32", "v_cmp_class_f32", "v_max_f32", "v_med3_f32", "v_cvt_f32_u32",
       "v_cvt_i32_f32", "v_floor_f32", "v_rcp_f32", "v_sqrt_f32", "v_div_scale_f32",
       "v_div_fixup_f32", "v_div_fmas_f32")

SPECIALS = (0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
            0x7F800001, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F000000,
            0x3F7FFFFF, 0x3F800001, 0x40000000, 0x00400000)


def _operand(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.25:
        return rng.choice(SPECIALS)
    if r < 0.85:        # moderate floats, often near [0, 1] so that clamp bites
        return f32(rng.uniform(-2.5, 2.5) * 2.0 ** rng.randint(-10, 10))
    return rng.getrandbits(32)


class _Vector(types.SimpleNamespace):
    pass


def _vectors(seed: int, count: int) -> list[_Vector]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        op = OPS[i % len(OPS)]
        vop3b = "vop3b" in INFO[op].flags
        float_dst = op in FLOAT_RESULT_OPS
        out.append(_Vector(
            op=op, srcs=[_operand(rng) for _ in range(3)],
            neg=rng.getrandbits(3), abs=0 if vop3b else rng.getrandbits(3),
            omod=rng.getrandbits(2) if float_dst and rng.random() < 0.5 else 0,
            clamp=int(float_dst and not vop3b and rng.random() < 0.4),
            mode=rng.choice((0x3C0, 0x3F0, 0x3D0, 0x3E0, 0x2C0, 0x1F0)),
            cin=rng.getrandbits(1)))
    return out


def _expected(v: _Vector) -> tuple[int, int]:
    """(result, flag) of the emulator for one lane."""
    with np.errstate(all="ignore"):         # as the emulator runs: IEEE results, no warnings
        return _emulate(v)


def _emulate(v: _Vector) -> tuple[int, int]:
    info = INFO[v.op]
    ctx = LaneContext(mode=FpMode(v.mode))
    wave = types.SimpleNamespace(mode=ctx.mode)
    args = []
    for i, t in enumerate(info.sources):
        if t is None and not (i == 2 and ("acc" in info.flags or "lit" in info.flags)):
            continue
        operand = types.SimpleNamespace(abs=bool(v.abs >> i & 1), neg=bool(v.neg >> i & 1))
        raw = np.full(64, v.srcs[i], np.uint32)
        args.append(operands._with_modifiers(lambda w, raw=raw: raw, operand, 32)(wave))
    if v.op == "v_div_fmas_f32":
        args.append(np.full(64, bool(v.cin)))
    out = VALU_OPS[v.op](ctx, *args)
    flag = 0
    if "vop3b" in info.flags:
        out, flags = out
        flag = int(np.asarray(flags)[0])
    elif info.format is Format.VOPC:
        return 0, int(np.asarray(out)[0])
    inst = types.SimpleNamespace(encoding=Format.VOP3, fields={"omod": v.omod, "clamp": v.clamp})
    mods = program._output_modifiers(inst, 32) if v.op in FLOAT_RESULT_OPS else None
    result = np.asarray(out, np.uint32)
    if mods is not None:
        result = mods(wave, result)
    return int(result[0]), flag


def _run(unit: FpLaneUnit, vectors: list[_Vector],
         scramble: bool = False) -> list[tuple[int, int, int]]:
    """Drive each vector with the lane's handshake; (result, flag, cycles) of each. With
    ``scramble`` the inputs are replaced by the next vector's (or random bits) right after
    ``start``: the unit latched them, the result must not change."""
    got = []
    rng = random.Random(99)

    def apply(ctx, v):
        ctx.set(unit.op, fp_member(v.op))
        for i, s in enumerate((unit.src0, unit.src1, unit.src2)):
            ctx.set(s, v.srcs[i])
        ctx.set(unit.abs, v.abs)
        ctx.set(unit.neg, v.neg)
        ctx.set(unit.omod, v.omod)
        ctx.set(unit.clamp, v.clamp)
        ctx.set(unit.cin, v.cin)
        ctx.set(unit.flush_in, not v.mode >> 4 & 1)
        ctx.set(unit.flush_out, not v.mode >> 5 & 1)
        ctx.set(unit.dx10_clamp, v.mode >> 8 & 1)
        ctx.set(unit.ieee, v.mode >> 9 & 1)

    async def bench(ctx):
        for k, v in enumerate(vectors):
            apply(ctx, v)
            ctx.set(unit.start, 1)
            assert not ctx.get(unit.done), "done in the cycle of start"
            await ctx.tick()
            ctx.set(unit.start, 0)
            cycles = 1
            if scramble:
                apply(ctx, vectors[(k + 1) % len(vectors)])
            while not ctx.get(unit.done):
                await ctx.tick()
                cycles += 1
                if scramble:
                    for port in (unit.src0, unit.src1, unit.src2):
                        ctx.set(port, rng.getrandbits(32))
                    ctx.set(unit.neg, rng.getrandbits(3))
                assert cycles <= unit.latency, f"{v.op}: no done within {unit.latency} cycles"
            got.append((ctx.get(unit.result), ctx.get(unit.flag), cycles))

    simulate(unit, bench, clock=1e-6)
    return got


def _check(vectors, got) -> None:
    bad = []
    for v, (result, flag, _) in zip(vectors, got, strict=True):
        want = _expected(v)
        if (result, flag) != want:
            bad.append(f"{v.op} srcs={[hex(s) for s in v.srcs]} abs={v.abs:03b} "
                       f"neg={v.neg:03b} omod={v.omod} clamp={v.clamp} mode={v.mode:#x} "
                       f"cin={v.cin}: got {result:#010x}/{flag}, want {want[0]:#010x}/{want[1]}")
    assert not bad, f"{len(bad)} of {len(vectors)} differ:\n" + "\n".join(bad[:10])


def test_lane_unit_matches_emulator_with_modifiers():
    vectors = _vectors(1, 6 * len(OPS))
    unit = FpLaneUnit(ops=OPS)
    got = _run(unit, vectors)
    _check(vectors, got)
    # operations of different sub-units ran back to back with their own latencies
    assert len({c for _, _, c in got}) > 1


def test_lane_unit_latches_its_inputs():
    """The core may change every input after ``start``: the unit works on what it latched."""
    vectors = _vectors(3, 3 * len(OPS))
    _check(vectors, _run(FpLaneUnit(ops=OPS), vectors, scramble=True))


@pytest.mark.slow
def test_lane_unit_matches_emulator_with_modifiers_long():
    vectors = _vectors(2, 60 * len(OPS))
    _check(vectors, _run(FpLaneUnit(ops=OPS), vectors))


def test_lane_unit_builds_only_what_it_is_asked():
    assert set(FpLaneUnit(ops={"v_add_f32"}).units) == {"arith"}
    assert set(FpLaneUnit(ops={"v_cmp_lt_f32", "v_rcp_f32"}).units) == {"cmp", "trans"}
    assert set(FpLaneUnit(ops=FP_BUILT_OPS).units) == {"arith", "fma", "cmp", "cvt", "trans"}


@pytest.mark.parametrize("ops, message", [
    ("v_add_f32", "string"), ((), "at least one"), (("v_add_i32",), "no 'v_add_i32'")])
def test_lane_unit_rejects_bad_ops(ops, message):
    with pytest.raises(ValueError, match=message):
        FpLaneUnit(ops=ops)


def test_every_fp_op_is_built_or_listed():
    """What the FP unit lacks is exactly what the RTL decode leaves out (it traps)."""
    from gpgpu_hdl.cu.decode import SUPPORTED_MNEMONICS
    assert set(FP_OPS) & SUPPORTED_MNEMONICS == FP_BUILT_OPS
