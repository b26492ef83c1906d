"""Constrained-random instruction encodings, generated from the instruction table.

:func:`random_instruction` builds the bytes of one instruction with random but *legal* operands
(what LLVM's assembler accepts for tahiti: aligned SGPR tuples, at most one SGPR per VALU
instruction, no VOP3 literal, modifiers only on float operands...). Tests use it to check the
decoder and disassembler against llvm-mc over every table entry; later layers use it for
random instruction streams.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass

from .decoder import INLINE_FLOATS, ScalarCode
from .formats import ENCODING_OF, VOP3B, Format
from .table import InstrInfo, OperandType

__all__ = ["RegisterBudget", "random_instruction"]

_LITERAL = int(ScalarCode.LITERAL)
_TTMP = int(ScalarCode.TTMP0)
_INLINE_INTS = list(range(128, 209))
_INLINE_FLOAT_CODES = list(INLINE_FLOATS)
_M0, _VCC, _EXEC = int(ScalarCode.M0), int(ScalarCode.VCC_LO), int(ScalarCode.EXEC_LO)
_INLINE_F32_BITS = {struct.unpack("<I", struct.pack("<f", v))[0] for v in INLINE_FLOATS.values()}
_INLINE_F64_HI = {struct.unpack("<Q", struct.pack("<d", v))[0] >> 32
                  for v in INLINE_FLOATS.values()}


@dataclass(frozen=True)
class RegisterBudget:
    """The registers random operands may name: ``s0..s(sgprs-1)``, ``v0..v(vgprs-1)``, and
    VCC, M0 and EXEC (plus the trap temporaries when ``ttmp``). The default is the whole
    architectural range, as the assembler tests want; instruction streams that must run on a
    compute unit narrow it to the registers the wave owns."""

    sgprs: int = 104
    vgprs: int = 256
    ttmp: bool = True


FULL = RegisterBudget()


def _literal(rng: random.Random, t: OperandType) -> int:
    """A literal that the assembler cannot mistake for an inline constant."""
    while True:
        v = rng.getrandbits(32)
        if v <= 64 or v >= 0xFFFF_FFF0:
            continue
        if v in _INLINE_F32_BITS or (t.name == "f64" and v in _INLINE_F64_HI):
            continue
        return v


def _sgpr(rng: random.Random, t: OperandType | None, *, specials: bool = True,
          b: RegisterBudget = FULL) -> int:
    """An SGPR (or special register) operand code for an operand of type ``t``."""
    n = max(1, t.dwords) if t is not None else 1
    align = 1 if n == 1 else (2 if n == 2 else 4)
    if specials and rng.random() < 0.2:
        if n == 1:
            ttmp = [_TTMP + rng.randrange(12)] if b.ttmp else []
            return rng.choice([_VCC, _VCC + 1, _M0, _EXEC, _EXEC + 1, *ttmp])
        if n == 2:
            ttmp = [_TTMP + 2 * rng.randrange(6)] if b.ttmp else []
            return rng.choice([_VCC, _EXEC, *ttmp])
    return align * rng.randrange((b.sgprs - n) // align + 1)


def _scalar_src(rng: random.Random, t: OperandType, *, allow_literal: bool,
                reg_only: bool = False, b: RegisterBudget = FULL) -> int:
    r = 0.0 if reg_only else rng.random()
    if r < 0.5:
        return _sgpr(rng, t, b=b)
    if r < 0.7:
        return rng.choice(_INLINE_INTS)
    if r < 0.85 or not allow_literal:
        return rng.choice(_INLINE_FLOAT_CODES)
    return _LITERAL


def _vgpr(rng: random.Random, t: OperandType | None, count: int | None = None,
          b: RegisterBudget = FULL) -> int:
    n = count if count is not None else max(1, t.dwords if t is not None else 1)
    return rng.randrange(b.vgprs - n + 1)


def _vsrc(rng: random.Random, t: OperandType, *, sgpr_ok: bool, literal_ok: bool,
          reg_only: bool = False, b: RegisterBudget = FULL) -> int:
    """A 9-bit VALU source code (a 16-bit float takes no 32-bit constant)."""
    r = 0.0 if reg_only or t.bits == 16 else rng.random()
    if r < 0.55 or (not sgpr_ok and r < 0.7):
        return 256 + _vgpr(rng, t, b=b)
    if r < 0.7:
        return _sgpr(rng, t, specials=t.dwords == 1, b=b)
    if r < 0.85 or not literal_ok:
        return rng.choice(_INLINE_INTS + _INLINE_FLOAT_CODES)
    return _LITERAL


def _words(fmt: Format, fields: dict[str, int], literal: int | None, vop3b: bool) -> bytes:
    enc = VOP3B if vop3b else ENCODING_OF[fmt]
    word = enc.pack(**fields)
    out = word.to_bytes(enc.size, "little")
    if literal is not None:
        out += literal.to_bytes(4, "little")
    return out


def random_instruction(info: InstrInfo, rng: random.Random, *, e64: bool = False,
                       budget: RegisterBudget = FULL) -> bytes:
    """Encode ``info`` with random legal operands; ``e64`` selects the VOP3 form of a
    VOP1/VOP2/VOPC instruction; register operands stay within ``budget``."""
    if e64 or info.format is Format.VOP3:
        if info.vop3_opcode is None:
            raise ValueError(f"{info.mnemonic} has no VOP3 form")
        return _vop3(info, rng, budget)
    fmt = info.format
    if fmt.is_scalar:
        return _scalar(info, rng, budget)
    if fmt.is_valu:
        return _vop_e32(info, rng, budget)
    if fmt is Format.DS:
        return _ds(info, rng, budget)
    return _buffer(info, rng, budget)


def _scalar(info: InstrInfo, rng: random.Random, b: RegisterBudget) -> bytes:
    fmt, f = info.format, {"op": info.opcode}
    literal = None
    if fmt is Format.SOPP:
        f["simm16"] = 0 if "noimm" in info.flags else rng.getrandbits(16)
    elif fmt is Format.SOPK:
        f["simm16"] = rng.getrandbits(16)
        slot = info.dst or info.src0
        if slot is not None:
            f["sdst"] = _sgpr(rng, slot, b=b)
        if "lit" in info.flags:
            literal = rng.getrandbits(32)
    elif fmt is Format.SMRD:
        if info.dst is not None:
            f["sdst"] = _sgpr(rng, info.dst, specials=False, b=b)
        if info.src0 is not None:
            f["sbase"] = (info.src0.dwords // 2) * rng.randrange(b.sgprs // info.src0.dwords)
            if rng.random() < 0.6:
                f["imm"], f["offset"] = 1, rng.getrandbits(8)
            else:
                f["offset"] = _sgpr(rng, info.src1, b=b)
    else:
        if info.dst is not None:
            f["sdst"] = _sgpr(rng, info.dst, b=b)
        lit_slot = rng.choice(["ssrc0", "ssrc1"])
        for name, t in (("ssrc0", info.src0), ("ssrc1", info.src1)):
            if t is not None:
                f[name] = _scalar_src(rng, t, allow_literal=name == lit_slot,
                                      reg_only="reg_src" in info.flags, b=b)
                if f[name] == _LITERAL:
                    literal = _literal(rng, t)
    return _words(fmt, f, literal, False)


def _vop_e32(info: InstrInfo, rng: random.Random, b: RegisterBudget) -> bytes:
    fmt, flags = info.format, info.flags
    f = {"op": info.opcode}
    literal = None
    if info.dst is not None and fmt is not Format.VOPC:
        f["vdst"] = _sgpr(rng, info.dst, specials=False, b=b) if "sgpr_dst" in flags \
            else _vgpr(rng, info.dst, b=b)
    if info.src0 is not None:
        if info.mnemonic in ("v_readlane_b32", "v_readfirstlane_b32"):
            f["src0"] = 256 + _vgpr(rng, info.src0, b=b)
        elif info.mnemonic == "v_writelane_b32":
            f["src0"] = rng.choice([_sgpr(rng, info.src0, specials=False, b=b),
                                    rng.choice(_INLINE_INTS)])
        else:
            # an implicit VCC read uses the one constant-bus slot
            bus_free = "vcc" not in info.reads and "lit" not in flags
            f["src0"] = _vsrc(rng, info.src0, sgpr_ok=bus_free,
                              literal_ok=bus_free and "lit" not in flags,
                              reg_only="reg_src" in flags, b=b)
        if f["src0"] == _LITERAL:
            literal = _literal(rng, info.src0)
    if info.src1 is not None:
        if "lane_sel" in flags:                       # lane select: M0 or an inline integer
            f["vsrc1"] = rng.choice([_M0, rng.randrange(128, 193)])
        else:
            f["vsrc1"] = _vgpr(rng, info.src1, b=b)
    if "lit" in flags:
        literal = _literal(rng, OperandType("f32"))
    return _words(fmt, f, literal, False)


def _vop3(info: InstrInfo, rng: random.Random, b: RegisterBudget) -> bytes:
    flags = info.flags
    vop3b = "vop3b" in flags
    f: dict[str, int] = {"op": info.vop3_opcode}
    if info.format is Format.VOPC:
        f["vdst"] = _sgpr(rng, info.dst, b=b)
    elif info.dst is not None:
        f["vdst"] = _vgpr(rng, info.dst, b=b)
    if vop3b:
        f["sdst"] = _sgpr(rng, OperandType("b64"), b=b)
    # constant bus: at most one SGPR (an SGPR-pair carry-in / select / implicit VCC counts)
    bus_used = info.src2 is not None and info.format is Format.VOP2 or "vcc" in info.reads \
        and info.format is Format.VOP3
    sgpr_code = None
    neg = abs_ = 0
    for i, t in enumerate(info.sources):
        if t is None:
            continue
        if info.format is Format.VOP2 and i == 2:            # carry-in / select
            f["src2"] = _sgpr(rng, t, b=b)
            continue
        code = _vsrc(rng, t, sgpr_ok=not bus_used, literal_ok=False,
                     reg_only="reg_src" in flags, b=b)
        if code < 256 and (code <= 103 or code in (_VCC, _VCC + 1, _M0, _EXEC, _EXEC + 1)
                           or _TTMP <= code < _TTMP + 12):
            if sgpr_code is None or sgpr_code == code:
                sgpr_code = code
            else:
                code = 256 + _vgpr(rng, t, b=b)
        f[f"src{i}"] = code
        if t.is_float:
            neg |= rng.getrandbits(1) << i
            if not vop3b:
                abs_ |= rng.getrandbits(1) << i
    if info.dst is not None and info.dst.is_float and not vop3b:
        f["clamp"] = rng.getrandbits(1)
        f["omod"] = rng.getrandbits(2)
    f["neg"] = neg
    if not vop3b:
        f["abs"] = abs_
    return _words(Format.VOP3, f, None, vop3b)


def _ds(info: InstrInfo, rng: random.Random, b: RegisterBudget) -> bytes:
    f = {"op": info.opcode, "offset0": rng.getrandbits(8), "offset1": rng.getrandbits(8)}
    for field, t in (("vdst", info.dst), ("addr", info.src0), ("data0", info.src1),
                     ("data1", info.src2)):
        if t is not None:
            f[field] = _vgpr(rng, t, b=b)
    if info.mnemonic in ("ds_append", "ds_consume"):
        f["gds"] = rng.getrandbits(1)
    return _words(Format.DS, f, None, False)


def _buffer(info: InstrInfo, rng: random.Random, b: RegisterBudget) -> bytes:
    fmt = info.format
    f = {"op": info.opcode}
    if info.src0 is not None:
        data = info.src1 or info.dst
        f["vdata"] = _vgpr(rng, data, b=b)
        mode = rng.choice(["off", "offen", "idxen", "both", "addr64"])
        f["offen"] = int(mode in ("offen", "both"))
        f["idxen"] = int(mode in ("idxen", "both"))
        f["addr64"] = int(mode == "addr64")
        count = 2 if mode in ("both", "addr64") else 1
        f["vaddr"] = 0 if mode == "off" else _vgpr(rng, None, count, b=b)
        f["offset"] = rng.getrandbits(12)
        f["srsrc"] = rng.randrange(b.sgprs // 4)
        f["soffset"] = rng.choice([_sgpr(rng, None, specials=False, b=b), _M0,
                                   rng.choice(_INLINE_INTS)])
        f["glc"], f["slc"] = rng.getrandbits(1), rng.getrandbits(1)
        if fmt is Format.MTBUF:
            f["dfmt"], f["nfmt"] = rng.getrandbits(4), rng.getrandbits(3)
    return _words(fmt, f, None, False)
