# amaranth: UnusedElaboratable=no
"""The pipelined fast lane of the vector ALU (:mod:`gpgpu_hdl.cu.fast_alu`) against the golden
model: every :data:`FAST_OPS` instruction with its full vector set (every shift amount, every
bit-field offset and width, corners and random operands with junk where it must not look),
all of them shuffled into one stream that issues a new operation every cycle, so that each
stage holds a different instruction; each result must come out exactly ``LATENCY`` cycles
after its operands and equal :data:`~gpgpu_hdl.emu.valu_ops.VALU_OPS`.
"""

from __future__ import annotations

import collections
import random
import warnings

import pytest
from amaranth.back import verilog
from amaranth.hdl import Cat
from amaranth.sim import Simulator

from gpgpu_hdl.cu.fast_alu import (
    FAST_OPS,
    LATENCY,
    SLOW_OPS,
    FastControl,
    FastDecode,
    FastLaneAlu,
    fast_control,
)
from gpgpu_hdl.cu.valu import VALU_INT_OPS, ValuOp
from gpgpu_hdl.emu.workload import SLOW_CANDIDATES, datapath_group
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, M64
from tests.cu.valu_cases import cases_for, quick_cases_for

def run_stream(ops: list, gaps: int = 0, copy: int = 0) -> tuple[list, list[int]]:
    """Issue ``ops`` ((mnemonic, case) pairs) one per cycle, a 64-bit shift as its two
    operations in consecutive cycles (with a bubble of junk control every ``gaps`` operations
    if ``gaps``); return the (result, flag) seen ``LATENCY`` cycles after each (a 64-bit
    shift's two words put together, its flags or-ed) and the cycle of each issue."""
    alu = FastLaneAlu(copy=copy)
    inputs = Cat(alu.src0, alu.src1, alu.src2, alu.cin)
    outputs = Cat(alu.result, alu.flag)
    controls = {name: FastControl.const(fast_control(name)).as_value().value
                for name in FAST_OPS}
    got, issued = [], []
    junk = random.Random(1)

    async def testbench(ctx):
        pending = []        # (cycle the result is due, which word of the op, the op's words)
        cycle = 0

        async def step():
            nonlocal cycle
            await ctx.tick()
            cycle += 1
            while pending and pending[0][0] == cycle:
                _, word, words, halves = pending.pop(0)
                out = ctx.get(outputs)
                words.append((word, out & M32, out >> 32))
                if len(words) == halves:
                    got.append((sum(w << 32 * n for n, w, _ in words),
                                max(f for _, _, f in words)))

        queue = collections.deque(ops)
        while queue or pending:
            if queue and not (gaps and cycle % (gaps + 1) == gaps):
                name, case = queue.popleft()
                v = case.vector
                control = fast_control(name)
                halves = 2 if control.get("shift64") else 1
                words: list = []
                issued.append(cycle)
                # the vector unit exchanges S0 and S1 for the lane when the control says so
                x, y = (v.src1, v.src0) if control.get("swap") else (v.src0, v.src1)
                for half in range(halves):
                    ctx.set(alu.control.as_value(), controls[name])
                    ctx.set(inputs, x | y << 64 | (v.src2 & M32) << 128 | v.cin << 160)
                    ctx.set(alu.half, half)
                    word = half ^ control.get("shift_right", 0) if halves == 2 else 0
                    pending.append((cycle + LATENCY, word, words, halves))
                    if half + 1 < halves:
                        await step()
            else:   # a bubble: any control word and operands, whose result nobody reads
                ctx.set(alu.control.as_value(), junk.getrandbits(FastControl.size))
                ctx.set(inputs, junk.getrandbits(161))
                ctx.set(alu.half, junk.getrandbits(1))
            await step()

    sim = Simulator(alu)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return got, issued


def check(ops: list, got: list) -> None:
    assert len(got) == len(ops) > 0
    failures = [(c.vector.describe(), f"got=({g[0]:#x}, {g[1]})",
                 f"want=({c.want[0]:#x}, {c.want[1]})")
                for (_, c), g in zip(ops, got, strict=True) if g != c.want]
    assert not failures, f"{len(failures)}/{len(ops)} wrong, e.g. {failures[:5]}"


@pytest.fixture(scope="module")
def shuffled_results():
    ops = [(name, case) for name in FAST_OPS for case in cases_for(name)]
    random.Random(20).shuffle(ops)
    got, issued = run_stream(ops)
    return ops, got, issued


@pytest.mark.parametrize("name", FAST_OPS)
def test_op_matches_golden_in_a_full_pipeline(name, shuffled_results):
    ops, got, _ = shuffled_results
    mine = [(op, g) for op, g in zip(ops, got, strict=True) if op[0] == name]
    assert len(mine) == len(cases_for(name)) > 0
    check([op for op, _ in mine], [g for _, g in mine])


