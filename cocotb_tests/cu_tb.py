"""cocotb testbench of :class:`gpgpu_hdl.sim.harness.SimTop`: one launch per simulator run.

Runs inside the simulator (started by :meth:`gpgpu_hdl.sim.verilator.VerilatorBuild.run`).
Parameters (see :mod:`gpgpu_hdl.sim.cocotb_io`): ``memory`` (uint32 words loaded from word 0),
``dispatch`` (the packed :data:`~gpgpu_hdl.cu.core.DispatchLayout` bits as an int),
``max_cycles``, ``trace`` (collect commit records) and ``readback`` (words to return).
Results: ``memory``, ``cycles`` (clock cycles from start to done), the packed ``counters`` and
``trap``, ``mem_error``, ``timeout`` and, when asked, ``trace`` (packed records as ints) and
``loads`` (the packed dwords buffer loads wrote, which land after their load retired).
Python runs only at the start, once per retired instruction and loaded dword when tracing, and
at the end.
"""

import cocotb
import numpy as np
from cocotb.triggers import First, RisingEdge, Timer

from gpgpu_hdl.sim.cocotb_io import load_params, read_words, save_results, write_words


async def _collect(toggle, record, records: list) -> None:
    while True:
        await toggle.value_change
        records.append(int(record.value))


@cocotb.test()
async def launch(dut):
    p = load_params()
    dut.start.value = 0
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    await write_words(dut.memory.ram, 0, np.asarray(p["memory"], dtype=np.uint32))
    dut.dispatch.value = int(p["dispatch"])
    await RisingEdge(dut.clk)

    records: list[int] = []
    loads: list[int] = []
    monitors = []
    if p.get("trace"):
        monitors = [cocotb.start_soon(_collect(dut.retire_toggle, dut.retire, records)),
                    cocotb.start_soon(_collect(dut.load_toggle, dut.load, loads))]
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    # the clock runs inside the model (built with clock="clk"); Python only waits
    limit = Timer(int(p["max_cycles"]) * int(p.get("period_ns", 10)), unit="ns")
    fired = await First(RisingEdge(dut.done), limit)
    timeout = fired is limit
    await RisingEdge(dut.clk)
    for monitor in monitors:
        monitor.cancel()
    readback = int(p.get("readback", len(p["memory"])))
    memory = await read_words(dut.memory.ram, 0, readback)
    save_results({
        "memory": np.asarray(memory, dtype=np.uint32),
        "counters": int(dut.counters.value),
        "trap": int(dut.trap.value),
        "mem_error": int(dut.mem_error.value),
        "timeout": bool(timeout),
        "trace": records,
        "loads": loads,
    })
