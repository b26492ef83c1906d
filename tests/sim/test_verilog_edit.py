"""The Verilog transformations (:mod:`gpgpu_hdl.sim.verilog_edit`) on the demo design's text.

No simulator: these only read and edit the Verilog that ``cocotb_tests/sim_demo`` converts to
(the builds that compile the edited text are in ``test_verilator.py``).
"""

import functools

import pytest
from cocotb_tests.sim_demo.design import TOPLEVEL, demo_verilog

from gpgpu_hdl.errors import SimulationError
from gpgpu_hdl.sim.verilog_edit import (
    add_internal_clock,
    prepare_verilog,
    strip_zero_memory_init,
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
