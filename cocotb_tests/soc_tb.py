"""cocotb testbench of :class:`gpgpu_hdl.soc.top.SocTop`: the host and DDR as cocotbext-axi
models, one or more launches per simulator run.

Runs inside the simulator (started by :meth:`gpgpu_hdl.sim.verilator.VerilatorBuild.run`). The
launch sequence is the host-side driver every host shares (:mod:`gpgpu_hdl.soc.host`, which
the board backend runs over its serial link), executed here on cocotbext-axi's AXI4-Lite
master; :class:`gpgpu_hdl.sim.soc_backend.SocBackend` makes the plans from the SoC's register
map, so nothing here knows the map.

Parameters (see :mod:`gpgpu_hdl.sim.cocotb_io`):

``image``
    uint32 words of global memory from address 0, loaded into the DDR model.
``ram_bytes``
    Size of the DDR model: an access at or beyond it answers SLVERR.
``mem_latency``
    Bus cycles from an accepted read or write address to its first data beat or response.
``clocks``
    ``[cu_mhz, bus_mhz]``: the two clocks (``cu_clk`` and ``clk``) of the build.
``launches``
    A list of :class:`gpgpu_hdl.soc.host.LaunchPlan` (as JSON), executed in order by the
    host-side driver :func:`gpgpu_hdl.soc.host.launch`; a plan's prefetch window is loaded
    from the image at its ``base``.
``readback``
    Words of global memory to return.
``reads``
    ``[name, offset]`` registers read once after reset, before the launches.
``rom``
    ``[offset, words]``: a ROM read back at the end.

Results: ``memory`` (the DDR image, with the window read back over its range), ``launches``
(per launch: the named register values, ``timeout``, ``host_ns`` from start to done,
``bursts``: the AXI bursts and beats each way during the launch),
``reads`` (the registers read after reset) and ``rom`` (the words read back, when asked).
"""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer

from gpgpu_hdl.sim.cocotb_io import load_params, save_results


def _half_ps(mhz: float) -> int:
    return max(1, round(1e6 / mhz / 2))


def _ram(dut, size: int, latency: int, period_ps: int, bursts: dict):
    """cocotbext-axi's AxiRam with a fixed latency per burst (address accepted -> first data
    or write response), overlapping between bursts like a pipelined memory, and SLVERR beyond
    ``size``. ``bursts`` counts the bursts and beats each way (``read_bursts``,
    ``read_beats``, ``write_bursts``, ``write_beats``)."""
    from cocotbext.axi import AxiBus, AxiRam

    ram = AxiRam(AxiBus.from_prefix(dut, "mem_"), dut.clk, dut.rst, size=size)
    for side, channel, kind in ((ram.read_if, "ar_channel", "read"),
                                (ram.write_if, "aw_channel", "write")):
        _delay_channel(side, channel, period_ps, latency, bursts, kind)

    def read(address, length, _read=ram.read_if._read):
        if address + length > size:
            raise IndexError(f"read at {address:#x} beyond the memory")
        return _read(address, length)

    def write(address, data, _write=ram.write_if._write):
        if address + len(data) > size:
            raise IndexError(f"write at {address:#x} beyond the memory")
        return _write(address, data)

    ram.read_if._read = read
    ram.write_if._write = write
    return ram


def _delay_channel(side, name: str, period_ps: int, latency: int, bursts: dict,
                   kind: str) -> None:
    """Every burst on ``side``'s address channel reaches its process ``latency`` clock periods
    after the handshake; several bursts wait at once (the memory is pipelined). Time is read
    from the simulator, so no Python runs per clock cycle. Each burst is counted in
    ``bursts[kind + "_bursts"]`` and its beats in ``bursts[kind + "_beats"]``."""
    from cocotb.queue import Queue
    from cocotb.utils import get_sim_time

    length = name[:2] + "len"           # arlen / awlen: beats - 1
    channel = getattr(side, name)
    channel.queue_occupancy_limit = 64
    ready: Queue = Queue()

    async def stamp():
        while True:
            item = await channel.recv()
            bursts[kind + "_bursts"] += 1
            bursts[kind + "_beats"] += int(getattr(item, length)) + 1
            ready.put_nowait((get_sim_time("ps") + latency * period_ps, item))

    class Delayed:
        async def recv(self):
            due, item = await ready.get()
            now = get_sim_time("ps")
            if due > now:
                await Timer(due - now, unit="ps")
            return item

        def clear(self):
            channel.clear()
            while not ready.empty():
                ready.get_nowait()

    cocotb.start_soon(stamp())
    setattr(side, name, Delayed())


