"""The host side of a board (``Device("board")``, ``HostLink``, the launch driver) against the
real gateware: ``Device("board-sim", board="ulx3s-85f")``, :class:`boards.top.BoardSoc` (UART,
SLIP, bridge and SoC, the ULX3S-85F's 256 KiB window and 15/30 MHz clocks) under Verilator, its
serial line on a socket (:class:`boards.sim.SimulatedBoard`, cocotbext-uart's models on the
pins). Suite kernels (integer, float, LDS and barriers) match the golden model; the line's
faults end in a retry with nothing lost or in a one-line error within the link's time, never
a hang: a corrupted request and a corrupted answer, a byte lost either way, a byte with a low
stop bit (a framing error), a board that stalls for a while (retried) or for good
(``LinkError``), the board reset while a kernel runs (``LaunchLost``, then the next launch
runs) or between launches (``BoardReset``, then the next launch runs), a launch over its time
limit (aborted, then the next launch runs); a second host connects to the board cleanly and
the first one notices; closing ends the simulation; a kernel outside the bitstream's profile
is refused.

Opt-in (``-m slow``): the first run builds the model (a unit trimmed for the kernels, a few
minutes); each kernel then takes seconds, mostly moving memory at 4 bus cycles a bit."""

from __future__ import annotations

import contextlib
import time

import numpy as np
import pytest

from boards.device import LaunchLost
from boards.protocol import END, BoardReset, LinkError
from gpgpu_hdl.config import ConfigError
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.runtime.errors import BackendError, RtlTrap
from gpgpu_hdl.soc.regmap import built_mnemonics
from tests._suite import load_suite, mnemonics

suite = load_suite()
KERNELS = ("vecadd", "matmul_int", "matmul_float", "reduce_sum")
#: the link's timeout (wall-clock seconds) while faults are injected: an exchange takes about
#: 5 ms (a register) to 0.2 s (a 1 KiB block) on an idle machine
FAULT_TIMEOUT = 3.0

pytestmark = pytest.mark.slow


def _case(name):
    return next(c for c in suite.CASES if c.name == name)


def _config():
    """The unit trimmed for :data:`KERNELS`."""
    from trimmer.policy import trim_config
    return trim_config([f"{suite.code_object(_case(n))}:{k}" for n in KERNELS
                        for k in _case(n).kernels])


@pytest.fixture(scope="module")
def simulated():
    """``Device("board-sim")`` for a unit trimmed for :data:`KERNELS`, its simulated board
    (faults) and its link."""
    config = _config()
    dev = Device("board-sim", board="ulx3s-85f", profile=config)
    yield dev, dev.backend.simulated, dev.backend.link, config
    dev.close()


def _fresh(link):
    """A device on the simulated board's link with its memory unused (a device never frees
    its allocations; the tests would fill the window)."""
    from boards.sim import SIM_MAX_CYCLES
    return Device("board", board="ulx3s-85f", port=link, max_cycles=SIM_MAX_CYCLES)


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
    dev, _, link, config = simulated
    assert dev.backend.config.key() == config.key()
    assert dev.backend.info.memory_bytes == 1 << 18
    assert (dev.backend.info.cu_hz, dev.backend.info.bus_hz) == (15_000_000, 30_000_000)
    run = _same(_case(kernel), dev if kernel == KERNELS[0] else _fresh(link))
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


@contextlib.contextmanager
def _faulty(board, link):
    """The link with :data:`FAULT_TIMEOUT`, and the line and the board clean afterwards."""
    timeout = link.timeout
    link.timeout = FAULT_TIMEOUT
    try:
        yield
    finally:
        link.timeout = timeout
        board.to_board = board.to_host = lambda d: d


def test_damaged_frames_on_the_real_line_are_retried(simulated):
    _, board, link, _ = simulated
    dev = _fresh(link)
    resent = link.resent
    with _faulty(board, link):
        board.to_board = _nth(3, _flip)    # a write of the launch: the bridge answers BAD_CRC
        board.to_host = _nth(40, _flip)    # an answer: the host drops it and asks again
        _same(_case("vecadd"), dev)
    assert link.resent - resent == 2


@pytest.mark.parametrize("to, nth", [("board", 700), ("board", "END"), ("host", 40),
                                     ("host", 2000)])
