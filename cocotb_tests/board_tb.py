"""cocotb testbench of :class:`boards.top.BoardSoc`: the board's serial line on a TCP socket.

Started by :class:`boards.sim.SimulatedBoard`, which listens on two local ports: the testbench
connects to both. Every byte the ``data`` connection brings is sent on the ``rx`` pin as an 8N1
frame and every frame the design sends on ``tx`` goes back over it, until the host closes the
connection; both sides of the line are cocotbext-uart's models (``UartSource`` on ``rx``,
``UartSink`` on ``tx``) at ``divisor`` bus cycles a bit. The host side is the real one
(``HostLink``, ``Device("board")``).

The ``control`` connection injects faults. Each command is a JSON line, answered with one
(``{"ns": simulated time}``, or ``{"error": ...}``) once it has taken effect:

``{"op": "drop", "to": "board" | "host", "nth": k}``
    the ``k``-th byte (1 = the next) that crosses the line that way is lost;
``{"op": "framing_error", "nth": k}``
    the ``k``-th byte (1 = the next) towards the board is sent with a low stop bit (the
    testbench drives the ``rx`` pin for it, between the source's bytes), then a bit of idle
    line;
``{"op": "stall", "seconds": s}``
    the board stops: simulated time stands still for ``s`` seconds of wall time (or, with
    ``null``, until ``{"op": "resume"}``); what the host sends meanwhile waits in the line;
``{"op": "resume"}``
    ends a stall;
``{"op": "time"}``
    only the answer (the host's clock for a launch's time limit, also during a stall);
``{"op": "reset", "cycles": n}``
    the board's reset (both clock domains) is asserted for ``n`` bus cycles; the answer comes
    once it is released.

Parameters (see :mod:`gpgpu_hdl.sim.cocotb_io`): ``port`` and ``control`` (the host's TCP
ports on 127.0.0.1), ``divisor`` (bus cycles per bit), ``clocks`` (``[cu_mhz, bus_mhz]``).
Results: ``ns``, the simulated time, ``bytes``, ``[received, sent]``, and ``faults``, the
commands executed (but ``time``).
"""

import json
import logging
import select
import socket
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Timer
from cocotb.utils import get_sim_time
from cocotbext.uart import UartSink, UartSource

from gpgpu_hdl.sim.cocotb_io import load_params, save_results

#: bus cycles between looks at the sockets while the host sends nothing
_IDLE = 256


def _half_ps(mhz: float) -> int:
    return max(1, round(1e6 / mhz / 2))


