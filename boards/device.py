"""The ``"board"`` backend: ``Device("board", board="ulx3s-85f", port="/dev/ttyUSB0")`` runs
launches on a flashed board over its serial host link (docs/hostlink.md).

The board says what it is: at open, the bridge's ``INFO`` (memory size, clocks, profile digest)
and the SoC's ``ID``, ``VERSION``, ``CONFIG`` block and ``PROFILE`` ROM are read back, and the
host builds the same register map the bitstream was built with. Device memory lives on the host
(as on Verilator) and is the board memory, the SoC's prefetch window: each launch copies the
used part into the window, runs the launch sequence shared with the simulated SoC
(:mod:`gpgpu_hdl.soc.host`) over :class:`~boards.link.HostLink`, and copies the window back.
Before each launch the host checks that its link session is still open (a board reset or
reflashed since has lost it: the launch is refused in one line, and the next one reconnects and
checks that the bitstream is the one the device was opened on), and a kernel with an
instruction the bitstream was not built for is refused, naming the instructions.
:meth:`BoardBackend.close` releases the serial port.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpgpu_hdl.config import ConfigError, CuConfig
from gpgpu_hdl.dispatch import Dispatch
from gpgpu_hdl.emu.memory import GLOBAL_BASE, Memory
from gpgpu_hdl.errors import GpgpuError
from gpgpu_hdl.runtime.errors import BackendError, RtlTrap
from gpgpu_hdl.runtime.result import KernelResult
from gpgpu_hdl.sim.cu_backend import launch_fields
from gpgpu_hdl.sim.soc_backend import outcome_error
from gpgpu_hdl.soc import host
from gpgpu_hdl.soc.regmap import SOC_ID, SOC_VERSION, soc_register_map

from .link import HostLink
from .protocol import VERSION, BoardReset, LinkError
from .top import profile_digest

__all__ = ["SerialTransport", "LinkBus", "BoardBackend", "LaunchLost", "open_board",
           "DEFAULT_BAUD", "DEFAULT_LIMIT_S"]

#: the serial line's speed unless ``Device("board", baud=...)`` says otherwise (the board
#: tops' default)
DEFAULT_BAUD = 115_200
#: how long a launch may run when ``max_cycles`` is not given (seconds)
DEFAULT_LIMIT_S = 60.0
#: how long an earlier launch may take to stop once aborted, before a new one (seconds)
SETTLE_S = 10.0


class LaunchLost(RtlTrap):
    """The board lost a running launch: its SoC went idle without finishing it (the board
    was reset, or reflashed, while the kernel ran). Device memory is as before the launch."""


class _Vanished(Exception):
    """:meth:`LinkBus.wait_done` saw ``STATUS`` neither busy nor done."""


class SerialTransport:
    """A serial port (pyserial) as a :class:`~boards.link.Transport`."""

    def __init__(self, port: str, baud: int = DEFAULT_BAUD) -> None:
        import serial
        self.name = port
        try:
            self._port = serial.Serial(port, baud, timeout=0)
        except (serial.SerialException, OSError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LinkError(f"{port}: cannot open the serial port ({reason})") from None
        self._port.reset_input_buffer()

    def write(self, data: bytes) -> None:
        self._port.write(data)
        self._port.flush()

    def read(self, timeout: float) -> bytes:
        self._port.timeout = max(timeout, 0.0)
        data = self._port.read(1)
        if data and self._port.in_waiting:
            data += self._port.read(self._port.in_waiting)
        return data

    def close(self) -> None:
        """Release the port (closing again does nothing)."""
        self._port.close()


class LinkBus:
    """The SoC's host port over a :class:`~boards.link.HostLink`, as the bus of the launch
    driver (:func:`gpgpu_hdl.soc.host.run`): registers and the memory window by request,
    wall-clock time, ``done`` by polling ``STATUS`` (the link carries no interrupt).

    ``busy`` is the ``STATUS.busy`` bit: from the start of a launch until it is done the SoC
    reads busy, so a ``STATUS`` with neither ``busy`` nor ``done`` means that the launch is
    gone (the board was reset), and the wait stops there instead of running out its time."""

    def __init__(self, link: HostLink, *, busy: int = 0) -> None:
        self.link = link
        self.busy = busy
        #: the clock of a launch's time limit: the transport's ``now_ns`` where it has one
        #: (a simulated board's simulated time), else wall-clock time
        self._clock = getattr(link.transport, "now_ns", None) or time.monotonic_ns

    def read_reg(self, offset: int) -> int:
        return self.link.read_reg(offset)

    def read_regs(self, offset: int, count: int) -> list[int]:
        return self.link.read_regs(offset, count)

    def write_reg(self, offset: int, value: int) -> None:
        self.link.write_reg(offset, value)

    def read_mem(self, offset: int, size: int) -> bytes:
        return self.link.read_mem(offset, size)

    def write_mem(self, offset: int, data: bytes) -> None:
        self.link.write_mem(offset, data)

    def wait_done(self, op: host.WaitDone) -> bool:
        deadline = self.now_ns() + op.ns
        while True:
            status = self.read_reg(op.status)
            if status & op.done:
                return True
            if self.busy and not status & self.busy:
                raise _Vanished
            if self.now_ns() > deadline:
                return False

    def now_ns(self) -> int:
        return self._clock()


def kernel_mnemonics(kernel: Any) -> frozenset[str]:
    """The instructions in ``kernel``'s code, as the trimmer scans them."""
    from trimmer.profile import KernelProfile
    return frozenset(KernelProfile.of(kernel.program.path, kernel.info).mnemonics)


