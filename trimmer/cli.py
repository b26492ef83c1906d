"""``trim``: build a compute unit with only what the given kernels need, and report why.

    trim K1.bin [K2.bin ...] -o cu.v [--report r.json] [--kernel NAME ...] [--keep PART ...]
         [--drop PART ...] [--full] [--config NAME=VALUE ...] [--lds-bytes N]
         [--allow-unsupported] [--area/--no-area] [--xilinx]
    trim --full [--drop PART ...] [--config NAME=VALUE ...] -o cu.v      (no kernels)

Profiles the kernels (:mod:`trimmer.profile`), trims the configuration (:mod:`trimmer.policy`),
emits the Verilog (:mod:`trimmer.emit`), audits its module hierarchy against the build plan
(:mod:`trimmer.audit`) and, with ``--area``, measures the base and the trimmed unit with Yosys
(:func:`gpgpu_hdl.synth.synthesize`). It prints a readable report and ``--report`` saves the
same as JSON. See ``docs/trim.md``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import tempfile
import typing
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from gpgpu_hdl import __version__
from gpgpu_hdl.cliutil import StepStatus, console, run, write_json
from gpgpu_hdl.config import ConfigError, CuConfig
from gpgpu_hdl.cu.decode import decode_entries
from gpgpu_hdl.cu.plan import PARTS
from gpgpu_hdl.isa.table import OpClass, Unit
from gpgpu_hdl.toolchain import atomic_write

from .audit import Audit, Hierarchy, audit
from .emit import STYLE, TOP, emit_verilog, unit_name, unit_title
from .policy import Full, Trim, TrimError, full_unit, part_members, trim
from .profile import Profile

__all__ = ["TrimError", "parse_config", "select_kernels", "main"]

#: What the area table shows, per target: (AreaReport field, column title).
AREA_COLUMNS = {
    "ecp5": (("luts", "LUT4"), ("ffs", "FF"), ("block_rams", "EBR"), ("dsps", "DSP"),
             ("carries", "CCU2C")),
    "xilinx": (("luts", "LUT"), ("ffs", "FF"), ("block_ram_18k", "BRAM18"), ("dsps", "DSP48"),
               ("carries", "CARRY4")),
}
_TARGET_NAMES = {"ecp5": "ECP5", "xilinx": "Xilinx 7"}


# --- parsing the request ----------------------------------------------------------------------

def parse_config(items: typing.Iterable[str]) -> CuConfig:
    """The base configuration: ``CuConfig()`` with ``NAME=VALUE`` overrides (``lanes=4``;
    an item may hold several, separated by commas or spaces), each value parsed to its field's
    type."""
    hints = typing.get_type_hints(CuConfig)
    names = [f.name for f in dataclasses.fields(CuConfig) if f.name != "profile"]
    values: dict[str, object] = {}
    for item in (i for group in items for i in re.split(r"[,\s]+", group.strip())):
        name, sep, text = (part.strip() for part in item.partition("="))
        if not sep or not name or not text:
            raise TrimError(f"--config takes NAME=VALUE, not {item!r}")
        if name == "profile":
            raise TrimError("--config profile=...: the profile comes from the kernels "
                            "(use --keep/--drop, or --full for the untrimmed unit)")
        if name not in names:
            raise TrimError(f"--config {item}: the configuration has no field {name!r}; "
                            f"fields are {', '.join(names)}")
        if hints[name] is bool:
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise TrimError(f"--config {item}: {name} takes true or false, not {text!r}")
            values[name] = text.lower() in ("true", "1", "yes")
        elif hints[name] is int:
            try:
                values[name] = int(text, 0)
            except ValueError:
                raise TrimError(f"--config {item}: {name} takes an integer, "
                                f"not {text!r}") from None
        else:
            values[name] = text
    try:
        return CuConfig(**values)
    except ConfigError as exc:
        hint = (" (give --config lanes=4, 8 or 16)"
                if values.get("pipeline") and "lanes" in str(exc) else "")
        raise TrimError(f"--config: {exc}{hint}") from None


def select_kernels(profile: Profile, names: typing.Iterable[str]) -> Profile:
    """The profile of the kernels called ``names`` only (all kernels when empty)."""
    names = tuple(names)
    if not names:
        return profile
    available = [k.name for k in profile.kernels]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise TrimError(f"no kernel {unknown[0]!r} in the given files; kernels are "
                        f"{', '.join(available) or 'none'}")
    return Profile(tuple(k for k in profile.kernels if k.name in names))


def _parse_lds(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        raise TrimError(f"--lds-bytes takes a number of bytes, not {text!r}") from None


def _check_output(path: str | None, option: str) -> None:
    """Fail now, before the slow work, if ``path`` cannot be written."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise TrimError(f"{option} {path}: is a directory")
    parent = target.parent
    if not parent.is_dir():
        raise TrimError(f"{option} {path}: directory {parent} does not exist")
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise TrimError(f"{option} {path}: cannot write in {parent} "
                        f"({exc.strerror or exc})") from None


