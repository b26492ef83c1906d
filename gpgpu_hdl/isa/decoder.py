"""Decoder: Southern Islands machine code -> typed :class:`Instruction` objects.

Every format, opcode and operand width comes from the instruction table
(:mod:`gpgpu_hdl.isa.table`) and the field layouts (:mod:`gpgpu_hdl.isa.formats`).

Operands are listed in assembler order, each with its *role* (``"vdst"``, ``"src0"``,
``"sdst"``, ``"addr"``, ``"simm16"``...), so that the disassembler prints them and the emulator
reads them without knowing the encodings.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import DecodeError
from .formats import VOP3B, Encoding, Format, classify
from .table import TABLE, InstrInfo, OperandType

__all__ = ["OpKind", "Operand", "Instruction", "decode", "decode_one", "iter_decode",
           "scalar_operand", "INLINE_FLOATS", "ScalarCode", "SCALAR_NAMES"]


class OpKind(enum.Enum):
    SGPR = "sgpr"          #: scalar registers s0..s103; ``value`` = first index
    VGPR = "vgpr"          #: vector registers v0..v255; ``value`` = first index
    SPECIAL = "special"    #: vcc, exec, m0, ttmp, tba, tma, src_scc...; ``value`` = operand code
    INLINE = "inline"      #: inline constant; ``value`` = the integer or float it stands for
    LITERAL = "literal"    #: the 32-bit constant after the instruction; ``value`` = its bits
    IMM = "imm"            #: an immediate field (SIMM16, offsets); ``value`` = the raw field


class ScalarCode(enum.IntEnum):
    """Scalar operand codes (SSRC/SDST fields, and the low codes of 9-bit VALU sources) that
    name something other than a plain SGPR s0..s103. Everything that decodes, executes or
    generates operands uses these names."""

    VCC_LO = 106
    VCC_HI = 107
    TBA_LO = 108
    TBA_HI = 109
    TMA_LO = 110
    TMA_HI = 111
    TTMP0 = 112           #: ttmp0..ttmp11 are 112..123
    M0 = 124
    EXEC_LO = 126
    EXEC_HI = 127
    VCCZ = 251
    EXECZ = 252
    SCC = 253
    LDS_DIRECT = 254
    LITERAL = 255


#: Printable names of the scalar codes a wave's state holds besides s0..s103.
SCALAR_NAMES = {ScalarCode.VCC_LO: "vcc_lo", ScalarCode.VCC_HI: "vcc_hi", ScalarCode.M0: "m0",
                ScalarCode.EXEC_LO: "exec_lo", ScalarCode.EXEC_HI: "exec_hi"}

#: Inline float constants by operand code (SI: no 1/(2*pi)).
INLINE_FLOATS = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0,
                 247: -4.0}
_SPECIAL_CODES = {c for c in ScalarCode if c != ScalarCode.LITERAL and c != ScalarCode.TTMP0}


@dataclass(frozen=True, slots=True)
class Operand:
    """One decoded operand.

    ``count`` is the number of consecutive 32-bit registers (1 for a 32-bit operand, 2 for a
    64-bit pair...). ``code`` is the raw operand code of the encoding (8- or 9-bit source code)
    where there is one. ``neg``/``abs`` are VOP3 input modifiers.
    """

    kind: OpKind
    value: int | float
    count: int = 1
    code: int | None = None
    neg: bool = False
    abs: bool = False

    @property
    def is_register(self) -> bool:
        return self.kind in (OpKind.SGPR, OpKind.VGPR, OpKind.SPECIAL)


@dataclass(frozen=True, slots=True)
class Instruction:
    """A decoded instruction.

    Members
    -------
    offset : int
        Byte offset of the instruction in the code it was decoded from.
    info : InstrInfo
        Its row of the instruction table.
    encoding : Format
        The encoding actually used (``Format.VOP3`` for the ``_e64`` form of a VOP1/VOP2/VOPC
        instruction; otherwise ``info.format``).
    fields : dict[str, int]
        Raw field values of the encoding (see :mod:`gpgpu_hdl.isa.formats`).
    operands : tuple[tuple[str, Operand], ...]
        ``(role, operand)`` pairs in assembler order.
    literal : int or None
        The trailing 32-bit constant, if the instruction has one.
    words : tuple[int, ...]
        The instruction dwords, literal included.
    """

    offset: int
    info: InstrInfo
    encoding: Format
    fields: dict[str, int]
    operands: tuple[tuple[str, Operand], ...]
    literal: int | None
    words: tuple[int, ...]

    @property
    def size(self) -> int:
        return 4 * len(self.words)

    @property
    def is_e64(self) -> bool:
        return self.encoding is Format.VOP3 and self.info.format is not Format.VOP3

    @property
    def name(self) -> str:
        """The mnemonic as LLVM prints it (``_e32``/``_e64`` where both encodings exist)."""
        if self.info.has_e64:
            return self.info.mnemonic + ("_e64" if self.is_e64 else "_e32")
        return self.info.mnemonic

    def operand(self, role: str) -> Operand | None:
        for r, op in self.operands:
            if r == role:
                return op
        return None

    @property
    def bytes(self) -> bytes:
        return struct.pack(f"<{len(self.words)}I", *self.words)


# --------------------------------------------------------------------------------------------
# operand decoding

def scalar_operand(code: int, count: int, *, literal: int | None = None) -> Operand:
    """Decode an 8-bit scalar operand code (or the scalar half of a 9-bit source code).

    Raises DecodeError for reserved codes.
    """
    if code <= 103:
        return Operand(OpKind.SGPR, code, count, code)
    if code in _SPECIAL_CODES or ScalarCode.TTMP0 <= code < ScalarCode.TTMP0 + 12:
        return Operand(OpKind.SPECIAL, code, count, code)
    if 128 <= code <= 192:
        return Operand(OpKind.INLINE, code - 128, count, code)
    if 193 <= code <= 208:
        return Operand(OpKind.INLINE, 192 - code, count, code)
    if code in INLINE_FLOATS:
        return Operand(OpKind.INLINE, INLINE_FLOATS[code], count, code)
    if code == ScalarCode.LITERAL:
        if literal is None:
            raise DecodeError("literal operand without literal dword")
        return Operand(OpKind.LITERAL, literal, count, code)
    raise DecodeError(f"reserved operand code {code}")


def _src(code9: int, t: OperandType | None, literal: int | None) -> Operand:
    count = max(1, t.dwords) if t is not None else 1
    if code9 >= 256:
        return Operand(OpKind.VGPR, code9 - 256, count, code9)
    return scalar_operand(code9, count, literal=literal)


def _vgpr(index: int, t: OperandType | None, count: int | None = None) -> Operand:
    n = count if count is not None else max(1, t.dwords if t is not None else 1)
    if index + n > 256:
        raise DecodeError(f"VGPR tuple v[{index}:{index + n - 1}] exceeds v255")
    return Operand(OpKind.VGPR, index, n, index + 256)


def _sgpr(code: int, t: OperandType | None, literal: int | None = None) -> Operand:
    count = max(1, t.dwords) if t is not None else 1
    return scalar_operand(code, count, literal=literal)


def _imm(value: int) -> Operand:
    return Operand(OpKind.IMM, value)


def _with_mods(op: Operand, neg: int, abs_: int, i: int) -> Operand:
    n, a = bool(neg >> i & 1), bool(abs_ >> i & 1)
    if not (n or a):
        return op
    return Operand(op.kind, op.value, op.count, op.code, n, a)


# --------------------------------------------------------------------------------------------
# per-format operand lists

def _needs_literal(enc: Encoding, info: InstrInfo, f: dict[str, int]) -> bool:
    if "lit" in info.flags:
        return True
    fmt = enc.format
    if fmt in (Format.SOP2, Format.SOPC):
        return f["ssrc0"] == 255 or f["ssrc1"] == 255
    if fmt is Format.SOP1:
        return f["ssrc0"] == 255 and info.src0 is not None
    if fmt in (Format.VOP1, Format.VOP2, Format.VOPC):
        return f["src0"] == 255 and info.src0 is not None
    return False


def _scalar_ops(fmt: Format, info: InstrInfo, f: dict[str, int], lit: int | None):
    ops: list[tuple[str, Operand]] = []
    if fmt is Format.SOPP:
        if "noimm" not in info.flags or f["simm16"]:
            ops.append(("simm16", _imm(f["simm16"])))
        return ops
    if fmt is Format.SOPK:
        if "hwreg" in info.flags:
            if info.dst is not None:                         # s_getreg_b32 sdst, hwreg
                ops += [("sdst", _sgpr(f["sdst"], info.dst)), ("simm16", _imm(f["simm16"]))]
            elif info.src0 is not None:                      # s_setreg_b32 hwreg, sdst
                ops += [("simm16", _imm(f["simm16"])), ("ssrc0", _sgpr(f["sdst"], info.src0))]
            else:                                            # s_setreg_imm32_b32 hwreg, imm32
                ops += [("simm16", _imm(f["simm16"])), ("literal", Operand(OpKind.LITERAL, lit))]
            return ops
        if info.dst is not None:
            ops.append(("sdst", _sgpr(f["sdst"], info.dst)))
        elif info.src0 is not None:
            ops.append(("ssrc0", _sgpr(f["sdst"], info.src0)))
        ops.append(("simm16", _imm(f["simm16"])))
        return ops
    if fmt is Format.SMRD:
        if info.dst is not None:
            ops.append(("sdst", _sgpr(f["sdst"], info.dst)))
        if info.src0 is not None:
            ops.append(("sbase", Operand(OpKind.SGPR, 2 * f["sbase"], info.src0.dwords)))
            if f["imm"]:
                ops.append(("offset", _imm(f["offset"])))
            elif f["offset"] == 255:
                raise DecodeError("SMRD has no literal offset on Southern Islands")
            else:
                ops.append(("offset", _sgpr(f["offset"], info.src1)))
        return ops
    # SOP1 / SOP2 / SOPC
    if info.dst is not None:
        ops.append(("sdst", _sgpr(f["sdst"], info.dst)))
    if info.src0 is not None:
        ops.append(("ssrc0", _sgpr(f["ssrc0"], info.src0, lit)))
    if info.src1 is not None:
        ops.append(("ssrc1", _sgpr(f["ssrc1"], info.src1, lit)))
    return ops


_VCC = int(ScalarCode.VCC_LO)


def _vcc() -> Operand:
    return Operand(OpKind.SPECIAL, _VCC, 2, _VCC)


def _vop_e32_ops(fmt: Format, info: InstrInfo, f: dict[str, int], lit: int | None):
    ops: list[tuple[str, Operand]] = []
    flags = info.flags
    if fmt is Format.VOPC:
        return [("vcc", _vcc()), ("src0", _src(f["src0"], info.src0, lit)),
                ("src1", _vgpr(f["vsrc1"], info.src1))]
    if info.dst is not None:
        if "sgpr_dst" in flags:
            ops.append(("sdst", _sgpr(f["vdst"], info.dst)))
        else:
            ops.append(("vdst", _vgpr(f["vdst"], info.dst)))
    if "vop3b" in flags:
        ops.append(("vcc", _vcc()))
    if info.src0 is not None:
        ops.append(("src0", _src(f["src0"], info.src0, lit)))
    if fmt is Format.VOP2:
        if info.mnemonic == "v_madmk_f32":
            ops.append(("k", Operand(OpKind.LITERAL, lit)))
        if "lane_sel" in flags:
            ops.append(("src1", _sgpr(f["vsrc1"], info.src1)))
        else:
            ops.append(("src1", _vgpr(f["vsrc1"], info.src1)))
        if info.mnemonic == "v_madak_f32":
            ops.append(("k", Operand(OpKind.LITERAL, lit)))
        if "carry_in" in flags or "sel" in flags:
            ops.append(("vcc_in", _vcc()))
    return ops


def _vop3_ops(info: InstrInfo, f: dict[str, int]):
    ops: list[tuple[str, Operand]] = []
    neg, abs_ = f["neg"], f.get("abs", 0)
    if info.format is Format.VOPC:
        ops.append(("sdst", _sgpr(f["vdst"], info.dst)))
    elif info.dst is not None:
        ops.append(("vdst", _vgpr(f["vdst"], info.dst)))
    if "vop3b" in info.flags:
        ops.append(("sdst", _sgpr(f["sdst"], OperandType("b64"))))
    for i, t in enumerate(info.sources):
        if t is None:
            continue
        op = _src(f[f"src{i}"], t, None)
        if op.kind is OpKind.LITERAL:
            raise DecodeError("VOP3 cannot take a literal operand on Southern Islands")
        ops.append((f"src{i}", _with_mods(op, neg, abs_, i)))
    return ops


def _ds_ops(info: InstrInfo, f: dict[str, int]):
    ops: list[tuple[str, Operand]] = []
    if info.dst is not None:
        ops.append(("vdst", _vgpr(f["vdst"], info.dst)))
    if info.src0 is not None:
        ops.append(("addr", _vgpr(f["addr"], info.src0)))
    if info.src1 is not None:
        ops.append(("data0", _vgpr(f["data0"], info.src1)))
    if info.src2 is not None:
        ops.append(("data1", _vgpr(f["data1"], info.src2)))
    return ops


def _buf_ops(info: InstrInfo, f: dict[str, int]):
    ops: list[tuple[str, Operand]] = []
    if info.src0 is None:                                  # buffer_wbinvl1*
        return ops
    data = info.src1 or info.dst
    ops.append(("vdata", _vgpr(f["vdata"], data)))
    n = 2 if f["addr64"] or (f["idxen"] and f["offen"]) else (1 if f["idxen"] or f["offen"] else 0)
    if n:
        ops.append(("vaddr", _vgpr(f["vaddr"], None, n)))
    ops.append(("srsrc", Operand(OpKind.SGPR, 4 * f["srsrc"], 4)))
    ops.append(("soffset", scalar_operand(f["soffset"], 1)))
    return ops


# --------------------------------------------------------------------------------------------
# decoding

def decode_one(code: bytes | memoryview, offset: int = 0) -> Instruction:
    """Decode the instruction at byte ``offset`` of ``code``."""
    end = len(code)
    if offset % 4:
        raise DecodeError(f"offset {offset:#x} is not dword aligned")
    if offset + 4 > end:
        raise DecodeError(f"truncated instruction at {offset:#x}")
    w0 = int.from_bytes(code[offset:offset + 4], "little")
    enc = classify(w0)
    if isinstance(enc, str):
        what = "graphics-only format " + enc if enc != "unknown" else "unknown encoding"
        raise DecodeError(f"{what} at {offset:#x}: {w0:#010x}")
    word = w0
    if enc.size == 8:
        if offset + 8 > end:
            raise DecodeError(f"truncated {enc.format} instruction at {offset:#x}")
        word |= int.from_bytes(code[offset + 4:offset + 8], "little") << 32
    f = enc.unpack(word)
    fmt = enc.format
    info = TABLE.lookup(fmt, f["op"])
    if info is None:
        raise DecodeError(f"unknown {fmt} opcode {f['op']} at {offset:#x}: {w0:#010x}")
    if fmt is Format.VOP3 and "vop3b" in info.flags:
        f = VOP3B.unpack(word)
    words = [w0] if enc.size == 4 else [w0, word >> 32]
    lit = None
    if enc.size == 4 and _needs_literal(enc, info, f):
        if offset + 8 > end:
            raise DecodeError(f"truncated literal of {info.mnemonic} at {offset:#x}")
        lit = int.from_bytes(code[offset + 4:offset + 8], "little")
        words.append(lit)
    try:
        if fmt.is_scalar:
            ops = _scalar_ops(fmt, info, f, lit)
        elif fmt is Format.VOP3:
            ops = _vop3_ops(info, f)
        elif fmt.is_valu:
            ops = _vop_e32_ops(fmt, info, f, lit)
        elif fmt is Format.DS:
            ops = _ds_ops(info, f)
        else:
            ops = _buf_ops(info, f)
    except DecodeError as exc:
        raise DecodeError(f"{info.mnemonic} at {offset:#x}: {exc}") from None
    return Instruction(offset, info, fmt, f, tuple(ops), lit, tuple(words))


def iter_decode(code: bytes | memoryview, start: int = 0,
                end: int | None = None) -> Iterator[Instruction]:
    """Decode instructions back to back from ``start`` to ``end`` (default: end of ``code``)."""
    view = memoryview(code)[:end] if end is not None else memoryview(code)
    offset = start
    while offset < len(view):
        inst = decode_one(view, offset)
        yield inst
        offset += inst.size


def decode(code: bytes | memoryview) -> list[Instruction]:
    """Decode a whole instruction stream (e.g. a kernel's code) into a list."""
    return list(iter_decode(code))
