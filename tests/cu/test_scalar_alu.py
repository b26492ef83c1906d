# amaranth: UnusedElaboratable=no
"""The pipelined scalar ALU (:mod:`gpgpu_hdl.cu.scalar_alu`) against the golden model.

Every :data:`SALU_ALU_OPS` operation with the full vector set of the combinational ALU's tests
(:mod:`tests.cu.salu_cases`: every shift amount and bit index, every bit-field offset and
width, SIMM16 corners, corners and random operands with junk where the operation must not
look, SCC 0 and 1 for the operations that read it), all shuffled into one stream that issues
a new operation every cycle, so that each stage holds a different operation; each output must
come exactly ``LATENCY`` cycles after its operands and equal
:func:`tests.cu.salu_cases.reference` (the golden model's :data:`~gpgpu_hdl.emu.salu.SALU_OPS`
and :data:`~gpgpu_hdl.emu.salu.SAVEEXEC_OPS`).
"""

from __future__ import annotations

import collections
import random
import warnings

import pytest
from amaranth.back import verilog
from amaranth.hdl import Cat

from gpgpu_hdl.cu.salu import SALU_ALU_OPS, SALU_CORE_OPS, SaluOp
from gpgpu_hdl.cu.scalar_alu import (
    LATENCY,
    PipelinedScalarAlu,
    ScalarControl,
    ScalarDecode,
    scalar_control,
)
from tests.bits import M64
from tests.cu.salu_cases import N_RANDOM, Outputs, all_vectors, reference
from tests.simulation import Vector, simulate

CONTROLS = {name: ScalarControl.const(scalar_control(name)).as_value().value
            for name in SALU_ALU_OPS}


def run_stream(vecs: list[Vector], gaps: int = 0, seed: int = 1,
               latency: int = LATENCY) -> tuple[list, list[int]]:
    """Issue ``vecs`` one per cycle (a bubble of junk control and operands after every
    ``gaps`` vectors if ``gaps``); return the outputs seen ``latency`` cycles after each and
    the cycle of each issue."""
    alu = PipelinedScalarAlu()
    inputs = Cat(alu.control.as_value(), alu.a, alu.b, alu.scc_in, alu.exec_in)
    width = ScalarControl.size
    outputs = Cat(alu.result, alu.write_d, alu.scc_out, alu.write_scc, alu.exec_out,
                  alu.write_exec)
    got, issued = [], []
    junk = random.Random(seed)

    async def testbench(ctx):
        due = collections.deque()       # cycles at which an issued vector's outputs are out
        queue = collections.deque(vecs)
        cycle = 0
        while queue or due:
            if queue and not (gaps and cycle % (gaps + 1) == gaps):
                v = queue.popleft()
                ctx.set(inputs, CONTROLS[v.name] | v.src0 << width | v.src1 << width + 64
                        | v.cin << width + 128 | v.exec_mask << width + 129)
                issued.append(cycle)
                due.append(cycle + latency)
            else:       # a bubble: any control word and operands; nobody reads the result
                ctx.set(inputs, junk.getrandbits(width + 193))
            await ctx.tick()
            cycle += 1
            if due and due[0] == cycle:
                due.popleft()
                raw = ctx.get(outputs)
                got.append(Outputs(raw & M64, raw >> 64 & 1, raw >> 65 & 1, raw >> 66 & 1,
                                   raw >> 67 & M64, raw >> 131 & 1))

    simulate(alu, testbench, clock=1e-8)
    return got, issued


def normalize(out: Outputs) -> Outputs:
    """The outputs that carry meaning: the result only when written, EXEC only when set."""
    if not out.write_d:
        out = out._replace(result=None)
    if not out.write_exec:
        out = out._replace(exec_out=None)
    return out


def mismatches(vecs: list[Vector], got: list[Outputs]) -> list[tuple]:
    assert len(got) == len(vecs)
    return [(v.describe(), g, w) for v, g, w in
            ((v, normalize(g), normalize(reference(v))) for v, g in zip(vecs, got, strict=True))
            if g != w]


