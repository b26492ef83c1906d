"""The host side of the link: a session opened with ``HELLO``, requests with sequence numbers,
answers checked, lost frames retried, and a one-line :class:`~boards.protocol.LinkError` when
the board does not answer (:class:`~boards.protocol.BoardReset` when it lost the session).

A :class:`Transport` moves bytes (a serial port, a simulated UART, the bridge's Python model);
:class:`HostLink` speaks the protocol of :mod:`boards.protocol` over it.
"""

from __future__ import annotations

import secrets
import struct
import time
from collections.abc import Callable
from typing import Protocol

from .protocol import (MAX_WORDS, Answer, BoardReset, Command, Info, LinkError, Request,
                       SlipDecoder, Status, slip_encode)

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

    The first request that needs one opens a session (:meth:`connect`: ``HELLO`` with a random
    session number, which also makes the bridge forget an earlier host's last request, and a
    random first sequence number). When the board answers ``NO_SESSION`` (it was reset or
    reflashed since), the request raises :class:`~boards.protocol.BoardReset`, and so does
    every later one until :meth:`connect` is called again: what the host knew of the board
    may be stale. :meth:`close` closes the transport; a closed link refuses requests.
    """

    def __init__(self, transport: Transport, *, timeout: float = 0.5, retries: int = 3) -> None:
        if timeout <= 0 or retries < 0:
            raise ValueError("the link needs a positive timeout and retries >= 0")
        self.transport = transport
        self.timeout = timeout
        self.retries = retries
        self._seq = secrets.randbelow(256)
        self._decoder = SlipDecoder()
        #: requests sent again, frames dropped (bad CRC, stale sequence number), and answers
        #: ``BAD_CRC`` (the board saw a corrupted request)
        self.resent = 0
        self.dropped = 0
        self.bad_crc = 0
        self._max_words = MAX_WORDS
        #: the session this host opened (None: none yet, or the board lost it)
        self.session: int | None = None
        #: why the session is gone (the board's reset was seen), until :meth:`connect`
        self.lost: str | None = None
        self.closed = False

    # --- the session ------------------------------------------------------------------------

    def connect(self) -> int:
        """Open a new session: ``HELLO`` with a random non-zero session number (an answer
        naming another one is a late answer to an earlier host's ``HELLO``, and dropped).
        The bridge forgets the last request it executed, so that this host's sequence numbers
        can never be taken for a repetition of an earlier host's; returns the session."""
        session = secrets.randbelow(0xFFFF_FFFF) + 1
        self._seq = secrets.randbelow(256)
        self.session = None
        mine = struct.pack("<I", session)
        try:
            self.request(Command.HELLO, mine,
                         accept=lambda a: a.status != Status.OK or a.data == mine)
        except LinkError as exc:
            if getattr(exc, "status", None) != Status.BAD_COMMAND:
                raise
            raise LinkError(f"{self.transport.name}: the board does not know HELLO: its "
                            f"bitstream speaks an older host link (version 1): rebuild "
                            f"it") from None
        self.session, self.lost = session, None
        return session

    def check_session(self) -> None:
        """Ask the bridge which session is open (``HELLO 0``, one exchange) and raise
        :class:`~boards.protocol.BoardReset` unless it is still this host's."""
        if self.session is None:
            if self.lost is not None:
                raise BoardReset(f"{self.transport.name}: {self.lost}; connect again")
            self.connect()
            return
        data = self.request(Command.HELLO, bytes(4))
        now = struct.unpack("<I", data)[0] if len(data) == 4 else None
        if now != self.session:
            why = ("the board was reset or reflashed" if now == 0 else
                   "another host opened a session with the board")
            self._lose(f"{why} since this host connected")

    def _lose(self, why: str) -> None:
        self.session, self.lost = None, why
        raise BoardReset(f"{self.transport.name}: {why}; what the host knew of it may be "
                         f"stale")

    def close(self) -> None:
        """Close the transport (if it can be closed); closing again does nothing."""
        if self.closed:
            return
        self.closed = True
        close = getattr(self.transport, "close", None)
        if close is not None:
            close()

    # --- one exchange -----------------------------------------------------------------------

    def request(self, command: int, args: bytes = b"", *,
                accept: Callable[[Answer], bool] | None = None) -> bytes:
        """Send ``command`` and return its answer's data (status ``OK``); ``accept`` may
        reject an answer that carries the request's sequence number as someone else's."""
        name = _name(Command, command, "command")
        if self.closed:
            raise LinkError(f"{self.transport.name}: the link is closed")
        if command not in (Command.INFO, Command.HELLO) and self.session is None:
            if self.lost is not None:
                raise BoardReset(f"{self.transport.name}: {self.lost}; connect again "
                                 f"before {name}")
            self.connect()
        self._seq = (self._seq + 1) & 0xFF
        frame = slip_encode(Request(self._seq, command, args).pack())
        problem = "no answer"
        for attempt in range(self.retries + 1):
            if attempt:
                self.resent += 1
            self.transport.write(frame)
            answer = self._await(self._seq, accept)
            if answer is None:
                problem = "no answer"
                continue
            if answer.status == Status.BAD_CRC:
                self.bad_crc += 1
                problem = "the board saw a corrupted request"
                continue
            if answer.status == Status.NO_SESSION:
                self._lose(f"the board was reset or reflashed since this host connected "
                           f"(it refused {name}: NO_SESSION)")
            if answer.status != Status.OK:
                refused = LinkError(f"{self.transport.name}: {name} refused by the board: "
                                    f"{_name(Status, answer.status, 'status')}")
                refused.status = answer.status
                raise refused
            return answer.data
        raise LinkError(f"{self.transport.name}: {problem} to {name} after "
                        f"{self.retries + 1} tries of {self.timeout:g} s: is the board "
                        f"connected and its bitstream loaded?")

    def _await(self, seq: int, accept: Callable[[Answer], bool] | None) -> Answer | None:
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            for payload in self._decoder.feed(self.transport.read(left)):
                try:
                    answer = Answer.unpack(payload)
                except LinkError:
                    self.dropped += 1
                    continue
                if answer.seq == seq and (accept is None or accept(answer)):
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

    def read_regs(self, address: int, count: int) -> list[int]:
        """``count`` consecutive SoC registers from ``address`` (``READ_REGS``: one exchange
        per ``max_words`` of them)."""
        _check_block(address, 4 * count)
        out: list[int] = []
        while len(out) < count:
            words = min(self._max_words, count - len(out))
            data = self.request(Command.READ_REGS,
                                struct.pack("<IH", address + 4 * len(out), words))
            if len(data) != 4 * words:
                raise LinkError(f"{self.transport.name}: READ_REGS of {words} words answered "
                                f"{len(data)} bytes")
            out += struct.unpack(f"<{words}I", data)
        return out

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
