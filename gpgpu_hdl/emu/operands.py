"""Operand access compiled into small closures.

Each reader takes a :class:`~gpgpu_hdl.emu.wave.Wave` and returns the operand value: a Python
``int`` for scalar reads, a 64-lane numpy array for vector reads (``uint32`` for 32-bit operand
types, ``uint64`` for 64-bit ones). Constants are resolved once, when the instruction is
compiled.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from ..isa.decoder import OpKind, Operand
from ..isa.table import OperandType
from .wave import Wave

__all__ = ["constant_bits", "scalar_reader", "vector_reader", "scalar_writer", "ScalarRead",
           "VectorRead"]

ScalarRead = Callable[[Wave], int]
VectorRead = Callable[[Wave], np.ndarray]

_U32, _U64 = np.uint32, np.uint64
_SCC, _VCCZ, _EXECZ = 253, 251, 252
M32, M64 = 0xFFFFFFFF, (1 << 64) - 1


def _bits(t: OperandType | None) -> int:
    return 64 if t is not None and t.bits == 64 else 32


def constant_bits(op: Operand, t: OperandType | None) -> int:
    """The bit pattern an inline constant or literal stands for in an operand of type ``t``.

    Integer inline constants are sign-extended to the operand width. Float inline constants
    are encoded in the operand's float format (f64 for 64-bit operands, f16 for f16, f32
    otherwise). A 32-bit literal of a 64-bit float operand is its high dword (SI); of a 64-bit
    integer operand it is zero-extended.
    """
    bits = _bits(t)
    if op.kind is OpKind.LITERAL:
        if bits == 64 and t is not None and t.is_float:
            return (op.value & M32) << 32
        return op.value & M32
    value = op.value
    if isinstance(value, float):
        if bits == 64:
            return struct.unpack("<Q", struct.pack("<d", value))[0]
        if t is not None and t.name == "f16":
            return int(np.float16(value).view(np.uint16))
        return struct.unpack("<I", struct.pack("<f", value))[0]
    return value & (M64 if bits == 64 else M32)


def scalar_reader(op: Operand, t: OperandType | None) -> ScalarRead:
    """Reader of a scalar operand (SGPR, special register or constant) as a Python int."""
    if op.kind in (OpKind.INLINE, OpKind.LITERAL):
        value = constant_bits(op, t)
        return lambda w: value
    if op.kind not in (OpKind.SGPR, OpKind.SPECIAL):
        raise ValueError(f"not a scalar operand: {op}")
    code = op.value
    if code == _SCC:
        return lambda w: w.scc
    if code == _VCCZ:
        return lambda w: int(w.s[106] == 0 and w.s[107] == 0)
    if code == _EXECZ:
        return lambda w: int(w.s[126] == 0 and w.s[127] == 0)
    if _bits(t) == 64:
        hi = code + 1
        return lambda w: w.s[code] | w.s[hi] << 32
    return lambda w: w.s[code]


def scalar_writer(op: Operand, bits: int) -> Callable[[Wave, int], None]:
    """Writer of a scalar destination of ``bits`` (32 or 64) bits."""
    code = op.value
    if bits == 64:
        hi = code + 1

        def write64(w: Wave, value: int) -> None:
            w.s[code] = value & M32
            w.s[hi] = (value >> 32) & M32
        return write64

    def write32(w: Wave, value: int) -> None:
        w.s[code] = value & M32
    return write32


def _with_modifiers(read: VectorRead, op: Operand, bits: int) -> VectorRead:
    sign = (1 << (bits - 1))
    dtype = _U64 if bits == 64 else _U32
    if op.abs and op.neg:
        mask = dtype(sign)
        return lambda w: read(w) | mask
    if op.abs:
        keep = dtype(sign - 1)
        return lambda w: read(w) & keep
    if op.neg:
        flip = dtype(sign)
        return lambda w: read(w) ^ flip
    return read


def vector_reader(op: Operand, t: OperandType | None) -> VectorRead:
    """Reader of a vector-ALU source: VGPR, SGPR, special or constant, broadcast to 64 lanes,
    with the VOP3 abs/neg modifiers applied."""
    bits = _bits(t)
    dtype = _U64 if bits == 64 else _U32
    read: VectorRead
    if op.kind is OpKind.VGPR:
        i = op.value
        if bits == 64:
            j = i + 1
            read = lambda w: w.v[i].astype(_U64) | (w.v[j].astype(_U64) << _U64(32))  # noqa: E731
        else:
            read = lambda w: w.v[i]  # noqa: E731
    elif op.kind in (OpKind.INLINE, OpKind.LITERAL):
        const = np.full(64, constant_bits(op, t), dtype=dtype)
        const.setflags(write=False)
        read = lambda w: const  # noqa: E731
    else:
        sread = scalar_reader(op, t)
        read = lambda w: np.full(64, sread(w), dtype=dtype)  # noqa: E731
    return _with_modifiers(read, op, bits)
