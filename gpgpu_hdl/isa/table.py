"""The Southern Islands instruction table: one row per compute instruction LLVM 19 accepts for
tahiti, loaded from ``instructions.tsv`` beside this file.

The TSV is the single source of truth. Its columns:

``format``, ``opcode``
    The native microcode format and opcode (what ``llvm-mc-19 -mcpu=tahiti`` encodes).
``mnemonic``
    The LLVM mnemonic without ``_e32``/``_e64`` suffix.
``unit``
    The functional unit that executes it: ``salu`` (scalar ALU), ``ctrl`` (SOPP: branches,
    waits, barrier, end of program), ``smem`` (scalar memory), ``valu`` (vector integer ALU),
    ``fpu`` (vector FP32), ``fpu64`` (vector FP64), ``lds`` (local data share) and ``vmem``
    (vector buffer memory).
``subunit``
    The part of that unit it needs, so that the trimmer can drop parts: for ``valu``/``salu``
    one of ``alu``, ``mul`` (multiplier), ``shift`` (shifter), ``lane`` (cross-lane access);
    for ``fpu``/``fpu64`` one of ``add``, ``mul``, ``mad`` (unfused multiply-add), ``fma``,
    ``cmp`` (compares, min/max), ``cvt`` (conversions and rounding), ``trans`` (divide, sqrt,
    transcendentals), ``alu``; for memory ``load``, ``store``, ``atomic``, ``swizzle``, ``ctrl``.
``class``
    The SCRATCH operation class (mov, logic, shift, bitwise, convert, control, add, mul, div,
    trans, memory).
``type``
    The arithmetic type: ``int``, ``f32`` or ``f64``.
``dst``, ``src0``, ``src1``, ``src2``
    Operand types of the logical operand slots (``b32``, ``b64``, ``f16``, ``f32``, ``f64``,
    ``b96``, ``b128``, ``b256``, ``b512``; ``-`` when absent; ``vaddr`` for a buffer address
    whose size depends on addr64/idxen/offen). How slots map to encoding fields is per format:
    SOP2/SOP1/SOPK/SOPC: dst = SDST, src0 = SSRC0 (SOPK: the SDST field read as a source),
    src1 = SSRC1. SMRD: dst = SDST, src0 = SBASE, src1 = OFFSET. VOP*: dst = VDST (VOPC: the
    lane mask), src0..2. DS: dst = VDST, src0 = ADDR, src1 = DATA0, src2 = DATA1. MUBUF/MTBUF:
    dst = data returned, src0 = VADDR, src1 = data stored, src2 = SRSRC.
``reads``, ``writes``
    Implicit architectural state (``scc``, ``vcc``, ``exec``, ``m0``, ``mode``) of the native
    encoding. The VOP3 form of an instruction names its VCC operands explicitly instead.
``flags``
    Irregularities: ``branch`` (SIMM16 is a PC-relative target), ``jump`` (PC from a register),
    ``waitcnt``, ``sendmsg``, ``hwreg``, ``noimm`` (SOPP without operand), ``endpgm``,
    ``barrier``, ``lit`` (always followed by a 32-bit constant), ``no_e64`` (VOP1/VOP2 without a
    VOP3 form), ``vop3b`` (VOP3 form has a scalar destination), ``carry_in``, ``sel``,
    ``sgpr_dst`` (VDST names an SGPR), ``lane_sel`` (src1 is a lane select: an SGPR, M0 or
    inline constant in the 8-bit VSRC1 field, taken modulo 64; the instruction ignores EXEC.
    ``v_readlane_b32`` reads that lane of its VGPR src0; ``v_writelane_b32`` writes its scalar
    src0 (a scalar register or a constant) into that lane of VDST, the other lanes unchanged),
    ``acc`` (accumulates into its destination), ``legacy``,
    ``cmpx`` (writes EXEC), ``reg_src`` (sources must be registers), ``load``, ``store``,
    ``atomic``, ``rtn`` (DS op returns data),
    ``rtn_glc`` (buffer atomic returns data when GLC=1), ``two_addr``, ``st64``, ``src2``
    (DS op reads its data from LDS), ``format`` (typed buffer access).

VOP3 opcodes of the VOP1/VOP2/VOPC instructions are derived: VOPC ``op``, VOP2 ``op + 256``,
VOP1 ``op + 384``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from importlib import resources

from .formats import Format

__all__ = ["Unit", "OpClass", "OperandType", "InstrInfo", "IsaTable", "TABLE", "load_table"]


class Unit(enum.Enum):
    SALU = "salu"
    CTRL = "ctrl"
    SMEM = "smem"
    VALU = "valu"
    FPU = "fpu"
    FPU64 = "fpu64"
    LDS = "lds"
    VMEM = "vmem"

    def __str__(self) -> str:
        return self.value


class OpClass(enum.Enum):
    """SCRATCH's instruction classes (Fig. 4/5 of the SCRATCH paper)."""

    MOV = "mov"
    LOGIC = "logic"
    SHIFT = "shift"
    BITWISE = "bitwise"
    CONVERT = "convert"
    CONTROL = "control"
    ADD = "add"
    MUL = "mul"
    DIV = "div"
    TRANS = "trans"
    MEMORY = "memory"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class OperandType:
    """Type of an operand slot: its width in bits and whether it is floating point."""

    name: str

    @property
    def bits(self) -> int:
        """Width of the value (16 for ``f16``, which still occupies a 32-bit register)."""
        return 0 if self.name == "vaddr" else int(self.name[1:])

    @property
    def dwords(self) -> int:
        """Number of 32-bit registers it occupies."""
        return (self.bits + 31) // 32

    @property
    def is_float(self) -> bool:
        return self.name.startswith("f")

    def __str__(self) -> str:
        return self.name


