"""Completed scalar instructions waiting to retire, one per wave slot: the scalar ALU's and the
control operations' completions on their way to the pipelined unit's retire stage.

A wave has at most one scalar instruction in flight, but that one may have been issued while
its wave's vector or buffer instructions were in flight (a *follower*): it must retire after
them. In one FIFO shared by the waves, a follower at the head that waits for its wave would
hold every other wave's completion behind it. :class:`DoneSlots` keeps a completion per slot
instead (its record in LUT RAM, addressed by the slot; a bit per slot says it is there) and
offers one whose wave may retire it: one that did not follow, or whose wave has nothing older
in flight (``last``).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from .onehot import onehot_index

__all__ = ["DoneSlots"]


class DoneSlots(wiring.Component):
    """A completion per wave slot, offered to retirement in the order their waves allow.

    Parameters
    ----------
    slots : int
        Wave slots.
    layout : data.Layout
        A completion's record (without its slot, which addresses it).

    Members
    -------
    w_en : In(1)
        Write a completion: ``w_data`` for slot ``w_slot``; ``w_fol``: it followed its wave's
        instructions in flight, so it waits until ``last`` says its wave has no other. The
        slot holds no completion (a wave completes one scalar instruction at a time).
    w_slot : In(range(slots))
    w_data : In(layout)
    w_fol : In(1)
    last : In(slots)
        Per slot: the wave's instruction here has no older one in flight (it may go; this
        never goes from 1 to 0 while a completion waits here: what is older only retires).
    valid : Out(1)
        A completion is offered (a register): slot ``slot``'s, ``data`` (read from the LUT
        RAM at ``slot``).
    slot : Out(range(slots))
    data : Out(layout)
    take : In(1)
        Retirement takes the one offered (with ``valid``). The offer of the next cycle is
        another slot's: it was chosen while this one was offered.

    A completion written in cycle ``t`` is offered from ``t + 2`` at the earliest, as
    ``SyncFIFOBuffered`` gives it (a follower from the cycle after ``last`` is set, once it
    is here). Among the completions that may go, the lowest slot is offered.
    """

    def __init__(self, *, slots: int, layout: data.Layout) -> None:
        if not isinstance(slots, int) or slots < 1:
            raise ValueError(f"slots must be a positive integer, not {slots!r}")
        self._slots = slots
        self._layout = data.Layout.cast(layout)
        super().__init__({
            "w_en": In(1), "w_slot": In(range(slots)), "w_data": In(self._layout),
            "w_fol": In(1), "last": In(slots),
            "valid": Out(1), "slot": Out(range(slots)), "data": Out(self._layout),
            "take": In(1),
        })

    @property
    def slots(self) -> int:
        return self._slots

    @property
    def layout(self) -> data.Layout:
        return self._layout

    def elaborate(self, platform):
        m = Module()
        n = self._slots
        m.submodules.records = records = memory.Memory(shape=self._layout, depth=n, init=[])
        wp = records.write_port()
        rp = records.read_port(domain="comb")
        m.d.comb += [wp.en.eq(self.w_en), wp.addr.eq(self.w_slot), wp.data.eq(self.w_data),
                     rp.addr.eq(self.slot), self.data.eq(rp.data)]
        here = Signal(n)        # a completion in the slot
        fol = Signal(n)         # ... that waits for its wave's others
        offered = Signal(n)
        m.d.comb += offered.eq(Mux(self.valid, 1 << self.slot, 0))
        taken = Mux(self.take & self.valid, 1 << self.slot, 0)
        written = Mux(self.w_en, 1 << self.w_slot, 0)
        m.d.sync += [here.eq((here & ~taken) | written),
                     fol.eq((fol & ~written) | Mux(self.w_fol, written, 0))]
        # which may go in the next cycle: here, not waiting, not the one offered now
        may = Signal(n)
        lowest = Signal(n)
        m.d.comb += [may.eq(here & (~fol | self.last) & ~offered),
                     lowest.eq(may & (~may + 1))]
        m.d.sync += [self.valid.eq(may.any()), self.slot.eq(onehot_index(lowest))]
        return m
