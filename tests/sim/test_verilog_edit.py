"""The Verilog transformations (:mod:`gpgpu_hdl.sim.verilog_edit`) on the demo design's text.

No simulator: these only read and edit the Verilog that ``cocotb_tests/sim_demo`` converts to
(the builds that compile the edited text are in ``test_verilator.py``).
"""

import functools
import os
import subprocess

import pytest
from amaranth.back import rtlil
from amaranth.back import verilog as amaranth_verilog
from amaranth.hdl import Module
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out
from cocotb_tests.sim_demo.design import TOPLEVEL, demo_verilog

from gpgpu_hdl.errors import SimulationError
from gpgpu_hdl.sim.runner import verilator_env, verilator_root
from gpgpu_hdl.sim.verilog_edit import (
    add_internal_clock,
    constant_blocks_at_start,
    prepare_verilog,
    sim_verilog,
    strip_zero_memory_init,
    strip_zero_meminit,
)

DEPTH = 1 << 12


@functools.cache
def _verilog() -> str:
    return demo_verilog(depth=DEPTH)


def test_strip_zero_memory_init():
    verilog = _verilog()
    stripped = strip_zero_memory_init(verilog)
    assert "mem[0] = 32'd0;" in verilog and "mem[0] = " not in stripped
    assert len(stripped) < len(verilog) // 10
    mixed = "  initial begin\n    m[0] = 8'h00;\n    m[1] = 8'h05;\n  end\n"
    assert strip_zero_memory_init(mixed) == mixed


class _TwoMemories(wiring.Component):
    """A zero-initialised memory and one with a non-zero word, both read."""

    addr: In(4)
    y: Out(16)

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.submodules.zero = zero = memory.Memory(shape=8, depth=16, init=[])
        m.submodules.some = some = memory.Memory(shape=8, depth=16, init=[0, 0, 5])
        a, b = zero.read_port(domain="comb"), some.read_port(domain="comb")
        m.d.comb += [a.addr.eq(self.addr), b.addr.eq(self.addr), self.y.eq(a.data ^ (b.data << 8))]
        return m


def test_sim_verilog_is_amaranths_verilog_without_the_zero_inits():
    """The RTLIL edit drops exactly the all-zero init, and the Verilog Yosys then writes is
    Amaranth's own conversion with that init block removed (:func:`strip_zero_memory_init`)."""
    text = rtlil.convert(_TwoMemories(), name="top", emit_src=False)
    stripped = strip_zero_meminit(text)
    assert text.count("cell $meminit_v2") == 2 and stripped.count("cell $meminit_v2") == 1
    assert "128'" + "0" * 40 in stripped                   # the kept one: 5 in word 2
    want = strip_zero_memory_init(amaranth_verilog.convert(
        _TwoMemories(), name="top", emit_src=False, strip_internal_attrs=True))
    got = sim_verilog(_TwoMemories(), "top")
    assert got == want
    assert "zero[0] = " not in got and "some[2] = 8'h05;" in got


def test_transformation_errors():
    verilog = _verilog()
    with pytest.raises(SimulationError, match=r"no module 'other'"):
        prepare_verilog(verilog, "other")
    with pytest.raises(SimulationError, match=r"has no port 'clock'"):
        add_internal_clock(verilog, TOPLEVEL, "clock")
    with pytest.raises(SimulationError, match=r"not a 1-bit input"):
        add_internal_clock(verilog, TOPLEVEL, "base")
    with pytest.raises(SimulationError, match=r"dotted Verilog identifiers"):
        prepare_verilog(verilog, TOPLEVEL, memories=["gmem/mem"])
    clash = verilog.replace("trace_data", "trace")
    with pytest.raises(SimulationError, match=r"port\(s\) trace of 'sum_demo' clash"):
        prepare_verilog(clash, TOPLEVEL)


class _ConstantField(wiring.Component):
    """A struct output whose one field is a constant and whose other is set in an ``If``."""

    a: In(4)
    y: Out(data.StructLayout({"one": 1, "v": 4}))

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.d.comb += self.y.one.eq(1)
        with m.If(self.a[0]):
            m.d.comb += self.y.v.eq(self.a)
        return m


def _verilator_warnings(text: str, tmp_path) -> str:
    path = tmp_path / "top.v"
    path.write_text(text)
    done = subprocess.run([str(verilator_root() / "bin" / "verilator"), "--lint-only",
                           "-Wno-lint", str(path)], env={**os.environ, **verilator_env()},
                          capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def test_constant_blocks_run_at_start(tmp_path):
    """Verilator never runs the block Yosys writes for the constant field (ALWNEVER): the
    field would read 0. After the edit, Verilator has nothing to warn of."""
    text = amaranth_verilog.convert(_ConstantField(), name="top", emit_src=False,
                                    strip_internal_attrs=True)
    assert "always @*\n    y[0] = 1'h1;" in text
    assert "ALWNEVER" in _verilator_warnings(text, tmp_path)
    edited = constant_blocks_at_start(text)
    assert "initial\n    y[0] = 1'h1;" in edited and "always @*\n    y[0]" not in edited
    assert "ALWNEVER" not in _verilator_warnings(edited, tmp_path)
    assert prepare_verilog(text, "top") == edited