def test_a_byte_lost_on_the_line_is_retried(simulated, to, nth):
    """A byte lost in the testbench, between the UART models and the socket. Towards the board:
    a byte inside the first 1 KiB block (the bridge sees a frame that fails its CRC and
    answers BAD_CRC), or the closing END of the first request (the bridge sees no frame until
    the copy the host sends after its timeout closes it: the request runs, and the rest of the
    copy reaches a bridge busy answering, whose receiver drops bytes, so that the copy and
    perhaps the next request fail their CRC and are asked again). Towards the host: a byte of
    a short answer or inside a 1 KiB block read back (the host drops the answer and asks
    again)."""
    _, board, link, _ = simulated
    dev = _fresh(link)
    resent = link.resent
    with _faulty(board, link):
        if nth == "END":        # the last byte of the first frame, whatever its escapes
            board.to_board = _nth(1, lambda d: (board.drop("board", len(d)), d)[1])
        else:
            board.drop(to, nth)
        _same(_case("vecadd"), dev)
    assert link.resent - resent == 1 or nth == "END" and 1 <= link.resent - resent <= 3


@pytest.mark.parametrize("nth", [700, "END"])
def test_a_framing_error_on_the_line_is_retried(simulated, nth):
    """A byte towards the board with its stop bit low: the board's UART drops it (and waits
    for the line to go high), so its frame fails its CRC and the bridge answers ``BAD_CRC``
    (a byte inside the first 1 KiB block: one resend), or, when it was the closing ``END``,
    it goes as a lost ``END`` does (1 to 3 resends)."""
    _, board, link, _ = simulated
    dev = _fresh(link)
    resent, bad_crc = link.resent, link.bad_crc
    with _faulty(board, link):
        if nth == "END":
            board.to_board = _nth(1, lambda d: (board.framing_error(len(d)), d)[1])
        else:
            board.framing_error(nth)
        _same(_case("vecadd"), dev)
    if nth == "END":
        assert 1 <= link.resent - resent <= 3
    else:
        assert link.resent - resent == 1 and link.bad_crc - bad_crc == 1


def test_a_short_stall_is_retried(simulated):
    """The board stops for longer than the link's timeout, in the middle of a launch: the host
    asks again; the board, once running, answers the first copy, and the copies that waited in
    the line are dropped or answered late and ignored."""
    _, board, link, _ = simulated
    dev = _fresh(link)
    resent = link.resent
    with _faulty(board, link):
        board.to_board = _nth(10, lambda d: (board.stall(1.5 * FAULT_TIMEOUT), d)[1])
        _same(_case("vecadd"), dev)
    assert link.resent - resent >= 1


def _on_status_poll(dev, n, action):
    """Make ``dev``'s launches call ``action()`` before their ``n``-th poll of ``STATUS``;
    returns the values the polls read, and a function that undoes it."""
    bus = dev.backend.bus
    status = dev.backend.regmap.offset("STATUS")
    read_reg = bus.read_reg
    seen = []

    def read(offset):
        if offset != status:
            return read_reg(offset)
        if len(seen) == n - 1:
            action()
        seen.append(read_reg(offset))
        return seen[-1]

    bus.read_reg = read
    return seen, lambda: vars(bus).pop("read_reg", None)


def test_a_board_stalled_for_good_is_one_line_and_the_next_launch_works(simulated):
    """The board stops while a kernel runs, before the host's first poll: the host gives up
    after its tries; once the board runs again, the launch the host gave up on finishes, and
    the next launch waits for its own ``done``, not that one's."""
    _, board, link, _ = simulated
    dev = _fresh(link)
    case = _case("vecadd")
    with _faulty(board, link):
        stalled = []
        _, undo = _on_status_poll(dev, 1, lambda: (board.stall(), stalled.append(time.monotonic())))
        try:
            with pytest.raises(LinkError) as error:
                suite.run_device(case, dev, case.inputs())
        finally:
            undo()
        waited = time.monotonic() - stalled[0]
        board.resume()
    message = str(error.value)
    assert "\n" not in message and f"no answer to READ_REG after {link.retries + 1} tries" \
        in message
    assert (link.retries + 1) * FAULT_TIMEOUT <= waited < (link.retries + 3) * FAULT_TIMEOUT
    _same(case, dev)