# --- printing -----------------------------------------------------------------------------

def _table(title: str, *columns: str, right: typing.Iterable[str] = ()) -> Table:
    table = Table(title=title, box=None, pad_edge=False, title_justify="left")
    right = set(right)
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left")
    return table


def print_profile(profile: Profile, out: Console) -> None:
    hist = profile.histogram()
    classes = [c for c in OpClass if any(c in cnt for cnt in hist.values())]
    table = _table("Static instructions per unit and class", "unit", *map(str, classes),
                   "total", right=[*map(str, classes), "total"])
    for unit, cnt in hist.items():
        table.add_row(str(unit), *(str(cnt.get(c, "")) for c in classes),
                      str(sum(cnt.values())))
    column_totals = [sum(cnt.get(c, 0) for cnt in hist.values()) for c in classes]
    table.add_row("total", *map(str, column_totals), str(sum(column_totals)))
    out.print(table)

    used = profile.subunits()
    units = _table("Units", "unit", "used", "sub-units used")
    for unit in Unit:
        units.add_row(str(unit), "yes" if unit in used else "no",
                      ", ".join(sorted(used.get(unit, ()))))
    out.print(units)

    numbers = ("instructions", "VGPRs", "SGPRs", "LDS bytes", "scratch bytes")
    kernels = _table("Kernels", "file", "kernel", *numbers, right=numbers)
    for k in profile.kernels:
        kernels.add_row(k.file, k.name, str(len(k.instructions)), str(k.vgprs), str(k.sgprs),
                        str(k.lds_bytes), str(k.scratch_bytes))
    kernels.add_row("union", "", str(sum(len(k.instructions) for k in profile.kernels)),
                    str(profile.max_vgprs), str(profile.max_sgprs), str(profile.max_lds_bytes),
                    str(profile.max_scratch_bytes))
    out.print(kernels)
    out.print("Features: " + ", ".join(f"{name} {n}"
                                       for name, n in sorted(profile.features().items())))
    out.print(f"{len(profile.mnemonics)} distinct instructions: "
              + ", ".join(f"{m}({n})" for m, n in profile.mnemonics.most_common()))


def _resources(config: CuConfig) -> dict:
    return config.resources().to_dict()


def _decoder(t: Trim) -> dict:
    return {"instructions": {"base": len(t.base_plan.profile), "trimmed": len(t.plan.profile)},
            "entries": {"base": len(decode_entries(t.base_plan.profile)),
                        "trimmed": len(decode_entries(t.plan.profile))}}


def _unit(config: CuConfig) -> dict:
    """What the JSON report says of the unit a configuration builds."""
    return {"class": unit_name(config), "pipeline": config.pipeline,
            "lanes": config.lanes, "style": STYLE if config.pipeline else None}


