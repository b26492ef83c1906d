"""Bit-level helpers shared by the tests' Python models: masks, sign extension, byte-masked
writes and the bits of IEEE binary32/binary64 values.

Plain functions for test modules to import (``from tests.bits import f32``); fixtures live in
``tests/conftest.py``.
"""

from __future__ import annotations

import struct

M32 = 0xFFFF_FFFF
M64 = (1 << 64) - 1


def mask(bits: int) -> int:
    """The low ``bits`` bits set."""
    return (1 << bits) - 1


def sext(value: int, bits: int = 32) -> int:
    """The low ``bits`` bits of ``value`` read as a two's-complement signed integer."""
    value &= mask(bits)
    return value - (1 << bits) if value >> (bits - 1) else value


def merge_bytes(old: int, new: int, byte_mask: int) -> int:
    """The 32-bit word ``old`` with the bytes selected by ``byte_mask`` (bit ``i``: byte ``i``)
    taken from ``new``: a write with byte strobes."""
    selected = sum(0xFF << 8 * i for i in range(4) if byte_mask >> i & 1)
    return (old & ~selected | new & selected) & M32


def f32(x: float) -> int:
    """The bits of ``x`` rounded to binary32."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def b32(bits: int) -> float:
    """The value of the binary32 ``bits``."""
    return struct.unpack("<f", struct.pack("<I", int(bits)))[0]


def f64(x: float) -> int:
    """The bits of the binary64 ``x``."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def b64(bits: int) -> float:
    """The value of the binary64 ``bits``."""
    return struct.unpack("<d", struct.pack("<Q", int(bits)))[0]
