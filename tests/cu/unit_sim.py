"""Run launches of a compute unit under Amaranth's simulator, through the runtime.

:func:`run_launch` takes a kernel and its arguments as :func:`tests.asm_kernels.run_asm` does,
prepares the launch with the ``"verilator"`` backend's own code (memory image, dispatch
fields), simulates the unit with a Python model of memory (in-order answers after a random
latency) instead of building a Verilator model, and returns the unit's commit trace beside
the golden model's. Slow (a few hundred cycles a second at 4 lanes), but it needs no build,
so it suits short programs and units that change often. ``make_unit(config)`` is built and its
simulator compiled once per process (:func:`tests.simulation.reused_simulation`): that is most
of a short launch's time.
"""

from __future__ import annotations

import contextlib
import random
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import DispatchLayout
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.sim.trace import decode_trace
from gpgpu_hdl.toolchain import assemble_kernel

from tests.simulation import reused_simulation

__all__ = ["Launch", "run_launch", "simulated_device"]


@dataclass
class Launch:
    """What one simulated launch did, beside the golden model's run of the same kernel."""

    records: list[dict]          # the unit's commit trace (decoded)
    emu_records: list[dict]      # the golden model's
    cycles: int
    trap: Any                    # the unit's TrapLayout value
    counters: Any                # its CountersLayout value
    memory: list[np.ndarray]     # the buffers' contents after the unit's run
    emu_memory: list[np.ndarray]


class _Stop(Exception):
    pass


def _simulate(make_unit, config: CuConfig, fields: dict, image: np.ndarray, *,
              latency: tuple[int, int], max_cycles: int,
              seed: int) -> tuple[list[int], list[int], dict, np.ndarray]:
    mem = np.zeros(max(len(image), 1 << 12), dtype=np.uint32)
    mem[:len(image)] = image
    rng = random.Random(seed)
    sim = reused_simulation(make_unit, config, clock=1e-8)
    unit = sim.dut
    records: list[int] = []
    loads: list[int] = []
    out: dict = {}
    req, rsp = unit.mem.req, unit.mem.rsp

    async def memory(ctx):
        pending: deque = deque()       # [cycle due, data], answered in order
        now = 0
        async for _, _, valid, addr, write, data, mask in ctx.tick().sample(
                req.valid, req.payload.addr, req.payload.write, req.payload.data,
                req.payload.mask):
            now += 1
            ctx.set(req.ready, 1)
            if valid:
                w = addr >> 2
                due = max(now + rng.randint(*latency), pending[-1][0] if pending else 0)
                if write:
                    bits = sum(0xFF << (8 * b) for b in range(4) if mask >> b & 1)
                    mem[w] = (int(mem[w]) & ~bits) | (data & bits)
                    pending.append([due, 0])
                else:
                    pending.append([due, int(mem[w])])
            if pending and pending[0][0] <= now:
                ctx.set(rsp.valid, 1)
                ctx.set(rsp.payload.data, pending.popleft()[1])
            else:
                ctx.set(rsp.valid, 0)

    async def bench(ctx):
        ctx.set(unit.dispatch, DispatchLayout.const(fields))
        ctx.set(unit.start, 1)
        await ctx.tick()
        ctx.set(unit.start, 0)
        cycles = 0
        while not ctx.get(unit.done):
            await ctx.tick()
            cycles += 1
            if ctx.get(unit.commit):
                records.append(ctx.get(unit.trace).as_value().value)
            if ctx.get(unit.load_trace.valid):
                loads.append(ctx.get(unit.load_trace).as_value().value)
            if cycles > max_cycles:
                raise AssertionError(f"the launch did not finish in {max_cycles} cycles")
        out.update(cycles=cycles, trap=ctx.get(unit.trap), counters=ctx.get(unit.counters))

    sim.run(bench, processes=(memory,))
    return records, loads, out, mem


def run_launch(make_unit, config: CuConfig, body: str | bytes, *args: Any,
               kernel: str = "k", global_size: int = 64, local_size: int = 64,
               latency: tuple[int, int] = (2, 2), max_cycles: int = 200_000, seed: int = 0,
               **code_t: Any) -> Launch:
    """Run kernel ``kernel`` of ``body`` (a code object, or assembly text assembled as kernel
    ``k`` taking one buffer per array in ``args``, as :func:`tests.asm_kernels.run_asm` does)
    on the golden model and on ``make_unit(config)`` (a unit with a trace port) under the
    simulator, with memory answers after ``latency`` cycles (a random number in that range,
    in order). ``args``: arrays (buffers) and numpy scalars (scalar arguments)."""
    if isinstance(body, bytes):
        code = body
    else:
        code_t.setdefault("kernarg_segment_byte_size",
                          8 * sum(isinstance(a, np.ndarray) for a in args))
        code = assemble_kernel(body, "k", **code_t)

    def bind(device):
        bufs = [device.array(a) if isinstance(a, np.ndarray) and a.ndim else None
                for a in args]
        values = [b if b is not None else a for a, b in zip(args, bufs, strict=True)]
        return [b for b in bufs if b is not None], values

    emu = Device("emu")
    ebufs, values = bind(emu)
    eres = getattr(emu.load_bytes(code), kernel)(*values, global_size=global_size,
                                                 local_size=local_size, trace=True)

    dev = Device("verilator", config=config)
    backend = dev.backend
    got: dict = {}

    def launch(kernel, d, _trace):
        fields = backend._fields(kernel, d)
        image = backend._image()
        records, loads, out, mem = _simulate(make_unit, config, fields, image, latency=latency,
                                             max_cycles=max_cycles, seed=seed)
        backend._write_back(mem[:len(image)])
        got.update(out, records=decode_trace(records, loads))
        raise _Stop

    backend.launch = launch
    bufs, values = bind(dev)
    with contextlib.suppress(_Stop):
        getattr(dev.load_bytes(code), kernel)(*values, global_size=global_size,
                                              local_size=local_size, trace=True)
    return Launch(got["records"], eres.trace.records, got["cycles"], got["trap"],
                  got["counters"], [b.numpy() for b in bufs], [b.numpy() for b in ebufs])


def simulated_device(make_unit, config: CuConfig, *, latency: tuple[int, int] = (2, 2),
                     max_cycles: int = 2_000_000, seed: int = 0) -> Device:
    """A ``Device("verilator", config=config)`` whose launches run ``make_unit(config)`` under
    Amaranth's simulator instead of a Verilator model (results, traps and the commit trace
    as the Verilator backend gives them): for running suite cases on a unit under work."""
    from gpgpu_hdl.cu.core import CountersLayout
    from gpgpu_hdl.runtime.result import KernelResult
    from gpgpu_hdl.sim.cu_backend import trap_error

    dev = Device("verilator", config=config)
    backend = dev.backend

    def launch(kernel, d, trace):
        fields = backend._fields(kernel, d)
        image = backend._image()
        records, loads, out, mem = _simulate(make_unit, config, fields, image, latency=latency,
                                             max_cycles=max_cycles, seed=seed)
        backend._write_back(mem[:len(image)])
        decoded = decode_trace(records, loads) if trace else None
        trap = out["trap"]
        if trap.cause:
            error = trap_error(kernel, trap.cause, trap.pc, trap.inst, f"wave slot {trap.slot}")
            error.trace = decoded
            raise error
        counters = out["counters"]
        result = KernelResult(kernel.name, counters.instructions, {}, {}, {}, 0, 0, 0.0,
                              counters.cycles, decoded)
        result.extra.update({name: counters[name] for name, _ in CountersLayout})
        return result

    backend.launch = launch
    return dev