def print_trim(t: Trim, out: Console) -> None:
    out.print(f"Unit: {unit_title(t.config)}")
    parts = _table("Parts", "part", "decision", "why")
    for d in t.decisions:
        parts.add_row(d.part, "kept" if d.kept else "dropped", d.reason)
    out.print(parts)

    sizing = _table("Sizing", "", "base", "trimmed", "why", right=("base", "trimmed"))
    for name, s in t.sizing.items():
        sizing.add_row(name, str(s["base"]), str(s["trimmed"]), s["reason"])
    base_res, res = t.base.resources(), t.config.resources()
    sizing.add_row("block RAM (EBR)", str(base_res.ebr), str(res.ebr),
                   f"estimate for {unit_name(t.config)}: {res.breakdown()}")
    out.print(sizing)

    if t.config.pipeline:
        out.print(_PIPELINED_NOTE)
    dec = _decoder(t)
    out.print(f"Decoder: {dec['instructions']['trimmed']} of {dec['instructions']['base']} "
              f"instructions, {dec['entries']['trimmed']} of {dec['entries']['base']} entries "
              "(VOP3 forms counted apart); everything else traps as illegal")
    if t.unsupported:
        out.print("[bold]Not implemented, would trap[/]: " + "; ".join(
            f"{m} ({', '.join(k)})" for m, k in t.unsupported.items()))


#: What trimming changes in the pipelined unit, and what not.
_PIPELINED_NOTE = (
    "Pipelined unit: the LDS unit and the slow unit's FP and integer lanes follow the parts; "
    "the fast lanes are built whole, so a dropped multiplier, shifter or funnel only decodes "
    "as illegal (traps)")


def _tree(h: Hierarchy) -> str:
    """``decoder, salu(mul(mul33)), valu0..valu7(mul(mul33), shift64)``."""
    def sub(name: str) -> str:
        info = h.modules.get(name)
        if info is None or not info.instances:
            return ""
        return "(" + ", ".join(inst + sub(module) for inst, module in
                               info.instances.items()) + ")"

    items: list[list] = []                    # [first, last, subtree]
    top = sorted(h.modules[h.top].instances.items(), key=lambda im: _natural(im[0]))
    for inst, module in top:                  # valu2 before valu10
        text = sub(module)
        if items and items[-1][2] == text and _follows(items[-1][1], inst):
            items[-1][1] = inst
        else:
            items.append([inst, inst, text])
    return ", ".join((a if a == b else f"{a}..{b}") + text for a, b, text in items)


def _memories(h: Hierarchy) -> str:
    """``imem 4096x32, vgpr0..vgpr7 1024x32 each``."""
    items: list[list] = []                    # [first, last, size]
    for path, m in sorted(h.memories().items(), key=lambda pm: _natural(pm[0])):
        size = f"{m.depth}x{m.width}"
        if items and items[-1][2] == size and _follows(items[-1][1], path):
            items[-1][1] = path
        else:
            items.append([path, path, size])
    return ", ".join(f"{a} {size}" if a == b else f"{a}..{b} {size} each"
                     for a, b, size in items)


def _natural(name: str) -> tuple:
    m = re.fullmatch(r"(.*?)(\d+)", name)
    return (m[1], int(m[2])) if m else (name, -1)


def _follows(prev: str, name: str) -> bool:
    """Whether ``name`` is ``prev`` with its number plus one (``vgpr3`` after ``vgpr2``)."""
    a, b = re.fullmatch(r"(.*?)(\d+)", prev), re.fullmatch(r"(.*?)(\d+)", name)
    return bool(a and b and a[1] == b[1] and int(a[2]) + 1 == int(b[2]))


def print_audit(result: Audit, what: str, out: Console) -> None:
    table = _table(f"Audit of {what} (pyverilog)", "check", "expected", "found", "")
    for c in result.checks:
        table.add_row(c.subject, c.expected, c.found, "ok" if c.ok else "[bold]MISMATCH[/]")
    out.print(table)
    out.print(f"Hierarchy: {result.hierarchy.top}: {_tree(result.hierarchy)}")
    out.print("Memories: " + _memories(result.hierarchy))


def _saved(base: int, trimmed: int) -> float | None:
    return round(100 * (base - trimmed) / base, 1) if base else None


