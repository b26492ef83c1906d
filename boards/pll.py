"""The PLLs that make a board's two clocks (the compute units' and the bus's) from its
oscillator: their divider settings, searched within the vendors' limits, and the primitives.

ECP5 (``EHXPLLL``, Lattice FPGA-DS-02012 "ECP5 and ECP5-5G Family Data Sheet", sysCLOCK PLL
timing, and FPGA-TN-02200 "sysCLOCK PLL/DLL Design and Usage Guide"), with the feedback taken
from ``CLKOP``::

    f_pfd = f_in / CLKI_DIV                   3.125 to 400 MHz
    f_vco = f_pfd * CLKFB_DIV * CLKOP_DIV     400 to 800 MHz
    CLKOP = f_vco / CLKOP_DIV                 3.125 to 400 MHz (the compute units)
    CLKOS = f_vco / CLKOS_DIV                 3.125 to 400 MHz (the bus)

with ``f_in`` 8 to 400 MHz, ``CLKI_DIV``, ``CLKOP_DIV`` and ``CLKOS_DIV`` 1 to 128 and
``CLKFB_DIV`` 1 to 80 (the FPGA Libraries Reference Guide's range for ``EHXPLLL``). Xilinx
7-series (``PLLE2_BASE``, DS181 "Artix-7 Data Sheet", speed grade -1, and UG472 "7 Series
Clocking Resources")::

    f_pfd = f_in / DIVCLK_DIVIDE              19 to 450 MHz
    f_vco = f_pfd * CLKFBOUT_MULT             800 to 1600 MHz
    CLKOUTn = f_vco / CLKOUTn_DIVIDE          6.25 to 450 MHz

with ``f_in`` 19 to 800 MHz, ``DIVCLK_DIVIDE`` 1 to 56, ``CLKFBOUT_MULT`` 2 to 64 and
``CLKOUTn_DIVIDE`` 1 to 128.

:func:`ecp5_pll` and :func:`xilinx7_pll` return the setting whose worse output is nearest its
request (ties: the VCO nearest the middle of its range, then the smallest dividers), or raise
:class:`PllError` with the nearest frequencies when that is further than ``tolerance`` (0.5 %
by default) from the request.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

from amaranth.hdl import Instance, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.errors import GpgpuError

__all__ = ["PllError", "Limits", "ECP5_LIMITS", "XILINX7_LIMITS", "PllSetting", "ecp5_pll",
           "xilinx7_pll", "Ecp5Pll", "Xilinx7Pll", "TOLERANCE"]

#: How far (relative) an output may be from its request.
TOLERANCE = 0.005

_MHZ = 1_000_000


class PllError(GpgpuError):
    """No PLL setting gives the requested clocks."""


@dataclass(frozen=True)
class Limits:
    """A PLL family's ranges (frequencies in Hz, dividers inclusive)."""

    family: str
    f_in: tuple[int, int]
    f_pfd: tuple[int, int]
    f_vco: tuple[int, int]
    f_out: tuple[int, int]
    input_div: tuple[int, int]
    feedback: tuple[int, int]
    output_div: tuple[int, int]


ECP5_LIMITS = Limits("ECP5 EHXPLLL", f_in=(8 * _MHZ, 400 * _MHZ),
                     f_pfd=(3_125_000, 400 * _MHZ), f_vco=(400 * _MHZ, 800 * _MHZ),
                     f_out=(3_125_000, 400 * _MHZ), input_div=(1, 128), feedback=(1, 80),
                     output_div=(1, 128))

XILINX7_LIMITS = Limits("Xilinx 7 PLLE2_BASE", f_in=(19 * _MHZ, 800 * _MHZ),
                        f_pfd=(19 * _MHZ, 450 * _MHZ), f_vco=(800 * _MHZ, 1600 * _MHZ),
                        f_out=(6_250_000, 450 * _MHZ), input_div=(1, 56), feedback=(2, 64),
                        output_div=(1, 128))


