"""The boards the project builds for: one :class:`Board` per supported amaranth-boards platform.

Each entry names its platform class (imported only when needed), the FPGA (device, package,
speed grade) and what it offers the compute unit (LUTs, block RAMs, multipliers, from the
vendors' data sheets), the UART that carries the host link, the board clock, how
openFPGALoader reaches it, and whether the open toolchain (Yosys, nextpnr-ecp5, ecppack)
builds it. The Xilinx board gets its vendor build tree only: Vivado is not run here.

The capacities are the data sheets' (Lattice DS1044 "ECP5 and ECP5-5G Family", table 1.1;
AMD DS180 "7 Series FPGAs", Artix-7 table): LUTs in the device's own LUT (LUT4 on ECP5,
LUT6 on Xilinx 7), block RAMs in 18-Kbit blocks (ECP5 EBR, Xilinx RAMB18), multipliers as
18x18 (ECP5) or DSP48E1 slices.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from gpgpu_hdl.errors import GpgpuError

__all__ = ["BoardError", "Board", "BOARDS", "board", "board_names"]


class BoardError(GpgpuError):
    """An unknown board, or a request the board cannot meet."""


@dataclass(frozen=True)
class Board:
    """One supported board.

    Attributes
    ----------
    name : str
        What the command line calls it (``ulx3s-85f``).
    title : str
        For people (``ULX3S, LFE5U-85F``).
    module, platform_class : str
        Where amaranth-boards defines its platform (``amaranth_boards.ulx3s``,
        ``ULX3S_85F_Platform``).
    family : str
        ``"ecp5"`` or ``"xilinx7"``.
    device, package, speed : str
        As the platform class says them (``LFE5U-85F``, ``BG381``, ``6``).
    luts, block_rams, multipliers : int
        Data-sheet capacity (see the module's docstring for the units).
    uart : tuple of (str, int)
        The platform resource of the host link's UART (name, number).
    uart_chip : str
        What is on the other side of it (``FT231X``; ``external adapter`` when the board has
        none and the pins are on a header).
    clock : tuple of (str, int)
        The board clock resource feeding the PLL.
    clock_hz : int
        Its frequency.
    loader_args : tuple of str
        openFPGALoader's arguments that select the board or cable (``("-b", "ulx3s")``).
    open_toolchain : bool
        True when ``gpgpu board build`` runs Yosys, nextpnr and ecppack to a bitstream; False
        when it writes the vendor build tree only.
    cu_hz, bus_hz : int
        Default clocks of the compute units and of the bus (the PLL's outputs).
    note : str
        Anything a user should know (how the UART is wired, what the board lacks).
    """

    name: str
    title: str
    module: str
    platform_class: str
    family: str
    device: str
    package: str
    speed: str
    luts: int
    block_rams: int
    multipliers: int
    uart: tuple[str, int]
    uart_chip: str
    clock: tuple[str, int]
    clock_hz: int
    loader_args: tuple[str, ...]
    open_toolchain: bool
    cu_hz: int
    bus_hz: int
    note: str = ""

    def platform(self, **kwargs):
        """A new instance of the board's amaranth-boards platform."""
        module = importlib.import_module(self.module)
        return getattr(module, self.platform_class)(**kwargs)

    @property
    def block_ram_bytes(self) -> int:
        """Data bytes of one block RAM (16 Kbit without the parity bits)."""
        return 2048


#: ECP5 capacity by device (DS1044 table 1.1): LUT4, EBR (18 Kbit), 18x18 multipliers.
_ECP5 = {
    "LFE5U-12F": (12_000, 32, 28),
    "LFE5U-25F": (24_000, 56, 28),
    "LFE5U-45F": (44_000, 108, 72),
    "LFE5U-85F": (84_000, 208, 156),
    "LFE5UM5G-85F": (84_000, 208, 156),
}

#: The default clocks of the open-toolchain builds: the compute unit at 15 MHz (the 1-lane
#: unit routes at about 19-20 MHz on a speed-6 85F, docs/synth.md), the bus side at 30 MHz.
_CU_HZ, _BUS_HZ = 15_000_000, 30_000_000


def _ulx3s(size: str) -> Board:
    device = f"LFE5U-{size}F"
    luts, ebr, mult = _ECP5[device]
    return Board(
        name=f"ulx3s-{size}f", title=f"ULX3S, {device}", module="amaranth_boards.ulx3s",
        platform_class=f"ULX3S_{size}F_Platform", family="ecp5", device=device,
        package="BG381", speed="6", luts=luts, block_rams=ebr, multipliers=mult,
        uart=("uart", 0), uart_chip="FT231X (USB)", clock=("clk25", 0), clock_hz=25_000_000,
        loader_args=("-b", "ulx3s"), open_toolchain=True, cu_hz=_CU_HZ, bus_hz=_BUS_HZ,
        note="the USB port US1 carries both the UART and the JTAG that flashes it")


BOARDS: dict[str, Board] = {b.name: b for b in [
    _ulx3s("85"), _ulx3s("45"), _ulx3s("25"), _ulx3s("12"),
    Board(name="ecpix5-85f", title="LambdaConcept ECPIX-5, LFE5UM5G-85F",
          module="amaranth_boards.ecpix5", platform_class="ECPIX585Platform", family="ecp5",
          device="LFE5UM5G-85F", package="BG554", speed="8",
          luts=_ECP5["LFE5UM5G-85F"][0], block_rams=_ECP5["LFE5UM5G-85F"][1],
          multipliers=_ECP5["LFE5UM5G-85F"][2], uart=("uart", 0),
          uart_chip="FT2232 channel B (USB)", clock=("clk100", 0), clock_hz=100_000_000,
          loader_args=("-b", "ecpix5"), open_toolchain=True, cu_hz=_CU_HZ, bus_hz=_BUS_HZ,
          note="the FT2232's second channel is the UART, its first the JTAG"),
    Board(name="icesugar-pro", title="Muse Lab iCESugar-Pro, LFE5U-25F",
          module="amaranth_boards.icesugar_pro", platform_class="ICESugarProPlatform",
          family="ecp5", device="LFE5U-25F", package="BG256", speed="6",
          luts=_ECP5["LFE5U-25F"][0], block_rams=_ECP5["LFE5U-25F"][1],
          multipliers=_ECP5["LFE5U-25F"][2], uart=("uart", 0),
          uart_chip="iCELink (CMSIS-DAP, USB)", clock=("clk25", 0), clock_hz=25_000_000,
          loader_args=("-c", "cmsisdap"), open_toolchain=True, cu_hz=_CU_HZ,
          bus_hz=_BUS_HZ, note="the iCELink debugger on the carrier is the UART and the JTAG"),
    Board(name="colorlight-5a-75b", title="Colorlight 5A-75B v7.0, LFE5U-25F",
          module="amaranth_boards.colorlight_5a75b_r7_0",
          platform_class="Colorlight_5A75B_R70Platform", family="ecp5", device="LFE5U-25F",
          package="BG256", speed="6", luts=_ECP5["LFE5U-25F"][0],
          block_rams=_ECP5["LFE5U-25F"][1], multipliers=_ECP5["LFE5U-25F"][2],
          uart=("uart", 0), uart_chip="external adapter on J19", clock=("clk25", 0),
          clock_hz=25_000_000, loader_args=("-b", "colorlight"), open_toolchain=True,
          cu_hz=_CU_HZ, bus_hz=_BUS_HZ,
          note="no USB: a 3.3 V USB-UART adapter on J19 (TX on the LED pin P11, RX on the "
               "button pin M13) and a JTAG adapter (pass --cable to flash)"),
    Board(name="arty-a7-100t", title="Digilent Arty A7-100T, XC7A100T",
          module="amaranth_boards.arty_a7", platform_class="ArtyA7_100Platform",
          family="xilinx7", device="xc7a100ti", package="csg324", speed="1L",
          luts=63_400, block_rams=270, multipliers=240, uart=("uart", 0),
          uart_chip="FT2232 channel B (USB)", clock=("clk100", 0), clock_hz=100_000_000,
          loader_args=("-b", "arty_a7_100t"), open_toolchain=False, cu_hz=_CU_HZ,
          bus_hz=_BUS_HZ,
          note="vendor build tree only: run its build_top.sh with Vivado to get the bitstream"),
]}


def board_names() -> tuple[str, ...]:
    return tuple(BOARDS)


def board(name: str) -> Board:
    """The board called ``name``; :class:`BoardError` naming the known ones otherwise."""
    try:
        return BOARDS[name]
    except KeyError:
        raise BoardError(f"unknown board {name!r}; boards are "
                         f"{', '.join(BOARDS)}") from None
