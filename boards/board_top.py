"""The top of a board's design: its oscillator through a PLL into the two clock domains (``cu``
for the compute units, ``sync`` for the bus), each held in reset until the PLL locks, the
board's UART pins, and :class:`~boards.top.BoardSoc` (the host link in front of the SoC).

Global memory is the SoC's block-RAM window, sized by :func:`memory_bytes` to what the unit
leaves free on the device (a power of two: the window's decoder wants one).
"""

import dataclasses

from amaranth.build import ResourceError
from amaranth.hdl import ClockDomain, ClockSignal, Module
from amaranth.lib import io, wiring
from amaranth.lib.cdc import ResetSynchronizer

from gpgpu_hdl.config import DEVICES, ConfigError, CuConfig

from .platforms import Board, BoardError
from .pll import Ecp5Pll, PllSetting, Xilinx7Pll, ecp5_pll, xilinx7_pll
from .top import BoardSoc
from .uart import divisor_for

__all__ = ["BAUD", "RESERVED_BLOCK_RAMS", "MIN_MEMORY", "MAX_MEMORY", "unit_config",
           "memory_bytes", "pll_setting", "BoardTop"]

#: The host link's default rate (every USB UART of the boards takes it).
BAUD = 115_200
#: Block RAMs the SoC and the bridge use besides the unit and the memory window (the bridge's
#: frame buffer, and room for Yosys' choices on the queues).
RESERVED_BLOCK_RAMS = 4
#: The window's bounds (:class:`~gpgpu_hdl.soc.top.SocTop`).
MIN_MEMORY, MAX_MEMORY = 256, 1 << 18


def unit_config(board: Board, config: CuConfig) -> CuConfig:
    """``config`` checked against ``board``'s block RAMs (its ``device`` set to the board's
    where :data:`~gpgpu_hdl.config.DEVICES` knows the part); :class:`BoardError` when it
    does not fit."""
    device = {"LFE5UM5G-85F": "LFE5U-85F"}.get(board.device, board.device)
    if device in DEVICES:
        try:
            config = dataclasses.replace(config, device=device)
        except ConfigError as exc:
            raise BoardError(f"{board.name}: the unit {exc}") from None
    res = config.resources()
    if res.ebr + RESERVED_BLOCK_RAMS + MIN_MEMORY // board.block_ram_bytes > board.block_rams:
        raise BoardError(f"{board.name}: the unit needs about {res.ebr} block RAMs "
                         f"({res.breakdown()}) and the SoC {RESERVED_BLOCK_RAMS} more; the "
                         f"{board.device} has {board.block_rams}: reduce wave_slots, vgprs, "
                         f"lds_bytes or imem_bytes (--config)")
    return config


def memory_bytes(board: Board, config: CuConfig) -> int:
    """The largest power-of-two memory window (256 bytes to 256 KiB) that fits in the block
    RAMs ``config``'s unit and the SoC leave free on ``board``."""
    free = board.block_rams - config.resources().ebr - RESERVED_BLOCK_RAMS
    size = MIN_MEMORY
    while size * 2 <= min(MAX_MEMORY, free * board.block_ram_bytes):
        size *= 2
    if size > free * board.block_ram_bytes:
        raise BoardError(f"{board.name}: no block RAM left for the memory window")
    return size


def pll_setting(board: Board, cu_hz: int | None = None, bus_hz: int | None = None,
                ) -> PllSetting:
    """The PLL setting for ``board``'s clocks (its defaults where not given)."""
    cu_hz = board.cu_hz if cu_hz is None else cu_hz
    bus_hz = board.bus_hz if bus_hz is None else bus_hz
    search = ecp5_pll if board.family == "ecp5" else xilinx7_pll
    return search(board.clock_hz, cu_hz, bus_hz)


class BoardTop(wiring.Component):
    """A board's whole design (elaborate it with the board's platform).

    Parameters
    ----------
    board : Board
        The board.
    config : CuConfig
        The compute unit (checked by :func:`unit_config`).
    setting : PllSetting
        The clocks (from :func:`pll_setting`).
    baud : int
        The host link's rate.
    memory : int or None
        The memory window in bytes (default: :func:`memory_bytes`).
    """

    def __init__(self, board: Board, config: CuConfig, setting: PllSetting, *,
                 baud: int = BAUD, memory: int | None = None) -> None:
        self._board = board
        self._config = unit_config(board, config)
        self._setting = setting
        self._memory = memory_bytes(board, self._config) if memory is None else memory
        self._cu_hz = round(setting.cu_hz)
        self._bus_hz = round(setting.bus_hz)
        try:
            self._divisor = divisor_for(self._bus_hz, baud)
        except ValueError as exc:
            raise BoardError(f"the host link at {baud} baud: {exc}") from None
        self._baud = baud
        super().__init__({})

    @property
    def board(self) -> Board:
        return self._board

    @property
    def config(self) -> CuConfig:
        return self._config

    @property
    def setting(self) -> PllSetting:
        return self._setting

    @property
    def memory(self) -> int:
        """The memory window, bytes."""
        return self._memory

    @property
    def baud(self) -> int:
        return self._baud

    def elaborate(self, platform):
        m = Module()
        board = self._board
        clk = platform.request(*board.clock, dir="-")
        m.submodules.clk_buf = clk_buf = io.Buffer("i", clk)
        pll_class = Ecp5Pll if board.family == "ecp5" else Xilinx7Pll
        m.submodules.pll = pll = pll_class(self._setting)
        m.d.comb += pll.clk_in.eq(clk_buf.i)

        # no constraints on the two clocks: nextpnr and Vivado derive them from the
        # oscillator's (the platform's) and the PLL's dividers
        for name, clock in (("sync", pll.bus_clk), ("cu", pll.cu_clk)):
            m.domains += ClockDomain(name)
            m.d.comb += ClockSignal(name).eq(clock)
            m.submodules[f"{name}_reset"] = ResetSynchronizer(~pll.locked, domain=name)

        m.submodules.soc = soc = BoardSoc(self._config, memory_bytes=self._memory,
                                          divisor=self._divisor, cu_hz=self._cu_hz,
                                          bus_hz=self._bus_hz)
        uart = platform.request(*board.uart, dir="-")
        m.submodules.uart_rx = rx = io.Buffer("i", uart.rx)
        m.submodules.uart_tx = tx = io.Buffer("o", uart.tx)
        m.d.comb += [soc.rx.eq(rx.i), tx.o.eq(soc.tx)]
        # LEDs where the board has them free: a launch done, and the PLL locked
        for number, value in ((0, soc.irq), (1, pll.locked)):
            try:
                led = platform.request("led", number, dir="-")
            except ResourceError:
                continue
            m.submodules[f"led{number}"] = buf = io.Buffer("o", led)
            m.d.comb += buf.o.eq(value)
        return m
