"""Simulation top: one compute unit and a block-RAM model of global memory.

The host (a cocotb testbench, or the runtime's ``"verilator"`` backend through it) preloads the
memory array, drives ``dispatch`` and pulses ``start``, then waits for ``done``. The memory answers
each request after ``latency`` cycles, in order, one per cycle; addresses beyond the array read 0,
drop writes and raise the sticky ``mem_error`` flag.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ..config import CuConfig
from ..cu.core import (CountersLayout, DispatchLayout, LoadTraceLayout, MemoryPortSignature,
                       TraceLayout, TrapLayout)
from ..cu.unit import compute_unit

__all__ = ["SimMemory", "SimTop"]


class SimMemory(wiring.Component):
    """Word-addressed RAM behind a :class:`MemoryPortSignature` target, fixed latency.

    Members
    -------
    port : In(MemoryPortSignature())
    error : Out(1)
        Sticky: a request addressed beyond the RAM.
    """

    port: In(MemoryPortSignature())
    error: Out(1)

    def __init__(self, *, words: int, latency: int = 2):
        if latency < 1:
            raise ValueError(f"latency must be at least 1 cycle, not {latency}")
        self._words = words
        self._latency = latency
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.ram = ram = memory.Memory(shape=32, depth=self._words, init=[])
        wp = ram.write_port(granularity=8)
        rp = ram.read_port(transparent_for=(wp,))
        req, rsp = self.port.req, self.port.rsp
        index = req.payload.addr[2:]
        in_range = Signal()
        m.d.comb += [req.ready.eq(1), in_range.eq(index < self._words),
                     rp.addr.eq(index)]
        with m.If(req.valid & ~in_range):
            m.d.sync += self.error.eq(1)
        with m.If(req.valid & req.payload.write & in_range):
            m.d.comb += [wp.addr.eq(index), wp.data.eq(req.payload.data),
                         wp.en.eq(req.payload.mask)]
        # delay line: stage 0 holds the request accepted last cycle (read data now valid)
        valid0 = Signal()
        zero0 = Signal()
        m.d.sync += [valid0.eq(req.valid), zero0.eq(~in_range | req.payload.write)]
        data0 = Signal(32)
        m.d.comb += data0.eq(rp.data & ~(zero0.replicate(32)))
        valid, data = valid0, data0
        for i in range(1, self._latency):
            v, dd = Signal(name=f"valid{i}"), Signal(32, name=f"data{i}")
            m.d.sync += [v.eq(valid), dd.eq(data)]
            valid, data = v, dd
        m.d.comb += [rsp.valid.eq(valid), rsp.payload.data.eq(data)]
        return m


class SimTop(wiring.Component):
    """The compute unit of the configuration (:func:`~gpgpu_hdl.cu.unit.compute_unit`) with
    its commit trace and a :class:`SimMemory`.

    Members
    -------
    start : In(1)
    dispatch : In(DispatchLayout)
    busy, done : Out(1)
    trap : Out(TrapLayout)
    counters : Out(CountersLayout)
    mem_error : Out(1)
    retire_toggle : Out(1)
        Flips once per retired instruction; ``retire`` then describes it (both registered, so
        instructions retired in back-to-back cycles each have their record).
    retire : Out(TraceLayout)
        The commit-trace record, held until the next (not named ``trace``: Verilator's model
        class has a ``trace()`` method).
    load_toggle : Out(1)
        Flips once per dword a buffer load writes; ``load`` then describes it.
    load : Out(LoadTraceLayout)
    """

    start: In(1)
    dispatch: In(DispatchLayout)
    busy: Out(1)
    done: Out(1)
    trap: Out(TrapLayout)
    counters: Out(CountersLayout)
    mem_error: Out(1)
    retire_toggle: Out(1)
    retire: Out(TraceLayout)
    load_toggle: Out(1)
    load: Out(LoadTraceLayout)

    def __init__(self, config: CuConfig | None = None, *, mem_words: int = 1 << 18,
                 latency: int = 2):
        self._config = config if config is not None else CuConfig()
        self._mem_words = mem_words
        self._latency = latency
        super().__init__()

    @property
    def mem_words(self) -> int:
        return self._mem_words

    def elaborate(self, platform):
        m = Module()
        cu = compute_unit(self._config, trace=True)
        m.submodules.cu = cu
        m.submodules.memory = mem = SimMemory(words=self._mem_words, latency=self._latency)
        wiring.connect(m, cu=cu.mem, memory=mem.port)
        m.d.comb += [cu.start.eq(self.start), cu.dispatch.eq(self.dispatch),
                     self.busy.eq(cu.busy), self.done.eq(cu.done), self.trap.eq(cu.trap),
                     self.counters.eq(cu.counters), self.mem_error.eq(mem.error)]
        # the record is registered with its toggle: the pipelined unit retires in back-to-back
        # cycles, and the unit's record has moved on by the time the toggle flips
        with m.If(cu.commit):
            m.d.sync += [self.retire_toggle.eq(~self.retire_toggle), self.retire.eq(cu.trace)]
        with m.If(cu.load_trace.valid):        # held until the next one (a cycle apart at most)
            m.d.sync += [self.load_toggle.eq(~self.load_toggle), self.load.eq(cu.load_trace)]
        return m


