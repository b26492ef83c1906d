"""Workload characterisation of commit traces: what a pipelined compute unit must be sized for.

From the commit trace of a launch (:mod:`gpgpu_hdl.emu.trace`: per record the wave, PC,
instruction words and EXEC) this module measures

* the dynamic instruction mix (:class:`Mix`): wave-instructions by unit and class of the
  instruction table, by mnemonic, and the same weighted by active lanes (EXEC's popcount);
* the VGPR operand reads of vector ALU instructions (:class:`OperandStats`): how many sources
  are VGPRs, the cost of a VGPR file banked by register number mod :data:`BANKS` with one or
  two read ports per bank (:func:`bank_extra`), and which instructions use the constant bus
  (an SGPR, a special register or a literal);
* the integer VALU datapath groups (:class:`DatapathMix`, :func:`datapath_group`), to see how
  much of the vector work a narrower shared slow unit would carry;
* an issue model (:func:`simulate`, :class:`IssueParams`): how busy the VALU is with a given
  number of resident waves. **It is a model, not the RTL**: a few documented rules replayed
  over each wave's instruction stream (see :func:`simulate`).

Instructions are decoded from the words in the records (each distinct encoding once), so the
code object itself is not needed. The results are plain counts that add up over launches
(``a + b``); shares and means are properties.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..isa.decoder import Instruction, Operand, OpKind, decode_one
from ..isa.formats import Format
from ..isa.table import InstrInfo, OpClass, Unit
from .trace import per_wave

__all__ = [
    "BANKS", "SLOW_CANDIDATES", "DATAPATH_GROUPS", "Kind", "OpInfo", "Executed", "LaunchTrace",
    "Mix", "OperandStats", "DatapathMix", "Workload", "IssueParams", "IssueResult",
    "op_info", "bank_extra", "datapath_group", "characterise", "simulate",
]

#: VGPR banks: register ``vN`` lives in bank ``N % BANKS``.
BANKS = 4
#: Source roles of vector ALU operands (``vcc_in``: the implicit carry-in/select of the e32
#: forms; ``k``: the literal of ``v_madmk/madak_f32``).
_SOURCE_ROLES = ("src0", "src1", "src2", "vcc_in", "k")
_SCALAR_KINDS = (OpKind.SGPR, OpKind.SPECIAL)
_VALU_UNITS = (Unit.VALU, Unit.FPU, Unit.FPU64)


class Kind:
    """What the issue model does with an instruction (small integers, compared often)."""

    VALU = 0        #: vector ALU, integer
    FPU = 1         #: vector ALU, FP32 or FP64
    SALU = 2        #: scalar ALU and the other scalar control instructions
    BRANCH = 3      #: SOPP branches and the SALU jumps
    SMEM = 4        #: scalar memory (counts on lgkmcnt)
    VMEM = 5        #: buffer memory (counts on vmcnt)
    LDS = 6         #: local data share (counts on lgkmcnt)
    WAITCNT = 7
    BARRIER = 8
    ENDPGM = 9


# --- static facts of one instruction ----------------------------------------------------------

@dataclass(frozen=True)
class OpInfo:
    """What the characterisation needs of one instruction encoding.

    Members
    -------
    mnemonic : str
        The table's mnemonic (no ``_e32``/``_e64``).
    group, category : str
        Mix group (``salu``, ``smem``, ``valu-int``, ``valu-fp32``, ``valu-fp64``, ``vmem``,
        ``lds``, ``branch``, ``s_waitcnt``, ``s_barrier``, ``s_endpgm``, ``other``) and the
        finer category under it (see :func:`_category`).
    kind : int
        A :class:`Kind`.
    vgpr_sources : int
        Source operands that are VGPRs (the accumulator of ``v_mac_*`` counts).
    vgpr_reads : tuple[int, ...]
        The distinct VGPRs read by the sources, sorted (a 64-bit source ``v[n:n+1]`` is two).
    scalar_accesses : int
        Distinct 64-bit aligned scalar register pairs the sources read (SGPRs, VCC, EXEC, M0,
        the implicit VCC of the e32 carry/select forms), the unit of an SGPR file 64 bits wide.
    sgpr, literal, inline, implicit_vcc : bool
        Whether a source is a scalar register, a literal, an inline constant, the implicit VCC.
    datapath : str or None
        The integer VALU datapath group (:func:`datapath_group`); None outside ``valu``.
    vmcnt, lgkmcnt : int
        For ``s_waitcnt``: the counts it waits for (15 = no wait); -1 otherwise.
    """

    mnemonic: str
    group: str
    category: str
    kind: int
    vgpr_sources: int = 0
    vgpr_reads: tuple[int, ...] = ()
    scalar_accesses: int = 0
    sgpr: bool = False
    literal: bool = False
    inline: bool = False
    implicit_vcc: bool = False
    datapath: str | None = None
    vmcnt: int = -1
    lgkmcnt: int = -1

    @property
    def is_valu(self) -> bool:
        return self.kind in (Kind.VALU, Kind.FPU)


def _third_source(info: InstrInfo) -> bool:
    """A real third operand (the carry-in and select of ``v_addc``/``v_cndmask`` are not)."""
    return info.src2 is not None and not info.flags & {"carry_in", "sel"}


def _wide(info: InstrInfo) -> bool:
    """A 64-bit data operand (not the lane masks of compares, carries and selects)."""
    slots = [info.src0, info.src1, info.src2 if _third_source(info) else None,
             None if info.format is Format.VOPC else info.dst]
    return any(t is not None and t.bits >= 64 for t in slots)


#: The integer VALU datapath groups, first match wins: (name, rule). The rules read the
#: table's subunit, class, operand widths and source count; three need the mnemonic, because
#: the table has no column for them (SADs are class ``add``, ``v_bfm`` is ``logic``, and the
#: multiplier's width is not an operand type).
DATAPATH_GROUPS: tuple[tuple[str, Callable[[InstrInfo], bool]], ...] = (
    ("lane access", lambda i: i.subunit == "lane"),
    ("sad/lerp", lambda i: "sad" in i.mnemonic or i.mnemonic == "v_lerp_u8"),
    ("mul24", lambda i: i.subunit == "mul" and "24" in i.mnemonic),
    ("mul32", lambda i: i.subunit == "mul"),
    ("shift64", lambda i: i.subunit == "shift" and _wide(i)),
    ("bfe/align", lambda i: i.subunit == "shift" and _third_source(i)),
    ("shift32", lambda i: i.subunit == "shift"),
    ("bit count/scan", lambda i: i.op_class is OpClass.BITWISE),
    ("pack", lambda i: i.op_class is OpClass.CONVERT),
    ("cmp64", lambda i: i.op_class is OpClass.ADD and _wide(i)),
    ("min3/max3/med3", lambda i: i.op_class is OpClass.ADD and _third_source(i)),
    ("bfi/bfm", lambda i: i.op_class is OpClass.LOGIC and (_third_source(i)
                                                           or i.mnemonic == "v_bfm_b32")),
    ("add/cmp/minmax", lambda i: i.op_class is OpClass.ADD),
    ("logic", lambda i: i.op_class is OpClass.LOGIC),
    ("mov/cndmask", lambda i: i.op_class is OpClass.MOV),
    ("other", lambda i: True),
)

#: The groups PIPELINE.md proposes for a narrower shared slow unit ("SADs, 64-bit shifts, bit
#: counts, med3, ..."), with the 3-input min/max and the packing conversions beside med3.
SLOW_CANDIDATES = ("sad/lerp", "shift64", "bit count/scan", "min3/max3/med3", "pack")


def datapath_group(info: InstrInfo) -> str | None:
    """The integer VALU datapath group of ``info`` (:data:`DATAPATH_GROUPS`), None when it
    is not a ``valu`` instruction."""
    if info.unit is not Unit.VALU:
        return None
    return next(name for name, rule in DATAPATH_GROUPS if rule(info))


def _group(info: InstrInfo) -> str:
    """The top-level mix group."""
    if "branch" in info.flags or "jump" in info.flags:
        return "branch"
    if info.unit is Unit.CTRL:
        for flag, name in (("waitcnt", "s_waitcnt"), ("barrier", "s_barrier"),
                           ("endpgm", "s_endpgm")):
            if flag in info.flags:
                return name
        return "other"
    return {Unit.SALU: "salu", Unit.SMEM: "smem", Unit.VALU: "valu-int", Unit.FPU: "valu-fp32",
            Unit.FPU64: "valu-fp64", Unit.VMEM: "vmem", Unit.LDS: "lds"}[info.unit]


def _category(info: InstrInfo, group: str) -> str:
    """The mix category: ``valu-int/<subunit>/<class>`` (``+64`` with a 64-bit operand,
    ``+3src`` with a third source), ``<group>/<subunit>`` for the other vector and scalar
    units, the group itself for control."""
    if group == "valu-int":
        return (f"{group}/{info.subunit}/{info.op_class}" + ("+64" if _wide(info) else "")
                + ("+3src" if _third_source(info) else ""))
    if group in ("valu-fp32", "valu-fp64", "vmem", "lds", "salu", "smem"):
        return f"{group}/{info.subunit}"
    return group


def _kind(info: InstrInfo, group: str) -> int:
    by_group = {"branch": Kind.BRANCH, "s_waitcnt": Kind.WAITCNT, "s_barrier": Kind.BARRIER,
                "s_endpgm": Kind.ENDPGM, "smem": Kind.SMEM, "vmem": Kind.VMEM, "lds": Kind.LDS,
                "valu-int": Kind.VALU, "valu-fp32": Kind.FPU, "valu-fp64": Kind.FPU}
    return by_group.get(group, Kind.SALU)


def _sources(inst: Instruction) -> list[Operand]:
    ops = [op for role, op in inst.operands if role in _SOURCE_ROLES]
    if "acc" in inst.info.flags:                 # v_mac_*: the old destination is the addend
        vdst = inst.operand("vdst")
        if vdst is not None:
            ops.append(vdst)
    return ops


def _operand_facts(inst: Instruction) -> dict[str, Any]:
    """The source-operand fields of :class:`OpInfo` for a vector ALU instruction."""
    srcs = _sources(inst)
    vgprs = sorted({int(op.value) + k for op in srcs if op.kind is OpKind.VGPR
                    for k in range(op.count)})
    pairs = {(int(op.value) + k) >> 1 for op in srcs if op.kind in _SCALAR_KINDS
             for k in range(op.count)}
    return {"vgpr_sources": sum(op.kind is OpKind.VGPR for op in srcs),
            "vgpr_reads": tuple(vgprs), "scalar_accesses": len(pairs),
            "sgpr": any(op.kind in _SCALAR_KINDS for op in srcs),
            "literal": any(op.kind is OpKind.LITERAL for op in srcs),
            "inline": any(op.kind is OpKind.INLINE for op in srcs),
            "implicit_vcc": inst.operand("vcc_in") is not None}


def _waitcnt(inst: Instruction) -> dict[str, int]:
    """``s_waitcnt``'s counts as LLVM 19 encodes them for SI: vmcnt [3:0], lgkmcnt [11:8]."""
    imm = inst.operand("simm16")
    simm = int(imm.value) if imm is not None else 0
    return {"vmcnt": simm & 0xF, "lgkmcnt": simm >> 8 & 0xF}


