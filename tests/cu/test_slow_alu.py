# amaranth: UnusedElaboratable=no
"""The slow vector unit's pipelined integer lane (:mod:`gpgpu_hdl.cu.slow_alu`) against the
golden model: every :data:`~gpgpu_hdl.cu.valu.VALU_INT_OPS` instruction with the vector sets
of ``tests/cu/valu_cases`` (all of them for the slow instructions, which are new logic here;
a sample for the fast lane's, whose pipeline ``test_fast_alu`` tests in full: here the
operand exchange and the pairs' words), corners and random operands with junk where the
instruction must not look, shuffled into one stream of an operation a cycle (a pair's two in
turn); each result must come out ``LATENCY`` cycles after its operands and equal
:data:`~gpgpu_hdl.emu.valu_ops.VALU_OPS`.
"""

from __future__ import annotations

import random
import warnings

import pytest
from amaranth.back import verilog
from amaranth.hdl import Cat
from amaranth.sim import Simulator

from gpgpu_hdl.cu.fast_alu import SLOW_OPS
from gpgpu_hdl.cu.slow_alu import LATENCY, SlowLaneAlu
from gpgpu_hdl.cu.valu import VALU_INT_OPS, ValuOp
from tests.bits import M64
from tests.cu.valu_cases import cases_for, quick_cases_for


def run_stream(alu: SlowLaneAlu, ops: list) -> list:
    """Issue ``ops`` ((mnemonic, case) pairs) one operation per cycle; the (result, flag) of
    each, ``LATENCY`` cycles after its operations (a pair's results ORed, its second's flag)."""
    inputs = Cat(alu.src0, alu.src1, alu.src2, alu.cin, alu.lane)
    outputs = Cat(alu.result, alu.flag)
    got = [None] * len(ops)

    async def testbench(ctx):
        due = {}            # cycle -> (index, last operation of the instruction)
        cycle = 0
        for index, (name, case) in enumerate(ops):
            v = case.vector
            ctx.set(alu.op, ValuOp[name.removeprefix("v_").upper()])
            ctx.set(inputs, v.src0 | v.src1 << 64 | v.src2 << 128 | v.cin << 192
                    | v.lane << 193)
            halves = 2 if ctx.get(alu.pair) else 1
            for half in range(halves):
                ctx.set(alu.half, half)
                due[cycle + LATENCY] = (index, half == halves - 1)
                await ctx.tick()
                cycle += 1
                collect(ctx, due, cycle)
        for _ in range(LATENCY):
            await ctx.tick()
            cycle += 1
            collect(ctx, due, cycle)

    def collect(ctx, due, cycle):
        if cycle in due:
            index, last = due.pop(cycle)
            out = ctx.get(outputs)
            result, flag = out & M64, out >> 64
            if got[index] is not None:
                result |= got[index][0]
            got[index] = (result, flag if last else None)

    sim = Simulator(alu)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return got


@pytest.fixture(scope="module")
def shuffled_results():
    ops = [(name, case) for name in VALU_INT_OPS
           for case in (cases_for(name) if name in SLOW_OPS else quick_cases_for(name))]
    random.Random(21).shuffle(ops)
    return ops, run_stream(SlowLaneAlu(), ops)


@pytest.mark.parametrize("name", VALU_INT_OPS)
def test_op_matches_golden_in_a_full_pipeline(name, shuffled_results):
    ops, got = shuffled_results
    mine = [(case, g) for (n, case), g in zip(ops, got, strict=True) if n == name]
    assert len(mine) > 0
    failures = [(c.vector.describe(), f"got=({g[0]:#x}, {g[1]})",
                 f"want=({c.want[0]:#x}, {c.want[1]})") for c, g in mine if g != c.want]
    assert not failures, f"{len(failures)}/{len(mine)} wrong, e.g. {failures[:5]}"


def test_unbuilt_ops_give_zero():
    """Built with a few instructions, the others give result and flag 0."""
    alu = SlowLaneAlu(ops=("v_bfi_b32", "v_add_i32"))
    ops = [(n, c) for n in ("v_bfi_b32", "v_add_i32", "v_sad_u32", "v_sub_i32",
                            "v_cmp_lt_i64", "v_med3_i32") for c in quick_cases_for(n)]
    got = run_stream(alu, ops)
    for (name, case), g in zip(ops, got, strict=True):
        want = case.want if name in alu.ops else (0, 0)
        assert g == want, (name, case.vector.describe(), g, want)


def test_refuses_bad_parameters():
    with pytest.raises(ValueError, match="ops must be VALU_INT_OPS mnemonics, not v_add_f32"):
        SlowLaneAlu(ops=["v_add_f32"])
    with pytest.raises(ValueError, match="ops must be an iterable"):
        SlowLaneAlu(ops="v_bfi_b32")
    with pytest.raises(ValueError, match="dsp must be one of"):
        SlowLaneAlu(dsp="xilinx")


@pytest.mark.parametrize("dsp", ["generic", "ecp5"])
def test_converts_to_verilog_without_warnings(dsp):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        verilog.convert(SlowLaneAlu(dsp=dsp))