@dataclass(frozen=True)
class PllSetting:
    """The dividers of a two-output PLL and what they give.

    Attributes
    ----------
    limits : Limits
        The family.
    f_in : int
        Input clock, Hz.
    input_div, feedback, cu_div, bus_div : int
        ECP5: ``CLKI_DIV``, ``CLKFB_DIV``, ``CLKOP_DIV`` (the compute units; also the
        feedback path), ``CLKOS_DIV`` (the bus). Xilinx 7: ``DIVCLK_DIVIDE``,
        ``CLKFBOUT_MULT``, ``CLKOUT0_DIVIDE``, ``CLKOUT1_DIVIDE``.
    """

    limits: Limits
    f_in: int
    input_div: int
    feedback: int
    cu_div: int
    bus_div: int

    @property
    def f_pfd(self) -> Fraction:
        return Fraction(self.f_in, self.input_div)

    @property
    def f_vco(self) -> Fraction:
        if self.limits is ECP5_LIMITS:
            return self.f_pfd * self.feedback * self.cu_div
        return self.f_pfd * self.feedback

    @property
    def cu_hz(self) -> Fraction:
        return self.f_vco / self.cu_div

    @property
    def bus_hz(self) -> Fraction:
        return self.f_vco / self.bus_div

    @property
    def cu_phase(self) -> int:
        """``CLKOP_CPHASE``: the output's coarse phase in VCO cycles; ``DIV - 1`` puts its edge
        at 0 degrees."""
        return self.cu_div - 1

    @property
    def bus_phase(self) -> int:
        """``CLKOS_CPHASE``, as :attr:`cu_phase`."""
        return self.bus_div - 1

    def describe(self) -> str:
        return (f"{_mhz(self.f_in)} MHz in, PFD {_mhz(self.f_pfd)} MHz, VCO {_mhz(self.f_vco)} "
                f"MHz: compute units {_mhz(self.cu_hz)} MHz, bus {_mhz(self.bus_hz)} MHz")


def _mhz(hz) -> str:
    return f"{float(hz) / _MHZ:.6g}"


def _within(value, bounds: tuple[int, int]) -> bool:
    return bounds[0] <= value <= bounds[1]


def _check_request(limits: Limits, f_in: int, cu_hz: int, bus_hz: int) -> None:
    for what, hz, bounds in (("input clock", f_in, limits.f_in),
                             ("compute-unit clock", cu_hz, limits.f_out),
                             ("bus clock", bus_hz, limits.f_out)):
        if not isinstance(hz, int | Fraction | float) or not _within(hz, bounds):
            raise PllError(f"the {limits.family}'s {what} must be {_mhz(bounds[0])} to "
                           f"{_mhz(bounds[1])} MHz, not {_mhz(hz)} MHz")


def _divider_candidates(f_vco: Fraction, hz: int, limits: Limits) -> list[int]:
    """The output dividers nearest ``f_vco / hz`` (the best one is among them)."""
    ideal = f_vco / hz
    lo, hi = limits.output_div
    return [d for d in {math.floor(ideal), math.ceil(ideal)}
            if lo <= d <= hi and _within(f_vco / d, limits.f_out)]


def _choose(limits: Limits, f_in: int, cu_hz: int, bus_hz: int,
            settings) -> PllSetting:
    middle = Fraction(sum(limits.f_vco), 2)
    best, best_key = None, None
    for s in settings:
        error = max(abs(s.cu_hz - cu_hz) / cu_hz, abs(s.bus_hz - bus_hz) / bus_hz)
        key = (error, abs(s.f_vco - middle), s.input_div, s.feedback, s.cu_div, s.bus_div)
        if best_key is None or key < best_key:
            best, best_key = s, key
    if best is None:
        raise PllError(f"no {limits.family} setting reaches {_mhz(cu_hz)} MHz and "
                       f"{_mhz(bus_hz)} MHz from {_mhz(f_in)} MHz")
    return best