_OPERAND_TYPES = {"b32", "b64", "b96", "b128", "b256", "b512", "f16", "f32", "f64", "vaddr"}
_UNITS_WITH_SUBUNITS = {
    Unit.SALU: {"alu", "mul", "shift"},
    Unit.CTRL: {"ctrl"},
    Unit.SMEM: {"load", "ctrl"},
    Unit.VALU: {"alu", "mul", "shift", "lane"},
    Unit.FPU: {"add", "mul", "mad", "fma", "cmp", "cvt", "trans", "alu"},
    Unit.FPU64: {"add", "mul", "mad", "fma", "cmp", "cvt", "trans", "alu"},
    Unit.LDS: {"load", "store", "atomic", "swizzle"},
    Unit.VMEM: {"load", "store", "atomic", "ctrl"},
}
_STATE = {"scc", "vcc", "exec", "m0", "mode"}
_FLAGS = {
    "branch", "jump", "waitcnt", "sendmsg", "hwreg", "noimm", "endpgm", "barrier", "lit",
    "no_e64", "vop3b", "carry_in", "sel", "sgpr_dst", "lane_sel", "acc", "legacy", "cmpx",
    "load", "store", "atomic", "rtn", "rtn_glc", "two_addr", "st64", "src2", "format",
    "reg_src",
}
_VOP3_BASE = {Format.VOPC: 0, Format.VOP2: 256, Format.VOP1: 384, Format.VOP3: 0}


@dataclass(frozen=True)
class InstrInfo:
    """One row of the instruction table."""

    format: Format
    opcode: int
    mnemonic: str
    unit: Unit
    subunit: str
    op_class: OpClass
    type: str
    dst: OperandType | None
    src0: OperandType | None
    src1: OperandType | None
    src2: OperandType | None
    reads: frozenset[str]
    writes: frozenset[str]
    flags: frozenset[str]

    @property
    def key(self) -> tuple[Format, int]:
        return (self.format, self.opcode)

    @property
    def has_e64(self) -> bool:
        """True for VOP1/VOP2/VOPC instructions that also have a VOP3 (``_e64``) encoding."""
        return self.format in (Format.VOP1, Format.VOP2, Format.VOPC) and "no_e64" not in self.flags

    @property
    def vop3_opcode(self) -> int | None:
        """Opcode in the VOP3 encoding, or None when the instruction has no VOP3 form."""
        if self.format is Format.VOP3 or self.has_e64:
            return _VOP3_BASE[self.format] + self.opcode
        return None

    @property
    def is_vector(self) -> bool:
        return self.unit in (Unit.VALU, Unit.FPU, Unit.FPU64, Unit.LDS, Unit.VMEM)

    @property
    def sources(self) -> tuple[OperandType | None, ...]:
        return (self.src0, self.src1, self.src2)

    @property
    def is_64bit(self) -> bool:
        """Has a 64-bit (or wider) operand in an ALU (needs 64-bit datapaths)."""
        return self.unit not in (Unit.SMEM, Unit.LDS, Unit.VMEM) and any(
            t is not None and t.bits >= 64 and not (self.format is Format.VOPC and t is self.dst)
            for t in (self.dst, *self.sources))


