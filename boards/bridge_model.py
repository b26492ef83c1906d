"""A Python model of the board-side bridge: what the gateware must do with each request, and a
:class:`~boards.link.Transport` to the model with faults on the line, so that the host side is
tested without a board and the gateware against the same rules.

Registers and memory share one address space, the SoC's AXI4-Lite port (the memory is its
block-RAM window). The bridge answers every frame it receives: a frame whose CRC fails gets
``BAD_CRC`` (with the sequence number as received); a ``WRITE_REG`` that repeats the last
request (same sequence number and bytes) is answered from its first execution and not executed
again; until a host opens a session (``HELLO`` with a session number other than 0) every
command but ``INFO`` and ``HELLO`` is refused with ``NO_SESSION``, and a ``HELLO`` forgets the
last request (a new host's first sequence numbers may repeat an earlier host's); everything
else is executed and answered. Memory blocks must be whole words inside the board memory,
checked before any word moves; ``READ_REGS`` reads every word before it answers, and answers
``BUS_ERROR`` without data when one fails. :meth:`BridgeModel.reset` is the bridge's reset.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .protocol import (MAX_WORDS, VERSION, Answer, Command, Info, LinkError, Request,
                       SlipDecoder, Status, slip_encode)

__all__ = ["Registers", "BridgeModel", "ModelTransport"]


@dataclass
class Registers:
    """SoC registers as the bridge's AXI4-Lite master sees them: a dictionary of word
    addresses; an address not in it answers a bus error. ``on_write`` is called after each
    write (for a model of what the register does)."""

    values: dict[int, int] = field(default_factory=dict)
    on_write: Callable[[int, int], None] | None = None
    writes: list[tuple[int, int]] = field(default_factory=list)

    def read(self, address: int) -> int | None:
        return self.values.get(address)

    def write(self, address: int, value: int) -> bool:
        if address not in self.values:
            return False
        self.values[address] = value
        self.writes.append((address, value))
        if self.on_write is not None:
            self.on_write(address, value)
        return True


class BridgeModel:
    """The bridge: bytes in, answer bytes out."""

    def __init__(self, registers: Registers, memory_bytes: int, *, memory_base: int = 0,
                 max_words: int = MAX_WORDS, cu_hz: int = 0, bus_hz: int = 0,
                 profile: bytes = bytes(16)) -> None:
        self.registers = registers
        self.memory = bytearray(memory_bytes)
        self.memory_base = memory_base
        self.info = Info(VERSION, max_words, memory_bytes, cu_hz, bus_hz, profile)
        self._decoder = SlipDecoder()
        self._last: tuple[Request, Answer] | None = None
        #: the session a host opened with ``HELLO`` (0: none since the reset)
        self.session = 0
        #: requests executed, by command (a repeated WRITE_REG is not counted again)
        self.executed: list[Command] = []

    def reset(self) -> None:
        """The bridge's reset (a board reset, power-up or reflash): the session, the last
        request and a half-received frame are gone; the memory keeps its contents."""
        self._decoder = SlipDecoder()
        self._last = None
        self.session = 0

    def receive(self, data: bytes) -> bytes:
        """Take bytes from the line; return the answer frames they complete."""
        return b"".join(slip_encode(self._answer(p).pack()) for p in self._decoder.feed(data))

    def _answer(self, payload: bytes) -> Answer:
        try:
            request = Request.unpack(payload)
        except LinkError:
            return Answer(payload[0], Status.BAD_CRC)
        if self._last is not None and self._last[0] == request \
                and request.command == Command.WRITE_REG:
            return self._last[1]
        if request.command == Command.HELLO and len(request.args) == 4:
            session = struct.unpack("<I", request.args)[0]
            if session:
                self.session = session
                self._last = None
            self.executed.append(Command.HELLO)
            return Answer(request.seq, Status.OK, struct.pack("<I", self.session))
        if not self.session and request.command not in (Command.INFO, Command.HELLO) \
                and request.command in set(Command):
            return Answer(request.seq, Status.NO_SESSION)
        answer = Answer(request.seq, *self._execute(request))
        self._last = (request, answer)
        return answer

    def _execute(self, r: Request) -> tuple[int, bytes]:
        args = r.args
        try:
            command = Command(r.command)
        except ValueError:
            return Status.BAD_COMMAND, b""
        fixed = {Command.INFO: 0, Command.READ_REG: 4, Command.WRITE_REG: 8,
                 Command.READ_MEM: 6, Command.HELLO: 4, Command.READ_REGS: 6}
        if command in fixed and len(args) != fixed[command]:
            return Status.BAD_LENGTH, b""
        if command == Command.WRITE_MEM and (len(args) < 8 or len(args) % 4
                                             or len(args) > 4 + 4 * self.info.max_words):
            return Status.BAD_LENGTH, b""
        self.executed.append(command)
        if command == Command.INFO:
            return Status.OK, self.info.pack()
        if command == Command.READ_REG:
            address = struct.unpack("<I", args)[0]
            offset = self._offset(address, 4)
            value = self.registers.read(address) if offset is None else struct.unpack_from(
                "<I", self.memory, offset)[0]
            return (Status.BUS_ERROR, b"") if value is None else (
                Status.OK, struct.pack("<I", value))
        if command == Command.WRITE_REG:
            address, value = struct.unpack("<II", args)
            offset = self._offset(address, 4)
            if offset is not None:                  # the memory window is in the same space
                struct.pack_into("<I", self.memory, offset, value)
                return Status.OK, b""
            ok = self.registers.write(address, value)
            return (Status.OK if ok else Status.BUS_ERROR), b""
        address = struct.unpack("<I", args[:4])[0]
        if command == Command.READ_REGS:
            words = struct.unpack("<H", args[4:])[0]
            if not 1 <= words <= self.info.max_words:
                return Status.BAD_LENGTH, b""
            values = []
            for i in range(words):
                at = address + 4 * i
                offset = self._offset(at, 4)
                value = self.registers.read(at) if offset is None else struct.unpack_from(
                    "<I", self.memory, offset)[0]
                if value is None:
                    return Status.BUS_ERROR, b""
                values.append(value)
            return Status.OK, struct.pack(f"<{words}I", *values)
        if command == Command.READ_MEM:
            words = struct.unpack("<H", args[4:])[0]
            if not 1 <= words <= self.info.max_words:
                return Status.BAD_LENGTH, b""
            offset = self._offset(address, 4 * words)
            if offset is None:
                return Status.OUT_OF_RANGE, b""
            return Status.OK, bytes(self.memory[offset:offset + 4 * words])
        data = args[4:]
        offset = self._offset(address, len(data))
        if offset is None:
            return Status.OUT_OF_RANGE, b""
        self.memory[offset:offset + len(data)] = data
        return Status.OK, b""

    def _offset(self, address: int, size: int) -> int | None:
        offset = address - self.memory_base
        if address % 4 or offset < 0 or offset + size > len(self.memory):
            return None
        return offset


class ModelTransport:
    """A line to a :class:`BridgeModel`. ``to_board`` and ``to_host`` may change what crosses
    the line (corrupt, drop, hold back): each gets the bytes of one write or one answer and
    returns what arrives."""

    def __init__(self, bridge: BridgeModel, *,
                 to_board: Callable[[bytes], bytes] | None = None,
                 to_host: Callable[[bytes], bytes] | None = None) -> None:
        self.name = "bridge model"
        self.bridge = bridge
        self.to_board = to_board or (lambda b: b)
        self.to_host = to_host or (lambda b: b)
        self._pending = b""

    def write(self, data: bytes) -> None:
        self._pending += self.to_host(self.bridge.receive(self.to_board(data)))

    def read(self, timeout: float) -> bytes:
        data, self._pending = self._pending, b""
        if not data:
            time.sleep(min(timeout, 0.005))
        return data