class BoardBackend:
    """Launches on the board behind ``link``; ``board`` names it in messages."""

    def __init__(self, link: HostLink, *, board: str, max_cycles: int | None = None,
                 memory_limit: int | None = None, owns_link: bool = True) -> None:
        self.link = link
        #: whether :meth:`close` closes the link (False: the caller opened it and closes it)
        self.owns_link = owns_link
        self.board = board
        self.bus = LinkBus(link)
        self.closed = False
        #: why the device cannot be used any more (the bitstream changed under it)
        self._stale: str | None = None
        if link.lost is not None:               # a link whose board was reset: start afresh
            link.connect()
        self.info, ident = self._identify()
        where = self._where()
        if ident.id != SOC_ID:
            raise BackendError(f"{where}: the bitstream is not this project's SoC (ID reads "
                               f"{ident.id:#010x}, not {SOC_ID:#010x})")
        if ident.version[0] != SOC_VERSION[0]:
            raise BackendError(f"{where}: the bitstream's register map is version "
                               f"{ident.version[0]}.{ident.version[1]}; this host speaks "
                               f"{SOC_VERSION[0]}.x: rebuild the bitstream")
        if ident.profile is None:
            raise BackendError(f"{where}: the bitstream's instruction table has "
                               f"{ident.config['PROFILE_ENTRIES']} entries, not this "
                               f"host's: rebuild the bitstream")
        c = ident.config
        try:
            self.config = CuConfig(lanes=c["LANES"], wave_slots=c["WAVE_SLOTS"],
                                   vgprs=c["VGPRS"], sgprs=c["SGPRS"], lds_bytes=c["LDS_BYTES"],
                                   imem_bytes=c["IMEM_BYTES"], profile=ident.profile)
        except ConfigError as exc:
            raise BackendError(f"{where}: the bitstream reports a unit this host cannot "
                               f"describe ({exc})") from None
        #: the instructions the bitstream executes
        self.profile = ident.profile
        self._ident = ident
        self._digest = self.info.profile
        if self._digest not in (bytes(16), profile_digest(self.config)):
            raise BackendError(f"{where}: the profile digest in INFO does not match the "
                               f"PROFILE ROM: is the bitstream damaged?")
        size = c["PREFETCH_BYTES"]
        if not size or size != self.info.memory_bytes:
            raise BackendError(f"{where}: the SoC has {size} bytes of prefetch window but the "
                               f"bridge reports {self.info.memory_bytes} bytes of memory")
        self.cus = c["CUS"]
        #: scratch areas the runtime allocates per launch (one per compute unit)
        self.scratch_units = self.cus
        self.regmap = soc_register_map(self.config, cus=self.cus, prefetch_bytes=size)
        self.bus.busy = self.regmap.encode("STATUS", busy=1)
        #: global byte address of the board memory (the window over the start of device memory)
        self.base = GLOBAL_BASE & ~(size - 1)
        room = self.base + size - GLOBAL_BASE
        if memory_limit is not None and memory_limit > room:
            raise BackendError(f"memory_limit={memory_limit} is more than the {room} bytes "
                               f"of device memory the board has ({where})")
        self.memory = Memory(memory_limit or room)
        hz = self.info.cu_hz
        self.limit_s = (max_cycles / hz if max_cycles and hz else DEFAULT_LIMIT_S)

    def _where(self) -> str:
        return f"{self.board} at {self.link.transport.name}"

    def _identify(self) -> tuple[Any, host.Identity]:
        """What the board says it is: ``INFO`` (its protocol version checked first) and the
        SoC's identity (:func:`gpgpu_hdl.soc.host.identify`, three ``READ_REGS``)."""
        info = self.link.info()
        if info.version != VERSION:
            raise BackendError(f"{self._where()}: the bitstream's host link is version "
                               f"{info.version}; this host speaks {VERSION}: rebuild the "
                               f"bitstream")
        probe = soc_register_map(CuConfig(), cus=1, prefetch_bytes=0)
        return info, host.run(host.identify(probe), self.bus)

    def _reconnect(self) -> None:
        """After the board lost the session (reset or reflashed): a new session, and the
        board must still be what the device was opened on, else it is refused for good."""
        self.link.connect()
        info, ident = self._identify()
        if info != self.info or ident != self._ident:
            self._stale = (f"{self._where()}: the bitstream changed since the device was "
                           f"opened (the board was reflashed): open the device again")
            raise BackendError(self._stale)

    def close(self) -> None:
        """Release the link (the serial port) if the backend opened it; closing again does
        nothing."""
        if not self.closed:
            self.closed = True
            if self.owns_link:
                self.link.close()

    def check_profile(self, kernel: Any) -> None:
        """Refuse ``kernel`` if it has an instruction the bitstream lacks (the link's session
        is checked first: a board reset or reflashed since has lost it)."""
        if self._stale is not None:
            raise BackendError(self._stale)
        if self.link.session is None and self.link.lost is not None:
            self._reconnect()
        self.link.check_session()
        missing = sorted(kernel_mnemonics(kernel) - self.profile)
        if missing:
            shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more"
                                              if len(missing) > 8 else "")
            raise ConfigError(f"kernel {kernel.name} uses {len(missing)} instruction"
                              f"{'s' * (len(missing) > 1)} the bitstream on {self._where()} "
                              f"was not built for: {shown}; build one for this kernel "
                              f"(gpgpu board build)")

    def _settle(self) -> None:
        """Make the SoC ready for a launch whose ``done`` is its own: a launch the host gave
        up on (its link failed while it ran) may still be running, or have left ``done`` or
        ``mem_error`` set. A running one is aborted and waited for; the flags are cleared."""
        r = self.regmap
        status, busy = r.offset("STATUS"), r.encode("STATUS", busy=1)
        flags = r.encode("STATUS", done=1, mem_error=1)
        value = self.link.read_reg(status)
        if value & busy:
            self.link.write_reg(r.offset("CONTROL"), r.encode("CONTROL", abort=1, irq_enable=1))
            deadline = time.monotonic() + SETTLE_S
            while (value := self.link.read_reg(status)) & busy:
                if time.monotonic() > deadline:
                    raise BackendError(f"{self._where()}: an earlier launch still runs "
                                       f"{SETTLE_S:g} s after it was aborted: reset the board")
        if value & flags:
            self.link.write_reg(status, flags)

    def launch(self, kernel: Any, d: Dispatch, trace: Any) -> KernelResult:
        if trace:
            raise BackendError("commit traces come from the emulator or the bare compute "
                               "unit (Device('emu') or Device('verilator')), not a board")
        try:
            self.check_profile(kernel)
            self._settle()
        except BoardReset:
            raise BoardReset(f"kernel {kernel.name} was not started on {self._where()}: "
                             f"{self.link.lost}; the next launch reconnects and checks the "
                             f"bitstream") from None
        fields = launch_fields(self.config, kernel, d)
        mem = self.memory
        used = mem.top - mem.base
        image = mem.data[:used].tobytes() + bytes(-used % 4)
        # the used part of device memory, from GLOBAL_BASE (the window may start below it)
        window = (self.regmap.offset("prefetch") + GLOBAL_BASE - self.base, GLOBAL_BASE,
                  len(image) // 4)
        plan = host.launch_plan(self.regmap, fields, limit_ns=int(self.limit_s * 1e9),
                                prefetch_base=self.base, scratch_stride=d.scratch_bytes,
                                window=window, stop_on_timeout=True)
        start = time.perf_counter()
        try:
            got = host.run(host.launch(plan, image), self.bus)
        except _Vanished:
            raise LaunchLost(f"kernel {kernel.name} was lost on {self._where()}: the SoC went "
                             f"idle without finishing it (was the board reset?); device "
                             f"memory is as before the launch") from None
        except BoardReset:
            raise LaunchLost(f"kernel {kernel.name} was lost on {self._where()}: the board "
                             f"was reset or reflashed during the launch (it lost the link's "
                             f"session); device memory is as before the launch; the next "
                             f"launch reconnects and checks the bitstream") from None
        seconds = time.perf_counter() - start
        if got.timeout:
            raise RtlTrap(f"kernel {kernel.name} did not finish within {self.limit_s:g} s on "
                          f"{self._where()}; it was aborted")
        mem.data[:used] = np.frombuffer(got.window, dtype=np.uint8)[:used]
        outcome = host.decode_outcome(self.regmap, got.reads)
        error = outcome_error(kernel, outcome)
        if error is not None:
            raise error
        counters = outcome.counters
        result = KernelResult(kernel.name, counters["instructions"], {}, {}, {}, 0, 0,
                              seconds, counters["cycles"], None)
        result.extra.update(counters)
        result.extra["host_ns"] = got.host_ns
        return result


def open_board(*, port: Any = None, board: str | None = None, baud: int | None = None,
               max_cycles: int | None = None, memory_limit: int | None = None,
               max_instructions: int | None = None, **other: Any) -> BoardBackend:
    """The backend of ``Device("board", board=..., port=...)``.

    ``board`` is one of :mod:`boards.platforms` (it names the board in messages; the board
    itself says what its bitstream holds). ``port`` is the board's serial port
    (``"/dev/ttyUSB0"``), or an open :class:`~boards.link.Transport` or
    :class:`~boards.link.HostLink` (a simulated board);
    ``baud`` the line's speed (:data:`DEFAULT_BAUD`); ``max_cycles`` bounds a launch (at the
    clock the board reports; :data:`DEFAULT_LIMIT_S` without it). ``max_instructions`` is the
    emulator's limit and means nothing here. Errors are one line: a missing port, a board that
    does not answer (:class:`~boards.protocol.LinkError`), a bitstream that is not this SoC.
    """
    del max_instructions
    if other:
        raise BackendError(f"{', '.join(f'{k}=' for k in sorted(other))} describe"
                           f"{'s' * (len(other) == 1)} simulated hardware; a board runs the "
                           f"unit its bitstream was built for")
    if port is None:
        raise BackendError("Device('board') needs port=, the board's serial port (for "
                           "example '/dev/ttyUSB0')")
    if board is not None:
        if not isinstance(board, str):
            raise BackendError(f"board= names the board (for example 'ulx3s-85f'), not "
                               f"{board!r}")
        from .platforms import board as known
        known(board)                        # BoardError naming the boards there are
    if baud is not None and (isinstance(baud, bool) or not isinstance(baud, int)
                             or baud <= 0):
        raise BackendError(f"baud must be a positive integer, not {baud!r}")
    if max_cycles is not None and (isinstance(max_cycles, bool)
                                   or not isinstance(max_cycles, int) or max_cycles <= 0):
        raise BackendError(f"max_cycles must be a positive integer, not {max_cycles!r}")
    owns = isinstance(port, str)
    if isinstance(port, HostLink):
        link = port
    elif owns:
        link = HostLink(SerialTransport(port, baud or DEFAULT_BAUD))
    elif _is_transport(port):
        link = HostLink(port)
    else:
        raise BackendError(f"port= is a serial port name, a Transport or a HostLink, not "
                           f"{type(port).__name__}")
    try:
        return BoardBackend(link, board=board or "the board", max_cycles=max_cycles,
                            memory_limit=memory_limit, owns_link=owns)
    except GpgpuError:
        if owns:
            link.close()
        raise


def _is_transport(obj: Any) -> bool:
    return all(callable(getattr(obj, m, None)) for m in ("read", "write")) \
        and isinstance(getattr(obj, "name", None), str)
