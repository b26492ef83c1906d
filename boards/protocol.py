"""The host link's wire format: frames, commands, answers and their check, shared by the host
(:mod:`boards.link`), the bridge's reference model (:mod:`boards.bridge_model`) and the
board-side bridge.

A frame is SLIP-delimited (RFC 1055: ``END`` before and after, ``END`` and ``ESC`` inside
escaped), so a receiver finds the next frame after any lost or corrupted byte. Inside, all
fields little-endian::

    request  = seq:u8  command:u8  arguments...  crc:u16
    answer   = seq:u8  status:u8   data...       crc:u16

``crc`` is CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection, no final
XOR) of everything before it. An answer repeats its request's ``seq``. A host opens a session
with ``HELLO`` before anything else (the bridge refuses other commands but ``INFO`` with
``NO_SESSION`` after its reset). docs/hostlink.md has the commands, the sessions and the retry
rules.
"""

from __future__ import annotations

import binascii
import dataclasses
import enum
import struct
from dataclasses import dataclass

from gpgpu_hdl.errors import GpgpuError

__all__ = [
    "END", "ESC", "ESC_END", "ESC_ESC", "VERSION", "MAGIC", "MAX_WORDS", "Command", "Status",
    "LinkError", "BoardReset", "crc16", "slip_encode", "SlipDecoder", "Request", "Answer", "Info",
]

END, ESC, ESC_END, ESC_ESC = 0xC0, 0xDB, 0xDC, 0xDD
#: the protocol version the ``INFO`` answer carries (2: ``HELLO``, ``READ_REGS``, sessions)
VERSION = 2
#: the first bytes of the ``INFO`` answer's data
MAGIC = b"GPGU"
#: the most 32-bit words one ``READ_MEM`` or ``WRITE_MEM`` moves
MAX_WORDS = 256


class Command(enum.IntEnum):
    """What a request asks for, and its arguments."""

    INFO = 0x00         #: none; answers :class:`Info`
    READ_REG = 0x01     #: address:u32; answers value:u32 (a SoC register, AXI4-Lite)
    WRITE_REG = 0x02    #: address:u32 value:u32
    READ_MEM = 0x03     #: address:u32 words:u16; answers the words
    WRITE_MEM = 0x04    #: address:u32 then the words
    HELLO = 0x05        #: session:u32 (0: only ask); answers the session:u32 now open
    READ_REGS = 0x06    #: address:u32 words:u16; answers the words (registers, AXI4-Lite)


class Status(enum.IntEnum):
    """How a request ended (the answer's second byte)."""

    OK = 0
    BAD_CRC = 1         #: the request's check failed; nothing was done
    BAD_COMMAND = 2     #: unknown command
    BAD_LENGTH = 3      #: arguments too short or too long for the command
    BUS_ERROR = 4       #: the SoC answered SLVERR or DECERR
    OUT_OF_RANGE = 5    #: a memory block outside the board's memory, or not word-aligned
    NO_SESSION = 6      #: no host has said ``HELLO`` since the bridge's reset; nothing was done


class LinkError(GpgpuError):
    """The link failed: no answer, a refused request, or an answer that makes no sense."""


class BoardReset(LinkError):
    """The board lost the host's session: it was reset, power-cycled or reflashed (or another
    host said ``HELLO``) since this host connected, so what the host knew of it is stale."""


def crc16(data: bytes, value: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``value``: the running CRC, to continue one)."""
    return binascii.crc_hqx(data, value)


def slip_encode(payload: bytes) -> bytes:
    """``payload`` as one frame: ``END``, the bytes with ``END``/``ESC`` escaped, ``END``."""
    body = payload.replace(bytes([ESC]), bytes([ESC, ESC_ESC]))
    body = body.replace(bytes([END]), bytes([ESC, ESC_END]))
    return bytes([END]) + body + bytes([END])


class SlipDecoder:
    """Cuts a byte stream into frames. Empty frames (two ``END`` in a row) are skipped; a
    frame with a bad escape is dropped whole, as is one longer than ``limit`` bytes."""

    def __init__(self, limit: int = 8 + 4 * MAX_WORDS + 16) -> None:
        self.limit = limit
        self._frame = bytearray()
        self._escaped = False
        self._bad = False

    def feed(self, data: bytes) -> list[bytes]:
        """The frames that ``data`` completes, in order."""
        frames = []
        for byte in data:
            if byte == END:
                if self._frame and not self._bad:
                    frames.append(bytes(self._frame))
                self._frame.clear()
                self._escaped = self._bad = False
            elif self._escaped:
                self._escaped = False
                if byte in (ESC_END, ESC_ESC):
                    self._frame.append(END if byte == ESC_END else ESC)
                else:
                    self._bad = True
            elif byte == ESC:
                self._escaped = True
            else:
                self._frame.append(byte)
            if len(self._frame) > self.limit:
                self._bad = True
                self._frame.clear()
        return frames


def _seal(body: bytes) -> bytes:
    return body + struct.pack("<H", crc16(body))


def _open(payload: bytes, what: str) -> bytes:
    """The body of a received payload whose check is good (else :class:`LinkError`)."""
    if len(payload) < 4:
        raise LinkError(f"{what} of {len(payload)} bytes is too short")
    body, (crc,) = payload[:-2], struct.unpack("<H", payload[-2:])
    if crc16(body) != crc:
        raise LinkError(f"{what} fails its CRC ({crc:#06x}, computed {crc16(body):#06x})")
    return body


class _Message:
    """A frame's payload: a sequence number, a code byte and the bytes after them (the
    subclass names the three fields, in that order)."""

    _WHAT = "message"

    def pack(self) -> bytes:
        """The frame's payload (CRC included, not yet SLIP-framed)."""
        seq, code, body = dataclasses.astuple(self)
        return _seal(bytes([seq & 0xFF, code]) + body)

    @classmethod
    def unpack(cls, payload: bytes):
        body = _open(payload, cls._WHAT)
        return cls(body[0], body[1], body[2:])


@dataclass(frozen=True)
class Request(_Message):
    """A request: sequence number, command and its argument bytes."""

    seq: int
    command: int
    args: bytes = b""

    _WHAT = "request"


@dataclass(frozen=True)
class Answer(_Message):
    """An answer: the request's sequence number, a :class:`Status` and the data."""

    seq: int
    status: int
    data: bytes = b""

    _WHAT = "answer"


@dataclass(frozen=True)
class Info:
    """What the bridge tells about itself (the ``INFO`` answer)::

        "GPGU" version:u8 reserved:u8 max_words:u16 memory_bytes:u32 cu_hz:u32 bus_hz:u32
        profile:16 bytes
    """

    version: int
    max_words: int
    memory_bytes: int
    cu_hz: int
    bus_hz: int
    #: the digest of the kernel profile the bitstream was trimmed for (zeros: the full unit)
    profile: bytes

    _FORMAT = struct.Struct("<4sBxHIII16s")

    def pack(self) -> bytes:
        return self._FORMAT.pack(MAGIC, self.version, self.max_words, self.memory_bytes,
                                 self.cu_hz, self.bus_hz, self.profile)

    @classmethod
    def unpack(cls, data: bytes) -> Info:
        if len(data) != cls._FORMAT.size or not data.startswith(MAGIC):
            raise LinkError(f"the INFO answer ({len(data)} bytes) is not this protocol's "
                            f"(is it a gpgpu bitstream?)")
        _, version, max_words, memory, cu_hz, bus_hz, profile = cls._FORMAT.unpack(data)
        return cls(version, max_words, memory, cu_hz, bus_hz, profile)