def test_one_operation_per_cycle(shuffled_results):
    ops, got, issued = shuffled_results
    # never stalls: a new operation every cycle (a 64-bit shift is two)
    slots = [2 if fast_control(name).get("shift64") else 1 for name, _ in ops]
    assert issued == [sum(slots[:i]) for i in range(len(ops))]
    assert len(got) == len(ops)                   # and every result on its cycle


@pytest.mark.parametrize("copy", [0, 0x2A5A5A5A5])
def test_bubbles_between_operations_change_nothing(copy):
    # nor does the power-on value of the control registers (a lane's copy number)
    ops = [(name, case) for name in FAST_OPS for case in quick_cases_for(name)[:8]]
    random.Random(3).shuffle(ops)
    got, issued = run_stream(ops, gaps=2, copy=copy)
    want, cycle = [], 0             # every third cycle is a bubble, unless a shift's second
    for name, _ in ops:
        while cycle % 3 == 2:
            cycle += 1
        want.append(cycle)
        cycle += 2 if fast_control(name).get("shift64") else 1
    assert issued == want and len(issued) < cycle
    check(ops, got)


def test_fast_and_slow_split_the_integer_valu():
    assert set(FAST_OPS).isdisjoint(SLOW_OPS)
    assert sorted(FAST_OPS + SLOW_OPS) == sorted(VALU_INT_OPS)
    assert list(FAST_OPS) == [n for n in VALU_INT_OPS if n in FAST_OPS]     # table order
    # the slow unit gets the rare groups docs/pipeline.md measured (PIPELINE.md's slow
    # candidates but the 64-bit shifts, 6.7 % of VALU work), the funnel shifts and the
    # bit-field insert and mask (6 of 84,214 VALU instructions in the suite)
    for name in SLOW_OPS:
        group = datapath_group(TABLE.by_mnemonic(name))
        assert (group in set(SLOW_CANDIDATES) - {"shift64"}
                or name in ("v_alignbit_b32", "v_alignbyte_b32", "v_bfi_b32", "v_bfm_b32")), (
            name, group)
    for name in FAST_OPS:
        group = datapath_group(TABLE.by_mnemonic(name))
        assert group not in set(SLOW_CANDIDATES) - {"shift64"}, (name, group)
    # and the frequent ones stay fast, the 64-bit shifts among them
    for name in ("v_add_i32", "v_addc_u32", "v_mul_lo_u32", "v_mul_hi_u32", "v_ashrrev_i32",
                 "v_lshl_b64", "v_cmp_ne_u64", "v_cndmask_b32", "v_bfe_u32", "v_mad_u32_u24"):
        assert name in FAST_OPS, name


def test_decode_is_the_control_of_each_op():
    dut = FastDecode()
    seen = {}

    async def testbench(ctx):
        for member in ValuOp:
            ctx.set(dut.op, member)
            seen[member.mnemonic] = (ctx.get(dut.fast), ctx.get(dut.control.as_value()))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    for name, (fast, control) in seen.items():
        assert fast == (name in FAST_OPS), name
        want = FastControl.const(fast_control(name)).as_value().value if fast else 0
        assert control == want, name


def test_control_words_are_distinct_where_results_differ():
    words = {}
    for name in FAST_OPS:
        words.setdefault(FastControl.const(fast_control(name)).as_value().value, []).append(name)
    shared = [names for names in words.values() if len(names) > 1]
    # only instructions that compute the same function may share a word: a compare and its
    # v_cmpx_ form (writing EXEC is the sequencer's business)
    assert shared
    for names in shared:
        assert len(names) == 2 and names[1] == names[0].replace("v_cmp_", "v_cmpx_"), names


def test_control_of_a_slow_op_is_refused():
    with pytest.raises(ValueError, match=r"'v_sad_u8' is not a fast-lane instruction"):
        fast_control("v_sad_u8")


def test_refuses_unknown_dsp_styles():
    with pytest.raises(ValueError, match=r"dsp must be one of 'generic', 'ecp5', not 'dsp48'"):
        FastLaneAlu(dsp="dsp48")


@pytest.mark.parametrize("dsp", ["generic", "ecp5"])
def test_converts_to_verilog_without_warnings(dsp):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = verilog.convert(FastLaneAlu(dsp=dsp), name="lane", emit_src=False)
    assert "module lane(" in text
    assert text.count("MULT18X18D ") == (4 if dsp == "ecp5" else 0)
    assert FastLaneAlu(dsp=dsp).latency == LATENCY
