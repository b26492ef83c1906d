# amaranth: UnusedElaboratable=no
"""The pipelined 18x18 multiplier (:mod:`gpgpu_hdl.cu.dsp`): the generic style against Python
products, one a cycle, two cycles late; the ECP5 style is the MULT18X18D Yosys maps a signed
multiply to, with its input and output registers on."""

from __future__ import annotations

import random
import re

import pytest
from amaranth.back import verilog

from gpgpu_hdl.cu.dsp import DSP_STYLES, LATENCY, Mul18
from tests.simulation import simulate

EDGES = (0, 1, -1, 2, -2, (1 << 17) - 1, -(1 << 17), (1 << 16), -(1 << 16) + 1)


def test_generic_products_one_a_cycle_two_cycles_late():
    dut = Mul18()
    rng = random.Random(18)
    pairs = [(a, b) for a in EDGES for b in EDGES]
    pairs += [(rng.randrange(-(1 << 17), 1 << 17), rng.randrange(-(1 << 17), 1 << 17))
              for _ in range(300)]
    got = []

    async def bench(ctx):
        for cycle in range(len(pairs) + LATENCY):
            if cycle < len(pairs):
                ctx.set(dut.a, pairs[cycle][0])
                ctx.set(dut.b, pairs[cycle][1])
            await ctx.tick()
            if cycle + 1 >= LATENCY:
                got.append(ctx.get(dut.product))

    simulate(dut, bench, clock=1e-8)
    assert got[:len(pairs)] == [a * b for a, b in pairs]


def test_ecp5_instance_has_its_registers_on_and_signed_operands():
    text = verilog.convert(Mul18(style="ecp5"), name="mul", emit_src=False)
    cell = re.search(r"MULT18X18D #\((.*?)\) \w+ \((.*?)\);", text, re.S)
    assert cell, text
    params, ports = cell.groups()
    for reg in ("REG_INPUTA_CLK", "REG_INPUTB_CLK", "REG_OUTPUT_CLK"):
        assert re.search(rf"\.{reg}\(\"CLK0\"\)", params), reg
    for pin, value in (("SIGNEDA", "1'h1"), ("SIGNEDB", "1'h1"), ("CE0", "1'h1"),
                       ("RST0", "1'h0"), ("SOURCEA", "1'h0"), ("SOURCEB", "1'h0"),
                       ("C0", "1'h0"), ("C17", "1'h0")):
        assert re.search(rf"\.{pin}\({re.escape(value)}\)", ports), pin
    assert re.search(r"\.CLK0\(clk\)", ports)
    for i in (0, 17):
        assert re.search(rf"\.A{i}\(a\[{i}\]\)", ports) and re.search(rf"\.B{i}\(b\[{i}\]\)",
                                                                        ports)
    assert re.search(r"\.P35\(", ports)


def test_refuses_unknown_styles():
    assert DSP_STYLES == ("generic", "ecp5")
    with pytest.raises(ValueError, match=r"dsp style must be one of 'generic', 'ecp5', not 'x'"):
        Mul18(style="x")
