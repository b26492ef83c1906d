"""What the pipelined compute unit must be sized for, measured on the suite's kernels.

    python bench/pipeline_mix.py [--only NAME ...] [--max-instructions N] [--json PATH]
                                 [--waves 1 2 4 8 16] [--valu-latency 4 8]
                                 [--mem-latency 32 128] [--lanes 16] [--grid-factor 4]
                                 [--top 25]

Every case of the reference-check suite (``examples/suite``: the example kernels and
``tests/kernels``) runs on the emulator with a commit trace; :mod:`gpgpu_hdl.emu.workload`
counts each launch's dynamic instruction mix, the VALU's VGPR operand reads and their bank
conflicts (banks by register number mod 4, one or two read ports), the constant-bus use and
the integer VALU datapath groups (candidates for a narrower shared slow unit), and replays the
per-wave streams on its issue model for every resident-wave count N of ``--waves``:

* *steady*: the launch's workgroups repeated until the grid has ``--grid-factor`` x N waves
  (the same kernel on a larger grid), for every pair of ``--valu-latency`` and
  ``--mem-latency`` and three variants of the first pair: bank conflicts with 1 and with 2
  read ports, and a buffer unit that sends one lane a cycle;
* *as launched*: the suite's own grid (often a few waves), for the latency pairs.

The output is Markdown tables of figures (no pass/fail): per case, then pooled over all the
cases, then the notable kernels. ``--max-instructions`` bounds each launch (a case with a
longer launch is left out and named); ``--json`` also writes every figure to a file. See
docs/pipeline.md for what the figures mean and what the model leaves out.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _suite import load_suite  # noqa: E402

from gpgpu_hdl.emu.workload import (  # noqa: E402
    SLOW_CANDIDATES, IssueParams, IssueResult, LaunchTrace, Workload, characterise, simulate,
)
from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.runtime import Device  # noqa: E402

NOTABLE = ("vecadd", "matmul_int", "matmul_float", "matmul_float_tiled", "reduce_sum",
           "reduce_sum_l64")
MEMORY_GROUPS = ("vmem", "smem", "lds")
SCALAR_GROUPS = ("salu", "branch", "s_waitcnt", "s_barrier", "s_endpgm", "other")
VALU_GROUPS = ("valu-int", "valu-fp32", "valu-fp64")


@dataclass
class CaseFigures:
    """A case's counts summed over its launches, and its issue-model results by
    (mode, parameter label, resident waves); mode ``steady`` or ``launched``."""

    name: str
    kernel: str
    workload: Workload = field(default_factory=Workload)
    issue: dict[tuple[str, str, int], IssueResult] = field(default_factory=dict)
    seconds: float = 0.0

    def add_issue(self, key: tuple[str, str, int], r: IssueResult) -> None:
        self.issue[key] = self.issue.get(key, IssueResult()) + r


def is_main(label: str) -> bool:
    """A latency pair, not one of the variants."""
    return "," not in label


def param_sets(args: argparse.Namespace) -> dict[str, IssueParams]:
    """The issue-model configurations, by label."""
    sets = {f"L{lat} M{mem}": IssueParams(lanes=args.lanes, valu_latency=lat, mem_latency=mem)
            for lat in args.valu_latency for mem in args.mem_latency}
    base = next(iter(sets.values()))
    first = next(iter(sets))
    sets[f"{first}, 1 read port"] = dataclasses.replace(base, read_ports=1)
    sets[f"{first}, 2 read ports"] = dataclasses.replace(base, read_ports=2)
    sets[f"{first}, LSU 1 lane/cycle"] = dataclasses.replace(base, lsu_lanes=1)
    return sets


def run_case(case: Any, device: Device, params: dict[str, IssueParams],
             waves: Sequence[int], grid_factor: int) -> CaseFigures:
    suite = load_suite()
    figures = CaseFigures(case.name, case.kernel)
    start = time.process_time()
    _, run = suite.run_device(case, device, trace=True)
    for result in run.results:
        trace = LaunchTrace.from_records(result.trace.records)
        result.trace = None                              # the records are no longer needed
        figures.workload = figures.workload + characterise(trace)
        for label, p in params.items():
            for n in waves:
                figures.add_issue(("steady", label, n),
                                  simulate(trace, p, n, min_waves=grid_factor * n))
                if is_main(label):
                    figures.add_issue(("launched", label, n), simulate(trace, p, n))
    figures.seconds = time.process_time() - start
    return figures


# --- formatting -----------------------------------------------------------------------------

def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (first column left-aligned, the others right-aligned)."""
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def waves_for(results: dict[int, IssueResult], share: float = 0.9) -> int:
    """The fewest resident waves reaching ``share`` of the busy fraction of the most (counts
    whose launches ran with more slots, see :class:`IssueResult`, do not qualify)."""
    top = results[max(results)].busy
    return min((n for n, r in results.items() if r.busy >= share * top and not r.raised),
               default=max(results))


