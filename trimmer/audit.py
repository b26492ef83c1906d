# amaranth: UnusedElaboratable=no
"""Structural audit of emitted Verilog: does ``cu.v`` contain what the report says was kept?

The Verilog is parsed with pyverilog (a real Verilog-2001 parser) into its module hierarchy:
the module definitions, the instances in each, and the memories (``reg`` arrays). The audit
then checks that hierarchy against the :class:`~gpgpu_hdl.cu.plan.BuildPlan` of the
configuration:

* the decoder, the scalar ALU and one lane ALU per lane (``valu0``...) are instantiated in the
  top module (the ALUs when their part is kept);
* every lane ALU has exactly the functional-unit submodules
  :attr:`IntLaneAlu.units <gpgpu_hdl.cu.valu.IntLaneAlu.units>` names for the plan's
  operations and the configured shifter; a dropped ``multiplier``, ``shifter``, ``shifter64``
  or ``funnel`` has none of its units in any lane, a kept one has its own (unless it has none,
  like the 32-bit shifts riding on the multiplier);
* one FP unit per lane (``fpu0``...) exists exactly when the plan has FP32 instructions, with
  exactly the sub-units (``arith`` with ``mul``/``add``, ``fma``, ``cmp``, ``cvt``,
  ``trans``) :func:`fp_units` names for them: a dropped ``fp_*`` part has no submodule;
* the ``lds`` memory exists exactly when the ``lds`` part is kept, with ``lds_bytes`` bytes;
  the VGPR banks (``vgpr0``...) hold ``wave_slots * vgprs`` 64-lane registers of 32 bits and
  the instruction memory ``imem_bytes``.

For the :class:`~gpgpu_hdl.cu.pipelined.PipelinedComputeUnit` (``config.pipeline``) the
checks are its own (:func:`_audit_pipelined`): its blocks, its lanes, the slow vector unit's
integer and FP lanes and their FP sub-units, the LDS unit, the register files and the
instruction memory banks.

The other parts (scalar and buffer memory paths, atomics, operand latches...) are states and
datapaths inside the top module, not submodules; they are not audited structurally (their
instructions decode as illegal and trap when dropped).

The emitted text has no preprocessor directives, so it is given to pyverilog's parser directly
(``VerilogParser``) rather than through ``iverilog -E``; only the Verilog attribute instances
``(* name = value *)`` Yosys writes (``full_case``, ``init``, enum names) are blanked first,
because pyverilog's grammar does not accept attributes before statements. Attributes carry no
structure.
"""

from __future__ import annotations

import functools
import re
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.fpu.ops import SUBUNIT_OF
from gpgpu_hdl.cu.fpu.unit import FpLaneUnit
from gpgpu_hdl.cu.pipelined import slow_int_ops
from gpgpu_hdl.cu.plan import BuildPlan
from gpgpu_hdl.cu.shifter import SHIFTER_STYLES
from gpgpu_hdl.cu.valu import VALU_INT_OPS, IntLaneAlu
from gpgpu_hdl.errors import GpgpuError

from .emit import TOP
from .policy import part_members

__all__ = ["AuditError", "Memory", "ModuleInfo", "Hierarchy", "Check", "Audit",
           "parse_verilog", "lane_units", "fp_units", "audit"]

#: Parts that are functional units of the lane ALUs (see :mod:`gpgpu_hdl.cu.plan`); the
#: submodules that implement each are read from :attr:`IntLaneAlu.units`.
LANE_PARTS = ("multiplier", "shifter", "shifter64", "funnel")

_ATTRIBUTE = re.compile(
    r"\(\*\s*[A-Za-z_][A-Za-z0-9_$]*(?:\s*=\s*(?:\"[^\"\n]*\"|[0-9]*'?[sS]?[bodhBODH]?"
    r"[0-9a-fA-FxXzZ_]+))?\s*\*\)")
_LANE = re.compile(r"valu(\d+)")
_FPU = re.compile(r"fpu(\d+)")
_VGPR = re.compile(r"vgpr\d+")


class AuditError(GpgpuError):
    """The Verilog does not parse, or its hierarchy does not match the build plan."""


# --- the hierarchy ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Memory:
    """A ``reg`` array: ``width`` bits by ``depth`` words."""

    name: str
    width: int
    depth: int

    @property
    def bits(self) -> int:
        return self.width * self.depth