def _parse_set(text: str, allowed: set[str], what: str, where: str) -> frozenset[str]:
    if text == "-":
        return frozenset()
    items = frozenset(text.split(","))
    bad = items - allowed
    if bad:
        raise ValueError(f"{where}: unknown {what} {sorted(bad)}")
    return items


def _parse_type(text: str, where: str) -> OperandType | None:
    if text == "-":
        return None
    if text not in _OPERAND_TYPES:
        raise ValueError(f"{where}: unknown operand type {text!r}")
    return OperandType(text)


def _parse(text: str) -> list[InstrInfo]:
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    header = lines[0].split("\t")
    expected = ["format", "opcode", "mnemonic", "unit", "subunit", "class", "type",
                "dst", "src0", "src1", "src2", "reads", "writes", "flags"]
    if header != expected:
        raise ValueError(f"instructions.tsv: header {header} != {expected}")
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        cols = dict(zip(header, line.split("\t"), strict=True))
        where = f"instructions.tsv row {n} ({cols['mnemonic']})"
        unit = Unit(cols["unit"])
        if cols["subunit"] not in _UNITS_WITH_SUBUNITS[unit]:
            raise ValueError(f"{where}: subunit {cols['subunit']!r} is not part of {unit}")
        if cols["type"] not in ("int", "f32", "f64"):
            raise ValueError(f"{where}: unknown type {cols['type']!r}")
        rows.append(InstrInfo(
            format=Format(cols["format"]), opcode=int(cols["opcode"]), mnemonic=cols["mnemonic"],
            unit=unit, subunit=cols["subunit"], op_class=OpClass(cols["class"]),
            type=cols["type"],
            dst=_parse_type(cols["dst"], where), src0=_parse_type(cols["src0"], where),
            src1=_parse_type(cols["src1"], where), src2=_parse_type(cols["src2"], where),
            reads=_parse_set(cols["reads"], _STATE, "state", where),
            writes=_parse_set(cols["writes"], _STATE, "state", where),
            flags=_parse_set(cols["flags"], _FLAGS, "flag", where)))
    return rows


class IsaTable:
    """The loaded, validated instruction table with the look-ups the decoder needs."""

    def __init__(self, entries: list[InstrInfo]):
        self.entries: tuple[InstrInfo, ...] = tuple(entries)
        self._by_key: dict[tuple[Format, int], InstrInfo] = {}
        self._by_vop3: dict[int, InstrInfo] = {}
        self._by_name: dict[str, InstrInfo] = {}
        for e in self.entries:
            if e.key in self._by_key:
                raise ValueError(f"duplicate opcode {e.format} {e.opcode}: "
                                 f"{self._by_key[e.key].mnemonic} and {e.mnemonic}")
            if e.mnemonic in self._by_name:
                raise ValueError(f"duplicate mnemonic {e.mnemonic}")
            self._by_key[e.key] = e
            self._by_name[e.mnemonic] = e
            if (op3 := e.vop3_opcode) is not None:
                if op3 in self._by_vop3:
                    raise ValueError(f"VOP3 opcode {op3} used by {self._by_vop3[op3].mnemonic} "
                                     f"and {e.mnemonic}")
                self._by_vop3[op3] = e

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def lookup(self, fmt: Format, opcode: int) -> InstrInfo | None:
        """The instruction with this native opcode; for ``Format.VOP3`` the VOP3 opcode space
        (VOP3-only instructions and the e64 forms of VOP1/VOP2/VOPC)."""
        if fmt is Format.VOP3:
            return self._by_vop3.get(opcode)
        return self._by_key.get((fmt, opcode))

    def by_mnemonic(self, mnemonic: str) -> InstrInfo:
        """Look up by mnemonic; ``_e32``/``_e64`` suffixes are accepted."""
        base = mnemonic.removesuffix("_e32").removesuffix("_e64")
        try:
            return self._by_name[base]
        except KeyError:
            raise KeyError(f"unknown instruction {mnemonic!r}") from None


def load_table() -> IsaTable:
    text = resources.files(__package__).joinpath("instructions.tsv").read_text()
    return IsaTable(_parse(text))


#: The instruction table, loaded once at import.
TABLE: IsaTable = load_table()
