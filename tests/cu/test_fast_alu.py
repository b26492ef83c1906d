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
from tests.bits import M32
from tests.cu.valu_cases import cases_for, quick_cases_for

def slots_of(name: str) -> int:
    """Operations an instruction takes in the lane: two with 64-bit operands or result."""
    control = fast_control(name)
    return 2 if control.get("shift64") or control.get("cmp_wide") else 1


def operands(name: str, vector, half: int) -> int:
    """The lane's inputs for one operation of an instruction, as the vector unit gives them:
    S0 and S1 exchanged for ``swap``; a pair's words (a right shift's value high word first,
    a shift's amount in both)."""
    control = fast_control(name)
    x, y = (vector.src1, vector.src0) if control.get("swap") else (vector.src0, vector.src1)
    if slots_of(name) == 2:
        word = half ^ control.get("shift_right", 0)
        x = x >> 32 * word
        y = y if control.get("shift64") else y >> 32 * half
    return (x & M32) | (y & M32) << 32 | (vector.src2 & M32) << 64 | vector.cin << 96


def run_stream(ops: list, gaps: int = 0, copy: int = 0) -> tuple[list, list[int]]:
    """Issue ``ops`` ((mnemonic, case) pairs) one operation per cycle, a pair's two in turn
    (with a bubble, a no-op with junk operands, every ``gaps`` operations if ``gaps``: also
    between a pair's two); return the (result, flag) seen ``LATENCY`` cycles after each (a
    pair's result words put together, the flag of its second) and the cycle of each issue."""
    alu = FastLaneAlu(copy=copy)
    inputs = Cat(alu.src0, alu.src1, alu.src2, alu.cin)
    outputs = Cat(alu.result, alu.flag)
    controls = {name: FastControl.const(fast_control(name)).as_value().value
                for name in FAST_OPS}
    got, issued = [], []
    junk = random.Random(1)
    # the operations in order: (name, case, half, the instruction's collected words)
    schedule = []
    for name, case in ops:
        words: list = []
        schedule += [(name, case, half, words) for half in range(slots_of(name))]

    async def testbench(ctx):
        pending = []        # (cycle the result is due, which word, the instruction's words)
        cycle = 0
        queue = collections.deque(schedule)
        while queue or pending:
            if queue and not (gaps and cycle % (gaps + 1) == gaps):
                name, case, half, words = queue.popleft()
                if half == 0:
                    issued.append(cycle)
                ctx.set(alu.control.as_value(), controls[name])
                ctx.set(inputs, operands(name, case.vector, half))
                ctx.set(alu.half, half)
                word = 0
                if slots_of(name) == 2:
                    word = half ^ fast_control(name).get("shift_right", 0)
                pending.append((cycle + LATENCY, word, words, slots_of(name)))
            else:   # a bubble: a no-op with junk operands, whose result nobody reads
                ctx.set(alu.control.as_value(), 0)
                ctx.set(inputs, junk.getrandbits(97))
                ctx.set(alu.half, junk.getrandbits(1))
            await ctx.tick()
            cycle += 1
            while pending and pending[0][0] == cycle:
                _, word, words, count = pending.pop(0)
                out = ctx.get(outputs)
                words.append((word, out & M32, out >> 32))
                if len(words) == count:
                    got.append((sum(w << 32 * n for n, w, _ in words), words[-1][2]))

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
    # never stalls: a new operation every cycle (an instruction with 64-bit words is two)
    slots = [slots_of(name) for name, _ in ops]
    assert issued == [sum(slots[:i]) for i in range(len(ops))]
    assert len(got) == len(ops)                   # and every result on its cycle


@pytest.mark.parametrize("copy", [0, 0x2A5A5A5A5])
def test_bubbles_between_operations_change_nothing(copy):
    # nor does the power-on value of the control registers (a lane's copy number)
    ops = [(name, case) for name in FAST_OPS for case in quick_cases_for(name)[:8]]
    random.Random(3).shuffle(ops)
    got, issued = run_stream(ops, gaps=2, copy=copy)
    want, cycle = [], 0             # every third cycle is a bubble, between a pair's two too
    for name, _ in ops:
        for half in range(slots_of(name)):
            while cycle % 3 == 2:
                cycle += 1
            if half == 0:
                want.append(cycle)
            cycle += 1
    assert issued == want
    assert any(slots_of(n) == 2 and (i + 1) % 3 == 2 for n, i in zip(
        (n for n, _ in ops), want, strict=True))      # some pair had a bubble inside
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