@functools.cache
def op_info(words: tuple[int, ...]) -> OpInfo:
    """Decode one instruction (its dwords, literal included, as in a trace record)."""
    inst = decode_one(struct.pack(f"<{len(words)}I", *words))
    info = inst.info
    group = _group(info)
    extra: dict[str, Any] = {}
    if info.unit in _VALU_UNITS:
        extra = _operand_facts(inst)
    elif group == "s_waitcnt":
        extra = _waitcnt(inst)
    return OpInfo(mnemonic=info.mnemonic, group=group, category=_category(info, group),
                  kind=_kind(info, group), datapath=datapath_group(info), **extra)


def bank_extra(registers: Iterable[int], ports: int, banks: int = BANKS) -> int:
    """Extra cycles to read ``registers`` from a file of ``banks`` banks (register N in bank
    N mod ``banks``) with ``ports`` read ports each: the busiest bank needs
    ceil(reads / ports) cycles, one of which is the normal read."""
    per_bank = Counter(r % banks for r in registers)
    return max((-(-n // ports) for n in per_bank.values()), default=1) - 1


# --- the trace, per wave ------------------------------------------------------------------------

class Executed(NamedTuple):
    """One executed instruction of one wave: its facts, active lanes, and for a branch
    whether it was taken (the wave's next PC is not the next instruction)."""

    op: OpInfo
    lanes: int
    taken: bool


@dataclass(frozen=True)
class LaunchTrace:
    """A launch's commit trace as per-wave instruction streams, grouped by workgroup in the
    order the workgroups first appear."""

    groups: tuple[tuple[tuple[Executed, ...], ...], ...]

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]]) -> LaunchTrace:
        """From the records of :class:`~gpgpu_hdl.emu.trace.CommitTrace`."""
        groups: dict[tuple, list[tuple[Executed, ...]]] = {}
        for key, stream in per_wave(records).items():
            groups.setdefault(key[:3], []).append(_wave_stream(stream))
        return cls(tuple(tuple(waves) for waves in groups.values()))

    @property
    def waves(self) -> int:
        return sum(len(g) for g in self.groups)

    @property
    def instructions(self) -> int:
        return sum(len(w) for g in self.groups for w in g)

    def streams(self) -> Iterable[tuple[Executed, ...]]:
        for g in self.groups:
            yield from g


