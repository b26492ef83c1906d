# amaranth: UnusedElaboratable=no
"""The PLL divider search against an exhaustive search over every divider combination (numpy),
with the limits restated here from the data sheets (Lattice FPGA-DS-02012 sysCLOCK PLL
timing and the EHXPLLL divider ranges; Xilinx DS181 for PLLE2 at speed grade -1), and the
primitive's parameters as the setting says."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from amaranth.back import rtlil

from boards.pll import Ecp5Pll, PllError, Xilinx7Pll, ecp5_pll, xilinx7_pll

MHZ = 1e6
TOLERANCE = 0.005

# ECP5: f_in 8-400, PFD 3.125-400, VCO 400-800, outputs 3.125-400 MHz;
# CLKI_DIV 1-128, CLKFB_DIV 1-80, CLKOP_DIV/CLKOS_DIV 1-128; feedback through CLKOP
ECP5 = dict(pfd=(3.125 * MHZ, 400 * MHZ), vco=(400 * MHZ, 800 * MHZ),
            out=(3.125 * MHZ, 400 * MHZ), clki=128, clkfb=80, clko=128)
# Xilinx 7 PLLE2 (-1): PFD 19-450, VCO 800-1600, outputs 6.25-450 MHz;
# DIVCLK_DIVIDE 1-56, CLKFBOUT_MULT 2-64, CLKOUTn_DIVIDE 1-128
XILINX = dict(pfd=(19 * MHZ, 450 * MHZ), vco=(800 * MHZ, 1600 * MHZ),
              out=(6.25 * MHZ, 450 * MHZ), d=56, m=(2, 64), o=128)


def inside(value, bounds, slack=1e-9):
    return bounds[0] * (1 - slack) <= value <= bounds[1] * (1 + slack)


def ecp5_best_error(fin, cu, bus):
    """The smallest worse-output error over every (CLKI_DIV, CLKFB_DIV, CLKOP_DIV, CLKOS_DIV)
    within the limits."""
    lo_out, hi_out = ECP5["out"]
    clki = np.arange(1, ECP5["clki"] + 1)[:, None, None]
    fb = np.arange(1, ECP5["clkfb"] + 1)[None, :, None]
    op = np.arange(1, ECP5["clko"] + 1)[None, None, :]
    pfd = fin / clki
    vco = pfd * fb * op
    fop = vco / op
    ok = ((pfd >= ECP5["pfd"][0]) & (pfd <= ECP5["pfd"][1]) & (vco >= ECP5["vco"][0])
          & (vco <= ECP5["vco"][1]) & (fop >= lo_out) & (fop <= hi_out))
    vco_ok = np.broadcast_to(vco, ok.shape)[ok]
    fop_ok = np.broadcast_to(fop, ok.shape)[ok]
    os_ = np.arange(1, ECP5["clko"] + 1)[None, :]
    fos = vco_ok[:, None] / os_
    err = np.maximum(np.abs(fop_ok - cu)[:, None] / cu, np.abs(fos - bus) / bus)
    err[(fos < lo_out) | (fos > hi_out)] = np.inf
    return float(err.min())


def xilinx_best_error(fin, cu, bus):
    lo_out, hi_out = XILINX["out"]
    d = np.arange(1, XILINX["d"] + 1)[:, None]
    m = np.arange(XILINX["m"][0], XILINX["m"][1] + 1)[None, :]
    pfd = fin / d
    vco = pfd * m
    ok = ((pfd >= XILINX["pfd"][0]) & (pfd <= XILINX["pfd"][1]) & (vco >= XILINX["vco"][0])
          & (vco <= XILINX["vco"][1]))
    vco_ok = np.broadcast_to(vco, ok.shape)[ok][:, None]
    fo = vco_ok / np.arange(1, XILINX["o"] + 1)[None, :]
    bad = (fo < lo_out) | (fo > hi_out)
    e0 = np.where(bad, np.inf, np.abs(fo - cu) / cu).min(axis=1)
    e1 = np.where(bad, np.inf, np.abs(fo - bus) / bus).min(axis=1)
    return float(np.maximum(e0, e1).min())


def check_ecp5(s, fin):
    """The setting within the limits; its frequencies recomputed from the dividers."""
    assert 1 <= s.input_div <= ECP5["clki"] and 1 <= s.feedback <= ECP5["clkfb"]
    assert 1 <= s.cu_div <= ECP5["clko"] and 1 <= s.bus_div <= ECP5["clko"]
    pfd = fin / s.input_div
    vco = pfd * s.feedback * s.cu_div
    cu, bus = vco / s.cu_div, vco / s.bus_div
    assert inside(pfd, ECP5["pfd"]) and inside(vco, ECP5["vco"])
    assert inside(cu, ECP5["out"]) and inside(bus, ECP5["out"])
    assert float(s.cu_hz) == pytest.approx(cu) and float(s.bus_hz) == pytest.approx(bus)
    assert 0 <= s.cu_phase < s.cu_div and 0 <= s.bus_phase < s.bus_div
    return cu, bus


def check_xilinx(s, fin):
    assert 1 <= s.input_div <= XILINX["d"] and XILINX["m"][0] <= s.feedback <= XILINX["m"][1]
    assert 1 <= s.cu_div <= XILINX["o"] and 1 <= s.bus_div <= XILINX["o"]
    pfd = fin / s.input_div
    vco = pfd * s.feedback
    cu, bus = vco / s.cu_div, vco / s.bus_div
    assert inside(pfd, XILINX["pfd"]) and inside(vco, XILINX["vco"])
    assert inside(cu, XILINX["out"]) and inside(bus, XILINX["out"])
    assert float(s.cu_hz) == pytest.approx(cu) and float(s.bus_hz) == pytest.approx(bus)
    return cu, bus


def requests():
    fixed = [(25e6, 15e6, 30e6), (25e6, 20e6, 50e6), (25e6, 12.5e6, 25e6),
             (25e6, 40e6, 100e6), (100e6, 15e6, 30e6), (100e6, 33e6, 66e6),
             (100e6, 7e6, 48e6), (25e6, 16e6, 30e6), (12e6, 48e6, 60e6)]
    rng = random.Random(22)
    drawn = [(rng.choice([12e6, 25e6, 48e6, 100e6]), rng.randrange(8, 120) * 0.5e6,
              rng.randrange(10, 160) * 0.5e6) for _ in range(8)]
    return [tuple(int(x) for x in r) for r in fixed + drawn]


@pytest.mark.parametrize("fin, cu, bus", requests())
def test_ecp5_search_finds_the_exhaustive_optimum(fin, cu, bus):
    best = ecp5_best_error(fin, cu, bus)
    if best > TOLERANCE * (1 + 1e-9):
        with pytest.raises(PllError) as info:
            ecp5_pll(fin, cu, bus)
        message = str(info.value)
        assert "\n" not in message and f"({best:.2%} off)" in message
        return
    s = ecp5_pll(fin, cu, bus)
    got_cu, got_bus = check_ecp5(s, fin)
    error = max(abs(got_cu - cu) / cu, abs(got_bus - bus) / bus)
    assert error == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("fin, cu, bus", [r for r in requests() if r[0] >= 19e6
                                          and r[1] >= 6.25e6 and r[2] >= 6.25e6])
def test_xilinx7_search_finds_the_exhaustive_optimum(fin, cu, bus):
    best = xilinx_best_error(fin, cu, bus)
    if best > TOLERANCE * (1 + 1e-9):
        with pytest.raises(PllError):
            xilinx7_pll(fin, cu, bus)
        return
    s = xilinx7_pll(fin, cu, bus)
    got_cu, got_bus = check_xilinx(s, fin)
    assert max(abs(got_cu - cu) / cu, abs(got_bus - bus) / bus) == pytest.approx(best,
                                                                                  abs=1e-12)


@pytest.mark.parametrize("fin, cu, bus, what", [
    (25_000_000, 500_000_000, 30_000_000, "compute-unit clock"),
    (25_000_000, 15_000_000, 2_000_000, "bus clock"),
    (5_000_000, 15_000_000, 30_000_000, "input clock"),
    (25_000_000, 0, 30_000_000, "compute-unit clock"),
])
def test_requests_outside_the_ranges_are_refused_in_one_line(fin, cu, bus, what):
    with pytest.raises(PllError) as info:
        ecp5_pll(fin, cu, bus)
    assert what in str(info.value) and "\n" not in str(info.value)


def _parameters(text: str, cell: str) -> dict[str, str]:
    body = text[text.index(f"cell \\{cell} "):]
    body = body[:body.index("\n  end")]
    return dict(re.findall(r"parameter \\(\w+) (\S+)", body))


def test_ecp5_primitive_carries_the_setting():
    s = ecp5_pll(25_000_000, 20_000_000, 50_000_000)
    params = _parameters(rtlil.convert(Ecp5Pll(s)), "EHXPLLL")
    assert int(params["CLKI_DIV"]) == s.input_div and int(params["CLKFB_DIV"]) == s.feedback
    assert int(params["CLKOP_DIV"]) == s.cu_div and int(params["CLKOS_DIV"]) == s.bus_div
    assert params["FEEDBK_PATH"] == '"CLKOP"'
    # the VCO the parameters give, by the data sheet's formula
    vco = 25e6 / int(params["CLKI_DIV"]) * int(params["CLKFB_DIV"]) * int(params["CLKOP_DIV"])
    assert vco / int(params["CLKOP_DIV"]) == pytest.approx(20e6)
    assert vco / int(params["CLKOS_DIV"]) == pytest.approx(50e6)


def test_xilinx_primitive_carries_the_setting():
    s = xilinx7_pll(100_000_000, 15_000_000, 30_000_000)
    params = _parameters(rtlil.convert(Xilinx7Pll(s)), "PLLE2_BASE")
    vco = 100e6 / int(params["DIVCLK_DIVIDE"]) * int(params["CLKFBOUT_MULT"])
    assert vco / int(params["CLKOUT0_DIVIDE"]) == pytest.approx(15e6)
    assert vco / int(params["CLKOUT1_DIVIDE"]) == pytest.approx(30e6)


def test_a_setting_of_one_family_does_not_build_the_other():
    with pytest.raises(PllError):
        Ecp5Pll(xilinx7_pll(100_000_000, 15_000_000, 30_000_000))
    with pytest.raises(PllError):
        Xilinx7Pll(ecp5_pll(25_000_000, 15_000_000, 30_000_000))
