"""The board's gateware below the clocks: the host link (UART, SLIP, :class:`BridgeCore`) in
front of the SoC, whose block-RAM window (the prefetch buffer) is the board memory.

:class:`BoardSoc` runs its bus side in ``sync`` and the compute units in ``cu``; a board top
(one per amaranth-boards platform) makes both clocks and instantiates it. Global memory beyond
the window answers DECERR (:class:`AxiErrorSubordinate`), so a kernel that reaches outside it
ends its launch with a memory error instead of hanging.
"""

import hashlib

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.soc.axi import Axi4Signature, AxiResp
from gpgpu_hdl.soc.regmap import built_mnemonics, soc_register_map
from gpgpu_hdl.soc.top import SocTop

from .bridge import BridgeCore
from .framing import SlipDecoder, SlipEncoder
from .protocol import MAX_WORDS, VERSION, Info
from .uart import UartRx, UartTx

__all__ = ["AxiErrorSubordinate", "BoardSoc", "profile_digest"]


def profile_digest(config: CuConfig) -> bytes:
    """16 bytes naming the instructions a unit of ``config`` executes (the host compares them
    with its kernels' before a launch)."""
    names = "\n".join(sorted(built_mnemonics(config)))
    return hashlib.sha256(names.encode()).digest()[:16]


class AxiErrorSubordinate(wiring.Component):
    """An AXI4 subordinate with nothing behind it: every write answers DECERR, every read
    burst its ``arlen + 1`` beats of 0 with DECERR.

    Members
    -------
    axi : In(Axi4Signature())
    """

    axi: In(Axi4Signature())

    def elaborate(self, platform):
        m = Module()
        a = self.axi
        beats = Signal(9)
        reading = Signal()
        aw_done, w_done = Signal(), Signal()    # the write's address and its last beat are in
        m.d.comb += [a.bresp.eq(AxiResp.DECERR), a.rresp.eq(AxiResp.DECERR), a.rdata.eq(0),
                     a.awready.eq(~aw_done), a.wready.eq(~w_done), a.arready.eq(~reading),
                     a.rvalid.eq(reading), a.rlast.eq(beats == 1),
                     a.bvalid.eq(aw_done & w_done)]
        with m.If(a.arvalid & a.arready):
            m.d.sync += [reading.eq(1), beats.eq(a.arlen + 1), a.rid.eq(a.arid)]
        with m.Elif(a.rvalid & a.rready):
            m.d.sync += beats.eq(beats - 1)
            with m.If(beats == 1):
                m.d.sync += reading.eq(0)
        with m.If(a.bvalid & a.bready):
            m.d.sync += [aw_done.eq(0), w_done.eq(0)]
        with m.Else():
            with m.If(a.awvalid & a.awready):
                m.d.sync += [aw_done.eq(1), a.bid.eq(a.awid)]
            with m.If(a.wvalid & a.wready & a.wlast):
                m.d.sync += w_done.eq(1)
        return m


class BoardSoc(wiring.Component):
    """The SoC behind the host link.

    Parameters
    ----------
    config : CuConfig
        The compute unit.
    memory_bytes : int
        The board memory: the SoC's prefetch window (a power of two, 256 to 262144).
    divisor : int
        Bus clock cycles per UART bit.
    cu_hz, bus_hz : int
        The clocks the board top gives ``cu`` and ``sync`` (reported by ``INFO``).

    Members
    -------
    rx : In(1)
        The UART line from the host.
    tx : Out(1)
        The UART line to the host.
    irq : Out(1)
        The SoC's interrupt (a launch is done), for a LED.
    """

    rx: In(1, init=1)
    tx: Out(1, init=1)
    irq: Out(1)

    def __init__(self, config: CuConfig, *, memory_bytes: int, divisor: int, cu_hz: int,
                 bus_hz: int) -> None:
        self._config = config
        self._regmap = soc_register_map(config, cus=1, prefetch_bytes=memory_bytes)
        (window,) = [w for w in self._regmap.windows if w.name == "prefetch"]
        self._memory = (window.offset, memory_bytes)
        self._info = Info(VERSION, MAX_WORDS, memory_bytes, cu_hz, bus_hz,
                          profile_digest(config))
        self._divisor = divisor
        super().__init__()

    @property
    def info(self) -> Info:
        """What the bridge answers to ``INFO``."""
        return self._info

    @property
    def memory(self) -> tuple[int, int]:
        """AXI4-Lite address and size of the board memory window."""
        return self._memory

    def elaborate(self, platform):
        m = Module()
        m.submodules.soc = soc = SocTop(self._config, prefetch_bytes=self._memory[1])
        m.submodules.uart_rx = rx = UartRx(divisor=self._divisor)
        m.submodules.uart_tx = tx = UartTx(divisor=self._divisor)
        m.submodules.slip_rx = dec = SlipDecoder(limit=4 * MAX_WORDS + 12)
        m.submodules.slip_tx = enc = SlipEncoder()
        m.submodules.bridge = bridge = BridgeCore(addr_width=soc.regmap.addr_width,
                                                  memory=self._memory, info=self._info)
        m.submodules.no_memory = nothing = AxiErrorSubordinate()
        m.d.comb += [rx.rx.eq(self.rx), self.tx.eq(tx.tx), self.irq.eq(soc.irq)]
        connect(m, uart=rx.data, slip=dec.line)
        connect(m, slip=dec.frame, bridge=bridge.rx)
        connect(m, bridge=bridge.tx, slip=enc.frame)
        connect(m, slip=enc.line, uart=tx.data)
        connect(m, bridge=bridge.bus, soc=soc.host)
        connect(m, soc=soc.mem, memory=nothing.axi)
        return m