def _check_result(best: PllSetting, cu_hz: int, bus_hz: int, tolerance: float) -> PllSetting:
    error = max(abs(best.cu_hz - cu_hz) / cu_hz, abs(best.bus_hz - bus_hz) / bus_hz)
    if error > tolerance:
        raise PllError(f"the {best.limits.family} cannot make {_mhz(cu_hz)} MHz (compute "
                       f"units) and {_mhz(bus_hz)} MHz (bus) from {_mhz(best.f_in)} MHz "
                       f"within {tolerance:.1%}: the nearest is {_mhz(best.cu_hz)} and "
                       f"{_mhz(best.bus_hz)} MHz ({float(error):.2%} off)")
    return best


def ecp5_pll(f_in: int, cu_hz: int, bus_hz: int, *,
             tolerance: float = TOLERANCE) -> PllSetting:
    """The ``EHXPLLL`` setting for ``cu_hz`` on ``CLKOP`` and ``bus_hz`` on ``CLKOS`` from
    ``f_in`` (all in Hz); :class:`PllError` when none is within ``tolerance``."""
    lim = ECP5_LIMITS
    _check_request(lim, f_in, cu_hz, bus_hz)

    def settings():
        for clki in range(lim.input_div[0], lim.input_div[1] + 1):
            pfd = Fraction(f_in, clki)
            if not _within(pfd, lim.f_pfd):
                continue
            for fb in range(lim.feedback[0], lim.feedback[1] + 1):
                f_op = pfd * fb                       # CLKOP, whatever CLKOP_DIV is
                if not _within(f_op, lim.f_out):
                    continue
                lo = max(lim.output_div[0], math.ceil(lim.f_vco[0] / f_op))
                hi = min(lim.output_div[1], math.floor(lim.f_vco[1] / f_op))
                for op in range(lo, hi + 1):
                    for os in _divider_candidates(f_op * op, bus_hz, lim):
                        yield PllSetting(lim, f_in, clki, fb, op, os)

    return _check_result(_choose(lim, f_in, cu_hz, bus_hz, settings()), cu_hz, bus_hz,
                         tolerance)


def xilinx7_pll(f_in: int, cu_hz: int, bus_hz: int, *,
                tolerance: float = TOLERANCE) -> PllSetting:
    """The ``PLLE2_BASE`` setting for ``cu_hz`` on ``CLKOUT0`` and ``bus_hz`` on
    ``CLKOUT1`` from ``f_in``; :class:`PllError` when none is within ``tolerance``."""
    lim = XILINX7_LIMITS
    _check_request(lim, f_in, cu_hz, bus_hz)

    def settings():
        for d in range(lim.input_div[0], lim.input_div[1] + 1):
            pfd = Fraction(f_in, d)
            if not _within(pfd, lim.f_pfd):
                continue
            for mult in range(lim.feedback[0], lim.feedback[1] + 1):
                vco = pfd * mult
                if not _within(vco, lim.f_vco):
                    continue
                for o0 in _divider_candidates(vco, cu_hz, lim):
                    for o1 in _divider_candidates(vco, bus_hz, lim):
                        yield PllSetting(lim, f_in, d, mult, o0, o1)

    return _check_result(_choose(lim, f_in, cu_hz, bus_hz, settings()), cu_hz, bus_hz,
                         tolerance)