@pytest.fixture(scope="module")
def shuffled_results():
    vecs = all_vectors(SALU_ALU_OPS, "pipelined")
    random.Random(20).shuffle(vecs)
    got, issued = run_stream(vecs)
    return vecs, got, issued


@pytest.mark.parametrize("name", SALU_ALU_OPS)
def test_op_matches_golden_in_a_full_pipeline(name, shuffled_results):
    vecs, got, _ = shuffled_results
    mine = [(v, g) for v, g in zip(vecs, got, strict=True) if v.name == name]
    assert len(mine) >= N_RANDOM
    failures = mismatches([v for v, _ in mine], [g for _, g in mine])
    assert not failures, f"{len(failures)}/{len(mine)} wrong, e.g. {failures[:3]}"


def test_one_operation_per_cycle(shuffled_results):
    vecs, got, issued = shuffled_results
    assert issued == list(range(len(vecs)))     # never stalls
    assert len(got) == len(vecs)                # and every result on its cycle


def test_bubbles_between_operations_change_nothing():
    rng = random.Random(3)
    vecs = rng.sample(all_vectors(SALU_ALU_OPS, "bubbles"), 1500)
    got, issued = run_stream(vecs, gaps=2, seed=7)
    assert issued == [i + i // 2 for i in range(len(vecs))]    # every third cycle a bubble
    failures = mismatches(vecs, got)
    assert not failures, failures[:3]


@pytest.mark.parametrize("latency", [LATENCY - 1, LATENCY + 1])
def test_outputs_are_not_there_a_cycle_early_or_late(latency):
    # read a cycle off, the outputs of a stream belong to its neighbours
    vecs = all_vectors(["s_add_u32", "s_lshl_b64", "s_mul_i32", "s_bcnt1_i32_b64"], "off")
    vecs = random.Random(4).sample(vecs, 60)
    got, _ = run_stream(vecs, latency=latency)
    assert len(mismatches(vecs, got)) > 50
    assert PipelinedScalarAlu().latency == LATENCY


def test_decode_is_the_control_rom():
    dec = ScalarDecode()
    got = {}

    async def testbench(ctx):
        for op in SaluOp:
            ctx.set(dec.op, op)
            got[op] = ctx.get(dec.control.as_value())

    simulate(dec, testbench)
    for name in SALU_ALU_OPS:
        assert got[SaluOp[name.removeprefix("s_").upper()]] == CONTROLS[name], name


def test_every_op_has_one_value_source():
    sources = ("v_bitwise", "v_arith", "v_shl", "v_shr", "v_bfm", "v_brev", "v_bitset",
               "v_sext", "v_wqm", "v_quadmask", "r_mul", "r_count", "r_find")
    for name in SALU_ALU_OPS:
        c = scalar_control(name)
        used = [s for s in sources if c.get(s)]
        writes = c["write_d"] or c["cond_d"]
        assert len(used) == (1 if writes else 0), (name, used)


@pytest.mark.parametrize("name", ["s_getpc_b64", "v_add_i32", "s_frobnicate"])
def test_control_of_a_non_alu_op_is_refused(name):
    assert name not in SALU_ALU_OPS
    with pytest.raises(ValueError, match="is not a scalar ALU operation"):
        scalar_control(name)
    assert "s_getpc_b64" in SALU_CORE_OPS


@pytest.mark.parametrize("dsp", ["Ecp5", "", None, "xilinx"])
def test_rejects_bad_dsp_style(dsp):
    with pytest.raises(ValueError, match=r"dsp must be one of 'generic', 'ecp5', not"):
        PipelinedScalarAlu(dsp=dsp)


def test_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        PipelinedScalarAlu("ecp5")


@pytest.mark.parametrize("dsp", ["generic", "ecp5"])
def test_converts_to_verilog_without_warnings(dsp):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = verilog.convert(PipelinedScalarAlu(dsp=dsp), name="salu", emit_src=False)
        again = verilog.convert(PipelinedScalarAlu(dsp=dsp), name="salu", emit_src=False)
    assert "module salu" in text and text == again
    assert ("MULT18X18D" in text) == (dsp == "ecp5")
