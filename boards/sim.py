"""A board without the board: :class:`SimulatedBoard` is a :class:`~boards.link.Transport` to
:class:`~boards.top.BoardSoc` (UART, SLIP, bridge and SoC: the gateware below a board top's
clocks) simulated by Verilator, so the host side of a real board (``Device("board")``,
:class:`~boards.link.HostLink`, the launch driver) runs unchanged against the real gateware::

    board = SimulatedBoard(config)
    dev = Device("board", port=HostLink(board, timeout=30))

The simulator runs in a background thread (the cocotb testbench :data:`BOARD_TESTBENCH`); it
connects to a TCP socket of this process and turns the bytes it receives into 8N1 frames on the
``rx`` pin and the frames on ``tx`` back into bytes (cocotbext-uart's models), at ``divisor``
bus cycles per bit. The clocks are the simulator's: time on the link runs as fast as the
simulation does, so the link's timeouts must allow for it (seconds, not milliseconds).
``to_board`` and ``to_host`` may change what crosses, as on
:class:`~boards.bridge_model.ModelTransport`.

A second connection injects faults into the simulated board: :meth:`SimulatedBoard.drop` loses
a byte on the line, :meth:`~SimulatedBoard.framing_error` sends one with a low stop bit,
:meth:`~SimulatedBoard.stall` stops the board (simulated time stands still)
for a while or until :meth:`~SimulatedBoard.resume`, :meth:`~SimulatedBoard.reset` asserts its
reset.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.errors import GpgpuError

from .protocol import LinkError

__all__ = ["SimulatedBoard", "BOARD_TESTBENCH", "build_board_soc", "open_board_sim",
           "SIM_DIVISOR", "SIM_TIMEOUT", "SIM_MAX_CYCLES"]

#: the cocotb test module that puts the simulated board on a socket (``cocotb_tests/board_tb.py``)
BOARD_TESTBENCH = "cocotb_tests.board_tb"
#: bus cycles per bit on the line of ``Device("board-sim")`` (a board's 115,200 baud would be
#: about 260 at 30 MHz: 65 times as long to move the same bytes)
SIM_DIVISOR = 4
#: the link's timeout for ``Device("board-sim")``, wall-clock seconds: an exchange takes about
#: 5 ms (a register) to 0.2 s (a 1 KiB block) while the simulator has a core to itself
SIM_TIMEOUT = 5.0
#: how many compute-unit cycles of simulated time a launch may take on ``Device("board-sim")``
#: without ``max_cycles`` (the Verilator backend's limit)
SIM_MAX_CYCLES = 20_000_000
#: the gateware modules of the board side (with the generator's, they key the cached build)
_GATEWARE = ("uart.py", "framing.py", "bridge.py", "top.py", "protocol.py")


def build_board_soc(config: CuConfig, *, memory_bytes: int, divisor: int, cu_hz: int,
                    bus_hz: int, build_root: Path | str = Path("build/verilator")):
    """Build (or reuse) the Verilator model of a :class:`~boards.top.BoardSoc`."""
    from gpgpu_hdl import __version__
    from gpgpu_hdl.sim.cu_backend import MODEL_ARGS, _gateware_digest
    from gpgpu_hdl.sim.verilator import build
    from gpgpu_hdl.sim.verilog_edit import sim_verilog

    from .top import BoardSoc

    digest = _gateware_digest(config.key(), memory_bytes, divisor, cu_hz, bus_hz, __version__)
    here = Path(__file__).resolve().parent
    for name in _GATEWARE:
        digest.update(name.encode() + b"\0" + (here / name).read_bytes())

    def text() -> str:
        top = BoardSoc(config, memory_bytes=memory_bytes, divisor=divisor, cu_hz=cu_hz,
                       bus_hz=bus_hz)
        return sim_verilog(top, "board_soc")
    return build(text, "board_soc", build_root=build_root, visibility="top",
                 extra_args=MODEL_ARGS, key=digest.hexdigest()[:16])


class SimulatedBoard:
    """A :class:`~boards.link.Transport` to a simulated :class:`~boards.top.BoardSoc` of
    ``config`` with ``memory_bytes`` of board memory, clocks ``cu_mhz`` and ``bus_mhz``, and
    ``divisor`` bus cycles per UART bit. :meth:`close` ends the simulation."""

    def __init__(self, config: CuConfig, *, memory_bytes: int = 32768, divisor: int = 4,
                 cu_mhz: float = 25, bus_mhz: float = 50, connect_timeout: float = 120,
                 to_board: Callable[[bytes], bytes] | None = None,
                 to_host: Callable[[bytes], bytes] | None = None) -> None:
        self.name = "simulated board"
        self.to_board = to_board or (lambda b: b)
        self.to_host = to_host or (lambda b: b)
        self.build = build_board_soc(config, memory_bytes=memory_bytes, divisor=divisor,
                                     cu_hz=round(cu_mhz * 1e6), bus_hz=round(bus_mhz * 1e6))
        self.results: dict | None = None
        self.error: BaseException | None = None
        self._closed = False
        listeners = []
        for _ in range(2):                  # the line, and the fault injection
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            listeners.append(listener)
        params = {"port": listeners[0].getsockname()[1],
                  "control": listeners[1].getsockname()[1], "divisor": divisor,
                  "clocks": [cu_mhz, bus_mhz]}
        self._thread = threading.Thread(target=self._simulate, args=(params,), daemon=True)
        self._thread.start()
        try:
            self._conn = self._accept(listeners[0], connect_timeout)
            self._control = self._accept(listeners[1], connect_timeout)
        finally:
            for listener in listeners:
                listener.close()
        self._answers = b""
        #: how long a fault command may take to be acknowledged (wall-clock seconds)
        self.control_timeout = 60.0

    def _simulate(self, params: dict) -> None:
        try:
            self.results = self.build.run(BOARD_TESTBENCH, params, timeout=3600)
        except BaseException as exc:        # reported by the transport's next call
            self.error = exc

    def _accept(self, listener: socket.socket, timeout: float) -> socket.socket:
        waited = 0.0
        while waited < timeout:
            ready, _, _ = select.select([listener], [], [], 0.5)
            if ready:
                conn, _ = listener.accept()
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return conn
            if self.error is not None or not self._thread.is_alive():
                raise LinkError(f"{self.name}: the simulation ended before it connected "
                                f"({self.error})")
            waited += 0.5
        raise LinkError(f"{self.name}: the simulation did not connect within {timeout:g} s")

    def _check(self) -> None:
        if self.error is not None:
            raise LinkError(f"{self.name}: the simulation failed ({self.error})")
        if self._closed:
            raise LinkError(f"{self.name}: the simulation was closed")

    def write(self, data: bytes) -> None:
        self._check()
        data = self.to_board(data)
        if data:
            self._conn.sendall(data)

    def read(self, timeout: float) -> bytes:
        self._check()
        ready, _, _ = select.select([self._conn], [], [], max(timeout, 0.0))
        if not ready:
            return b""
        data = self._conn.recv(65536)
        if not data:
            raise LinkError(f"{self.name}: the simulation closed the link")
        return self.to_host(data)

    # --- faults ------------------------------------------------------------------------------

    def drop(self, to: str, nth: int = 1) -> None:
        """Lose the ``nth`` byte (1: the next one) that crosses the line ``to`` ``"board"`` or
        ``"host"``, in the testbench, after the UART model received it (towards the host) or
        before it reaches the ``rx`` pin (towards the board)."""
        if to not in ("board", "host") or nth < 1:
            raise ValueError(f"drop(to='board' or 'host', nth >= 1), not ({to!r}, {nth!r})")
        self._command({"op": "drop", "to": to, "nth": nth})

    def framing_error(self, nth: int = 1) -> None:
        """Send the ``nth`` byte (1: the next) towards the board with a low stop bit: the
        board's UART drops it (a framing error), so its frame fails its CRC."""
        if nth < 1:
            raise ValueError(f"framing_error(nth >= 1), not {nth!r}")
        self._command({"op": "framing_error", "nth": int(nth)})

    def stall(self, seconds: float | None = None) -> None:
        """Stop the board for ``seconds`` of wall time (None: until :meth:`resume`): its
        simulated time stands still and what the host sends waits on the line. Returns once
        the board has stopped."""
        self._command({"op": "stall", "seconds": seconds})

    def resume(self) -> None:
        """End a :meth:`stall`."""
        self._command({"op": "resume"})

    def reset(self, cycles: int = 64) -> None:
        """Assert the board's reset (both clock domains) for ``cycles`` bus cycles; returns
        once it is released."""
        self._command({"op": "reset", "cycles": int(cycles)})

    def _command(self, command: dict) -> dict:
        """Send a fault command and wait for the testbench's answer (its simulated time)."""
        self._check()
        self._control.sendall(json.dumps(command).encode() + b"\n")
        deadline = time.monotonic() + self.control_timeout
        while b"\n" not in self._answers:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._control], [], [], max(left, 0.0))
            if not ready:
                raise LinkError(f"{self.name}: the testbench did not take "
                                f"{command['op']} within {self.control_timeout:g} s")
            data = self._control.recv(4096)
            if not data:
                self._check()
                raise LinkError(f"{self.name}: the testbench closed its control connection")
            self._answers += data
        line, self._answers = self._answers.split(b"\n", 1)
        answer = json.loads(line)
        if "error" in answer:
            raise LinkError(f"{self.name}: {command['op']}: {answer['error']}")
        return answer

    def now_ns(self) -> int:
        """The board's simulated time, nanoseconds (what a launch's time limit counts)."""
        return int(self._command({"op": "time"})["ns"])

    def close(self) -> Any:
        """End the simulation; returns the testbench's results (its cycle count). Closing
        again returns them again."""
        if not self._closed:
            self._closed = True
            self._control.close()
            self._conn.close()
            self._thread.join(timeout=120)
        if self.error is not None:
            raise LinkError(f"{self.name}: the simulation failed ({self.error})")
        return self.results

    def __enter__(self) -> SimulatedBoard:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_board_sim(*, board: str | None = None, config: CuConfig | None = None,
                   max_cycles: int | None = None, memory_limit: int | None = None,
                   max_instructions: int | None = None, **other: Any):
    """The backend of ``Device("board-sim", board="ulx3s-85f", profile=...)``: the board's
    gateware below its PLL (:class:`~boards.top.BoardSoc` of the unit ``config``, default the
    full ``CuConfig()``, with the memory window and the clocks a build for ``board`` would
    have) simulated as a :class:`SimulatedBoard`, behind the host side of a real board
    (:class:`~boards.device.BoardBackend` over :class:`~boards.link.HostLink`).

    The line runs at :data:`SIM_DIVISOR` bus cycles a bit and the link waits
    :data:`SIM_TIMEOUT` seconds for an answer; ``max_cycles`` (default
    :data:`SIM_MAX_CYCLES`) counts compute-unit cycles of simulated time. ``close()`` on the
    device (or the backend) ends the simulation (it also ends when the process does).
    """
    from gpgpu_hdl.runtime.errors import BackendError

    from .board_top import memory_bytes, pll_setting, unit_config
    from .device import BoardBackend
    from .link import HostLink
    from .platforms import board as known

    del max_instructions
    if other:
        raise BackendError(f"{', '.join(f'{k}=' for k in sorted(other))} cannot be given to "
                           f"Device('board-sim'): the simulated board is its own line, and its "
                           f"unit is profile= (or config=)")
    if board is None:
        raise BackendError("Device('board-sim') needs board=, the board to simulate (for "
                           "example 'ulx3s-85f')")
    if not isinstance(board, str):
        raise BackendError(f"board= names the board (for example 'ulx3s-85f'), not {board!r}")
    if max_cycles is not None and (isinstance(max_cycles, bool)
                                   or not isinstance(max_cycles, int) or max_cycles <= 0):
        raise BackendError(f"max_cycles must be a positive integer, not {max_cycles!r}")
    spec = known(board)
    unit = unit_config(spec, CuConfig() if config is None else config)
    setting = pll_setting(spec)
    simulated = SimulatedBoard(unit, memory_bytes=memory_bytes(spec, unit), divisor=SIM_DIVISOR,
                               cu_mhz=round(setting.cu_hz) / 1e6,
                               bus_mhz=round(setting.bus_hz) / 1e6)
    simulated.name = f"simulated {board}"
    try:
        backend = BoardBackend(HostLink(simulated, timeout=SIM_TIMEOUT), board=board,
                               max_cycles=max_cycles or SIM_MAX_CYCLES,
                               memory_limit=memory_limit, owns_link=True)
    except BaseException:
        with contextlib.suppress(GpgpuError):
            simulated.close()
        raise
    backend.simulated = simulated
    return backend