class _Control:
    """The fault-injection connection: JSON lines in, one JSON line out per command."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setblocking(False)
        self.buffer = b""
        self.closed = False

    def commands(self) -> list[dict]:
        """The complete commands that have arrived (none when the host closed it)."""
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            data = None
        except OSError:
            data = b""
        if data == b"":
            self.closed = True
        elif data:
            self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def wait(self) -> list[dict]:
        """Block (the simulation stands still) until a command or the end comes."""
        while not self.closed:
            select.select([self.sock], [], [], 1.0)
            if commands := self.commands():
                return commands
        return []

    def answer(self, message: dict) -> None:
        self.sock.setblocking(True)
        try:
            self.sock.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            self.closed = True
        self.sock.setblocking(False)


@cocotb.test()
async def serve(dut):
    p = load_params()
    cu_mhz, bus_mhz = p["clocks"]
    divisor = int(p["divisor"])
    bus_ps = 2 * _half_ps(bus_mhz)
    Clock(dut.cu_clk, 2 * _half_ps(cu_mhz), unit="ps").start()
    Clock(dut.clk, bus_ps, unit="ps").start()
    # cocotbext-uart times a bit as int(1e9 / baud) ns: the nearest whole ns to `divisor` bus
    # cycles (a quarter ns above it, so that the float division cannot round below it)
    bit_ps = divisor * bus_ps
    bit_ns = round(bit_ps / 1000)
    if not bit_ns or abs(bit_ns * 1000 - bit_ps) > bit_ps / 100:
        raise ValueError(f"a bit of {divisor} bus cycles at {bus_mhz} MHz ({bit_ps} ps) is not "
                         f"within 1 % of a whole number of ns")
    baud = 1e9 / (bit_ns + 0.25)
    source = UartSource(dut.rx, baud=baud, bits=8, stop_bits=1)
    sink = UartSink(dut.tx, baud=baud, bits=8, stop_bits=1)
    for model in (source, sink):
        model.log.setLevel(logging.WARNING)       # a line per byte otherwise
    dut.rst.value = 1
    dut.cu_rst.value = 1
    await ClockCycles(dut.clk, 4)
    await ClockCycles(dut.cu_clk, 4)
    dut.rst.value = 0
    dut.cu_rst.value = 0
    await ClockCycles(dut.clk, 4)

    conn = socket.create_connection(("127.0.0.1", int(p["port"])))
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.setblocking(False)
    control = _Control(int(p["control"]))
    counts = [0, 0]
    drops = {"board": set(), "host": set()}     # byte numbers to lose on the way
    framing = set()                             # byte numbers towards the board, low stop bit
    faults = []
    bit = Timer(bit_ns, unit="ns")

    def keep(direction: str, data: bytes, first: int) -> bytes:
        lost = drops[direction]
        if not lost:
            return data
        kept = bytes(b for i, b in enumerate(data, first) if i not in lost)
        lost.difference_update(range(first, first + len(data)))
        return kept

    async def bad_stop(byte: int) -> None:
        """``byte`` on the ``rx`` pin with its stop bit low, then the line idle (high) for
        two bits: the receiver sees a framing error and waits for the line to go high."""
        await source.wait()
        for level in [0, *(byte >> k & 1 for k in range(8)), 0]:
            dut.rx.value = level
            await bit
        dut.rx.value = 1
        await bit
        await bit

    async def to_board(data: bytes, first: int) -> None:
        """``data`` (byte numbers from ``first``) onto the ``rx`` pin through the source,
        but the bytes to lose and the ones to send with a framing error."""
        plain = bytearray()
        for number, byte in enumerate(data, first):
            if number in drops["board"]:
                drops["board"].discard(number)
            elif number in framing:
                framing.discard(number)
                if plain:                       # (an empty write would leave it never idle)
                    source.write_nowait(bytes(plain))
                    plain.clear()
                await bad_stop(byte)
            else:
                plain.append(byte)
        if plain:
            source.write_nowait(bytes(plain))

    async def to_host():
        while True:
            data = bytes(await sink.read())
            first = counts[1] + 1
            counts[1] += len(data)
            data = keep("host", data, first)
            if data:
                conn.setblocking(True)
                conn.sendall(data)
                conn.setblocking(False)

    def execute(command: dict) -> dict | None:
        """Apply ``command``; None for the ones that take simulated time (done by the loop)."""
        op = command.get("op")
        if op != "time":
            faults.append(command)
        if op == "drop":
            direction, nth = command["to"], int(command["nth"])
            base = counts[0] if direction == "board" else counts[1]
            drops[direction].add(base + nth)
            return {"ns": get_sim_time("ns")}
        if op == "framing_error":
            framing.add(counts[0] + int(command["nth"]))
            return {"ns": get_sim_time("ns")}
        if op in ("resume", "time"):
            return {"ns": get_sim_time("ns")}
        if op in ("stall", "reset"):
            return None
        return {"error": f"unknown command {op!r}"}

    async def stall(seconds: float | None) -> None:
        control.answer({"ns": get_sim_time("ns")})
        end = None if seconds is None else time.monotonic() + float(seconds)
        while not control.closed:
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return
            if left is None:
                pending = control.wait()
            else:
                select.select([control.sock], [], [], min(left, 1.0))
                pending = control.commands()
            for command in pending:
                if command.get("op") in ("resume", "time"):
                    control.answer({"ns": get_sim_time("ns")})
                    if command["op"] == "resume":
                        return
                else:
                    control.answer({"error": "the board is stalled: resume it first"})

    async def reset(cycles: int) -> None:
        dut.rst.value = 1
        dut.cu_rst.value = 1
        await ClockCycles(dut.clk, max(1, cycles))
        dut.rst.value = 0
        dut.cu_rst.value = 0
        control.answer({"ns": get_sim_time("ns")})

    cocotb.start_soon(to_host())
    while True:
        for command in control.commands():
            done = execute(command)
            if done is not None:
                control.answer(done)
            elif command["op"] == "stall":
                await stall(command.get("seconds"))
            else:
                await reset(int(command["cycles"]))
        try:
            data = conn.recv(65536)
        except BlockingIOError:
            await Timer(_IDLE * bus_ps, unit="ps")
            continue
        except OSError:
            break
        if not data:
            break                                       # the host closed the link
        first = counts[0] + 1
        counts[0] += len(data)
        await to_board(data, first)
    conn.close()
    control.sock.close()
    save_results({"ns": get_sim_time("ns"), "bytes": counts, "faults": faults})
