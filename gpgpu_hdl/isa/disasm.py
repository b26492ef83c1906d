"""Disassembler: prints decoded instructions in LLVM's AMDGPU assembler syntax.

Contract: the text of :func:`disassemble` assembles with
``llvm-mc-19 -triple=amdgcn-mesa-mesa3d -mcpu=tahiti -filetype=obj`` to exactly the bytes it
was decoded from (branches become labels, relocated literals become ``sym@abs32@lo``...).
A few encodings LLVM never produces cannot be spelled so that llvm-mc re-creates them (a literal
whose value is also an inline constant, reserved bits set, SI-illegal modifiers); they are
printed as closely as possible and flagged with a ``; warning:`` comment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from .decoder import Instruction, OpKind, Operand, ScalarCode, decode
from .formats import ENCODING_OF, VOP3B, Format

__all__ = ["format_operand", "format_instruction", "branch_target", "disassemble",
           "relocation_expressions"]

# assembler names of the special operands: pairs by their first code, halves as _lo/_hi
_PAIRS = {ScalarCode.VCC_LO: "vcc", ScalarCode.TBA_LO: "tba", ScalarCode.TMA_LO: "tma",
          ScalarCode.EXEC_LO: "exec"}
_SPECIAL_NAMES = {(ScalarCode.M0, 1): "m0", (ScalarCode.VCCZ, 1): "src_vccz",
                  (ScalarCode.EXECZ, 1): "src_execz", (ScalarCode.SCC, 1): "src_scc",
                  (ScalarCode.LDS_DIRECT, 1): "src_lds_direct"}
for _code, _name in _PAIRS.items():
    _SPECIAL_NAMES |= {(_code, 2): _name, (_code, 1): f"{_name}_lo", (_code + 1, 1): f"{_name}_hi"}
_HWREG_NAMES = {1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 4: "HW_REG_HW_ID",
                5: "HW_REG_GPR_ALLOC", 6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS"}
_RELOC_SUFFIX = {
    "R_AMDGPU_ABS32_LO": "@abs32@lo", "R_AMDGPU_ABS32_HI": "@abs32@hi", "R_AMDGPU_ABS32": "",
    "R_AMDGPU_REL32_LO": "@rel32@lo", "R_AMDGPU_REL32_HI": "@rel32@hi",
    "R_AMDGPU_GOTPCREL32_LO": "@gotpcrel32@lo", "R_AMDGPU_GOTPCREL32_HI": "@gotpcrel32@hi",
}
# s_waitcnt SIMM16 as LLVM 19 encodes it for SI: vmcnt [3:0], expcnt [6:4], lgkmcnt [11:8].
_WAITCNT_FIELDS = (("vmcnt", 0, 0xF), ("expcnt", 4, 0x7), ("lgkmcnt", 8, 0xF))


class _Reloc(Protocol):
    offset: int
    type: str
    symbol: str
    addend: int


def _range(prefix: str, first: int, count: int) -> str:
    return f"{prefix}{first}" if count == 1 else f"{prefix}[{first}:{first + count - 1}]"


def _float(value: float) -> str:
    return repr(float(value))


def format_operand(op: Operand, literal_text: str | None = None) -> str:
    """Spell one operand (with its VOP3 modifiers) as llvm-mc reads it."""
    kind = op.kind
    if kind is OpKind.SGPR:
        text = _range("s", op.value, op.count)
    elif kind is OpKind.VGPR:
        text = _range("v", op.value, op.count)
    elif kind is OpKind.SPECIAL:
        if 112 <= op.value <= 123:
            text = _range("ttmp", op.value - 112, op.count)
        else:
            text = _SPECIAL_NAMES.get((op.value, min(op.count, 2)), f"<special {op.value}>")
    elif kind is OpKind.INLINE:
        text = _float(op.value) if isinstance(op.value, float) else str(op.value)
    elif kind is OpKind.LITERAL:
        text = literal_text if literal_text is not None else f"0x{op.value:x}"
    else:
        text = f"0x{op.value:x}"
    if op.abs:
        text = f"|{text}|"
    if op.neg:
        text = f"-{text}" if op.is_register or op.abs else f"neg({text})"
    return text


def branch_target(inst: Instruction) -> int | None:
    """Byte offset a PC-relative branch goes to, or None for other instructions."""
    if "branch" not in inst.info.flags:
        return None
    simm = inst.fields["simm16"]
    simm -= (simm & 0x8000) << 1
    return inst.offset + 4 + 4 * simm


def _waitcnt(simm: int) -> str:
    canon = 0
    parts = []
    for name, shift, mask in _WAITCNT_FIELDS:
        value = simm >> shift & mask
        canon |= value << shift
        if value != mask:
            parts.append(f"{name}({value})")
    if canon != simm:
        return f"0x{simm:x}"
    return " ".join(parts) or "vmcnt(15) expcnt(7) lgkmcnt(15)"


def _hwreg(simm: int) -> str:
    reg, offset, size = simm & 0x3F, simm >> 6 & 0x1F, (simm >> 11) + 1
    return f"hwreg({_HWREG_NAMES.get(reg, reg)}, {offset}, {size})"


def _simm16(inst: Instruction, labels: Mapping[int, str]) -> str:
    info, simm = inst.info, inst.fields["simm16"]
    flags = info.flags
    if "waitcnt" in flags:
        return _waitcnt(simm)
    if "hwreg" in flags:
        return _hwreg(simm)
    if "branch" in flags:
        target = branch_target(inst)
        if target in labels:
            return labels[target]
        return str(simm - ((simm & 0x8000) << 1))
    if info.format is Format.SOPP:
        return str(simm)
    return f"0x{simm:x}"


def _suffixes(inst: Instruction) -> list[str]:
    f, fmt = inst.fields, inst.encoding
    out: list[str] = []
    if fmt is Format.VOP3:
        if f.get("clamp"):
            out.append("clamp")
        if f["omod"]:
            out.append(("", "mul:2", "mul:4", "div:2")[f["omod"]])
    elif fmt is Format.DS:
        if "two_addr" in inst.info.flags:
            out += [f"offset{i}:{f[f'offset{i}']}" for i in (0, 1) if f[f"offset{i}"]]
        elif f["offset0"] or f["offset1"]:
            out.append(f"offset:{f['offset1'] << 8 | f['offset0']}")
        if f["gds"]:
            out.append("gds")
    elif fmt in (Format.MUBUF, Format.MTBUF) and inst.info.src0 is not None:
        if fmt is Format.MTBUF:
            out.append(f"format:{f['nfmt'] << 4 | f['dfmt']}")
        out += [name for name in ("idxen", "offen", "addr64") if f[name]]
        if f["offset"]:
            out.append(f"offset:{f['offset']}")
        out += [name for name in ("glc", "slc", "lds", "tfe") if f.get(name)]
    elif fmt in (Format.MUBUF, Format.MTBUF):
        out += [name for name in ("glc", "slc") if f[name]]
    return out


def _operand_text(inst: Instruction, role: str, op: Operand, labels: Mapping[int, str],
                  relocs: Mapping[int, str]) -> str:
    if role == "simm16":
        return _simm16(inst, labels)
    if op.kind is OpKind.LITERAL:
        return format_operand(op, relocs.get(inst.offset + 4))
    return format_operand(op)


def _reencodes(inst: Instruction) -> bool:
    """True when the fields we print determine the instruction words exactly."""
    enc = VOP3B if inst.encoding is Format.VOP3 and "vop3b" in inst.info.flags \
        else ENCODING_OF[inst.encoding]
    word = enc.pack(**inst.fields)
    raw = inst.words[0] | (inst.words[1] << 32 if enc.size == 8 else 0)
    return word == raw


def format_instruction(inst: Instruction, labels: Mapping[int, str] | None = None,
                       relocs: Mapping[int, str] | None = None) -> str:
    """Print one instruction (no label, no comment)."""
    labels = labels or {}
    relocs = relocs or {}
    parts = [_operand_text(inst, role, op, labels, relocs) for role, op in inst.operands]
    if inst.encoding in (Format.MUBUF, Format.MTBUF) and inst.info.src0 is not None \
            and inst.operand("vaddr") is None:
        parts.insert(1, "off")
    text = inst.name
    if parts:
        text += " " + ", ".join(parts)
    suffix = _suffixes(inst)
    if suffix:
        text += " " + " ".join(suffix)
    return text


def relocation_expressions(relocations: Iterable[_Reloc]) -> dict[int, str]:
    """Map code offsets of relocated literals to the expression that re-creates them."""
    out = {}
    for r in relocations:
        suffix = _RELOC_SUFFIX.get(r.type)
        if suffix is None:
            continue
        addend = f"+{r.addend}" if r.addend > 0 else (f"-{-r.addend}" if r.addend < 0 else "")
        out[r.offset] = f"{r.symbol}{suffix}{addend}"
    return out


def _warning(inst: Instruction) -> str | None:
    if not _reencodes(inst):
        return "reserved bits set; llvm-mc will not reproduce this encoding"
    return None


def disassemble(code: bytes, *, relocations: Iterable[_Reloc] = (), labels: bool = True,
                comments: bool = True, instructions: list[Instruction] | None = None) -> str:
    """Disassemble a code blob into assembler text (one instruction per line).

    With ``labels`` branch targets inside the code become ``.L_xxxx`` labels; otherwise
    branches keep numeric offsets. ``comments`` appends ``; offset: hex words`` to each line.
    """
    insts = instructions if instructions is not None else decode(code)
    starts = {i.offset for i in insts}
    label_of: dict[int, str] = {}
    if labels:
        for inst in insts:
            target = branch_target(inst)
            if target is not None and target in starts:
                label_of[target] = f".L_{target:04x}"
    relocs = relocation_expressions(relocations)
    lines = []
    for inst in insts:
        if inst.offset in label_of:
            lines.append(f"{label_of[inst.offset]}:")
        text = "\t" + format_instruction(inst, label_of, relocs)
        if comments:
            words = " ".join(f"{w:08x}" for w in inst.words)
            note = f"; {inst.offset:06x}: {words}"
            warning = _warning(inst)
            if warning:
                note += f"  warning: {warning}"
            text = f"{text:<56} {note}"
        lines.append(text)
    return "\n".join(lines) + "\n"
