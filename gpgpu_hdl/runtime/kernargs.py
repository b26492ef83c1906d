"""Kernel argument layout (Mesa ABI, ``shared/reference/si_isa.md`` section 7.5).

Explicit arguments come first, in order, each at its natural alignment: a global/constant
pointer is 8 bytes, a ``__local`` pointer 4 bytes (an LDS byte address), a scalar or vector its
numpy size (vectors of 3 are passed as 4, as ``pyopencl.cltypes`` builds them), a struct
passed by value at its largest member's alignment, laid out as OpenCL C does. The 16 implicit
bytes (``work_dim``, then the global offsets x, y, z) follow at the next 4-byte boundary.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentError

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


#: Field names of OpenCL vector types as ``pyopencl.cltypes`` builds them (``x``..``w`` with
#: ``s0``..``s3`` as titles, ``s0``..``s15`` beyond 4 elements, ``padding0`` filling a 3-vector
#: to 4): a structured dtype whose fields are all named so is a vector, aligned to its size;
#: any other is a struct.
_VECTOR_FIELDS = frozenset({"x", "y", "z", "w", "padding0"} | {f"s{i}" for i in range(16)})


def _is_vector(dt: np.dtype) -> bool:
    return bool(dt.names) and set(dt.names) <= _VECTOR_FIELDS


def _alignment(dt: np.dtype) -> int:
    """OpenCL C's alignment of a value of numpy type ``dt``: a scalar's size, a vector's
    size, a struct's largest member alignment."""
    if dt.subdtype is not None:
        return _alignment(dt.subdtype[0])
    if dt.names:
        if _is_vector(dt):
            return dt.itemsize
        return max(_alignment(dt.fields[n][0]) for n in dt.names)
    return max(dt.itemsize, 1)


def _c_layout_error(dt: np.dtype) -> str | None:
    """Where a struct dtype's fields or size differ from OpenCL C's layout, or None."""
    offset = 0
    for name in dt.names:
        field, at = dt.fields[name][:2]
        align = _alignment(field)
        offset = -(-offset // align) * align
        if at != offset:
            return f"field {name!r} is at byte {at}, OpenCL C puts it at {offset}"
        if field.names and not _is_vector(field):
            inner = _c_layout_error(field)
            if inner:
                return f"in field {name!r}: {inner}"
        offset += field.itemsize
    align = _alignment(dt)
    size = -(-offset // align) * align
    if dt.itemsize != size:
        return f"it is {dt.itemsize} bytes, OpenCL C makes it {size}"
    return None


def scalar_size_align(value: np.generic | np.ndarray) -> tuple[int, int]:
    """Size and alignment of a by-value argument: a scalar or an OpenCL vector
    (``pyopencl.cltypes``: a 3-vector is 4 elements) aligned to its size, a struct (a
    structured numpy dtype) to its largest member, as OpenCL C lays them out.

    Raises :class:`~gpgpu_hdl.runtime.errors.ArgumentError` for a struct whose numpy layout is
    not OpenCL C's (a dtype made without ``align=True`` is packed)."""
    dt = value.dtype
    if dt.names and not _is_vector(dt):
        problem = _c_layout_error(dt)
        if problem:
            raise ArgumentError(f"struct argument of type {dt}: {problem} (build the dtype "
                                f"with np.dtype([...], align=True), or give its offsets and "
                                f"itemsize)")
    return dt.itemsize, min(_alignment(dt), 128)


def layout_args(kinds: list[tuple[str, int, int]]) -> KernargLayout:
    """Place arguments given as ``(kind, size, align)``."""
    slots, offset = [], 0
    for kind, size, align in kinds:
        offset = -(-offset // align) * align
        slots.append(ArgSlot(offset, size, kind))
        offset += size
    return KernargLayout(tuple(slots), offset)
