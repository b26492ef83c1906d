"""The bus side of the SoC's memory system: the compute units' requests, arbitrated and routed
either to the block-RAM prefetch buffer or to the external (AXI) memory port.

Everything here runs in ``sync``; the SoC top re-clocks it into the bus/memory domain with
:class:`~amaranth.hdl.DomainRenamer`.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, fifo, memory, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from .axi import BusPortSignature, BusResponse, WindowSignature

__all__ = ["PrefetchBuffer", "MemorySystem"]


def _check_window_bytes(name: str, value, *, allow_zero: bool):
    ok = (isinstance(value, int) and not isinstance(value, bool)
          and ((allow_zero and value == 0) or (value >= 256 and value & (value - 1) == 0)))
    if not ok:
        zero = "0 or " if allow_zero else ""
        raise ValueError(f"{name} must be {zero}a power of two of at least 256, not {value!r}")


class PrefetchBuffer(wiring.Component):
    """A block RAM of ``bytes`` bytes with two sides: one serves bus requests, the other is the
    host's window into it.

    Bus side (``port``): only the low ``log2(bytes)`` bits of the byte address are used (bits
    0-1 are ignored, accesses are whole dwords with a byte mask); the caller sends only requests
    that fall in its window. One response per request, in request order: it is offered the
    cycle after the request is accepted (read data; 0 for writes; ``error`` always 0) and,
    while ``port.rsp.ready`` is low, stays offered from a 2-entry queue. ``port.req.ready`` is
    high every cycle in which fewer than two answers are pending, so requests are accepted at
    full rate as long as responses are taken in the cycle they are offered.

    Host side (``host``): word address; ``r_data`` is valid the cycle after ``r_en`` and holds
    until the next ``r_en``; ``w_en`` writes the bytes selected by ``w_strb``.

    The two sides share the RAM's one read-write port, the host first: in a cycle with
    ``host.r_en`` or ``host.w_en`` the bus side takes no request (``port.req.ready`` is low).
    So the sides never collide, and the RAM is a plain single-port memory that reads the old
    word when it writes it, which an FPGA block RAM implements (an ECP5 ``DP16KD`` in
    ``READBEFOREWRITE`` mode); the host is expected to use its side while no launch runs,
    when the bus side is idle anyway.

    Parameters
    ----------
    bytes : int
        Size in bytes: a power of two, at least 256.

    Members
    -------
    port : In(BusPortSignature())
        Bus target.
    host : In(WindowSignature(addr_width=log2(bytes) - 2))
        Host window (word address).
    """

    def __init__(self, *, bytes: int):
        _check_window_bytes("bytes", bytes, allow_zero=False)
        self._bytes = bytes
        self._addr_width = bytes.bit_length() - 3
        self._data = memory.MemoryData(shape=32, depth=bytes // 4, init=[])
        super().__init__({
            "port": In(BusPortSignature()),
            "host": In(WindowSignature(addr_width=self._addr_width)),
        })

    @property
    def bytes(self) -> int:
        return self._bytes

    @property
    def addr_width(self) -> int:
        """Width of the word address (the ``host`` port's ``addr``)."""
        return self._addr_width

    @property
    def data(self) -> memory.MemoryData:
        """The RAM contents (for simulation preload and inspection)."""
        return self._data

    def elaborate(self, platform):
        m = Module()
        m.submodules.ram = ram = memory.Memory(self._data)
        wp = ram.write_port(granularity=8)
        rp = ram.read_port(transparent_for=())
        host_turn = Signal()        # the host has the port this cycle
        m.d.comb += host_turn.eq(self.host.r_en | self.host.w_en)

        # bus side: request cycle (b_), read data cycle (p_), and a 2-entry queue for answers
        # that could not be handed over at once
        req, rsp = self.port.req, self.port.rsp
        b_index = req.payload.addr[2:2 + self._addr_width]
        b_take = Signal()
        m.d.comb += b_take.eq(req.valid & req.ready)

        p_valid = Signal()
        p_write = Signal()
        p_data = Signal(32)
        m.d.sync += [p_valid.eq(b_take), p_write.eq(req.payload.write)]
        m.d.comb += p_data.eq(Mux(p_write, 0, rp.data))

        m.submodules.answers = answers = fifo.SyncFIFO(width=32, depth=2)
        # at most two answers are ever in flight (p_ stage plus queue), so the queue has room
        # for the p_ answer whenever it has to wait
        m.d.comb += [
            req.ready.eq((answers.level + p_valid < 2) & ~host_turn),
            rsp.valid.eq(answers.r_rdy | p_valid),
            rsp.payload.data.eq(Mux(answers.r_rdy, answers.r_data, p_data)),
            answers.r_en.eq(rsp.ready),
            answers.w_data.eq(p_data),
            answers.w_en.eq(p_valid & ~(rsp.ready & ~answers.r_rdy)),
        ]

        # the port: the host's access, else the bus side's request
        with m.If(host_turn):
            m.d.comb += [rp.addr.eq(self.host.addr), wp.addr.eq(self.host.addr),
                         wp.data.eq(self.host.w_data)]
            with m.If(self.host.w_en):
                m.d.comb += wp.en.eq(self.host.w_strb)
        with m.Else():
            m.d.comb += [rp.addr.eq(b_index), wp.addr.eq(b_index),
                         wp.data.eq(req.payload.data)]
            with m.If(b_take & req.payload.write):
                m.d.comb += wp.en.eq(req.payload.mask)

        # host read data: from the port the cycle after r_en, then held (the bus side may
        # read other words meanwhile)
        h_fresh = Signal()
        h_held = Signal(32)
        m.d.sync += h_fresh.eq(self.host.r_en)
        with m.If(h_fresh):
            m.d.sync += h_held.eq(rp.data)
        m.d.comb += self.host.r_data.eq(Mux(h_fresh, rp.data, h_held))
        return m


class MemorySystem(wiring.Component):
    """Arbiter and router between the compute units' bus ports, the prefetch buffer and the
    external memory port.

    Arbitration: one request is accepted per cycle, chosen among the requesting sources with
    rotating priority (the source after the last one granted comes first). A granted request
    stays granted until it is accepted, so a request offered to ``ext`` stays offered,
    unchanged, until ``ext`` accepts it (sources, like any stream, keep a request offered until
    it is accepted). After a request with ``lock=1`` is accepted, only that source is granted
    until its next request has been accepted (the write half of an atomic read-modify-write);
    no other source's request is accepted in between. A source must therefore send that next
    request without waiting for anything but its own responses.

    Routing: a request whose byte address lies in ``[prefetch_base, prefetch_base +
    prefetch_bytes)`` goes to the prefetch buffer (1 cycle to the response at best), every other
    request to ``ext``. With ``prefetch_bytes == 0`` everything goes to ``ext``.

    Responses: each source receives exactly one response per request, in its request order.
    Responses are handed out in global acceptance order: the oldest outstanding request is
    answered first, so a fast buffer answer waits behind an earlier (slow) ``ext`` answer of any
    source, and a source that holds ``rsp.ready`` low holds up the responses of all sources
    behind it (head-of-line blocking). At most ``outstanding`` requests are in flight; beyond
    that, acceptance stops until a response is delivered. Every source must accept its
    responses without first needing another of its requests accepted.

    Parameters
    ----------
    sources : int
        Number of initiator ports (compute units), at least 1.
    prefetch_bytes : int
        Size of the prefetch window: 0 (no buffer) or a power of two of at least 256.
    outstanding : int
        Requests in flight at most (all sources and targets together), at least 2.

    Members
    -------
    sources : In(BusPortSignature()).array(sources)
        One target port per initiator.
    ext : Out(BusPortSignature())
        Requests outside the window. The subordinate answers each request exactly once, in
        order, any number of cycles later, with ``error=1`` for a failed access.
    prefetch_base : In(32)
        Byte address of the window, aligned to ``prefetch_bytes``; held steady while requests
        are in flight.
    host : In(WindowSignature(addr_width=log2(prefetch_bytes) - 2))
        Only when ``prefetch_bytes > 0``: the prefetch buffer's host window
        (see :class:`PrefetchBuffer`).
    error : Out(1)
        Sticky: a response with ``error=1`` was delivered to a source.
    error_addr : Out(32)
        The byte address of the request of the first such response (0 while ``error`` is 0).
    clear : In(1)
        Clears ``error`` and ``error_addr`` (takes precedence over a failing response in the
        same cycle).
    """

    def __init__(self, *, sources: int, prefetch_bytes: int, outstanding: int = 8):
        if not isinstance(sources, int) or isinstance(sources, bool) or sources < 1:
            raise ValueError(f"sources must be a positive integer, not {sources!r}")
        _check_window_bytes("prefetch_bytes", prefetch_bytes, allow_zero=True)
        if (not isinstance(outstanding, int) or isinstance(outstanding, bool)
                or outstanding < 2):
            raise ValueError(f"outstanding must be an integer of at least 2, not {outstanding!r}")
        self._source_count = sources
        self._prefetch_bytes = prefetch_bytes
        self._outstanding = outstanding
        members = {
            "sources": In(BusPortSignature()).array(sources),
            "ext": Out(BusPortSignature()),
            "prefetch_base": In(32),
            "error": Out(1),
            "error_addr": Out(32),
            "clear": In(1),
        }
        if prefetch_bytes:
            members["host"] = In(WindowSignature(addr_width=prefetch_bytes.bit_length() - 3))
        super().__init__(members)

    @property
    def source_count(self) -> int:
        return self._source_count

    @property
    def prefetch_bytes(self) -> int:
        return self._prefetch_bytes

    @property
    def outstanding(self) -> int:
        return self._outstanding

    def elaborate(self, platform):
        m = Module()
        n = self._source_count
        srcs = self.sources
        buf = None
        if self._prefetch_bytes:
            m.submodules.prefetch = buf = PrefetchBuffer(bytes=self._prefetch_bytes)
            connect(m, flipped(self.host), buf.host)

        # in-flight requests in acceptance order: who asked, where it went, which address
        route_layout = data.StructLayout({"source": range(n), "ext": 1, "addr": 32})
        m.submodules.route = route = fifo.SyncFIFO(width=route_layout.size,
                                                   depth=self._outstanding)

        # --- arbitration (a_): rotating priority, held grant, lock ---
        a_last = Signal(range(n), init=n - 1)
        a_hold = Signal()
        a_locked = Signal()
        a_owner = Signal(range(n))          # source last granted while holding or locked
        a_pick = Signal(range(n))
        with m.Switch(a_last):
            for last in range(n):
                with m.Case(last):
                    order = [(last + k) % n for k in range(1, n + 1)]
                    for i, s in enumerate(order):
                        with (m.If if i == 0 else m.Elif)(srcs[s].req.valid):
                            m.d.comb += a_pick.eq(s)
        a_src = Signal(range(n))
        m.d.comb += a_src.eq(Mux(a_hold | a_locked, a_owner, a_pick))

        a_valid = Signal()
        a_req = Signal(srcs[0].req.payload.shape())
        a_ready = Signal()
        with m.Switch(a_src):
            for s in range(n):
                with m.Case(s):
                    m.d.comb += [a_valid.eq(srcs[s].req.valid), a_req.eq(srcs[s].req.payload),
                                 srcs[s].req.ready.eq(a_ready)]

        a_window = Signal()
        if buf is not None:
            k = self._prefetch_bytes.bit_length() - 1
            m.d.comb += a_window.eq(a_req.addr[k:] == self.prefetch_base[k:])
        a_offer = Signal()
        m.d.comb += [a_offer.eq(a_valid & route.w_rdy),
                     self.ext.req.valid.eq(a_offer & ~a_window),
                     self.ext.req.payload.eq(a_req)]
        if buf is not None:
            m.d.comb += [buf.port.req.valid.eq(a_offer & a_window),
                         buf.port.req.payload.eq(a_req),
                         a_ready.eq(route.w_rdy & Mux(a_window, buf.port.req.ready,
                                                      self.ext.req.ready))]
        else:
            m.d.comb += a_ready.eq(route.w_rdy & self.ext.req.ready)
        a_take = Signal()
        a_entry = Signal(route_layout)
        m.d.comb += [a_take.eq(a_valid & a_ready),
                     a_entry.source.eq(a_src), a_entry.ext.eq(~a_window),
                     a_entry.addr.eq(a_req.addr),
                     route.w_data.eq(a_entry), route.w_en.eq(a_take)]
        m.d.sync += a_hold.eq(a_valid & ~a_ready)
        with m.If(a_valid):
            m.d.sync += a_owner.eq(a_src)
        with m.If(a_take):
            m.d.sync += [a_last.eq(a_src), a_locked.eq(a_req.lock)]

        # --- responses (r_): from the target of the oldest in-flight request to its source ---
        r_head = data.View(route_layout, route.r_data)
        r_valid = Signal()
        r_rsp = Signal(BusResponse)
        r_ready = Signal()
        r_take = Signal()
        if buf is not None:
            m.d.comb += [
                r_valid.eq(route.r_rdy & Mux(r_head.ext, self.ext.rsp.valid,
                                             buf.port.rsp.valid)),
                r_rsp.eq(Mux(r_head.ext, self.ext.rsp.payload, buf.port.rsp.payload)),
                buf.port.rsp.ready.eq(r_take & ~r_head.ext),
            ]
        else:
            m.d.comb += [r_valid.eq(route.r_rdy & self.ext.rsp.valid),
                         r_rsp.eq(self.ext.rsp.payload)]
        with m.Switch(r_head.source):
            for s in range(n):
                with m.Case(s):
                    m.d.comb += [srcs[s].rsp.valid.eq(r_valid), r_ready.eq(srcs[s].rsp.ready)]
        for s in range(n):
            m.d.comb += srcs[s].rsp.payload.eq(r_rsp)
        m.d.comb += [r_take.eq(r_valid & r_ready),
                     route.r_en.eq(r_take),
                     self.ext.rsp.ready.eq(r_take & r_head.ext)]

        with m.If(self.clear):
            m.d.sync += [self.error.eq(0), self.error_addr.eq(0)]
        with m.Elif(r_take & r_rsp.error & ~self.error):
            m.d.sync += [self.error.eq(1), self.error_addr.eq(r_head.addr)]
        return m
