"""AXI4 manager for the SoC's global memory: dword requests in, coalesced INCR bursts out.

:class:`AxiMaster` has four stages, named by the prefix of their signals:

* ``c_`` (coalesce) accepts requests and grows an open burst while they continue it;
  write data goes straight into the ``wdata`` buffer;
* ``i_`` (issue) holds one closed burst and sends it on AW or AR once the memory-ordering rule
  and the ``outstanding`` limit allow, recording it in the ``inflight`` queue (and, for a write,
  its length in the ``wlen`` queue);
* ``w_`` (write data) sends the buffered beats of issued write bursts on W;
* ``r_`` (response) answers the requests of the oldest in-flight burst from its R beats or its
  B response, one :data:`~gpgpu_hdl.soc.axi.BusResponse` per request.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, fifo, wiring
from amaranth.lib.wiring import In, Out

from .axi import Axi4Signature, AxiBurst, BusPortSignature

__all__ = ["AxiMaster"]

#: A buffered write beat, coalesce stage to write-data stage.
_cw_layout = data.StructLayout({"data": 32, "strb": 4})
#: An issued burst awaiting its responses, issue stage to response stage (``len`` is AxLEN).
_ir_layout = data.StructLayout({"write": 1, "len": 8})

#: AxSIZE of a 4-byte beat.
_SIZE_4_BYTES = 2
#: AxCACHE: normal non-cacheable bufferable.
_CACHE_NORMAL_BUFFERABLE = 0b0011
#: Word-address bits inside an AXI 4 KiB page (a burst must not cross one).
_PAGE_WORD_BITS = 10


def _check_int(name: str, value, low: int, high: int, *, power_of_two: bool = False) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if ok and power_of_two:
        ok = value & (value - 1) == 0
    if not ok:
        kind = "a power of two" if power_of_two else "an integer"
        raise ValueError(f"{name} must be {kind} from {low} to {high}, not {value!r}")


class AxiMaster(wiring.Component):
    """Turns a stream of dword memory requests into AXI4 INCR bursts.

    Consecutive requests coalesce into one burst while they have the same direction, each
    address is the previous one plus 4, the burst stays inside one 4 KiB page and has at most
    ``max_burst`` beats. An open burst closes when the next request does not continue it, when
    it is full, or when no request has been offered for more than ``gather`` cycles. Write data
    waits in a buffer of ``max_burst`` beats until its burst closes; AW carries the final length
    and the W beats follow it.

    Memory ordering: a burst is sent only when no burst of the other direction is in flight (a
    burst is in flight from its AW/AR handshake until its last response was handed to ``bus``),
    so read-after-write and write-after-read through this port see each other.

    Parameters
    ----------
    max_burst : int
        Most beats in one burst, a power of two from 1 to 256.
    outstanding : int
        Most bursts in flight at once, 1 to 64.
    gather : int
        Cycles without any offered request an open burst waits for one that continues it
        before it closes, 0 to 255 (0: close as soon as no request is offered).

    Members
    -------
    bus : In(BusPortSignature())
        Requests (``addr`` a dword-aligned byte address, ``mask`` the byte enables; ``lock`` is
        ignored, the arbiter upstream implements it). Exactly one response per request, in
        request order: a read answers with the data of its R beat, a write with data 0 once
        its burst's B response arrived. ``error`` is set when the beat's RRESP (reads) or the
        burst's BRESP (writes: every request of the burst) is SLVERR or DECERR; the data of a
        failed read is 0.
    axi : Out(Axi4Signature(addr_width=32, data_width=32, id_width=1))
        INCR bursts of 4-byte beats, ID 0, AxCACHE ``0b0011``, AxPROT 0. R beats and B
        responses are accepted in issue order; RREADY and BREADY stay low while the oldest
        burst in flight is of the other direction. W beats are sent only after their AW.
    """

    bus: In(BusPortSignature())
    axi: Out(Axi4Signature(addr_width=32, data_width=32, id_width=1))

    def __init__(self, *, max_burst: int = 16, outstanding: int = 4, gather: int = 2):
        _check_int("max_burst", max_burst, 1, 256, power_of_two=True)
        _check_int("outstanding", outstanding, 1, 64)
        _check_int("gather", gather, 0, 255)
        self._max_burst = max_burst
        self._outstanding = outstanding
        self._gather = gather
        super().__init__()

    @property
    def max_burst(self) -> int:
        return self._max_burst

    @property
    def outstanding(self) -> int:
        return self._outstanding

    @property
    def gather(self) -> int:
        return self._gather

    def elaborate(self, platform):
        m = Module()
        req, rsp, axi = self.bus.req, self.bus.rsp, self.axi
        last_len = self._max_burst - 1

        m.submodules.wdata = wdata = fifo.SyncFIFOBuffered(
            width=_cw_layout.size, depth=self._max_burst)
        m.submodules.wlen = wlen = fifo.SyncFIFOBuffered(width=8, depth=self._outstanding)
        m.submodules.inflight = inflight = fifo.SyncFIFOBuffered(
            width=_ir_layout.size, depth=self._outstanding)

        # --- issue stage: one closed burst, sent on AW or AR ---------------------------------
        i_valid = Signal()
        i_write = Signal()
        i_word = Signal(30)             # word address of the first beat
        i_len = Signal(8)
        i_dir = Signal()                # direction of the bursts in flight, if any
        i_allowed = Signal()
        i_taken = Signal()
        m.d.comb += [
            i_allowed.eq(inflight.w_rdy & ((inflight.level == 0) | (i_dir == i_write))
                         & (~i_write | wlen.w_rdy)),   # wlen may free its slot a cycle late
            axi.awvalid.eq(i_valid & i_write & i_allowed),
            axi.arvalid.eq(i_valid & ~i_write & i_allowed),
            i_taken.eq((axi.awvalid & axi.awready) | (axi.arvalid & axi.arready)),
        ]
        for addr, length, size, burst, cache in (
                (axi.awaddr, axi.awlen, axi.awsize, axi.awburst, axi.awcache),
                (axi.araddr, axi.arlen, axi.arsize, axi.arburst, axi.arcache)):
            m.d.comb += [addr.eq(i_word << 2), length.eq(i_len), size.eq(_SIZE_4_BYTES),
                         burst.eq(AxiBurst.INCR), cache.eq(_CACHE_NORMAL_BUFFERABLE)]
        # awid, arid and the AxPROT stay 0
        i_record = _ir_layout(inflight.w_data)
        m.d.comb += [
            inflight.w_en.eq(i_taken), i_record.write.eq(i_write), i_record.len.eq(i_len),
            wlen.w_en.eq(i_taken & i_write), wlen.w_data.eq(i_len),
        ]
        with m.If(i_taken):
            m.d.sync += i_dir.eq(i_write)

        # --- coalesce stage: the open burst ------------------------------------------------
        c_open = Signal()
        c_write = Signal()
        c_word = Signal(30)             # word address of the first beat
        c_next = Signal(30)             # word address that would continue the burst
        c_len = Signal(8)               # beats so far minus one
        c_idle = Signal(range(self._gather + 1))
        c_word_in = req.payload.addr[2:]
        c_full = Signal()
        c_continues = Signal()
        c_close = Signal()
        c_room = Signal()
        m.d.comb += [
            c_full.eq(c_len == last_len),
            c_continues.eq(c_open & ~c_full & (req.payload.write == c_write)
                           & (c_word_in == c_next) & (c_next[:_PAGE_WORD_BITS] != 0)),
            c_close.eq(c_open & (~i_valid | i_taken)
                       & (c_full | Mux(req.valid, ~c_continues, c_idle == self._gather))),
            c_room.eq(~req.payload.write | wdata.w_rdy),
            req.ready.eq(c_room & (c_continues | ~c_open | c_close)),
        ]
        with m.If(c_close):
            m.d.sync += [i_valid.eq(1), i_write.eq(c_write), i_word.eq(c_word),
                         i_len.eq(c_len), c_open.eq(0)]
        with m.Elif(i_taken):
            m.d.sync += i_valid.eq(0)
        with m.If(req.valid & req.ready):
            m.d.sync += c_idle.eq(0)
            with m.If(c_continues):
                m.d.sync += [c_len.eq(c_len + 1), c_next.eq(c_next + 1)]
            with m.Else():
                m.d.sync += [c_open.eq(1), c_write.eq(req.payload.write), c_word.eq(c_word_in),
                             c_next.eq(c_word_in + 1), c_len.eq(0)]
        with m.Elif(c_open & ~req.valid & (c_idle != self._gather)):
            m.d.sync += c_idle.eq(c_idle + 1)
        c_beat = _cw_layout(wdata.w_data)
        m.d.comb += [
            wdata.w_en.eq(req.valid & req.ready & req.payload.write),
            c_beat.data.eq(req.payload.data), c_beat.strb.eq(req.payload.mask),
        ]

        # --- write-data stage: beats of issued write bursts --------------------------------
        w_beat = _cw_layout(wdata.r_data)
        w_count = Signal(8)
        w_sent = Signal()
        m.d.comb += [
            axi.wvalid.eq(wdata.r_rdy & wlen.r_rdy),
            axi.wdata.eq(w_beat.data), axi.wstrb.eq(w_beat.strb),
            axi.wlast.eq(w_count == wlen.r_data),
            w_sent.eq(axi.wvalid & axi.wready),
            wdata.r_en.eq(w_sent),
            wlen.r_en.eq(w_sent & axi.wlast),
        ]
        with m.If(w_sent):
            m.d.sync += w_count.eq(Mux(axi.wlast, 0, w_count + 1))

        # --- response stage: the oldest burst in flight ------------------------------------
        r_burst = _ir_layout(inflight.r_data)
        r_count = Signal(8)             # responses of this burst already handed on
        r_last = Signal()
        r_done = Signal()
        m.d.comb += r_last.eq(r_count == r_burst.len)
        with m.If(inflight.r_rdy & ~r_burst.write):
            r_error = axi.rresp[1]      # SLVERR or DECERR
            m.d.comb += [rsp.valid.eq(axi.rvalid), axi.rready.eq(rsp.ready),
                         rsp.payload.data.eq(Mux(r_error, 0, axi.rdata)),
                         rsp.payload.error.eq(r_error)]
        with m.If(inflight.r_rdy & r_burst.write):
            m.d.comb += [rsp.valid.eq(axi.bvalid), axi.bready.eq(rsp.ready & r_last),
                         rsp.payload.error.eq(axi.bresp[1])]
        m.d.comb += [r_done.eq(rsp.valid & rsp.ready), inflight.r_en.eq(r_done & r_last)]
        with m.If(r_done):
            m.d.sync += r_count.eq(Mux(r_last, 0, r_count + 1))

        return m
