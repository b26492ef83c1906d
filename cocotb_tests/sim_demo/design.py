"""A small design for the Verilator/cocotb infrastructure tests and measurements.

It has the shape of the simulation harness the compute unit will get: a word-addressed global
memory (an ``amaranth.lib.memory.Memory`` inside the submodule ``gmem``, so its cocotb path is
``dut.gmem.mem``), start/done handshaking and a commit trace (``trace_toggle`` flips once per
event, with payload signals).
"""

from amaranth import Module, Signal
from amaranth.back import verilog
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

TOPLEVEL = "sum_demo"


class WordMemory(wiring.Component):
    """Word-addressed memory with one port; read data arrives one cycle after the address.

    Members
    -------
    addr : In(range(depth))
    wdata : In(32)
    we : In(1)
        Write ``wdata`` to ``addr`` at the next clock edge.
    rdata : Out(32)
        The word at the address of the previous cycle (not transparent to the write).
    """

    def __init__(self, *, depth: int):
        self._depth = depth
        super().__init__({
            "addr": In(range(depth)),
            "wdata": In(32),
            "we": In(1),
            "rdata": Out(32),
        })

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):  # noqa: ARG002 (fixed signature)
        m = Module()
        m.submodules.mem = mem = Memory(shape=32, depth=self._depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(transparent_for=())
        m.d.comb += [
            wr.addr.eq(self.addr), wr.data.eq(self.wdata), wr.en.eq(self.we),
            rd.addr.eq(self.addr), self.rdata.eq(rd.data),
        ]
        return m


class SumDemo(wiring.Component):
    """On ``start``: sum ``count`` words from word ``base`` (addresses wrap around the memory),
    store the sum at word ``dest``, then raise ``done``. Two cycles per word.

    Members
    -------
    start : In(1)
    base, count, dest : In(32)
    done : Out(1)
        Cleared by ``start``, set once the sum is stored.
    sum : Out(32)
    trace_toggle : Out(1)
        Flips once per word read; ``trace_index``/``trace_data`` hold its index and value.
    trace_index, trace_data : Out(32)
    """

    start: In(1)
    base: In(32)
    count: In(32)
    dest: In(32)
    done: Out(1)
    sum: Out(32)
    trace_toggle: Out(1)
    trace_index: Out(32)
    trace_data: Out(32)

    def __init__(self, *, depth: int = 1 << 18):
        self._depth = depth
        super().__init__()

    def elaborate(self, platform):  # noqa: ARG002 (fixed signature)
        m = Module()
        m.submodules.gmem = gmem = WordMemory(depth=self._depth)
        bits = (self._depth - 1).bit_length()
        idx = Signal(32)
        with m.FSM():
            with m.State("IDLE"), m.If(self.start):
                m.d.sync += [idx.eq(0), self.sum.eq(0), self.done.eq(0)]
                m.next = "ADDR"
            with m.State("ADDR"):
                m.d.comb += gmem.addr.eq((self.base + idx)[:bits])
                m.next = "DATA"
            with m.State("DATA"):
                m.d.sync += [
                    self.sum.eq(self.sum + gmem.rdata),
                    idx.eq(idx + 1),
                    self.trace_toggle.eq(~self.trace_toggle),
                    self.trace_index.eq(idx),
                    self.trace_data.eq(gmem.rdata),
                ]
                with m.If(idx + 1 == self.count):
                    m.next = "STORE"
                with m.Else():
                    m.next = "ADDR"
            with m.State("STORE"):
                m.d.comb += [gmem.addr.eq(self.dest[:bits]), gmem.wdata.eq(self.sum),
                             gmem.we.eq(1)]
                m.d.sync += self.done.eq(1)
                m.next = "IDLE"
        return m


def demo_verilog(*, depth: int = 1 << 18) -> str:
    return verilog.convert(SumDemo(depth=depth), name=TOPLEVEL, emit_src=False,
                           strip_internal_attrs=True)