class Ecp5Pll(wiring.Component):
    """An ``EHXPLLL`` with two outputs, feedback from ``CLKOP``.

    Parameters
    ----------
    setting : PllSetting
        From :func:`ecp5_pll`.

    Members
    -------
    clk_in : In(1)
        The oscillator.
    cu_clk : Out(1)
        ``CLKOP``: the compute units' clock.
    bus_clk : Out(1)
        ``CLKOS``: the bus clock.
    locked : Out(1)
        ``LOCK``: both outputs are stable.
    """

    clk_in: In(1)
    cu_clk: Out(1)
    bus_clk: Out(1)
    locked: Out(1)

    def __init__(self, setting: PllSetting) -> None:
        if setting.limits is not ECP5_LIMITS:
            raise PllError(f"Ecp5Pll takes an ECP5 setting, not a {setting.limits.family} one")
        self._setting = setting
        super().__init__()

    @property
    def setting(self) -> PllSetting:
        return self._setting

    def elaborate(self, platform):
        m = Module()
        s = self._setting
        m.submodules.pll = Instance(
            "EHXPLLL",
            # the loop filter the Lattice tools (and prjtrellis' ecppll) choose
            a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1",
            a_MFG_GMCREF_SEL="2",
            a_FREQUENCY_PIN_CLKI=_mhz(s.f_in), a_FREQUENCY_PIN_CLKOP=_mhz(s.cu_hz),
            a_FREQUENCY_PIN_CLKOS=_mhz(s.bus_hz),
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_OUTDIVIDER_MUXB="DIVB",
            p_FEEDBK_PATH="CLKOP",
            p_CLKI_DIV=s.input_div, p_CLKFB_DIV=s.feedback,
            p_CLKOP_ENABLE="ENABLED", p_CLKOP_DIV=s.cu_div, p_CLKOP_CPHASE=s.cu_phase,
            p_CLKOP_FPHASE=0,
            p_CLKOS_ENABLE="ENABLED", p_CLKOS_DIV=s.bus_div, p_CLKOS_CPHASE=s.bus_phase,
            p_CLKOS_FPHASE=0,
            i_CLKI=self.clk_in, i_CLKFB=self.cu_clk, i_RST=0, i_STDBY=0,
            i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1, i_PHASELOADREG=1,
            i_PLLWAKESYNC=0, i_ENCLKOP=0, i_ENCLKOS=0,
            o_CLKOP=self.cu_clk, o_CLKOS=self.bus_clk, o_LOCK=self.locked)
        return m


class Xilinx7Pll(wiring.Component):
    """A ``PLLE2_BASE`` with two outputs behind global buffers.

    Parameters
    ----------
    setting : PllSetting
        From :func:`xilinx7_pll`.

    Members
    -------
    clk_in, cu_clk, bus_clk, locked
        As for :class:`Ecp5Pll` (``CLKOUT0`` and ``CLKOUT1``).
    """

    clk_in: In(1)
    cu_clk: Out(1)
    bus_clk: Out(1)
    locked: Out(1)

    def __init__(self, setting: PllSetting) -> None:
        if setting.limits is not XILINX7_LIMITS:
            raise PllError(f"Xilinx7Pll takes a Xilinx 7 setting, not a "
                           f"{setting.limits.family} one")
        self._setting = setting
        super().__init__()

    @property
    def setting(self) -> PllSetting:
        return self._setting

    def elaborate(self, platform):
        from amaranth.hdl import Signal

        m = Module()
        s = self._setting
        feedback, out0, out1 = Signal(), Signal(), Signal()
        m.submodules.pll = Instance(
            "PLLE2_BASE",
            p_BANDWIDTH="OPTIMIZED", p_STARTUP_WAIT="FALSE",
            p_CLKIN1_PERIOD=round(1e9 / s.f_in, 3),
            p_DIVCLK_DIVIDE=s.input_div, p_CLKFBOUT_MULT=s.feedback,
            p_CLKOUT0_DIVIDE=s.cu_div, p_CLKOUT1_DIVIDE=s.bus_div,
            i_CLKIN1=self.clk_in, i_CLKFBIN=feedback, o_CLKFBOUT=feedback,
            i_RST=0, i_PWRDWN=0,
            o_CLKOUT0=out0, o_CLKOUT1=out1, o_LOCKED=self.locked)
        m.submodules.cu_bufg = Instance("BUFG", i_I=out0, o_O=self.cu_clk)
        m.submodules.bus_bufg = Instance("BUFG", i_I=out1, o_O=self.bus_clk)
        return m
