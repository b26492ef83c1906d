"""``Device("board")`` over the bridge's reference model in front of a Python model of the SoC
(``tests/soc/soc_model.py``, launches executed by the golden model): suite kernels against
``Device("emu")``, through a clean line and a faulty one (nothing lost, each launch started
once); a silent board, a board that stops answering mid-launch and a hung kernel, each a
one-line error in bounded time; the profile check (a kernel outside the bitstream's profile is
refused, naming the instructions); a bitstream that is not this SoC; a board reset or reflashed
between launches or during one; closing; option errors."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from boards.bridge_model import ModelTransport
from boards.device import LaunchLost, SerialTransport, kernel_mnemonics
from boards.link import HostLink
from boards.platforms import BoardError
from boards.protocol import END, BoardReset, LinkError
from gpgpu_hdl.config import ConfigError, CuConfig
from gpgpu_hdl.cu.core import TrapCause
from gpgpu_hdl.runtime import ArgumentError, BackendError, Device, IllegalInstruction, RtlTrap
from gpgpu_hdl.soc.regmap import built_mnemonics
from tests._suite import load_suite, mnemonics
from tests.soc.soc_model import Injected, board

suite = load_suite()
MEMORY = 32768
#: integer, LDS and barriers, global atomics, float, private scratch
KERNELS = ("vecadd", "reduce_sum", "histogram_global", "matmul_int", "matmul_float",
           "private_sort")


def _case(name):
    return next(c for c in suite.CASES if c.name == name)


def _device(config=None, *, timeout=0.05, memory=MEMORY, **faults):
    bridge, soc = board(config or CuConfig(), memory)
    link = HostLink(ModelTransport(bridge, **faults), timeout=timeout, retries=3)
    return Device("board", board="ulx3s-85f", port=link), bridge, soc


def _same(case, device):
    inputs = case.inputs()
    want, _ = suite.run_device(case, Device("emu"), inputs)
    got, run = suite.run_device(case, device, inputs)
    for name, ref in want.items():
        assert np.array_equal(np.asarray(got[name]).view(np.uint8),
                              np.asarray(ref).view(np.uint8)), f"{case.name}: {name} differs"
    return run


@pytest.mark.parametrize("kernel", KERNELS)
def test_suite_kernels_match_the_golden_model(kernel):
    dev, _, soc = _device()
    run = _same(_case(kernel), dev)
    assert len(soc.launches) == len(run.results)
    assert all(r.instructions > 0 for r in run.results)


def _flaky(rate: float, seed: int):
    """A line that flips a bit of, drops a byte of or loses a crossing at ``rate``."""
    rng = random.Random(seed)

    def fault(data: bytes) -> bytes:
        if not data or rng.random() >= rate:
            return data
        kind = rng.randrange(3)
        if kind == 2:
            return b""
        i = rng.randrange(len(data))
        if kind == 1:
            return data[:i] + data[i + 1:]
        flipped = data[i] ^ (1 << rng.randrange(8))
        return data if flipped == END else data[:i] + bytes([flipped]) + data[i + 1:]
    return fault


@pytest.mark.parametrize("kernel", ("vecadd", "matmul_int"))
def test_a_faulty_line_loses_nothing_and_starts_each_launch_once(kernel):
    # 2 % of the crossings each way: about one exchange in 25 is retried, and four failed
    # tries in a row (a LinkError) are unlikely enough (the seeds make it reproducible)
    dev, _, soc = _device(to_board=_flaky(0.02, 1), to_host=_flaky(0.02, 2))
    run = _same(_case(kernel), dev)
    assert dev.backend.link.resent > 0
    assert len(soc.launches) == len(run.results)


def _one_line(exc) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_a_silent_board_is_a_one_line_error_in_bounded_time():
    bridge, _ = board(CuConfig(), MEMORY)
    link = HostLink(ModelTransport(bridge, to_board=lambda d: b""), timeout=0.05)
    begin = time.monotonic()
    with pytest.raises(LinkError) as exc:
        Device("board", board="ulx3s-85f", port=link)
    assert time.monotonic() - begin < 1.0
    assert _one_line(exc).startswith("bridge model: no answer to INFO after 4 tries")


def test_a_board_that_stops_answering_mid_launch():
    dev, bridge, soc = _device()
    case = _case("vecadd")
    prog = dev.load(suite.code_object(case))
    a = dev.array(np.arange(64, dtype=np.int32))
    c = dev.empty(64, np.int32)
    original = soc._start

    def start_then_die():
        original()
        dev.backend.link.transport.to_host = lambda d: b""        # unplugged
    soc._start = start_then_die
    with pytest.raises(LinkError, match="no answer to READ_REG after 4 tries"):
        prog.vecadd(a, a, c, np.int32(64), global_size=64, local_size=64)


def test_a_hung_kernel_is_stopped_and_reported():
    bridge, soc = board(CuConfig(), MEMORY)
    link = HostLink(ModelTransport(bridge), timeout=0.05)
    dev = Device("board", board="ulx3s-85f", port=link, max_cycles=2_500_000)   # 0.1 s at 25 MHz
    soc.hang = True
    case = _case("vecadd")
    begin = time.monotonic()
    with pytest.raises(RtlTrap) as exc:
        suite.run_device(case, dev, case.inputs())
    assert time.monotonic() - begin < 2.0
    assert _one_line(exc) == ("kernel vecadd did not finish within 0.1 s on ulx3s-85f at "
                              "bridge model; it was aborted")
    status = soc.rm.decode("STATUS", soc.get("STATUS"))
    assert status["busy"] == 0 and soc.get("TRAP_CAUSE") == TrapCause.ABORT


def test_traps_and_memory_errors_are_reported():
    dev, _, soc = _device()
    case = _case("vecadd")
    soc.inject = Injected(TrapCause.ILLEGAL, pc=0x18, inst=0x7E000280)
    with pytest.raises(IllegalInstruction, match=r"illegal instruction at pc 0x18 "
                                                 r"\(compute unit 0, wave slot 0\): v_mov_b32"):
        suite.run_device(case, dev, case.inputs())
    dev, _, _ = _device()
    prog = dev.load(suite.code_object(case))
    a = dev.array(np.arange(64, dtype=np.int32))
    beyond = type(a)(dev, 0x10000 + 4 * MEMORY, (64,), np.int32)        # past the board memory
    with pytest.raises(RtlTrap, match="a global memory access failed"):
        prog.vecadd(a, a, beyond, np.int32(64), global_size=64, local_size=64)


def test_a_kernel_outside_the_profile_is_refused_naming_the_instructions():
    config = CuConfig(profile=frozenset(mnemonics(_case("vecadd"))))
    dev, _, soc = _device(config)
    assert dev.backend.profile == built_mnemonics(config)
    _same(_case("vecadd"), dev)                                     # its own kernel runs
    case = _case("matmul_float")
    missing = sorted(mnemonics(case) - built_mnemonics(config))
    assert missing
    with pytest.raises(ConfigError) as exc:
        suite.run_device(case, dev, case.inputs())
    message = _one_line(exc)
    assert message.startswith(f"kernel matmul_float uses {len(missing)} instruction")
    assert message.split(": ", 1)[1].startswith(", ".join(missing[:8]))
    assert len(soc.launches) == 1                                   # saxpy never started


def test_kernel_mnemonics_are_the_decoded_instructions():
    case = _case("matmul_int")
    dev = Device("emu")
    prog = dev.load(suite.code_object(case))
    assert kernel_mnemonics(prog.kernel(case.kernels[0])) == mnemonics(case)


def test_a_reflashed_board_is_noticed():
    """Reflashed with another build while the host did nothing: the next launch is refused
    (the board lost the session), and every one after it, once the host has seen the new
    bitstream."""
    dev, bridge, soc = _device()
    other = CuConfig(profile=frozenset({"s_endpgm", "v_add_i32"}))
    from boards.top import profile_digest
    bridge.reset()
    bridge.info = type(bridge.info)(**{**bridge.info.__dict__,
                                       "profile": profile_digest(other)})
    prog = dev.load(suite.code_object(_case("vecadd")))
    a = dev.array(np.arange(64, dtype=np.int32))

    def launch():
        prog.vecadd(a, a, a, np.int32(64), global_size=64, local_size=64)
    with pytest.raises(BoardReset) as exc:
        launch()
    assert _one_line(exc) == ("kernel vecadd was not started on ulx3s-85f at bridge model: the "
                              "board was reset or reflashed since this host connected; the "
                              "next launch reconnects and checks the bitstream")
    for _ in range(2):
        with pytest.raises(BackendError) as exc:
            launch()
        assert _one_line(exc) == ("ulx3s-85f at bridge model: the bitstream changed since the "
                                  "device was opened (the board was reflashed): open the "
                                  "device again")
    assert soc.launches == []


def test_a_board_reset_between_launches_is_noticed_and_the_next_launch_runs():
    dev, bridge, soc = _device(memory=131072)
    case = _case("vecadd")
    _same(case, dev)
    launches = len(soc.launches)
    bridge.reset()
    with pytest.raises(BoardReset, match="^kernel vecadd was not started on ulx3s-85f at "
                                         "bridge model: the board was reset or reflashed"):
        suite.run_device(case, dev, case.inputs())
    assert len(soc.launches) == launches
    _same(case, dev)                                    # the same bitstream: reconnected


def test_a_board_reset_during_a_launch_loses_it():
    """Reset after the doorbell (the SoC model finishes at once, so the reset lands before
    the host reads the outcome): the launch is lost, in one line; the next one runs."""
    dev, bridge, soc = _device(memory=131072)
    case = _case("vecadd")
    original = soc._start

    def start_then_reset():
        original()
        bridge.reset()
    soc._start = start_then_reset
    with pytest.raises(LaunchLost) as exc:
        suite.run_device(case, dev, case.inputs())
    assert _one_line(exc).startswith("kernel vecadd was lost on ulx3s-85f at bridge model: "
                                     "the board was reset or reflashed during the launch")
    soc._start = original
    _same(case, dev)


def test_closing_a_board_device_releases_its_port(monkeypatch):
    """A port the device opened is closed with it (once, however often the device is
    closed); a link it was given is left to its owner; a closed device refuses launches."""
    closed = []

    class Port(ModelTransport):
        def __init__(self, port, _baud):
            super().__init__(board(CuConfig(), MEMORY)[0])
            self.name = port

        def close(self):
            closed.append(self.name)
    import boards.device
    monkeypatch.setattr(boards.device, "SerialTransport", Port)
    case = _case("vecadd")
    with Device("board", board="ulx3s-85f", port="/dev/ttyFAKE0") as dev:
        _same(case, dev)
    dev.close()
    assert closed == ["/dev/ttyFAKE0"]
    with pytest.raises(BackendError, match="^the 'board' device is closed: cannot load "):
        suite.run_device(case, dev, case.inputs())
    given, _, _ = _device()
    given.close()
    assert given.backend.closed and not given.backend.link.closed


def test_what_the_board_says_it_is_must_hold_together():
    from boards.top import profile_digest
    bridge, soc = board(CuConfig(), MEMORY, profile=profile_digest(
        CuConfig(profile=frozenset({"s_endpgm"}))))
    with pytest.raises(BackendError, match="profile digest in INFO does not match"):
        Device("board", port=HostLink(ModelTransport(bridge), timeout=0.05))
    bridge, soc = board(CuConfig(), MEMORY)
    soc.registers.values[soc.rm.offset("ID")] = 0x12345678
    soc._shadow[soc.rm.offset("ID")] = 0x12345678
    with pytest.raises(BackendError, match="not this project's SoC"):
        Device("board", port=HostLink(ModelTransport(bridge), timeout=0.05))


def test_board_memory_and_options():
    dev, _, _ = _device(memory=65536)
    assert dev.memory.limit == 65536 and dev.backend.scratch_units == 1
    dev, _, _ = _device(memory=131072)          # a window over address 0: 64 KiB beyond 0x10000
    assert dev.backend.base == 0 and dev.memory.limit == 65536
    _same(_case("vecadd"), dev)
    bridge, _ = board(CuConfig(), MEMORY)
    link = HostLink(ModelTransport(bridge), timeout=0.05)
    cases = [({}, BackendError, "needs port="),
             ({"port": 3}, BackendError, "not int"),
             ({"port": link, "config": CuConfig()}, BackendError, "config= describes"),
             ({"port": link, "mem_latency": 4}, BackendError, "mem_latency= describes"),
             ({"port": link, "baud": 0}, BackendError, "baud must be"),
             ({"port": link, "board": 85}, BackendError, "board= names"),
             ({"port": link, "board": "ulx3s-99f"}, BoardError, "unknown board 'ulx3s-99f'"),
             ({"port": link, "max_cycles": -1}, BackendError, "max_cycles must be"),
             ({"port": link, "memory_limit": 1 << 20}, BackendError, "more than the 32768"),
             ({"port": link, "cus": 2}, BackendError, "describe the simulated SoC"),
             ({"port": link, "check_bounds": True}, BackendError, "checks accesses on the"),
             ({"port": link, "trace": None, "prefetch": True}, TypeError, "trace")]
    for kw, error, message in cases:
        with pytest.raises(error, match=message):
            Device("board", **kw)
    with pytest.raises(BackendError, match="describe a board's link"):
        Device("emu", port="/dev/ttyUSB0")
    dev, _, _ = _device()
    prog = dev.load(suite.code_object(_case("vecadd")))
    a = dev.array(np.arange(64, dtype=np.int32))
    with pytest.raises(BackendError, match="commit traces"):
        prog.vecadd(a, a, a, np.int32(64), global_size=64, trace=True)


def test_simulated_board_options():
    """``Device("board-sim")``'s mistakes are refused before anything is built or simulated
    (the simulated board itself is in test_board_sim.py, under ``-m slow``)."""
    cases = [({}, BackendError, "needs board="),
             ({"board": 85}, BackendError, "board= names"),
             ({"board": "ulx3s-99f"}, BoardError, "unknown board 'ulx3s-99f'"),
             ({"board": "ulx3s-85f", "port": "/dev/ttyUSB0"}, BackendError,
              "port= cannot be given to Device\\('board-sim'\\)"),
             ({"board": "ulx3s-85f", "baud": 9600}, BackendError, "baud= cannot be given"),
             ({"board": "ulx3s-85f", "mem_latency": 3}, BackendError, "mem_latency= cannot"),
             ({"board": "ulx3s-85f", "max_cycles": 0}, BackendError, "max_cycles must be"),
             ({"board": "ulx3s-85f", "profile": "vecadd.bin"}, ArgumentError,
              "profile= takes the configuration"),
             ({"board": "ulx3s-25f"}, BoardError, "ulx3s-25f: the unit does not fit"),
             ({"board": "ulx3s-85f", "cus": 2}, BackendError, "describe the simulated SoC")]
    for kw, error, message in cases:
        with pytest.raises(error, match=message) as exc:
            Device("board-sim", **kw)
        assert "\n" not in str(exc.value)
    with pytest.raises(BackendError, match="describe a board's link"):
        Device("verilator", board="ulx3s-85f")


def test_a_missing_serial_port_is_a_one_line_error():
    with pytest.raises(LinkError) as exc:
        Device("board", board="ulx3s-85f", port="/dev/gpgpu-no-such-port")
    assert _one_line(exc).startswith("/dev/gpgpu-no-such-port: cannot open the serial port")
    with pytest.raises(LinkError):
        SerialTransport("/dev/gpgpu-no-such-port")