def busy_row(issue: dict[tuple[str, str, int], IssueResult], mode: str, label: str,
             waves: Sequence[int], *, needed: bool = True) -> list[str]:
    """Busy % per wave count (``*``: some launch had workgroups wider than that and ran with
    a workgroup's waves as slots), then the waves for 90 %."""
    results = {n: issue[mode, label, n] for n in waves}
    return ([pct(r.busy) + ("*" if r.raised else "") for r in results.values()]
            + ([str(waves_for(results))] if needed else []))


def params_table(params: dict[str, IssueParams]) -> str:
    rows = [[label, p.lanes, p.valu_latency, p.fp_latency, p.salu_latency, p.branch_latency,
             p.mem_latency, p.lds_latency, p.lsu_lanes or p.lanes, p.read_ports or "-"]
            for label, p in params.items()]
    return table(["label", "lanes", "L int", "L fp", "SALU", "taken branch", "M", "LDS",
                  "LSU lanes", "read ports"], rows)


def case_mix_table(cases: Sequence[CaseFigures]) -> str:
    rows = []
    for c in cases:
        w = c.workload
        m, o, d = w.mix, w.operands, w.datapath
        valu_lanes = d.valu_lanes / d.valu if d.valu else 0.0
        rows.append([c.name, w.launches, w.waves, f"{m.instructions:,}",
                     pct(m.share(*VALU_GROUPS)), pct(m.share("valu-int")),
                     pct(m.share(*SCALAR_GROUPS)), pct(m.share(*MEMORY_GROUPS)),
                     f"{valu_lanes:.1f}", pct(o.share_sources(3)), pct(o.conflict_share(1)),
                     f"{o.extra_per_instruction(1):.3f}", f"{o.extra_per_instruction(2):.3f}",
                     pct(o.scalar_share("constant bus")), pct(d.share(*SLOW_CANDIDATES))])
    return table(["case", "launches", "waves", "wave-instr", "VALU %", "int %", "scalar %",
                  "mem %", "lanes/VALU", "3-src %", "confl. 1p %", "extra 1p", "extra 2p",
                  "const bus %", "slow %"], rows)


def issue_bound(w: Workload, passes: int) -> float:
    """The VALU busy fraction one issue a cycle allows: VALU share x passes, at most 1."""
    return min(1.0, w.mix.share(*VALU_GROUPS) * passes)