def test_a_reset_while_a_kernel_runs_is_reported_and_the_next_launch_works(simulated):
    _, board, link, _ = simulated
    dev = _fresh(link)
    busy = dev.backend.regmap.encode("STATUS", busy=1)
    done = dev.backend.regmap.encode("STATUS", done=1)
    case = _case("matmul_int")
    statuses, undo = _on_status_poll(dev, 2, lambda: board.reset(64))
    try:
        with pytest.raises(LaunchLost, match="was lost on ulx3s-85f .*the board was reset or "
                                             "reflashed during the launch") as error:
            suite.run_device(case, dev, case.inputs())
    finally:
        undo()
    assert "\n" not in str(error.value)
    # the poll before the reset saw the kernel running; the bridge refused the one after
    # (NO_SESSION: its reset forgot the host's session)
    assert len(statuses) == 1 and statuses[0] & busy and not statuses[0] & done
    _same(case, dev)


def test_a_reset_between_launches_is_noticed_and_the_next_launch_works(simulated):
    """The board is reset while the host does nothing: the next launch is refused before it
    writes anything, in one line; the one after reconnects, finds the same bitstream and
    runs."""
    _, board, link, _ = simulated
    dev = _fresh(link)
    case = _case("vecadd")
    _same(case, dev)
    board.reset(64)
    with pytest.raises(BoardReset) as error:
        _same(case, dev)
    assert str(error.value) == ("kernel vecadd was not started on ulx3s-85f at simulated "
                                "ulx3s-85f: the board was reset or reflashed since this host "
                                "connected; the next launch reconnects and checks the "
                                "bitstream")
    _same(case, dev)


def test_a_new_host_connects_to_a_board_an_earlier_one_used(simulated):
    """A second host (its own link, as a new process would have) opens a session with the
    board the fixture's host has been using, and runs a kernel; the first host's next launch
    is refused, in one line, and the one after reconnects and runs."""
    from boards.link import HostLink
    _, board, link, _ = simulated
    first = _fresh(link)
    case = _case("vecadd")
    _same(case, first)
    second = HostLink(board, timeout=link.timeout)
    _same(case, _fresh(second))
    assert second.session is not None and second.session != link.session
    with pytest.raises(BoardReset, match="^kernel vecadd was not started on ulx3s-85f at "
                                         "simulated ulx3s-85f: another host opened a session "
                                         "with the board since this host connected; the next "
                                         "launch reconnects"):
        _same(case, first)
    _same(case, first)


def test_closing_the_simulated_board():
    """``with Device("board-sim", ...)`` ends its simulation at the end of the block; closing
    again is harmless, and the closed device refuses work in one line (a simulation of its
    own, not the other tests')."""
    with Device("board-sim", board="ulx3s-85f", profile=_config()) as dev:
        assert dev.backend.info.memory_bytes == 1 << 18
        simulated_board = dev.backend.simulated
    assert not simulated_board._thread.is_alive()
    dev.close()
    with pytest.raises(BackendError, match="^the 'board-sim' device is closed: cannot load"):
        dev.load(suite.code_object(_case("vecadd")))
    with pytest.raises(LinkError, match="the link is closed"):
        dev.backend.link.read_reg(0)


def test_a_launch_over_its_time_limit_is_aborted_and_the_next_launch_works(simulated):
    """The limit counts simulated compute-unit cycles (the simulated board's clock): a
    ``Device("board")`` on the same link with a limit shorter than the kernel."""
    _, _, link, _ = simulated
    dev = _fresh(link)
    short = Device("board", board="ulx3s-85f", port=link, max_cycles=2000)
    case = _case("matmul_int")
    with pytest.raises(RtlTrap, match=r"did not finish within 0.000133333 s on ulx3s-85f at "
                                      r"simulated ulx3s-85f; it was aborted"):
        suite.run_device(case, short, case.inputs())
    run = _same(case, dev)
    assert all(r.cycles > 2000 for r in run.results)


def test_a_kernel_outside_the_bitstream_is_refused(simulated):
    _, _, link, config = simulated
    dev = _fresh(link)
    case = _case("histogram_global")
    missing = sorted(mnemonics(case) - dev.backend.profile)
    assert missing and dev.backend.profile == built_mnemonics(config)
    with pytest.raises(ConfigError, match=f"uses {len(missing)} instruction"):
        suite.run_device(case, dev, case.inputs())