def print_area(area: dict, out: Console) -> None:
    for target, runs in area.items():
        cols = AREA_COLUMNS[target]
        titles = [title for _, title in cols]
        table = _table(f"Area, {_TARGET_NAMES[target]} (Yosys {runs['tool']})", "unit",
                       *titles, "Yosys s", right=[*titles, "Yosys s"])
        for unit in ("base", "trimmed"):
            r = runs[unit]
            table.add_row(unit, *(str(r[field]) for field, _ in cols),
                          f"{r['seconds']:.0f}" + (" (cached)" if r["cached"] else ""))
        table.add_row("saved", *("-" if runs["saved_percent"][field] is None
                                 else f"{runs['saved_percent'][field]:.1f}%"
                                 for field, _ in cols), "")
        out.print(table)


# --- the slow steps, with a status line (gpgpu_hdl.cliutil.StepStatus) ---------------------------


def measure_area(texts: dict[str, str], targets: typing.Iterable[str],
                 status: StepStatus) -> dict:
    """Yosys area of the ``"base"`` and ``"trimmed"`` Verilog, per target, with the
    percentage saved."""
    from gpgpu_hdl.synth import synthesize

    area = {}
    for target in targets:
        reports = {}
        for unit in ("base", "trimmed"):
            label = f"Yosys {_TARGET_NAMES[target]}, {unit} unit"
            status(f"{label}: starting")
            reports[unit] = synthesize(texts[unit], TOP, target,
                                       progress=status.progress(label))
        runs: dict = {"tool": reports["trimmed"].tool}
        for unit, r in reports.items():
            runs[unit] = {"luts": r.luts, "ffs": r.ffs, "block_rams": r.block_rams,
                          "block_ram_18k": r.block_ram_18k, "dsps": r.dsps,
                          "carries": r.carries, "distributed_rams": r.distributed_rams,
                          "total_cells": r.total_cells, "seconds": r.seconds,
                          "cached": r.cached, "key": r.key}
        runs["saved_percent"] = {
            field: _saved(runs["base"][field], runs["trimmed"][field])
            for field in ("luts", "ffs", "block_rams", "block_ram_18k", "dsps", "carries",
                          "total_cells")}
        area[target] = runs
    return area


# --- the command ------------------------------------------------------------------------------

@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("kernels", nargs=-1, type=click.Path(path_type=str))
@click.option("-o", "--output", metavar="CU.V",
              help="Write the Verilog of the trimmed compute unit (audited first).")
@click.option("--report", metavar="R.JSON", help="Write the whole report as JSON.")
@click.option("--kernel", "kernel_names", multiple=True, metavar="NAME",
              help="Trim for this kernel only (repeatable; default: every kernel).")
@click.option("--keep", multiple=True, metavar="PART",
              help=f"Keep this part although no kernel needs it (repeatable). "
                   f"Parts: {', '.join(PARTS)}.")
@click.option("--drop", multiple=True, metavar="PART",
              help="Drop this part although kernels need it; their instructions then trap "
                   "(repeatable; the report says so). With --full: drop it from the full "
                   "unit, e.g. --drop fp_add --drop fp_mul --drop fp_fma --drop fp_cmp "
                   "--drop fp_cvt --drop fp_trans for an integer-only unit.")
@click.option("--full", is_flag=True,
              help="Write the untrimmed unit of the base configuration to -o instead (less "
                   "the --drop parts). Needs no kernels: trim --full --config lanes=16 "
                   "--drop fp_add ... -o int16.v.")
@click.option("--config", "overrides", multiple=True, metavar="NAME=VALUE",
              help="Base configuration (what is trimmed; fields of CuConfig), e.g. "
                   "--config lanes=4 --config wave_slots=2, or --config lanes=4,wave_slots=2. "
                   "--config pipeline=true writes the pipelined unit (lanes=4, 8 or 16).")
@click.option("--lds-bytes", metavar="N",
              help="LDS size of the trimmed unit (default: the kernels' static LDS, rounded "
                   "up to a power of two).")
@click.option("--allow-unsupported", is_flag=True,
              help="Trim even when kernels use instructions the unit does not implement "
                   "(they trap).")
@click.option("--area/--no-area", default=False,
              help="Measure base and trimmed area with Yosys for ECP5. Off by default: the "
                   "default base unit (1 lane, FP32) takes Yosys about 8-10 minutes (results "
                   "are cached in build/synth under the working directory).")
