# amaranth: UnusedElaboratable=no
"""The board tops elaborate on every ECP5 board's platform into a build plan: the PLL with the
dividers of its setting, the UART on the pins amaranth-boards gives the board's UART, clock
constraints equal to the PLL's outputs, and a memory window that fits beside the unit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boards.board_top import RESERVED_BLOCK_RAMS, BoardTop, pll_setting, unit_config
from boards.platforms import BOARDS, BoardError
from gpgpu_hdl.config import CuConfig
from trimmer.policy import trim_config

ROOT = Path(__file__).resolve().parents[2]
VECADD = ROOT / "examples" / "kernels" / "vecadd.bin"
ECP5 = [name for name, b in BOARDS.items() if b.family == "ecp5"]


@pytest.fixture(scope="module")
def small_unit() -> CuConfig:
    return trim_config([VECADD], CuConfig(wave_slots=1, imem_bytes=1024, sgprs=32))


def _pins(platform, resource) -> dict[str, str]:
    r = platform.lookup(*resource)
    return {s.name: s.ios[0].names[0] for s in r.ios if s.name in ("rx", "tx")}


@pytest.mark.parametrize("name", ECP5)
def test_board_top_elaborates_into_a_build_plan(name, small_unit):
    b = BOARDS[name]
    setting = pll_setting(b)
    top = BoardTop(b, small_unit, setting)
    platform = b.platform()
    plan = platform.prepare(top, name="top", debug_verilog=False)
    lpf, il = plan.files["top.lpf"], plan.files["top.il"]

    # the UART on the board's UART pins (amaranth-boards' resource)
    pins = _pins(b.platform(), b.uart)
    sites = dict(re.findall(r'LOCATE COMP "uart_0__(rx|tx)__io" SITE "(\w+)";', lpf))
    assert sites == pins

    # the oscillator constrained at its frequency (nextpnr derives the PLL's outputs)
    assert "FREQUENCY NET" not in lpf
    (port_hz,) = re.findall(r"FREQUENCY PORT \S+ ([0-9.]+) HZ", lpf)
    assert float(port_hz) == b.clock_hz

    # one EHXPLLL whose dividers give the setting's clocks from the board's oscillator
    assert il.count("cell \\EHXPLLL ") == 1
    body = il[il.index("cell \\EHXPLLL "):]
    params = {k: int(v) for k, v in re.findall(r"parameter \\(\w+_DIV) (\d+)", body[:2000])}
    vco = b.clock_hz / params["CLKI_DIV"] * params["CLKFB_DIV"] * params["CLKOP_DIV"]
    assert vco / params["CLKOP_DIV"] == pytest.approx(b.cu_hz)
    assert vco / params["CLKOS_DIV"] == pytest.approx(b.bus_hz)

    # the memory window: a power of two beside the unit and the SoC, and no larger one fits
    mem = top.memory
    assert mem & (mem - 1) == 0
    used = top.config.resources().ebr + RESERVED_BLOCK_RAMS
    assert used + mem // 2048 <= b.block_rams
    assert mem == 1 << 18 or used + 2 * mem // 2048 > b.block_rams


def test_a_unit_too_big_for_the_board_is_refused_in_one_line():
    with pytest.raises(BoardError) as info:
        unit_config(BOARDS["ulx3s-12f"], CuConfig())
    assert "ulx3s-12f" in str(info.value) and "\n" not in str(info.value)


def test_a_baud_rate_the_bus_clock_cannot_make_is_refused(small_unit):
    b = BOARDS["ulx3s-85f"]
    with pytest.raises(BoardError, match="baud"):
        BoardTop(b, small_unit, pll_setting(b), baud=20_000_000)
