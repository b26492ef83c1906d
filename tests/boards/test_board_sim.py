"""The host side of a board (``Device("board")``, ``HostLink``, the launch driver) against the
real gateware: :class:`boards.top.BoardSoc` (UART, SLIP, bridge and SoC) under Verilator, its
serial line on a socket (:class:`boards.sim.SimulatedBoard`). Suite kernels (integer, float,
LDS and barriers) match the golden model; a corrupted request and a corrupted answer on the
line are retried with nothing lost; a kernel outside the bitstream's profile is refused.

Opt-in (``-m slow``): the first run builds the model (a unit trimmed for the kernels, several
minutes); each kernel then takes seconds to tens of seconds, mostly moving memory at 4 bus
cycles a bit."""

from __future__ import annotations

import numpy as np
import pytest

from boards.link import HostLink
from boards.protocol import END
from gpgpu_hdl.config import ConfigError
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.soc.regmap import built_mnemonics
from tests._suite import load_suite, mnemonics

suite = load_suite()
KERNELS = ("vecadd", "matmul_int", "matmul_float", "reduce_sum")
#: a launch's limit is wall-clock time at the board's clock (25 MHz here); the simulation runs
#: thousands of times slower than the board it stands for: 1000 s
MAX_CYCLES = 25_000_000_000

pytestmark = pytest.mark.slow


def _case(name):
    return next(c for c in suite.CASES if c.name == name)


@pytest.fixture(scope="module")
def simulated():
    from boards.sim import SimulatedBoard
    from trimmer.policy import trim_config
    config = trim_config([f"{suite.code_object(_case(n))}:{k}" for n in KERNELS
                          for k in _case(n).kernels])
    board = SimulatedBoard(config)
    link = HostLink(board, timeout=30)
    yield board, link, config
    board.close()


def _same(case, device):
    inputs = case.inputs()
    want, _ = suite.run_device(case, Device("emu"), inputs)
    got, run = suite.run_device(case, device, inputs)
    for name, ref in want.items():
        assert np.array_equal(np.asarray(got[name]).view(np.uint8),
                              np.asarray(ref).view(np.uint8)), f"{case.name}: {name} differs"
    return run


@pytest.mark.parametrize("kernel", KERNELS)
def test_suite_kernels_through_the_simulated_board(simulated, kernel):
    _, link, _ = simulated
    dev = Device("board", board="ulx3s-85f", port=link, max_cycles=MAX_CYCLES)
    run = _same(_case(kernel), dev)
    assert all(r.cycles > 0 and r.instructions > 0 for r in run.results)


def _nth(n, change):
    count = [0]

    def fault(data: bytes) -> bytes:
        count[0] += 1
        return change(data) if count[0] == n else data
    return fault


def _flip(data: bytes) -> bytes:
    b = bytearray(data)
    i = len(b) // 2
    b[i] ^= 0x01 if b[i] ^ 0x01 != END else 0x02
    return bytes(b)


def test_damaged_frames_on_the_real_line_are_retried(simulated):
    board, link, _ = simulated
    dev = Device("board", board="ulx3s-85f", port=link, max_cycles=MAX_CYCLES)
    resent = link.resent
    board.to_board = _nth(3, _flip)        # a write of the launch: the bridge answers BAD_CRC
    board.to_host = _nth(40, _flip)        # an answer: the host drops it and asks again
    try:
        _same(_case("vecadd"), dev)
    finally:
        board.to_board = board.to_host = lambda d: d
    assert link.resent - resent == 2


def test_a_kernel_outside_the_bitstream_is_refused(simulated):
    _, link, config = simulated
    dev = Device("board", board="ulx3s-85f", port=link, max_cycles=MAX_CYCLES)
    case = _case("histogram_global")
    missing = sorted(mnemonics(case) - dev.backend.profile)
    assert missing and dev.backend.profile == built_mnemonics(config)
    with pytest.raises(ConfigError, match=f"uses {len(missing)} instruction"):
        suite.run_device(case, dev, case.inputs())