@click.option("--xilinx", is_flag=True,
              help="Also measure area for Xilinx 7-series (implies --area; slower).")
@click.version_option(__version__, prog_name="trim")
def trim_command(kernels: tuple[str, ...], output: str | None, report: str | None,
                 kernel_names: tuple[str, ...], keep: tuple[str, ...], drop: tuple[str, ...],
                 full: bool, overrides: tuple[str, ...], lds_bytes: str | None,
                 allow_unsupported: bool, area: bool, xilinx: bool) -> None:
    """Trim a compute unit to what KERNELS (Southern Islands code objects) need, or write the
    full unit (--full, with or without KERNELS)."""
    for part in (*keep, *drop):
        part_members(part)                        # an unknown part is an error, now
    clash = sorted(set(keep) & set(drop))
    if clash:
        raise TrimError(f"part(s) {', '.join(clash)} given to both --keep and --drop")
    if full and keep:
        raise TrimError("--keep with --full: the full unit keeps every part already")
    if not kernels:
        if not full:
            raise TrimError("no kernels given: name the code objects to trim for, or give "
                            "--full for the untrimmed unit")
        for option, given in (("--kernel", kernel_names), ("--lds-bytes", lds_bytes),
                              ("--allow-unsupported", allow_unsupported)):
            if given:
                raise TrimError(f"{option} is about kernels, and none were given (the full "
                                "unit's LDS is --config lds_bytes=N)")
    base = parse_config(overrides)
    lds = _parse_lds(lds_bytes)
    if output and report and Path(output).resolve() == Path(report).resolve():
        raise TrimError("-o and --report name the same file")
    _check_output(output, "-o")
    _check_output(report, "--report")
    area = area or xilinx
    if not kernels:
        _full_command(full_unit(base, drop=drop), output, report, area, xilinx)
        return

    profile = select_kernels(Profile.from_files(kernels), kernel_names)
    out = console()
    print_profile(profile, out)                   # also when the trimming is refused
    t = trim(profile, base, keep=keep, drop=drop, lds_bytes=lds,
             allow_unsupported=allow_unsupported)
    print_trim(t, out)

    data: dict = {"version": __version__, "files": list(kernels),
                  "kernels": [f"{k.file}:{k.name}" for k in profile.kernels],
                  "keep": list(keep), "drop": list(drop), "full": full,
                  "unit": _unit(t.config), "profile": profile.to_dict(), "trim": t.to_dict(),
                  "resources": {"base": _resources(t.base), "trimmed": _resources(t.config)},
                  "decoder": _decoder(t), "output": None, "audit": None, "area": None}
    # the unit written by -o (or, for --area alone, the trimmed one) is audited and printed
    unit = "base" if full else "trimmed"
    units = [u for u in ("trimmed", "base") if u == unit or area] if output or area else []
    whole = full_unit(t.base, drop=drop) if full else None     # --full writes it as "base"
    if whole is not None:
        data["full_unit"] = whole.to_dict()
        if whole.drop:
            out.print(f"--full: the full unit less {', '.join(whole.drop)} (dropped on "
                      f"request): {len(whole.plan.profile)} of {len(whole.base_plan.profile)} "
                      "instructions, the rest trap as illegal")
    configs = {"trimmed": (t.config, t.plan),
               "base": (whole.config, whole.plan) if whole else (t.base, t.base_plan)}
    texts: dict[str, str] = {}
    audits: dict[str, Audit] = {}
    with StepStatus() as status:
        for u in units:
            status(f"elaborating the {u} unit ({unit_name(configs[u][0])})")
            texts[u] = emit_verilog(configs[u][0])
            status(f"auditing the {u} unit's Verilog")
            audits[u] = audit(texts[u], *configs[u])
    for u in units:
        if u == unit:
            print_audit(audits[u], f"the {u} unit ({unit_name(configs[u][0])})", out)
        else:
            out.print(f"Audit of the {u} unit: passed ({len(audits[u].checks)} checks)")
    if units:
        data["audit"] = {u: a.to_dict() for u, a in audits.items()}
        if output:
            data["output"] = _write_unit(output, texts[unit], audits[unit], unit,
                                         configs[unit][0], out)
    else:
        out.print("No Verilog written (give -o cu.v); no area measured (--area).")
    _finish(data, texts if area else None, xilinx, report, out)


