# amaranth: UnusedElaboratable=no
"""The scalar ALU (gpgpu_hdl.cu.salu) against the golden model.

The reference is :data:`SALU_OPS` / :data:`SAVEEXEC_OPS` with the operands bound as the golden
model's program compiler binds them (:func:`tests.cu.salu_cases.reference`, shared with the
pipelined ALU's tests); that binding is itself checked here by running the compiled
instructions of :mod:`gpgpu_hdl.emu.program` on a wave. The RTL is then simulated with every
vector of every operation in one simulation run.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter

import pytest
from amaranth.back import verilog
from amaranth.hdl import Cat, Fragment, Shape, Signal
from amaranth.lib import enum

from gpgpu_hdl.cu.multiplier import MulUnit
from gpgpu_hdl.cu.salu import SALU_ALU_OPS, SALU_CORE_OPS, SaluOp, ScalarAlu
from gpgpu_hdl.cu.shifter import SHIFTER_STYLES, BarrelShifter, MultiplierShifter
from gpgpu_hdl.emu.program import compile_instruction
from gpgpu_hdl.emu.salu import SALU_OPS, SAVEEXEC_OPS
from gpgpu_hdl.emu.wave import Wave
from gpgpu_hdl.isa.decoder import decode_one
from gpgpu_hdl.isa.formats import ENCODING_OF, Format
from gpgpu_hdl.isa.table import TABLE, Unit
from tests.bits import M32, M64
from tests.cu.salu_cases import M16, N_RANDOM, Outputs, all_vectors, reference, vectors
from tests.simulation import Vector, simulate

SHIFT_OPS = tuple(m for m in SALU_ALU_OPS if m.split("_")[1] in ("lshl", "lshr", "ashr", "bfe"))


# --- the reference against the golden model's program compiler ------------------------------

_A_REG, _B_REG, _D_REG, _EXEC = 2, 4, 8, 126


class _Registers(list):
    """Scalar register file that records which registers are written."""

    def __init__(self, values):
        super().__init__(values)
        self.written: set[int] = set()

    def __setitem__(self, index, value):
        self.written.add(index)
        super().__setitem__(index, value)


class _TracingWave(Wave):
    """A wave that records whether SCC is written."""

    @property
    def scc(self):
        return self._scc

    @scc.setter
    def scc(self, value):
        self._scc = value
        self.scc_written = True


def _encode(name: str, simm16: int) -> bytes:
    info = TABLE.by_mnemonic(name)
    fields = {"op": info.opcode}
    if info.format is Format.SOPK:
        fields.update(sdst=_D_REG, simm16=simm16)
    else:
        if info.dst is not None:
            fields["sdst"] = _D_REG
        if info.src0 is not None:
            fields["ssrc0"] = _A_REG
        if info.src1 is not None:
            fields["ssrc1"] = _B_REG
    return ENCODING_OF[info.format].pack(**fields).to_bytes(4, "little")


def run_program_step(v: Vector) -> Outputs:
    """Execute the instruction of ``v`` with the emulator's compiled step on a wave whose
    registers hold the port values the way :class:`ScalarAlu` documents it."""
    info = TABLE.by_mnemonic(v.name)
    wave = _TracingWave(None, None, (0, 0, 0), 0)
    regs = [0] * 128
    regs[_A_REG], regs[_A_REG + 1] = v.src0 & M32, v.src0 >> 32
    regs[_B_REG], regs[_B_REG + 1] = v.src1 & M32, v.src1 >> 32
    regs[_EXEC], regs[_EXEC + 1] = v.exec_mask & M32, v.exec_mask >> 32
    if info.format is Format.SOPK:
        regs[_D_REG] = v.src0 & M32            # the SDST register is the first operand
    elif v.name.startswith("s_bitset"):
        regs[_D_REG], regs[_D_REG + 1] = v.src1 & M32, v.src1 >> 32   # read-modify-write
    wave.s = _Registers(regs)
    wave.scc = v.cin
    wave.scc_written = False
    step = compile_instruction(decode_one(_encode(v.name, v.src1 & M16)), 0)
    assert step(wave) is None
    written = wave.s.written
    write_d = int(_D_REG in written)
    result = None
    if write_d:
        result = wave.s[_D_REG]
        if info.dst.bits == 64:
            result |= wave.s[_D_REG + 1] << 32
    return Outputs(result, write_d, wave.scc, int(wave.scc_written), wave.exec,
                   int(_EXEC in written))


def test_reference_binding_matches_program_compiler():
    failures = []
    checked = Counter()
    for v in all_vectors(SALU_ALU_OPS, "binding"):
        want, got = run_program_step(v), reference(v)
        checked[v.name] += 1
        if got != want:
            failures.append((v, got, want))
    assert set(checked) == set(SALU_ALU_OPS)
    assert not failures, failures[:5]


# --- the op list and the enum ---------------------------------------------------------------

def test_alu_ops_are_the_golden_salu_data_ops():
    salu = [i.mnemonic for i in TABLE if i.unit is Unit.SALU]
    assert list(SALU_ALU_OPS) == [m for m in salu if m in SALU_OPS or m in SAVEEXEC_OPS]
    assert set(SALU_OPS) | set(SAVEEXEC_OPS) == set(SALU_ALU_OPS)
    assert set(SALU_CORE_OPS) == set(salu) - set(SALU_ALU_OPS)
    assert {"s_getpc_b64", "s_setpc_b64", "s_swappc_b64", "s_movrels_b32", "s_movreld_b64",
            "s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32", "s_cbranch_join",
            "s_cbranch_g_fork", "s_cbranch_i_fork", "s_rfe_b64",
            "s_setvskip"} <= set(SALU_CORE_OPS)
    assert {TABLE.by_mnemonic(m).format for m in SALU_ALU_OPS} == {
        Format.SOP1, Format.SOP2, Format.SOPC, Format.SOPK}


def test_salu_op_enum():
    assert isinstance(SaluOp, enum.EnumType)
    assert Shape.cast(SaluOp) == Shape(7, signed=False)
    assert [(op.name, op.value) for op in SaluOp] == [
        (m.removeprefix("s_").upper(), i) for i, m in enumerate(SALU_ALU_OPS)]
    sig = Signal(SaluOp)
    assert isinstance(sig, enum.EnumView)
    for op in SaluOp:
        assert op.name in SaluOp.__doc__


# --- simulation -------------------------------------------------------------------------------

def run(dut: ScalarAlu, vecs: list[Vector]) -> list[Outputs]:
    """Apply every vector in one simulation run; return the outputs in order."""
    inputs = Cat(dut.op.as_value(), dut.a, dut.b, dut.scc_in, dut.exec_in)
    outputs = Cat(dut.result, dut.write_d, dut.scc_out, dut.write_scc, dut.exec_out,
                  dut.write_exec)
    got = []

    async def testbench(ctx):
        for v in vecs:
            # one packed assignment per vector: the design settles once
            ctx.set(inputs, SaluOp[v.name.removeprefix("s_").upper()].value | v.src0 << 7
                    | v.src1 << 71 | v.cin << 135 | v.exec_mask << 136)
            raw = ctx.get(outputs)
            got.append(Outputs(raw & M64, raw >> 64 & 1, raw >> 65 & 1, raw >> 66 & 1,
                               raw >> 67 & M64, raw >> 131 & 1))

    simulate(dut, testbench)
    return got


def compare(dut: ScalarAlu, vecs: list[Vector]) -> list[tuple]:
    """Mismatches between the simulated ALU and the reference (result compared only when the
    destination is written; every other output always)."""
    failures = []
    for v, got in zip(vecs, run(dut, vecs), strict=True):
        # an op the ALU was not built for is a no-op
        want = (reference(v) if v.name in dut.ops
                else Outputs(None, 0, v.cin, 0, v.exec_mask, 0))
        if want.result is None:
            got = got._replace(result=None)
        if got != want:
            failures.append((v.describe(), got, want))
    return failures


def test_full_alu_every_op():
    dut = ScalarAlu()
    assert dut.ops == SALU_ALU_OPS and dut.shifter == "barrel" and dut.latency == 0
    vecs = all_vectors(SALU_ALU_OPS, "full")
    counts = Counter(v.name for v in vecs)
    assert set(counts) == set(SALU_ALU_OPS)
    assert min(counts.values()) >= N_RANDOM + 64
    failures = compare(dut, vecs)
    assert not failures, (sorted({f[0] for f in failures}), failures[:5])


def test_full_alu_multiplier_shifter():
    dut = ScalarAlu(shifter="multiplier")
    assert type(submodules(dut)["shifter"]) is MultiplierShifter
    failures = compare(dut, all_vectors(SHIFT_OPS, "multiplier"))
    assert not failures, failures[:5]


# --- subsets ------------------------------------------------------------------------------------

def submodules(dut: ScalarAlu) -> dict[str, object]:
    return {name: sub.origins[0] for sub, name, _ in Fragment.get(dut, None).subfragments}


SUBSETS = [
    pytest.param(["s_add_u32", "s_cmp_lt_i32", "s_and_b64", "s_cselect_b32"], "barrel", {},
                 id="no-mul-no-shift"),
    pytest.param(["s_mul_i32", "s_mulk_i32"], "multiplier", {"mul": (MulUnit, None)},
                 id="mul-only"),
    pytest.param(["s_lshl_b32", "s_ashr_i32", "s_bfe_i32", "s_sub_i32"], "multiplier",
                 {"shifter": (MultiplierShifter, 32)}, id="shift32-multiplier"),
    pytest.param(["s_lshr_b32", "s_bfe_u32"], "barrel", {"shifter": (BarrelShifter, 32)},
                 id="shift32-barrel"),
    pytest.param(["s_bfe_i64", "s_ashr_i32", "s_mul_i32"], "barrel",
                 {"shifter": (BarrelShifter, 64), "mul": (MulUnit, None)}, id="bfe64"),
    pytest.param(["s_and_saveexec_b64", "s_xnor_saveexec_b64", "s_movk_i32"], "barrel", {},
                 id="saveexec"),
    pytest.param([], "barrel", {}, id="empty"),
]


@pytest.mark.parametrize(("ops", "style", "units"), SUBSETS)
def test_subset(ops, style, units):
    dut = ScalarAlu(ops=ops, shifter=style)
    assert dut.ops == tuple(m for m in SALU_ALU_OPS if m in ops)
    subs = submodules(dut)
    assert set(subs) == set(units)
    for name, (cls, width) in units.items():
        assert type(subs[name]) is cls
        if width is not None:
            assert subs[name].width == width
    # the built ops match the reference; a sample of the others must be no-ops
    rng = random.Random(str(ops))
    others = [m for m in SALU_ALU_OPS if m not in ops]
    vecs = all_vectors(ops, str(ops)) + [v for m in rng.sample(others, 12)
                                         for v in vectors(m, rng)[:8]]
    failures = compare(dut, vecs)
    assert not failures, failures[:5]


# --- parameters ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("ops", "match"), [
    ("s_add_u32", r"ops must be an iterable of mnemonics, not the string 's_add_u32'"),
    (5, r"ops must be an iterable of mnemonics, not 5"),
    (["s_add_u32", "s_getpc_b64"], r"s_getpc_b64 is not a scalar ALU operation \(the core's"),
    (["s_setvskip"], r"s_setvskip is not a scalar ALU operation \(the core's"),
    (["s_frobnicate"], r"'s_frobnicate' is not a scalar ALU operation; it must be one of"),
    (["v_add_i32"], r"'v_add_i32' is not a scalar ALU operation"),
    ([SaluOp.ADD_U32], r"is not a scalar ALU operation"),
])
def test_rejects_bad_ops(ops, match):
    with pytest.raises(ValueError, match=match):
        ScalarAlu(ops=ops)


@pytest.mark.parametrize("style", ["Barrel", "dsp", "", None])
def test_rejects_bad_shifter_style(style):
    with pytest.raises(ValueError, match=r"shifter style must be one of 'barrel', 'multiplier'"):
        ScalarAlu(shifter=style)


def test_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        ScalarAlu(SALU_ALU_OPS)


# --- conversion -----------------------------------------------------------------------------------

@pytest.mark.parametrize("style", SHIFTER_STYLES)
def test_converts_to_verilog_without_warnings(style):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = verilog.convert(ScalarAlu(shifter=style), name="salu", emit_src=False)
        again = verilog.convert(ScalarAlu(shifter=style), name="salu", emit_src=False)
    assert "module salu" in text and "module \\salu.shifter" in text
    assert text == again