def _wave_stream(records: Sequence[dict[str, Any]]) -> tuple[Executed, ...]:
    out = []
    for n, r in enumerate(records):
        words = tuple(r["words"])
        taken = n + 1 < len(records) and records[n + 1]["pc"] != r["pc"] + 4 * len(words)
        out.append(Executed(op_info(words), int(r["exec"]).bit_count(), taken))
    return tuple(out)


# --- counts that add up -------------------------------------------------------------------------

def _add(a: Any, b: Any) -> Any:
    """Field-wise sum of two count dataclasses of the same type (ints, Counters, dicts of
    Counters)."""
    values = {}
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, Counter):
            values[f.name] = x + y
        elif isinstance(x, dict):
            values[f.name] = {k: x.get(k, Counter()) + y.get(k, Counter()) for k in {*x, *y}}
        else:
            values[f.name] = x + y
    return type(a)(**values)


def _plain(obj: Any) -> Any:
    """Counts as plain dicts for JSON (``dataclasses.asdict`` would break the Counters)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclass
class Mix:
    """The dynamic instruction mix: wave-instructions and active lane-instructions (the sum
    of EXEC's popcount) by group, category and mnemonic (see :class:`OpInfo`)."""

    groups: Counter = field(default_factory=Counter)
    groups_lanes: Counter = field(default_factory=Counter)
    categories: Counter = field(default_factory=Counter)
    categories_lanes: Counter = field(default_factory=Counter)
    mnemonics: Counter = field(default_factory=Counter)
    mnemonics_lanes: Counter = field(default_factory=Counter)

    def __add__(self, other: Mix) -> Mix:
        return _add(self, other)

    @property
    def instructions(self) -> int:
        return sum(self.groups.values())

    @property
    def lanes(self) -> int:
        return sum(self.groups_lanes.values())

    def share(self, *groups: str, lanes: bool = False) -> float:
        """The share of wave-instructions (or of active lane-instructions) in ``groups``."""
        counts = self.groups_lanes if lanes else self.groups
        return _share(sum(counts[g] for g in groups), sum(counts.values()))

    def add(self, e: Executed) -> None:
        op = e.op
        for counts, lane_counts, key in ((self.groups, self.groups_lanes, op.group),
                                         (self.categories, self.categories_lanes, op.category),
                                         (self.mnemonics, self.mnemonics_lanes, op.mnemonic)):
            counts[key] += 1
            lane_counts[key] += e.lanes


@dataclass
class OperandStats:
    """Source operands of the vector ALU instructions (integer, FP32 and FP64).

    ``sources``: VGPR source operands -> instructions; ``reads``: distinct VGPRs read ->
    instructions; ``extra``: read ports per bank (1, 2) -> extra read cycles -> instructions;
    ``scalar``: instructions that read ``sgpr`` (a scalar register, VCC included),
    ``literal``, ``constant bus`` (either), ``inline`` (an inline constant),
    ``implicit vcc`` and ``2+ scalar`` (two or more distinct 64-bit scalar accesses, a
    literal counting as one)."""

    instructions: int = 0
    sources: Counter = field(default_factory=Counter)
    reads: Counter = field(default_factory=Counter)
    extra: dict = field(default_factory=lambda: {1: Counter(), 2: Counter()})
    scalar: Counter = field(default_factory=Counter)

    def __add__(self, other: OperandStats) -> OperandStats:
        return _add(self, other)

    def add(self, op: OpInfo) -> None:
        self.instructions += 1
        self.sources[op.vgpr_sources] += 1
        self.reads[len(op.vgpr_reads)] += 1
        for ports, counts in self.extra.items():
            counts[bank_extra(op.vgpr_reads, ports)] += 1
        flags = {"sgpr": op.sgpr, "literal": op.literal, "constant bus": op.sgpr or op.literal,
                 "inline": op.inline, "implicit vcc": op.implicit_vcc,
                 "2+ scalar": op.scalar_accesses + op.literal >= 2}
        self.scalar.update(k for k, v in flags.items() if v)

    def share_sources(self, n: int) -> float:
        """Share of the instructions with ``n`` VGPR source operands."""
        return _share(self.sources[n], self.instructions)

    def conflict_share(self, ports: int) -> float:
        """Share of the instructions that need at least one extra read cycle."""
        c = self.extra[ports]
        return _share(self.instructions - c[0], self.instructions)

    def extra_per_instruction(self, ports: int) -> float:
        """Mean extra read cycles per instruction (per pass: see :func:`simulate`)."""
        return _share(sum(k * n for k, n in self.extra[ports].items()), self.instructions)

    def scalar_share(self, key: str) -> float:
        return _share(self.scalar[key], self.instructions)


@dataclass
class DatapathMix:
    """The integer VALU datapath groups (:func:`datapath_group`) against all vector ALU work:
    ``valu`` and ``valu_lanes`` count every vector ALU wave-instruction and its active lanes
    (integer, FP32, FP64); ``groups``/``groups_lanes`` the integer ones by group,
    ``groups_inline`` those with an inline constant source (a shift by a constant, say);
    ``mnemonics`` group -> mnemonic -> wave-instructions."""

    valu: int = 0
    valu_lanes: int = 0
    groups: Counter = field(default_factory=Counter)
    groups_lanes: Counter = field(default_factory=Counter)
    groups_inline: Counter = field(default_factory=Counter)
    mnemonics: dict = field(default_factory=dict)

    def __add__(self, other: DatapathMix) -> DatapathMix:
        return _add(self, other)

    def add(self, e: Executed) -> None:
        self.valu += 1
        self.valu_lanes += e.lanes
        g = e.op.datapath
        if g is not None:
            self.groups[g] += 1
            self.groups_lanes[g] += e.lanes
            self.groups_inline[g] += e.op.inline
            self.mnemonics.setdefault(g, Counter())[e.op.mnemonic] += 1

    def share(self, *groups: str, lanes: bool = False) -> float:
        """Share of all vector ALU wave-instructions (or active lanes) in ``groups``."""
        counts = self.groups_lanes if lanes else self.groups
        return _share(sum(counts[g] for g in groups), self.valu_lanes if lanes else self.valu)


@dataclass
class Workload:
    """Everything :func:`characterise` counts, for one launch or summed over many."""

    mix: Mix = field(default_factory=Mix)
    operands: OperandStats = field(default_factory=OperandStats)
    datapath: DatapathMix = field(default_factory=DatapathMix)
    launches: int = 0
    waves: int = 0

    def __add__(self, other: Workload) -> Workload:
        return Workload(self.mix + other.mix, self.operands + other.operands,
                        self.datapath + other.datapath, self.launches + other.launches,
                        self.waves + other.waves)

    def as_dict(self) -> dict[str, Any]:
        """Every count as plain dicts and numbers (for JSON)."""
        return _plain(self)


def characterise(trace: LaunchTrace) -> Workload:
    """Count the mix, the VALU operands and the datapath groups of a launch."""
    w = Workload(launches=1, waves=trace.waves)
    for stream in trace.streams():
        for e in stream:
            w.mix.add(e)
            if e.op.is_valu:
                w.operands.add(e.op)
                w.datapath.add(e)
    return w


# --- the issue model --------------------------------------------------------------------------

_LANE_COUNTS = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True, kw_only=True)
class IssueParams:
    """The parameters of :func:`simulate` (cycles of the compute unit's clock).

    Members
    -------
    lanes : int
        VALU lanes: a vector ALU instruction takes ``64 // lanes`` passes, one a cycle.
    valu_latency : int
        Integer VALU: cycles from the last pass entering the VALU to its result being
        written; the wave issues again ``passes + valu_latency`` cycles after it issued.
    fpu_latency : int or None
        The same for FP32 and FP64 instructions; None: twice ``valu_latency`` (PIPELINE.md:
        the FP units need about twice the stages).
    salu_latency : int
        Scalar ALU and other scalar instructions: issue to the wave's next issue.
    branch_latency : int
        A taken branch or jump (resolved in the scalar ALU, then the wave refetches).
        A branch not taken costs ``salu_latency``.
    mem_latency : int
        Buffer and scalar memory: issue to the data being back (``s_waitcnt`` waits for it).
    lds_latency : int
        LDS: cycles after the LDS has taken the instruction's passes.
    lsu_lanes : int or None
        Lanes the buffer unit sends a cycle (a buffer instruction holds it for
        ``64 // lsu_lanes`` cycles); None: ``lanes``.
    read_ports : int or None
        VGPR bank read ports: a pass takes ``1 + bank_extra(reads, read_ports)`` cycles; None:
        no bank conflicts.
    """

    lanes: int = 16
    valu_latency: int = 4
    fpu_latency: int | None = None
    salu_latency: int = 3
    branch_latency: int = 5
    mem_latency: int = 32
    lds_latency: int = 8
    lsu_lanes: int | None = None
    read_ports: int | None = None

    def __post_init__(self) -> None:
        for name in ("lanes", "lsu_lanes"):
            v = getattr(self, name)
            if v is not None and v not in _LANE_COUNTS:
                raise ValueError(f"{name} must be one of 1, 2, 4, ..., 64, not {v}")
        for name in ("valu_latency", "fpu_latency", "salu_latency", "branch_latency",
                     "mem_latency", "lds_latency"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise ValueError(f"{name} must be 0 or more, not {v}")
        if self.read_ports is not None and self.read_ports < 1:
            raise ValueError(f"read_ports must be 1 or more, not {self.read_ports}")

    @property
    def passes(self) -> int:
        return 64 // self.lanes

    @property
    def fp_latency(self) -> int:
        return 2 * self.valu_latency if self.fpu_latency is None else self.fpu_latency


@dataclass
class IssueResult:
    """What :func:`simulate` measured (summed over launches with ``+``).

    ``cycles`` from the first issue to the last wave's end; ``valu_busy`` the cycles the VALU
    did work (``passes`` per instruction); ``valu_stall`` the cycles it was held by bank
    conflicts; ``issued`` instructions; ``raised`` launches whose workgroups had more waves
    than the slots asked for, which ran with one workgroup's waves as the slots."""

    cycles: int = 0
    valu_busy: int = 0
    valu_stall: int = 0
    issued: int = 0
    raised: int = 0

    def __add__(self, other: IssueResult) -> IssueResult:
        return _add(self, other)

    @property
    def busy(self) -> float:
        """VALU busy cycles (work, not conflict stalls) / cycles."""
        return _share(self.valu_busy, self.cycles)

    @property
    def ipc(self) -> float:
        return _share(self.issued, self.cycles)


_INF = float("inf")


def _compile(stream: Sequence[Executed], p: IssueParams) -> list[tuple]:
    """A wave's stream as the simulator's tuples (kind, a, b, c): see ``_Machine.issue``."""
    lsu = 64 // (p.lsu_lanes or p.lanes)
    out: list[tuple] = []
    for e in stream:
        op, k = e.op, e.op.kind
        if k in (Kind.VALU, Kind.FPU):
            extra = bank_extra(op.vgpr_reads, p.read_ports) if p.read_ports else 0
            lat = p.valu_latency if k == Kind.VALU else p.fp_latency
            out.append((Kind.VALU, p.passes * (1 + extra), lat, p.passes))
        elif k == Kind.BRANCH:
            out.append((Kind.SALU, p.branch_latency if e.taken else p.salu_latency, 0, 0))
        elif k == Kind.VMEM:
            out.append((k, lsu, p.mem_latency, 0))
        elif k == Kind.SMEM:
            out.append((k, 0, p.mem_latency, 0))
        elif k == Kind.LDS:
            out.append((k, p.passes, p.lds_latency, 0))
        elif k == Kind.WAITCNT:
            out.append((k, op.vmcnt, op.lgkmcnt, 0))
        elif k in (Kind.BARRIER, Kind.ENDPGM):
            out.append((k, 0, 0, 0))
        else:
            out.append((Kind.SALU, p.salu_latency, 0, 0))
    return out


def _wait_until(pending: list[int], n: int) -> int:
    """When at most ``n`` of the accesses completing at ``pending`` are still outstanding."""
    if len(pending) <= n:
        return 0
    return sorted(pending)[len(pending) - n - 1]


class _Wave:
    __slots__ = ("ops", "i", "ready", "vm", "lgkm", "group", "blocked")

    def __init__(self, ops: list[tuple], group: _Group, now: int) -> None:
        self.ops, self.i, self.ready, self.group = ops, 0, now, group
        self.vm: list[int] = []
        self.lgkm: list[int] = []
        self.blocked = False


class _Group:
    __slots__ = ("waves", "live", "arrived")

    def __init__(self) -> None:
        self.waves: list[_Wave] = []
        self.live = 0
        self.arrived = 0

    def release_if_complete(self, now: int) -> None:
        if self.arrived and self.arrived == self.live:
            for w in self.waves:
                if w.blocked:
                    w.blocked, w.ready = False, now + 1
            self.arrived = 0


class _Machine:
    """The state of one :func:`simulate` run."""

    def __init__(self, slots: int) -> None:
        self.slot: list[_Wave | None] = [None] * slots
        self.free_at = [0] * slots
        self.now = 0
        self.valu_free = self.lsu_free = self.lds_free = 0
        self.result = IssueResult()
        self.next_slot = 0

    def ready_at(self, w: _Wave) -> float:
        """The first cycle at which ``w`` may issue its next instruction."""
        if w.blocked:
            return _INF
        k, a, b, _ = w.ops[w.i]
        t = w.ready
        if k == Kind.VALU:
            return max(t, self.valu_free)
        if k == Kind.VMEM:
            return max(t, self.lsu_free)
        if k == Kind.LDS:
            return max(t, self.lds_free)
        if k == Kind.WAITCNT:
            return max(t, _wait_until(w.vm, a), _wait_until(w.lgkm, b))
        return t

    def admit(self, waves: list[list[tuple]]) -> bool:
        """Place a workgroup's waves if enough slots are free now."""
        free = [s for s, w in enumerate(self.slot) if w is None and self.free_at[s] <= self.now]
        if len(free) < len(waves):
            return False
        g = _Group()
        for s, ops in zip(free, waves, strict=False):
            w = _Wave(ops, g, self.now)
            g.waves.append(w)
            self.slot[s] = w
        g.live = len(waves)
        return True

    def issue(self, s: int) -> None:
        """Issue the next instruction of the wave in slot ``s``: a VALU instruction holds the
        VALU ``a`` cycles (``c`` of them work) and the wave ``a + b``; a scalar one the wave
        ``a``; buffer (LDS) instructions hold the buffer unit (LDS) ``a`` cycles and complete
        ``a + b`` later, scalar loads ``b`` later; ``s_waitcnt`` waits for ``a`` and ``b``."""
        w = self.slot[s]
        assert w is not None
        k, a, b, c = w.ops[w.i]
        now = self.now
        w.i += 1
        self.result.issued += 1
        w.ready = now + 1
        if k == Kind.VALU:
            self.valu_free = now + a
            self.result.valu_busy += c
            self.result.valu_stall += a - c
            w.ready = now + a + b
        elif k == Kind.SALU:
            w.ready = now + a
        elif k == Kind.VMEM:
            self.lsu_free = now + a
            w.vm.append(now + a + b)
        elif k == Kind.SMEM:
            w.lgkm.append(now + b)
        elif k == Kind.LDS:
            self.lds_free = now + a
            w.lgkm.append(now + a + b)
        elif k == Kind.WAITCNT:
            w.vm = [t for t in w.vm if t > now]
            w.lgkm = [t for t in w.lgkm if t > now]
        elif k == Kind.BARRIER:
            w.blocked = True
            w.group.arrived += 1
            w.group.release_if_complete(now)
        else:                                           # s_endpgm
            self.slot[s] = None
            self.free_at[s] = max([now + 1, *w.vm, *w.lgkm])
            w.group.live -= 1
            w.group.release_if_complete(now)

    def pick(self) -> tuple[int | None, float]:
        """The wave to issue now (rotating priority from the slot after the last issue), or
        None and the next cycle at which something can happen."""
        n = len(self.slot)
        soonest = _INF
        for k in range(n):
            s = (self.next_slot + k) % n
            w = self.slot[s]
            if w is None:
                if self.free_at[s] > self.now:
                    soonest = min(soonest, self.free_at[s])
                continue
            t = self.ready_at(w)
            if t <= self.now:
                return s, t
            soonest = min(soonest, t)
        return None, soonest


def _program(trace: LaunchTrace, params: IssueParams, min_waves: int) -> list[list[list]]:
    """The compiled workgroups, repeated in order until there are ``min_waves`` waves."""
    compiled = {id(s): _compile(s, params) for s in trace.streams()}
    groups = [[compiled[id(s)] for s in g] for g in trace.groups]
    out, count = [], 0
    while groups and (not out or count < min_waves):
        for g in groups:
            out.append(g)
            count += len(g)
            if count >= min_waves and len(out) >= len(groups):
                break
    return out


def simulate(trace: LaunchTrace, params: IssueParams, waves: int, *,
             min_waves: int = 0) -> IssueResult:
    """Replay ``trace`` on a model of a pipelined compute unit with ``waves`` wave slots.

    With ``min_waves``, the launch's workgroups are repeated in order until the grid has at
    least that many waves: the same kernel on a larger grid, so that a small launch does not
    leave slots empty.

    The model (not the RTL):

    * Workgroups start in trace order when enough slots are free for all their waves (the
      barrier needs them together); a workgroup with more waves than ``waves`` runs with its
      own wave count as the slots (counted in :attr:`IssueResult.raised`). Starting a wave
      costs nothing.
    * One instruction issues per cycle, chosen among the ready waves with rotating priority.
      Each wave is in order with at most one instruction in flight: it is ready again when
      that instruction is done (Kingyens & Steffan), so there is no forwarding.
    * Vector ALU (integer, FP32, FP64 alike): the VALU is taken for ``passes`` cycles (times
      ``1 + bank_extra`` per pass with ``read_ports``), one instruction at a time; the wave is
      ready ``passes + latency`` cycles after issue. Transcendentals and FP64 get no longer
      occupancy.
    * Scalar instructions: ready after ``salu_latency``; taken branches ``branch_latency``.
    * Buffer and scalar memory and LDS retire at issue (the wave is ready the next cycle);
      their data comes back ``mem_latency`` (LDS: ``passes + lds_latency``) later, buffer
      instructions also holding the buffer unit for ``64 // lsu_lanes`` cycles and LDS
      instructions the LDS for ``passes``. ``s_waitcnt`` issues once at most ``vmcnt``
      buffer and ``lgkmcnt`` LDS/scalar-memory instructions are outstanding. There is no
      bandwidth limit beyond that, no cache, no bank conflict in the LDS, and no atomics
      serialisation.
    * ``s_barrier`` issues and holds the wave until every wave of its workgroup that has not
      ended has issued it; they are all ready the cycle after.
    * ``s_endpgm`` issues; its slot is free once the wave's memory accesses are back.
    * Instruction fetch never stalls.
    """
    if waves < 1:
        raise ValueError(f"waves must be 1 or more, not {waves}")
    program = _program(trace, params, min_waves)
    widest = max((len(g) for g in program), default=1)
    m = _Machine(max(waves, widest))
    m.result.raised = int(widest > waves)
    pending = list(reversed(program))
    while True:
        while pending and m.admit(pending[-1]):
            pending.pop()
        s, t = m.pick()
        if s is None:
            if t == _INF:
                if pending or any(m.slot):
                    raise RuntimeError("issue model: no wave can ever issue (a barrier that "
                                       "not every wave reaches?)")
                break
            m.now = int(t)
            continue
        m.issue(s)
        m.next_slot = s + 1
        m.now += 1
    m.result.cycles = max(m.now, *m.free_at)
    return m.result