def _write_unit(output: str, text: str, checked: Audit, unit: str, config: CuConfig,
                out: Console) -> dict:
    """Write the audited Verilog of ``unit`` (built from ``config``); what the report says of
    it."""
    atomic_write(output, text)
    size, modules = len(text.encode()), len(checked.hierarchy.modules)
    out.print(f"Wrote {output}: the {unit} unit, {unit_title(config)}, {size} bytes, "
              f"{modules} modules, audit passed ({len(checked.checks)} checks)")
    return {"path": output, "unit": unit, "class": unit_name(config), "bytes": size,
            "sha256": hashlib.sha256(text.encode()).hexdigest(), "modules": modules}


def _finish(data: dict, texts: dict[str, str] | None, xilinx: bool, report: str | None,
            out: Console) -> None:
    """Measure the area of the ``"base"`` and ``"trimmed"`` texts (when given) and write the
    JSON report (when asked)."""
    if texts is not None:
        targets = ("ecp5", "xilinx") if xilinx else ("ecp5",)
        with StepStatus() as status:
            data["area"] = measure_area(texts, targets, status)
        print_area(data["area"], out)
    if report:
        write_json(report, data)
        out.print(f"Wrote {report}")


def _full_command(f: Full, output: str | None, report: str | None, area: bool,
                  xilinx: bool) -> None:
    """``trim --full`` without kernels: the base unit less the ``--drop`` parts."""
    out = console()
    out.print(f"Unit: {unit_title(f.config)}")
    parts = _table("Parts", "part", "decision", "why")
    for d in f.decisions:
        parts.add_row(d.part, "kept" if d.kept else "dropped", d.reason)
    out.print(parts)
    res, base_res = f.config.resources(), f.base.resources()
    entries = len(decode_entries(f.plan.profile))
    if f.drop:
        base_entries = len(decode_entries(f.base_plan.profile))
        out.print(f"Full unit less {', '.join(f.drop)} (dropped on request): "
                  f"{len(f.plan.profile)} of {len(f.base_plan.profile)} instructions, "
                  f"{entries} of {base_entries} decoder entries (VOP3 forms counted apart); "
                  f"the {len(f.dropped)} dropped instructions trap as illegal")
    else:
        out.print(f"Full unit: {len(f.plan.profile)} instructions ({entries} decoder entries)")
    than_base = f" (base unit {base_res.ebr})" if f.drop else ""
    out.print(f"Block RAM of the {unit_name(f.config)} about {res.ebr} EBR{than_base}: "
              f"{res.breakdown()}")
    if f.config.pipeline:
        out.print(_PIPELINED_NOTE)
    data: dict = {"version": __version__, "files": [], "kernels": [], "keep": [],
                  "drop": list(f.drop), "full": True, "unit": _unit(f.config),
                  "profile": None, "trim": None,
                  "full_unit": f.to_dict(),
                  "parts": {d.part: {"kept": d.kept, "reason": d.reason} for d in f.decisions},
                  "resources": {"base": _resources(f.base), "full": _resources(f.config)},
                  "output": None, "audit": None, "area": None}
    text = None
    if output or area:
        with StepStatus() as status:
            status(f"elaborating the full unit ({unit_name(f.config)})")
            text = emit_verilog(f.config)
            status("auditing the full unit's Verilog")
            checked = audit(text, f.config, f.plan)
        print_audit(checked, f"the full unit ({unit_name(f.config)})", out)
        data["audit"] = {"full": checked.to_dict()}
    if output:
        data["output"] = _write_unit(output, text, checked, "full", f.config, out)
    elif not area:
        out.print("No Verilog written (give -o cu.v); no area measured (--area).")
    # with --area: the base unit against the one written, what --drop saves
    texts = {"base": emit_verilog(f.base) if f.config != f.base else text,
             "trimmed": text} if area else None
    _finish(data, texts, xilinx, report, out)


def main(args: list[str] | None = None) -> None:
    run(trim_command, "trim", args)
