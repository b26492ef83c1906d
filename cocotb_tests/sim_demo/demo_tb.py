"""cocotb testbench for :mod:`design` (run through ``VerilatorBuild.run``, not by pytest).

``sum_block`` is the pattern of a kernel launch: preload memory, reset, start, let the
simulation run until ``done`` while a monitor collects the trace, read memory back.
The other tests exercise the error paths of the runner.
"""

import os

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer, with_timeout

from gpgpu_hdl.sim.cocotb_io import load_params, read_words, save_results, write_words

PERIOD_NS = 10


async def reset(dut, params):
    if not params["internal_clock"]:
        Clock(dut.clk, PERIOD_NS, unit="ns").start()
    dut.rst.value = 1
    dut.start.value = 0
    dut.base.value = params["base"]
    dut.count.value = params["count"]
    dut.dest.value = params["dest"]
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


@cocotb.test()
async def sum_block(dut):
    params = load_params()
    method = params["method"]
    mem = dut.gmem.mem
    await write_words(mem, params["image_base"], params["image"], method=method)
    await reset(dut, params)

    index, data = [], []
    toggle = dut.trace_toggle
    index_raw, data_raw = dut.trace_index._handle, dut.trace_data._handle

    async def monitor():
        while True:
            await toggle.value_change
            index.append(index_raw.get_signal_val_long())
            data.append(data_raw.get_signal_val_long())

    cocotb.start_soon(monitor())
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    begin = cocotb.utils.get_sim_time("ns")
    await with_timeout(RisingEdge(dut.done), params["max_cycles"] * PERIOD_NS, "ns")
    cycles = round((cocotb.utils.get_sim_time("ns") - begin) / PERIOD_NS)
    readback = await read_words(mem, params["read_base"], params["read_count"], method=method)
    save_results({
        "sum": int(dut.sum.value),
        "cycles": cycles,
        "trace_index": np.array(index, dtype=np.int64),
        "trace_data": np.array(data, dtype=np.int64) & 0xFFFF_FFFF,
        "readback": readback,
        "echo": params["echo"],
    })


@cocotb.test()
async def visible(dut):
    """Which of a few signals the build lets cocotb see (see ``build(visibility=...)``)."""
    await Timer(1, "ns")
    names = {"top_port": (dut, "trace_data"), "memory": (dut.gmem, "mem"),
             "inner_port": (dut.gmem, "rdata")}
    save_results({key: hasattr(scope, name) for key, (scope, name) in names.items()})


@cocotb.test()
async def fails(_dut):
    params = load_params()
    await Timer(1, "ns")
    assert params["left"] == params["right"], params["message"]


@cocotb.test()
async def no_results(_dut):
    await Timer(1, "ns")


@cocotb.test()
async def hangs(dut):
    params = load_params()
    await reset(dut, params)
    await RisingEdge(dut.done)  # never started: the simulation runs until it is killed


@cocotb.test()
async def crashes(_dut):
    await Timer(1, "ns")
    os.abort()  # as a segfaulting simulator would