class _Host:
    """The SoC's host port as the driver's bus (:func:`gpgpu_hdl.soc.host.run_async`):
    cocotbext-axi's AXI4-Lite master, simulation time, and the interrupt line the plans enable
    (``CONTROL.irq_enable``) to wait for ``done``."""

    def __init__(self, dut, master) -> None:
        self.dut = dut
        self.master = master

    async def read_reg(self, offset: int) -> int:
        return await self.master.read_dword(offset)

    async def write_reg(self, offset: int, value: int) -> None:
        await self.master.write_dword(offset, value)

    async def read_mem(self, offset: int, size: int) -> bytes:
        return (await self.master.read(offset, size)).data

    async def write_mem(self, offset: int, data: bytes) -> None:
        await self.master.write(offset, data)

    async def wait_done(self, op) -> bool:
        if int(self.dut.irq.value):
            return True
        timer = Timer(op.ns, unit="ns")
        return await First(RisingEdge(self.dut.irq), timer) is not timer

    def now_ns(self):
        return cocotb.utils.get_sim_time("ns")


@cocotb.test()
async def launch(dut):
    from cocotbext.axi import AxiLiteBus, AxiLiteMaster

    from gpgpu_hdl.soc.host import LaunchPlan, read_registers, run_async
    from gpgpu_hdl.soc.host import launch as launch_steps

    p = load_params()
    cu_mhz, bus_mhz = p["clocks"]
    # cocotb's clocks, not ones inside the model: cocotbext-axi samples handshakes in its
    # RisingEdge callbacks and must see the values from before the edge
    Clock(dut.cu_clk, 2 * _half_ps(cu_mhz), unit="ps").start()
    Clock(dut.clk, 2 * _half_ps(bus_mhz), unit="ps").start()
    dut.rst.value = 1
    dut.cu_rst.value = 1
    host = _Host(dut, AxiLiteMaster(AxiLiteBus.from_prefix(dut, "host_"), dut.clk, dut.rst))
    bursts = dict.fromkeys(("read_bursts", "read_beats", "write_bursts", "write_beats"), 0)
    ram = _ram(dut, int(p["ram_bytes"]), int(p["mem_latency"]), 2 * _half_ps(bus_mhz), bursts)
    image = np.asarray(p["image"], dtype=np.uint32)
    ram.write(0, image.tobytes())
    await ClockCycles(dut.clk, 4)
    await ClockCycles(dut.cu_clk, 4)
    dut.rst.value = 0
    dut.cu_rst.value = 0
    await ClockCycles(dut.clk, 4)

    first_reads = await run_async(read_registers(p.get("reads", [])), host)
    out = []
    window_data = None
    for item in p["launches"]:
        plan = LaunchPlan.from_json(item)
        data = None
        if plan.window:
            _, base, words = plan.window
            data = image[base // 4:base // 4 + words].tobytes()
        # the window loads over the host port, not the memory port: the bursts are the launch's
        bursts.update(dict.fromkeys(bursts, 0))
        got = await run_async(launch_steps(plan, data), host)
        out.append({"timeout": got.timeout, "host_ns": got.host_ns, "bursts": dict(bursts),
                    **got.reads})
        if got.timeout:
            break                     # the units still run: later launches would be refused
        if got.window is not None:
            window_data = (plan.window[1], np.frombuffer(got.window, dtype=np.uint32).copy())
        # memory after the launch: DDR, with the window's latest contents over its range (the
        # next launch preloads the window from this image)
        mem = np.frombuffer(ram.read(0, 4 * len(image)), dtype=np.uint32).copy()
        if window_data is not None:
            base, words_ = window_data
            mem[base // 4:base // 4 + len(words_)] = words_
        image = mem

    results = {"memory": image[:int(p["readback"])], "launches": out, "reads": first_reads}
    if p.get("rom"):
        offset, words = p["rom"]
        data = await host.read_mem(offset, 4 * words)
        results["rom"] = np.frombuffer(data, dtype=np.uint32).copy()
    save_results(results)
