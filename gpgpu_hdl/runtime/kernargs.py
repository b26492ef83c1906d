"""Kernel argument layout (Mesa ABI, ``shared/reference/si_isa.md`` section 7.5).

Explicit arguments come first, in order, each at its natural alignment: a global/constant
pointer is 8 bytes, a ``__local`` pointer 4 bytes (an LDS byte address), a scalar or vector its
numpy size (vectors of 3 are passed as 4). The 16 implicit bytes (``work_dim``, then the global
offsets x, y, z) follow at the next 4-byte boundary.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

__all__ = ["ArgSlot", "KernargLayout", "layout_args", "IMPLICIT_BYTES"]

IMPLICIT_BYTES = 16


@dataclass(frozen=True)
class ArgSlot:
    """One explicit argument: its byte offset, size and kind (global/local/value)."""

    offset: int
    size: int
    kind: str


@dataclass(frozen=True)
class KernargLayout:
    slots: tuple[ArgSlot, ...]
    explicit_bytes: int

    @property
    def implicit_offset(self) -> int:
        return -(-self.explicit_bytes // 4) * 4

    @property
    def total_bytes(self) -> int:
        return self.implicit_offset + IMPLICIT_BYTES

    def fits(self, header_bytes: int) -> bool:
        """Whether a kernel whose header says ``kernarg_segment_byte_size = header_bytes``
        can have these explicit arguments (with or without the implicit ones, allowing the
        compiler's padding to 8 bytes)."""
        ends = {self.explicit_bytes, self.total_bytes}
        return header_bytes in ends | {-(-end // 8) * 8 for end in ends}

    def pack(self, values: list[bytes], work_dim: int, offsets: tuple[int, int, int]) -> bytes:
        out = bytearray(self.total_bytes)
        for slot, raw in zip(self.slots, values, strict=True):
            out[slot.offset:slot.offset + slot.size] = raw
        out[self.implicit_offset:] = struct.pack("<IIII", work_dim, *offsets)
        return bytes(out)


def scalar_size_align(value: np.generic | np.ndarray) -> tuple[int, int]:
    """Size and alignment of a by-value argument (OpenCL: vectors of 3 take 4 slots)."""
    size = value.dtype.itemsize
    if value.dtype.fields and len(value.dtype.fields) == 3:       # e.g. cltypes.float3
        size = size // 3 * 4
    align = 1
    while align < size and align < 128:
        align *= 2
    return size, align


def layout_args(kinds: list[tuple[str, int, int]]) -> KernargLayout:
    """Place arguments given as ``(kind, size, align)``."""
    slots, offset = [], 0
    for kind, size, align in kinds:
        offset = -(-offset // align) * align
        slots.append(ArgSlot(offset, size, kind))
        offset += size
    return KernargLayout(tuple(slots), offset)