def case_issue_table(cases: Sequence[CaseFigures], label: str, waves: Sequence[int],
                     passes: int) -> str:
    rows = [[c.name, max(1, c.workload.waves // max(1, c.workload.launches)),
             pct(issue_bound(c.workload, passes))]
            + busy_row(c.issue, "launched", label, waves, needed=False)
            + busy_row(c.issue, "steady", label, waves) for c in cases]
    return table(["case", "waves/launch", "issue bound"]
                 + [f"launched {n} w" for n in waves]
                 + [f"steady {n} w" for n in waves] + ["steady: waves for 90 %"], rows)


def mix_tables(w: Workload, top: int) -> str:
    m = w.mix
    groups = [[g, f"{n:,}", pct(m.share(g)), pct(m.share(g, lanes=True))]
              for g, n in m.groups.most_common()]
    cats = [[k, f"{n:,}", pct(n / m.instructions), pct(m.categories_lanes[k] / m.lanes)]
            for k, n in m.categories.most_common(top)]
    names = [[k, f"{n:,}", pct(n / m.instructions), f"{m.mnemonics_lanes[k] / n:.1f}"]
             for k, n in m.mnemonics.most_common(top)]
    head = ["wave-instr", "% of instr", "% of active lanes"]
    return "\n\n".join([
        "Mix by group:\n\n" + table(["group", *head], groups),
        f"Mix by category (top {top}):\n\n" + table(["category", *head], cats),
        f"Top {top} mnemonics:\n\n" + table(["mnemonic", "wave-instr", "% of instr",
                                                "mean active lanes"], names)])


def operand_tables(w: Workload) -> str:
    o = w.operands
    n = o.instructions
    srcs = [[k, f"{o.sources[k]:,}", pct(o.sources[k] / n)] for k in sorted(o.sources)]
    reads = [[k, f"{o.reads[k]:,}", pct(o.reads[k] / n)] for k in sorted(o.reads)]
    extra = sorted({k for c in o.extra.values() for k in c})
    banks = [[k] + [f"{o.extra[p][k]:,} ({pct(o.extra[p][k] / n)})" for p in (1, 2)]
             for k in extra]
    banks.append(["mean per VALU instr"] + [f"{o.extra_per_instruction(p):.4f}"
                                            for p in (1, 2)])
    scalar = [[k, f"{v:,}", pct(v / n)] for k, v in sorted(o.scalar.items())]
    return "\n\n".join([
        f"VALU instructions: {n:,}. VGPR source operands per instruction:\n\n"
        + table(["VGPR sources", "instr", "%"], srcs),
        "Distinct VGPRs read per instruction (a 64-bit operand is two):\n\n"
        + table(["VGPRs read", "instr", "%"], reads),
        "Extra read cycles per pass, banks = register mod 4:\n\n"
        + table(["extra cycles", "1 read port", "2 read ports"], banks),
        "Scalar sources (constant bus):\n\n" + table(["reads", "instr", "% of VALU"], scalar)])


def datapath_table(w: Workload) -> str:
    d = w.datapath
    rows = []
    for g, n in d.groups.most_common():
        names = ", ".join(f"{k} {v:,}" for k, v in d.mnemonics[g].most_common(4))
        rows.append([g + (" (slow cand.)" if g in SLOW_CANDIDATES else ""), f"{n:,}",
                     pct(d.share(g)), pct(d.share(g, lanes=True)),
                     pct(d.groups_inline[g] / n), names])
    rare = tuple(g for g in SLOW_CANDIDATES if g != "shift64")
    sets = {"PIPELINE.md's slow set": SLOW_CANDIDATES,
            "the same without shift64": rare,
            "+ mul32": (*SLOW_CANDIDATES, "mul32"),
            "+ mul32, bfe/align, bfi/bfm": (*SLOW_CANDIDATES, "mul32", "bfe/align", "bfi/bfm")}
    for name, groups in sets.items():
        rows.append([f"**{name}**", f"{sum(d.groups[g] for g in groups):,}",
                     pct(d.share(*groups)), pct(d.share(*groups, lanes=True)), "", ""])
    return (f"Integer VALU datapath groups against all {d.valu:,} VALU wave-instructions "
            "(integer and FP):\n\n"
            + table(["group", "wave-instr", "% of VALU", "% of VALU lanes",
                     "% with inline const", "mnemonics"], rows))


def issue_table(issue: dict[tuple[str, str, int], IssueResult], mode: str,
                labels: Sequence[str], waves: Sequence[int]) -> str:
    rows = [[label] + busy_row(issue, mode, label, waves) for label in labels]
    first = labels[0]
    ipc = [[f"IPC, {first}"] + [f"{issue[mode, first, n].ipc:.2f}" for n in waves] + [""]]
    stall = [[f"conflict stall % of cycles, {label}"]
             + [pct(issue[mode, label, n].valu_stall / issue[mode, label, n].cycles)
                for n in waves] + [""] for label in labels if "read port" in label]
    return table(["VALU busy %"] + [f"{n} w" for n in waves] + ["waves for 90 %"],
                 rows + ipc + stall)


def pooled(cases: Sequence[CaseFigures]) -> CaseFigures:
    total = CaseFigures("all", "")
    for c in cases:
        total.workload = total.workload + c.workload
        for key, r in c.issue.items():
            total.add_issue(key, r)
        total.seconds += c.seconds
    return total


def to_json(c: CaseFigures) -> dict[str, Any]:
    w = c.workload
    issue: dict[str, Any] = {}
    for (mode, label, n), r in c.issue.items():
        issue.setdefault(mode, {}).setdefault(label, {})[n] = {**dataclasses.asdict(r),
                                                               "busy": r.busy}
    return {"kernel": c.kernel, "seconds": c.seconds, "workload": w.as_dict(),
            "three_source_share": w.operands.share_sources(3),
            "conflict_share": {p: w.operands.conflict_share(p) for p in (1, 2)},
            "extra_per_valu": {p: w.operands.extra_per_instruction(p) for p in (1, 2)},
            "slow_share": w.datapath.share(*SLOW_CANDIDATES), "issue": issue}


# --- main -----------------------------------------------------------------------------------

def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", default=[],
                    help="suite cases or kernel names (default: every case)")
    ap.add_argument("--max-instructions", type=int, default=None, metavar="N",
                    help="leave out a case with a launch of more than N wave-instructions")
    ap.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    ap.add_argument("--waves", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--valu-latency", type=int, nargs="+", default=[4, 8], metavar="L")
    ap.add_argument("--mem-latency", type=int, nargs="+", default=[32, 128], metavar="M")
    ap.add_argument("--lanes", type=int, default=16)
    ap.add_argument("--grid-factor", type=int, default=4, metavar="F",
                    help="steady mode: repeat a launch's workgroups to F x N waves")
    ap.add_argument("--top", type=int, default=25, help="rows of the mnemonic tables")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    suite = load_suite()
    params = param_sets(args)
    waves = sorted(set(args.waves))
    device = Device("emu", max_instructions=args.max_instructions)
    cases: list[CaseFigures] = []
    left_out: list[str] = []
    start, cpu = time.perf_counter(), time.process_time()
    for case in suite.select_cases(args.only):
        try:
            cases.append(run_case(case, device, params, waves, args.grid_factor))
        except GpgpuError as exc:
            left_out.append(f"{case.name} ({str(exc).splitlines()[0][-120:]})")
            print(f"left out {case.name}: {exc}", file=sys.stderr)
    if not cases:
        print("no case ran", file=sys.stderr)
        return 1
    labels = list(params)
    first = labels[0]
    total = pooled(cases)
    print(f"# Pipeline workload: {len(cases)} case(s), {total.workload.launches} launches, "
          f"{total.workload.mix.instructions:,} wave-instructions\n")
    if left_out:
        print("Left out: " + "; ".join(left_out) + "\n")
    print("Issue model parameters (cycles; `*` in the busy tables: some launch's workgroups "
          "had more waves than the slots and ran with one workgroup's waves as slots):\n\n"
          + params_table(params) + "\n")
    main_labels = [label for label in labels if is_main(label)]
    print("## Per case\n\n" + case_mix_table(cases) + "\n")
    print(f"VALU busy % by resident waves ({first}; steady: grid of {args.grid_factor} x N "
          "waves):\n\n" + case_issue_table(cases, first, waves, params[first].passes) + "\n")
    print("## All cases pooled\n\n" + mix_tables(total.workload, args.top) + "\n")
    print(operand_tables(total.workload) + "\n")
    print(datapath_table(total.workload) + "\n")
    print(f"Issue model, steady (grids of {args.grid_factor} x N waves), pooled over every "
          "launch (VALU work cycles / cycles); one issue a cycle bounds it at "
          f"{pct(issue_bound(total.workload, params[first].passes))} %:\n\n"
          + issue_table(total.issue, "steady", labels, waves) + "\n")
    print("Issue model, as launched, pooled over every launch:\n\n"
          + issue_table(total.issue, "launched", main_labels, waves) + "\n")
    for mode in ("steady", "launched"):
        medians = [[label] + [pct(statistics.median(c.issue[mode, label, n].busy
                                                    for c in cases)) for n in waves]
                   for label in main_labels]
        print(f"Issue model, {mode}, median over cases:\n\n"
              + table(["VALU busy %"] + [f"{n} w" for n in waves], medians) + "\n")
    print("## Notable kernels\n")
    for c in cases:
        if c.name in NOTABLE:
            w = c.workload
            print(f"### {c.name}\n\n" + mix_tables(w, 12) + "\n\n" + datapath_table(w)
                  + "\n\nSteady:\n\n" + issue_table(c.issue, "steady", labels, waves)
                  + "\n\nAs launched:\n\n"
                  + issue_table(c.issue, "launched", main_labels, waves) + "\n")
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    print(f"{len(cases)} case(s) in {wall:.1f} s wall, {used:.1f} s CPU")
    if args.json:
        data = {"params": {k: dataclasses.asdict(v) for k, v in params.items()},
                "waves": waves, "grid_factor": args.grid_factor, "left_out": left_out,
                "cases": {c.name: to_json(c) for c in cases}, "all": to_json(total)}
        args.json.write_text(json.dumps(data, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