@dataclass(frozen=True)
class ModuleInfo:
    """One module definition: its instances (instance name to module name) and memories."""

    name: str
    instances: dict
    memories: tuple[Memory, ...]


@dataclass(frozen=True)
class Hierarchy:
    """The modules of a Verilog text, by name (escaped names without their backslash)."""

    top: str
    modules: dict

    def walk(self) -> Iterator[tuple[str, ModuleInfo]]:
        """``(path, module)`` for the top (path ``""``) and every instance below it
        (``"valu0"``, ``"valu0.mul"``...), depth first in instance order."""
        def visit(path: str, name: str) -> Iterator[tuple[str, ModuleInfo]]:
            info = self.modules[name]
            yield path, info
            for inst, module in info.instances.items():
                if module in self.modules:
                    yield from visit(f"{path}.{inst}" if path else inst, module)
        yield from visit("", self.top)

    def at(self, path: str) -> ModuleInfo | None:
        """The module instantiated at ``path`` (``""`` is the top), or None."""
        info = self.modules[self.top]
        for inst in filter(None, path.split(".")):
            module = info.instances.get(inst)
            if module not in self.modules:
                return None
            info = self.modules[module]
        return info

    def memories(self) -> dict[str, Memory]:
        """Every memory below the top, by hierarchical path (``"lds"``, ``"valu0.x"``)."""
        return {f"{path}.{mem.name}" if path else mem.name: mem
                for path, info in self.walk() for mem in info.memories}

    def to_dict(self) -> dict:
        return {
            "top": self.top,
            "modules": {name: {"instances": dict(info.instances),
                               "memories": [{"name": m.name, "width": m.width, "depth": m.depth}
                                            for m in info.memories]}
                        for name, info in self.modules.items()},
        }


