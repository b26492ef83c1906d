"""The board registry against amaranth-boards (the platform classes it names, their FPGA, the
UART and clock resources) and against the configuration's own device table."""

from __future__ import annotations

import importlib

import pytest
from amaranth.vendor import LatticeECP5Platform

from boards.platforms import BOARDS, BoardError, board
from gpgpu_hdl.config import DEVICES


@pytest.mark.parametrize("name", list(BOARDS))
def test_entry_matches_its_amaranth_boards_platform(name):
    b = BOARDS[name]
    cls = getattr(importlib.import_module(b.module), b.platform_class)
    assert (cls.device, cls.package, cls.speed) == (b.device, b.package, b.speed)
    platform = b.platform()
    clock = platform.lookup(*b.clock)
    assert clock.clock.frequency == b.clock_hz
    uart = platform.lookup(*b.uart)
    assert {s.name for s in uart.ios} >= {"rx", "tx"}
    assert b.open_toolchain == isinstance(platform, LatticeECP5Platform)
    assert b.family == ("ecp5" if b.open_toolchain else "xilinx7")


@pytest.mark.parametrize("name", [n for n, b in BOARDS.items() if b.family == "ecp5"])
def test_ecp5_entries_build_with_nextpnr(name):
    """Amaranth's Trellis flow knows the device and package (it would fail otherwise)."""
    b = BOARDS[name]
    assert b.device in LatticeECP5Platform._nextpnr_device_options
    assert b.package in LatticeECP5Platform._nextpnr_package_options


@pytest.mark.parametrize("name", list(BOARDS))
def test_capacity_agrees_with_the_configuration_devices(name):
    b = BOARDS[name]
    device = {"LFE5UM5G-85F": "LFE5U-85F"}.get(b.device, b.device)
    if device in DEVICES:
        assert (b.block_rams, b.multipliers) == (DEVICES[device].ebr, DEVICES[device].dsp)
    assert b.block_rams > 0 and b.multipliers > 0 and b.luts > 1000


def test_names_are_what_the_command_line_takes():
    for name, b in BOARDS.items():
        assert name == b.name and name == name.lower() and " " not in name
        assert board(name) is b
    assert len({(b.module, b.platform_class) for b in BOARDS.values()}) == len(BOARDS)


def test_unknown_board_names_the_known_ones():
    with pytest.raises(BoardError) as info:
        board("ulx3s-99f")
    message = str(info.value)
    assert "\n" not in message and "ulx3s-99f" in message
    assert all(name in message for name in BOARDS)
