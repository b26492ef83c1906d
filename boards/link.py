"""The host side of the link: requests with sequence numbers, answers checked, lost frames
retried, and a one-line :class:`~boards.protocol.LinkError` when the board does not answer.

A :class:`Transport` moves bytes (a serial port, a simulated UART, the bridge's Python model);
:class:`HostLink` speaks the protocol of :mod:`boards.protocol` over it.
"""

from __future__ import annotations

import struct
import time
from typing import Protocol

from .protocol import (MAX_WORDS, Answer, Command, Info, LinkError, Request, SlipDecoder, Status,
                       slip_encode)

__all__ = ["Transport", "HostLink"]


class Transport(Protocol):
    """Bytes to and from the board."""

    #: what the transport is, for messages (``/dev/ttyUSB0``)
    name: str

    def write(self, data: bytes) -> None:
        """Send ``data``."""

    def read(self, timeout: float) -> bytes:
        """The bytes that arrive within ``timeout`` seconds (at least one unless it runs out;
        empty when none came)."""


class HostLink:
    """Requests over ``transport``: each waits ``timeout`` seconds for its answer and is sent
    again, with the same sequence number, up to ``retries`` more times when the answer is
    lost, fails its CRC or says that the request failed its CRC.

    Register reads and memory blocks are idempotent; the bridge does not execute a repeated
    ``WRITE_REG`` twice (it answers it from the first execution), so a launch doorbell written
    on a bad line still rings once.
    """

    def __init__(self, transport: Transport, *, timeout: float = 0.5, retries: int = 3) -> None:
        if timeout <= 0 or retries < 0:
            raise ValueError("the link needs a positive timeout and retries >= 0")
        self.transport = transport
        self.timeout = timeout
        self.retries = retries
        self._seq = 0
        self._decoder = SlipDecoder()
        #: requests sent again, and frames dropped (bad CRC, stale sequence number)
        self.resent = 0
        self.dropped = 0
        self._max_words = MAX_WORDS

    # --- one exchange -----------------------------------------------------------------------

    def request(self, command: int, args: bytes = b"") -> bytes:
        """Send ``command`` and return its answer's data (status ``OK``)."""
        name = _name(Command, command, "command")
        self._seq = (self._seq + 1) & 0xFF
        frame = slip_encode(Request(self._seq, command, args).pack())
        problem = "no answer"
        for attempt in range(self.retries + 1):
            if attempt:
                self.resent += 1
            self.transport.write(frame)
            answer = self._await(self._seq)
            if answer is None:
                problem = "no answer"
                continue
            if answer.status == Status.BAD_CRC:
                problem = "the board saw a corrupted request"
                continue
            if answer.status != Status.OK:
                raise LinkError(f"{self.transport.name}: {name} refused by the board: "
                                f"{_name(Status, answer.status, 'status')}")
            return answer.data
        raise LinkError(f"{self.transport.name}: {problem} to {name} after "
                        f"{self.retries + 1} tries of {self.timeout:g} s: is the board "
                        f"connected and its bitstream loaded?")

    def _await(self, seq: int) -> Answer | None:
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            for payload in self._decoder.feed(self.transport.read(left)):
                try:
                    answer = Answer.unpack(payload)
                except LinkError:
                    self.dropped += 1
                    continue
                if answer.seq == seq:
                    return answer
                self.dropped += 1           # a late answer to an earlier try
        return None

    # --- the commands -----------------------------------------------------------------------

    def info(self) -> Info:
        """What the bridge says about itself; also sets the block size to the bridge's."""
        info = Info.unpack(self.request(Command.INFO))
        self._max_words = max(1, min(MAX_WORDS, info.max_words))
        return info

    def read_reg(self, address: int) -> int:
        """A SoC register (AXI4-Lite read)."""
        data = self.request(Command.READ_REG, struct.pack("<I", address))
        if len(data) != 4:
            raise LinkError(f"{self.transport.name}: READ_REG answered {len(data)} bytes")
        return struct.unpack("<I", data)[0]

    def write_reg(self, address: int, value: int) -> None:
        self.request(Command.WRITE_REG, struct.pack("<II", address, value & 0xFFFFFFFF))

    def read_mem(self, address: int, size: int) -> bytes:
        """``size`` bytes of board memory from ``address`` (both multiples of 4)."""
        _check_block(address, size)
        out = bytearray()
        while len(out) < size:
            words = min(self._max_words, (size - len(out)) // 4)
            data = self.request(Command.READ_MEM, struct.pack("<IH", address + len(out), words))
            if len(data) != 4 * words:
                raise LinkError(f"{self.transport.name}: READ_MEM of {words} words answered "
                                f"{len(data)} bytes")
            out += data
        return bytes(out)

    def write_mem(self, address: int, data: bytes) -> None:
        """Write ``data`` (a multiple of 4 bytes) to board memory at ``address``."""
        _check_block(address, len(data))
        step = 4 * self._max_words
        for offset in range(0, len(data), step):
            self.request(Command.WRITE_MEM, struct.pack("<I", address + offset)
                         + data[offset:offset + step])


def _check_block(address: int, size: int) -> None:
    if address % 4 or size % 4 or address < 0 or size < 0:
        raise ValueError(f"memory blocks are whole words: address {address:#x}, {size} bytes")


def _name(kind: type, value: int, what: str) -> str:
    try:
        return kind(value).name
    except ValueError:
        return f"unknown {what} {value:#x}"
