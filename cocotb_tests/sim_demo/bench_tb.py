"""cocotb side of ``bench.py``: measures memory access and simulation speed on the demo.

Every test adds its figures to one dict and saves it again, so the results hold them all.
"""

import time

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from gpgpu_hdl.sim.cocotb_io import load_params, read_words, save_results, write_words

PERIOD_NS = 10
FIGURES = {}


def record(**figures):
    FIGURES.update(figures)
    save_results(FIGURES)


@cocotb.test()
async def memory_speed(dut):
    params = load_params()
    mem = dut.gmem.mem
    depth = len(mem)
    words = np.random.default_rng(0).integers(0, 1 << 32, size=depth, dtype=np.uint32)
    figures = {}
    if params["hooks"]:
        t = time.perf_counter()
        await write_words(mem, 0, words, method="hooks")
        figures["hooks_write"] = depth / (time.perf_counter() - t)
        t = time.perf_counter()
        back = await read_words(mem, 0, depth, method="hooks")
        figures["hooks_read"] = depth / (time.perf_counter() - t)
        assert np.array_equal(back, words)
    n = params["vpi_words"]
    part = words[:n] ^ 0x5555_5555
    t = time.perf_counter()
    await write_words(mem, 0, part, method="vpi")
    figures["vpi_write_first"] = n / (time.perf_counter() - t)
    t = time.perf_counter()
    await write_words(mem, 0, part ^ 1, method="vpi")
    figures["vpi_write_again"] = n / (time.perf_counter() - t)
    t = time.perf_counter()
    back = await read_words(mem, 0, n, method="vpi")
    figures["vpi_read_again"] = n / (time.perf_counter() - t)
    assert np.array_equal(back, part ^ 1)
    m = params["cocotb_words"]
    base = depth - m  # elements cocotb has not wrapped yet
    t = time.perf_counter()
    for i in range(m):
        mem[base + i].value = int(words[i])
    figures["cocotb_value_write_first"] = m / (time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(m):
        mem[base + i].value = int(words[i]) ^ 1
    figures["cocotb_value_write_again"] = m / (time.perf_counter() - t)
    record(**figures)


async def start(dut, params, count):
    if not params["internal_clock"]:
        Clock(dut.clk, PERIOD_NS, unit="ns").start()
    dut.rst.value = 1
    dut.start.value = 0
    dut.base.value = 0
    dut.count.value = count
    dut.dest.value = 0
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    return time.perf_counter(), cocotb.utils.get_sim_time("ns")


def rate(t0, ns0):
    cycles = (cocotb.utils.get_sim_time("ns") - ns0) / PERIOD_NS
    return cycles, cycles / (time.perf_counter() - t0)


@cocotb.test()
async def speed_done_only(dut):
    params = load_params()
    t0, ns0 = await start(dut, params, params["count"])
    await RisingEdge(dut.done)
    cycles, per_s = rate(t0, ns0)
    record(cycles=cycles, done_only=per_s)


@cocotb.test()
async def speed_every_edge(dut):
    params = load_params()
    t0, ns0 = await start(dut, params, params["count"] // 4)
    clk, done = dut.clk, dut.done
    while not done.value:
        await RisingEdge(clk)
    record(every_edge=rate(t0, ns0)[1])


@cocotb.test()
async def speed_trace(dut):
    params = load_params()
    events = []
    toggle = dut.trace_toggle
    index, data = dut.trace_index._handle, dut.trace_data._handle

    async def monitor():
        while True:
            await toggle.value_change
            events.append((index.get_signal_val_long(), data.get_signal_val_long()))

    cocotb.start_soon(monitor())
    t0, ns0 = await start(dut, params, params["count"])
    await RisingEdge(dut.done)
    seconds = time.perf_counter() - t0
    record(trace=rate(t0, ns0)[1], trace_events=len(events), trace_seconds=seconds)
