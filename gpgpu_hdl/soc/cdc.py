"""Clock-domain crossings of the SoC, built only from Amaranth's library cells.

* :class:`AsyncStream`: a stream through an :class:`~amaranth.lib.fifo.AsyncFIFO` (the memory
  requests and responses between the compute units and the bus).
* :class:`PulseCrossing`: a one-cycle pulse from one domain to another, as a toggle through an
  :class:`~amaranth.lib.cdc.FFSynchronizer` (start, done). Pulses closer together than the
  synchronizer latency (a few destination cycles) may merge; the SoC sends at most one of each
  per launch.

Both domains must be reset together, for at least ``PULSE_STAGES + 1`` cycles of the slower
clock: the pulse crossings' toggles and synchronizers then all restart at 0.

Multi-bit values that only change while the other side is idle (the dispatch fields, the
counters and trap record after ``done``) cross through :class:`~amaranth.lib.cdc.FFSynchronizer`
at the place they are used: they are stable long before the pulse that announces them arrives,
because that pulse goes through more synchronizer stages (:data:`PULSE_STAGES`) than the values
(:data:`VALUE_STAGES`).
"""

from amaranth.hdl import Module, Shape, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.wiring import In, Out

__all__ = ["AsyncStream", "PulseCrossing", "PULSE_STAGES", "VALUE_STAGES"]

#: Synchronizer stages of quasi-static values, and of the pulses that announce them.
VALUE_STAGES = 2
PULSE_STAGES = 3


class AsyncStream(wiring.Component):
    """A stream of ``shape`` payloads from ``w_domain`` to ``r_domain``.

    Members
    -------
    w : In(stream.Signature(shape))
        Sink, in ``w_domain``.
    r : Out(stream.Signature(shape))
        Source, in ``r_domain``.
    """

    def __init__(self, shape, *, depth: int = 4, w_domain: str, r_domain: str):
        self._shape = shape
        self._depth = depth
        self._w_domain = w_domain
        self._r_domain = r_domain
        super().__init__({"w": In(stream.Signature(shape)), "r": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        width = Shape.cast(self._shape).width
        m.submodules.fifo = fifo = AsyncFIFO(width=width, depth=self._depth,
                                             w_domain=self._w_domain, r_domain=self._r_domain)
        m.d.comb += [fifo.w_data.eq(self.w.payload.as_value()), fifo.w_en.eq(self.w.valid),
                     self.w.ready.eq(fifo.w_rdy),
                     self.r.payload.as_value().eq(fifo.r_data), self.r.valid.eq(fifo.r_rdy),
                     fifo.r_en.eq(self.r.ready)]
        return m


class PulseCrossing(wiring.Component):
    """A pulse on ``i`` (``i_domain``) becomes one pulse on ``o`` (``o_domain``).

    Members
    -------
    i : In(1)
    o : Out(1)
    """

    i: In(1)
    o: Out(1)

    def __init__(self, *, i_domain: str, o_domain: str, stages: int = PULSE_STAGES):
        self._i_domain = i_domain
        self._o_domain = o_domain
        self._stages = stages
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        toggle = Signal()
        with m.If(self.i):
            m.d[self._i_domain] += toggle.eq(~toggle)
        synced, last = Signal(), Signal()
        m.submodules.sync = FFSynchronizer(toggle, synced, o_domain=self._o_domain,
                                           stages=self._stages, reset_less=False)
        m.d[self._o_domain] += last.eq(synced)
        m.d.comb += self.o.eq(synced ^ last)
        return m