@functools.cache
def _pyverilog():
    """pyverilog's ``ast`` and ``parser`` modules (its ``__init__`` reads its version file
    without closing it: a ResourceWarning, silenced here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        from pyverilog.vparser import ast, parser
    return ast, parser


@functools.cache
def _parser():
    _, parser = _pyverilog()
    with tempfile.TemporaryDirectory() as tables:      # PLY writes its tables there
        return parser.VerilogParser(outputdir=tables, debug=False)


def _int(node) -> int:
    """The value of a pyverilog constant (``4095``, ``32'd7``, ``'h1f``)."""
    if not isinstance(node, _pyverilog()[0].IntConst):
        raise AuditError(f"memory bound {node} is not a constant")
    text = node.value.replace("_", "").lower()
    if "'" not in text:
        return int(text)
    base = text.split("'", 1)[1].lstrip("s")
    return int(base[1:], {"b": 2, "o": 8, "d": 10, "h": 16}[base[0]])


def _span(msb, lsb) -> int:
    return abs(_int(msb) - _int(lsb)) + 1


def parse_verilog(text: str, top: str = TOP) -> Hierarchy:
    """Parse ``text`` and return its module hierarchy under module ``top``.

    The last few texts' hierarchies are kept (parsing the pipelined unit's Verilog takes
    pyverilog several seconds; an audit against several plans parses it once).

    Raises
    ------
    AuditError
        The text does not parse, or has no module ``top``.
    """
    return _parse_verilog(text, top)


@functools.lru_cache(maxsize=4)
def _parse_verilog(text: str, top: str) -> Hierarchy:
    ast, pyparser = _pyverilog()
    if "`" in text:
        raise AuditError("the Verilog has preprocessor directives; emitted Verilog has none")
    parser = _parser()
    parser.lexer.reset_lineno()
    try:
        tree = parser.parse(_ATTRIBUTE.sub("", text))
    except pyparser.ParseError as exc:
        raise AuditError(f"the Verilog does not parse: {str(exc).strip()}") from None
    modules = {}
    for definition in tree.description.definitions:
        if not isinstance(definition, ast.ModuleDef):
            continue
        instances, memories = {}, []
        for item in definition.items:
            if isinstance(item, ast.InstanceList):
                for inst in item.instances:
                    instances[inst.name.lstrip("\\")] = inst.module.lstrip("\\")
            elif isinstance(item, ast.Decl):
                for decl in item.list:
                    if isinstance(decl, ast.Reg) and decl.dimensions is not None:
                        width = _span(decl.width.msb, decl.width.lsb) if decl.width else 1
                        depth = 1
                        for length in decl.dimensions.lengths:
                            depth *= _span(length.msb, length.lsb)
                        memories.append(Memory(decl.name.lstrip("\\"), width, depth))
        name = definition.name.lstrip("\\")
        modules[name] = ModuleInfo(name, instances, tuple(memories))
    if top not in modules:
        raise AuditError(f"the Verilog has no module {top!r} (modules: "
                         f"{', '.join(sorted(modules)) or 'none'})")
    return Hierarchy(top, modules)


# --- what the plan says -----------------------------------------------------------------------

def _units(ops, shifter: str) -> frozenset[str]:
    return IntLaneAlu(ops=frozenset(ops) & frozenset(VALU_INT_OPS), shifter=shifter).units


def lane_units(config: CuConfig, plan: BuildPlan | None = None) -> frozenset[str]:
    """The functional-unit submodules each lane ALU of ``config`` has (``"mul"``...)."""
    plan = plan if plan is not None else BuildPlan.of(config.profile,
                                                      lds_bytes=config.lds_bytes)
    return _units(plan.valu_ops, config.shifter)


@functools.cache
def _all_lane_units() -> frozenset[str]:
    """Every functional-unit submodule name a lane ALU can have, in any shifter style."""
    return frozenset().union(*(_units(VALU_INT_OPS, style) for style in SHIFTER_STYLES))


@dataclass(frozen=True)
class Check:
    """One comparison of the audit."""

    subject: str
    expected: str
    found: str
    ok: bool


@dataclass(frozen=True)
class Audit:
    """The result of :func:`audit`: the parsed hierarchy and every check made."""

    hierarchy: Hierarchy
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def to_dict(self) -> dict:
        return {"ok": self.ok,
                "checks": [{"subject": c.subject, "expected": c.expected, "found": c.found,
                            "ok": c.ok} for c in self.checks],
                "memories": {path: {"width": m.width, "depth": m.depth}
                             for path, m in sorted(self.hierarchy.memories().items())},
                **self.hierarchy.to_dict()}


def _names(names) -> str:
    return ", ".join(sorted(names)) or "none"


def _lanes(insts: list[str]) -> str:
    """``valu0..valu7`` for a contiguous run of lane units, else the names."""
    numbers = [int(re.search(r"\d+$", i)[0]) for i in insts]
    if len(insts) > 2 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{insts[0]}..{insts[-1]}"
    return ", ".join(insts) or "none"


def _memory(mem: Memory | None) -> str:
    return "absent" if mem is None else f"{mem.depth} x {mem.width} bits"


def fp_units(plan: BuildPlan) -> dict[str, frozenset[str]]:
    """The FP sub-unit submodules each lane's FP unit has for ``plan`` (``{}``: no FP unit),
    with, for ``"arith"``, its own submodules: ``"arith.mul"``, ``"arith.add"``."""
    if not plan.fp_ops:
        return {}
    units = FpLaneUnit(ops=plan.fp_ops).units
    out = dict(units)
    for sub, kinds in (("mul", ("mul", "mad")), ("add", ("add", "mad"))):
        share = frozenset(op for op in units.get("arith", ()) if SUBUNIT_OF[op] in kinds)
        if share:
            out[f"arith.{sub}"] = share
    return out


def _audit_fp(h: Hierarchy, root: ModuleInfo, config: CuConfig, plan: BuildPlan,
              check) -> None:
    """The FP units: one per lane exactly when the plan has FP instructions, each with the
    sub-units the plan's instructions need and no other (so a dropped ``fp_*`` part has no
    submodule anywhere)."""
    fpus = sorted((inst for inst in root.instances if _FPU.fullmatch(inst)),
                  key=lambda s: int(_FPU.fullmatch(s)[1]))
    wanted = [f"fpu{j}" for j in range(config.lanes)] if plan.fp_ops else []
    check("FP units", f"{len(wanted)} ({_lanes(wanted)})", f"{len(fpus)} ({_lanes(fpus)})",
          fpus == wanted)
    expected = frozenset(fp_units(plan))
    groups: dict[frozenset[str], list[str]] = {}
    for inst in fpus:
        info = h.at(inst)
        found = set(info.instances) if info else set()
        arith = h.at(f"{inst}.arith")
        if arith is not None:
            found |= {f"arith.{sub}" for sub in arith.instances}
        groups.setdefault(frozenset(found), []).append(inst)
    for units, insts in groups.items():
        check(f"sub-units of {_lanes(insts)}", _names(expected), _names(units))


def audit(text: str, config: CuConfig, plan: BuildPlan | None = None, *, top: str = TOP,
          strict: bool = True) -> Audit:
    """Check the Verilog ``text`` of the unit of ``config`` (``ComputeUnit``, or
    ``PipelinedComputeUnit`` when ``config.pipeline``) against its build plan.

    Parameters
    ----------
    text : str
        The emitted Verilog (see :func:`trimmer.emit.emit_verilog`).
    config : CuConfig
        The configuration the text claims to be (sizes, shifter style).
    plan : BuildPlan, optional
        What it must contain; by default the plan of ``config``.
    top : str
        The top module.
    strict : bool
        Raise :class:`AuditError` when a check fails (else return the failures).

    Raises
    ------
    AuditError
        The text does not parse, or (``strict``) does not match the plan; the message lists
        every mismatch.
    """
    plan = plan if plan is not None else BuildPlan.of(config.profile,
                                                      lds_bytes=config.lds_bytes)
    h = parse_verilog(text, top)
    root = h.modules[top]
    checks: list[Check] = []

    def check(subject: str, expected: str, found: str, ok: bool | None = None) -> None:
        checks.append(Check(subject, expected, found, expected == found if ok is None else ok))

    (_audit_pipelined if config.pipeline else _audit_multicycle)(h, root, config, plan, check)
    result = Audit(h, tuple(checks))
    if strict and not result.ok:
        raise AuditError("the Verilog does not match the build plan: " + "; ".join(
            f"{c.subject}: expected {c.expected}, found {c.found}" for c in result.failures))
    return result


def _audit_multicycle(h: Hierarchy, root: ModuleInfo, config: CuConfig, plan: BuildPlan,
                      check) -> None:
    """The checks of the multi-cycle :class:`~gpgpu_hdl.cu.core.ComputeUnit`."""
    # top-level units
    kept = set(plan.kept)
    for inst, part in (("decoder", None), ("salu", "salu")):
        if part is None or part in kept:
            check(f"instance {inst}", "present", "present" if inst in root.instances
                  else "absent")
    lanes = sorted((inst for inst in root.instances if _LANE.fullmatch(inst)),
                   key=lambda s: int(_LANE.fullmatch(s)[1]))
    if "valu" in kept:
        wanted = [f"valu{j}" for j in range(config.lanes)]
        missing = [inst for inst in wanted if inst not in lanes]
        check("lane ALUs", f"{len(wanted)} ({_lanes(wanted)})",
              f"{len(lanes)} ({_lanes(lanes)})" + (f", missing {', '.join(missing)}"
                                                   if missing else ""), not missing)

    # functional units of every lane ALU
    universe = _all_lane_units()
    expected = lane_units(config, plan)
    found: dict[str, frozenset[str]] = {}
    for inst in lanes:
        info = h.at(inst)
        found[inst] = frozenset(info.instances) & universe if info else frozenset()
    groups: dict[frozenset[str], list[str]] = {}
    for inst, units in found.items():
        groups.setdefault(units, []).append(inst)
    for units, insts in groups.items():
        check(f"units of {_lanes(insts)}", _names(expected), _names(units))
    present = frozenset().union(*found.values())
    lane_ops = frozenset(plan.valu_ops)
    for part in LANE_PARTS:
        members = part_members(part)
        if part in kept:
            own = expected - _units(lane_ops - members, config.shifter)
            if own:
                missing = [i for i, units in found.items() if not own <= units]
                check(f"part {part} (kept)", f"{_names(own)} in every lane ALU",
                      f"{_names(own)} in every lane ALU" if not missing else
                      f"missing in {_lanes(missing)}")
            else:
                alu = IntLaneAlu(ops=lane_ops, shifter=config.shifter)
                where = ("inside mul (multiplier-based shifter)" if alu.shift32_in_mul
                         else "no submodule of its own")
                check(f"part {part} (kept)", where, where)
        else:
            banned = _units(members, config.shifter) - expected
            if banned:
                where = [i for i, units in found.items() if units & banned]
                check(f"part {part} (dropped)", f"no {_names(banned)}",
                      f"no {_names(banned)}" if not where else
                      f"{_names(banned & present)} in {_lanes(where)}")

    _audit_fp(h, root, config, plan, check)

    # memories
    mems = {m.name: m for m in root.memories}
    lds_words = config.lds_bytes // 4
    check("part lds (kept)" if plan.lds else "part lds (dropped)",
          f"{lds_words} x 32 bits" if plan.lds else "absent", _memory(mems.get("lds")))
    vgpr_bits = sum(m.bits for name, m in mems.items() if _VGPR.fullmatch(name))
    banks = sum(1 for name in mems if _VGPR.fullmatch(name))
    want = config.wave_slots * config.vgprs * 64 * 32
    check("VGPR file", f"{config.wave_slots * config.vgprs} x 64 x 32 bits "
          f"({config.vgprs} VGPRs x {config.wave_slots} waves)",
          f"{vgpr_bits // (64 * 32)} x 64 x 32 bits in {banks} bank(s)", vgpr_bits == want)
    check("instruction memory", f"{config.imem_bytes // 4} x 32 bits", _memory(mems.get("imem")))


# --- the pipelined unit -----------------------------------------------------------------------

#: The blocks every :class:`~gpgpu_hdl.cu.pipelined.PipelinedComputeUnit` instantiates in its
#: top module, whatever the plan: the decoder, the SGPR file, the scalar ALU, the vector unit
#: (fast lanes) and its VGPR file, the slow vector unit, the buffer unit, the wave launcher
#: and the grid walker.
PIPELINED_BLOCKS = ("decoder", "sgprs", "salu", "valu", "vgprs", "slow", "lsu", "launcher",
                    "grid")


def _numbered(info: ModuleInfo | None, prefix: str) -> list[str]:
    """The instances of ``info`` called ``prefix`` and a number, in numeric order."""
    if info is None:
        return []
    pattern = re.compile(re.escape(prefix) + r"(\d+)")
    return sorted((i for i in info.instances if pattern.fullmatch(i)),
                  key=lambda i: int(pattern.fullmatch(i)[1]))


def _bits_under(h: Hierarchy, prefix: str) -> tuple[int, int]:
    """Bits of the memories of the instances ``prefix0``, ``prefix1``... (``"vgprs.bank"``),
    and how many of those instances hold one."""
    pattern = re.compile(re.escape(prefix) + r"\d+\.[^.]+")
    mems = [m for path, m in h.memories().items() if pattern.fullmatch(path)]
    owners = {path.rsplit(".", 1)[0] for path in h.memories() if pattern.fullmatch(path)}
    return sum(m.bits for m in mems), len(owners)


def _audit_pipelined(h: Hierarchy, root: ModuleInfo, config: CuConfig, plan: BuildPlan,
                     check) -> None:
    """The checks of the :class:`~gpgpu_hdl.cu.pipelined.PipelinedComputeUnit`.

    The unit: every block of :data:`PIPELINED_BLOCKS` instantiated in the top module (the
    multi-cycle unit's Verilog fails here). What the plan changes in its hierarchy: the LDS
    unit (``lds`` with its queues) exactly when the ``lds`` part is kept, of ``lds_bytes``;
    the slow vector unit's integer lanes (``slow.int0``...) when the plan has VALU integer
    operations outside the fast lanes' (:func:`~gpgpu_hdl.cu.pipelined.slow_int_ops`) and its
    FP lanes (``slow.fp0``..., as many as the integer lanes) when it has
    FP32 ones, each with exactly the FP sub-units :func:`fp_units` names (a dropped ``fp_*``
    part has no submodule). What it does not: the fast lanes (``valu.lane0``...) are built
    whole, so a dropped ``multiplier``, ``shifter64`` or ``funnel`` is only decoded as
    illegal (it traps) there.
    Sizes: ``lanes`` fast lanes and VGPR-file lanes, the VGPR file's banks holding
    ``wave_slots * vgprs`` 64-lane registers, the three SGPR-file read copies each
    ``wave_slots * sgprs`` registers at least, and the two instruction-memory banks
    ``imem_bytes``.
    """
    blocks = [b for b in PIPELINED_BLOCKS if b in root.instances]
    multicycle = [i for i in root.instances if _LANE.fullmatch(i)]
    check("unit", "PipelinedComputeUnit",
          "PipelinedComputeUnit" if len(blocks) == len(PIPELINED_BLOCKS) else
          ("ComputeUnit (multi-cycle: " + _lanes(sorted(multicycle, key=_number)) + ")"
           if multicycle else "missing " + ", ".join(b for b in PIPELINED_BLOCKS
                                                     if b not in blocks)))

    # the lanes
    wanted = [f"lane{j}" for j in range(config.lanes)]
    for block, what in (("valu", "fast lanes"), ("vgprs", "VGPR file lanes")):
        found = _numbered(h.at(block), "lane")
        check(f"{what} ({block})", f"{len(wanted)} ({_lanes(wanted)})",
              f"{len(found)} ({_lanes(found)})", found == wanted)

    # the slow vector unit: integer lanes, FP lanes and their sub-units
    slow = h.at("slow")
    ints, fps = _numbered(slow, "int"), _numbered(slow, "fp")
    width = max(len(ints), len(fps))
    slow_ops = slow_int_ops(plan)
    want_ints = [f"int{j}" for j in range(width)] if slow_ops else []
    want_fps = [f"fp{j}" for j in range(width)] if plan.fp_ops else []
    check("slow unit, integer lanes",
          "1, 2 or 4" if slow_ops else
          "none (no VALU integer operation outside the fast lanes' FAST_OPS)",
          f"{len(ints)} ({_lanes(ints)})", ints == want_ints and width in (
              (1, 2, 4) if slow_ops or plan.fp_ops else (0,)))
    check("slow unit, FP lanes (part fp_*)",
          "one per integer lane" if plan.fp_ops and slow_ops else
          "1, 2 or 4" if plan.fp_ops else "none (no FP32 instruction)",
          f"{len(fps)} ({_lanes(fps)})", fps == want_fps and (width in (1, 2, 4)
                                                           or not plan.fp_ops))
    expected = frozenset(fp_units(plan))
    groups: dict[frozenset[str], list[str]] = {}
    for inst in fps:
        info = h.at(f"slow.{inst}")
        units = set(info.instances) if info else set()
        arith = h.at(f"slow.{inst}.arith")
        if arith is not None:
            units |= {f"arith.{sub}" for sub in arith.instances}
        groups.setdefault(frozenset(units), []).append(f"slow.{inst}")
    for units, insts in groups.items():
        check(f"sub-units of {_lanes(insts)}", _names(expected), _names(units))

    # the LDS
    lds_blocks = sorted(i for i in root.instances if i == "lds" or i.startswith("lds_"))
    bits, banks = _bits_under(h, "lds.bank")
    if plan.lds and config.lds_bytes:
        check("part lds (kept)", f"{config.lds_bytes // 4} x 32 bits",
              f"{bits // 32} x 32 bits in {banks} bank(s)" if "lds" in root.instances
              else "absent", bits == config.lds_bytes * 8)
    else:
        check("part lds (dropped)", "no lds unit", "no lds unit" if not lds_blocks
              else ", ".join(lds_blocks))

    # the register files and the instruction memory
    bits, banks = _bits_under(h, "vgprs.bank")
    regs = config.wave_slots * config.vgprs
    check("VGPR file", f"{regs} x 64 x 32 bits ({config.vgprs} VGPRs x {config.wave_slots} "
          "waves)", f"{bits // (64 * 32)} x 64 x 32 bits in {banks} bank(s)",
          bits == regs * 64 * 32)
    copies = _numbered(h.at("sgprs"), "copy")
    sizes = [sum(m.bits for path, m in h.memories().items()
                 if path.startswith(f"sgprs.{c}.")) for c in copies]
    need = config.wave_slots * config.sgprs * 32
    check("SGPR file", f"3 read copies of at least {need // 32} x 32 bits ({config.sgprs} "
          f"SGPRs x {config.wave_slots} waves)",
          f"{len(copies)} read copies of " + (", ".join(sorted({str(b // 32) for b in sizes}))
                                              or "0") + " x 32 bits",
          len(copies) == 3 and all(b >= need for b in sizes))
    mems = {m.name: m for m in root.memories}
    imem = [mems[name] for name in ("imem0", "imem1") if name in mems]
    words = sum(m.depth for m in imem if m.width == 32)
    check("instruction memory", f"{config.imem_bytes // 4} x 32 bits in 2 banks",
          f"{words} x 32 bits in {len(imem)} bank(s)",
          len(imem) == 2 and words == config.imem_bytes // 4)


def _number(name: str) -> int:
    return int(re.search(r"\d+$", name)[0])
