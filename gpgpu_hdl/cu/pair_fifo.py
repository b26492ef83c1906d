"""A FIFO of two entries held in registers, its head a register: a unit's queue of requests
to the VGPR file.

``amaranth.lib.fifo.SyncFIFO`` of depth 2 keeps its entries in LUT RAM (``TRELLIS_DPR16X4``
on ECP5) and reads the head through the RAM's read port at the read pointer, so whoever reads
the head (the VGPR file plans its reads from it) starts behind a register, the RAM's address
decode and its output, and ``SyncFIFOBuffered`` takes a cycle more from a write to ``r_rdy``.
:class:`PairFifo` has the interface of the first (``w_data``, ``w_en``, ``w_rdy``, ``r_data``,
``r_en``, ``r_rdy``, ``level``) and its timing (a write shows at the head in the next cycle; a
full FIFO takes no write, even as it is read), with ``r_data`` straight from a register: the
head, then the entry behind it, which moves up as the head leaves.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["PairFifo"]


class PairFifo(wiring.Component):
    """Two-entry FIFO in registers.

    Parameters
    ----------
    width : int
        Bits of an entry.

    Members
    -------
    w_data : In(width)
    w_en : In(1)
        Write ``w_data`` (taken with ``w_rdy``).
    w_rdy : Out(1)
        There is room: fewer than two entries (from registers).
    r_data : Out(width)
        The head (a register).
    r_en : In(1)
        Take the head (taken with ``r_rdy``).
    r_rdy : Out(1)
        There is a head (a register).
    level : Out(range(3))
        Entries held.
    """

    def __init__(self, *, width: int) -> None:
        if not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive integer, not {width!r}")
        self._width = width
        super().__init__({
            "w_data": In(width), "w_en": In(1), "w_rdy": Out(1),
            "r_data": Out(width), "r_en": In(1), "r_rdy": Out(1),
            "level": Out(range(3)),
        })

    @property
    def width(self) -> int:
        return self._width

    def elaborate(self, platform):
        m = Module()
        head = Signal(self._width, name="head")
        tail = Signal(self._width, name="tail")
        head_valid = Signal(name="head_valid")
        tail_valid = Signal(name="tail_valid")
        push = self.w_en & ~tail_valid
        pop = self.r_en & head_valid
        m.d.comb += [self.w_rdy.eq(~tail_valid), self.r_rdy.eq(head_valid),
                     self.r_data.eq(head), self.level.eq(head_valid + tail_valid)]
        with m.If(~head_valid | pop):
            # the head is free: the entry behind it moves up, or the write comes in
            m.d.sync += [head.eq(Mux(tail_valid, tail, self.w_data)),
                         head_valid.eq(tail_valid | push), tail_valid.eq(0)]
        with m.Elif(push):
            m.d.sync += [tail.eq(self.w_data), tail_valid.eq(1)]
        return m
