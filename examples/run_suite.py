#!/usr/bin/env python3
"""Run the reference-check suite (examples/suite/) on a backend and print a table.

Usage::

    python examples/run_suite.py [--backend emu] [--only NAME ...] [--no-pocl] [--list]
                                 [--check-bounds]

Every case runs on the device through ``gpgpu_hdl.runtime`` and is compared with the same
OpenCL source run on PoCL (``--no-pocl``: with the case's numpy model instead). ``--backend
pocl`` runs the cases on PoCL itself and checks them against the numpy models, which needs no
emulator. ``--only`` takes case names or kernel names. ``--check-bounds`` runs the emulator
with bounds checking: a kernel that reads or writes outside its buffers fails its case. The
exit status is 1 when a case fails or cannot run, 0 when all pass.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import suite  # noqa: E402
from gpgpu_hdl.errors import GpgpuError  # noqa: E402

PROG = "run_suite.py"
BACKENDS = ("emu", "verilator", "pocl")


def _sizes(case: suite.Case) -> str:
    g = "x".join(map(str, case.global_size))
    lsz = "x".join(map(str, case.local_size))
    return f"{g} / {lsz}"


def _verdict(case: suite.Case, ref: dict, got: dict) -> tuple[bool, str]:
    ok, detail = suite.compare(case, ref, got)
    if not ok:
        return False, "FAIL " + detail.split("; ")[0]
    worst = suite.max_ulp(case, ref, got)
    return True, "PASS" + (f" (max {worst} ulp)" if worst is not None else "")


def _make_device(backend: str, show_traceback: bool, check_bounds: bool = False,
                 config: list[str] | None = None):
    if backend == "pocl":
        if check_bounds:
            raise GpgpuError("--check-bounds checks the emulator's accesses (--backend emu)")
        return None
    options = {"check_bounds": True} if check_bounds else {}
    if config:
        if backend != "verilator":
            raise GpgpuError("--config configures the compute unit (--backend verilator)")
        from trimmer.cli import parse_config
        options["config"] = parse_config(config)
    try:
        from gpgpu_hdl.runtime import Device

        return Device(backend, **options)
    except GpgpuError:
        raise
    except Exception as exc:            # the runtime is missing or broken: one line, no trace
        if show_traceback:
            traceback.print_exc()
        raise GpgpuError(f"cannot create the {backend!r} device: "
                         f"{type(exc).__name__}: {exc}") from None


def _run_case(case: suite.Case, device, backend: str, use_pocl: bool
              ) -> tuple[bool, str, suite.DeviceRun | None]:
    """(ok, result text, what the device run measured: None on PoCL)."""
    inputs = case.inputs()
    if backend == "pocl":
        ref = suite.run_model(case, inputs)
        return (*_verdict(case, ref, suite.run_pocl(case, inputs)), None)
    ref = suite.run_pocl(case, inputs) if use_pocl else suite.run_model(case, inputs)
    got, run = suite.run_device(case, device, inputs)
    return (*_verdict(case, ref, got), run)


def _rtl_figures(run: suite.DeviceRun | None) -> list[str]:
    """Cycles, instructions per cycle, VALU utilization (busy cycles / cycles) and simulated
    cycles per wall second of a run on the compute unit."""
    results = run.results if run else []
    cycles = sum(int(getattr(r, "cycles", 0) or 0) for r in results)
    if not cycles:
        return ["-"] * 4
    busy = sum(int(r.extra.get("valu_busy", 0)) for r in results)
    wall = sum(float(getattr(r, "seconds", 0) or 0) for r in results)
    return [f"{cycles:,}", f"{run.instructions / cycles:.3f}", f"{busy / cycles:.1%}",
            f"{cycles / wall:,.0f}" if wall else "-"]


#: the counters of an idle cycle's cause (``CountersLayout``), as ``--stalls`` shows them
STALLS = (("stall_unit", "unit full"), ("stall_memory", "memory"), ("stall_busy", "in flight"),
          ("stall_barrier", "barrier"), ("stall_fetch", "fetch"),
          ("bank_conflict", "bank confl."))


def _stall_figures(run: suite.DeviceRun | None) -> list[str]:
    """Idle cycles and each of their causes, and VGPR bank-conflict cycles, as shares of the
    run's cycles (the pipelined unit counts them; the multi-cycle unit gives 0)."""
    results = run.results if run else []
    cycles = sum(int(getattr(r, "cycles", 0) or 0) for r in results)
    if not cycles:
        return ["-"] * (1 + len(STALLS))
    return [f"{sum(int(r.extra.get(name, 0)) for r in results) / cycles:.1%}"
            for name in ("idle", *(n for n, _ in STALLS))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Run the example kernels and tests/kernels on a backend and "
                               "compare every output with PoCL.")
    parser.add_argument("--backend", choices=BACKENDS, default="emu",
                        help="device to run on (default emu; pocl = PoCL vs the numpy models)")
    parser.add_argument("--only", nargs="+", metavar="NAME", default=[],
                        help="case or kernel names (default: all cases)")
    parser.add_argument("--no-pocl", action="store_true",
                        help="compare with the numpy models instead of PoCL")
    parser.add_argument("--check-bounds", action="store_true",
                        help="emulator: stop a kernel that reads or writes outside its buffers "
                             "(Device('emu', check_bounds=True))")
    parser.add_argument("--config", nargs="+", metavar="NAME=VALUE", default=[],
                        help="the compute unit of --backend verilator, as trim's --config "
                             "(e.g. lanes=16 pipeline=true)")
    parser.add_argument("--stalls", action="store_true",
                        help="--backend verilator: also the idle cycles and their causes, as "
                             "shares of the cycles (the pipelined unit's counters)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--traceback", action="store_true",
                        help="print the traceback of a case that crashes")
    args = parser.parse_args(argv)

    try:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text
    except ImportError:                         # pragma: no cover - rich is a dependency
        print(f"{PROG}: error: the Python package rich is required", file=sys.stderr)
        return 1
    console = Console()
    if not console.is_terminal:                 # a log file: do not fold at 80 columns
        console = Console(width=max(console.width, 160))
    err = Console(stderr=True)

    try:
        cases = suite.select_cases(args.only)
        if args.list:
            table = Table("case", "kernel", "global / local", "launches", "notes")
            for c in cases:
                table.add_row(c.name, c.kernel, _sizes(c), str(len(c.launches)), Text(c.note))
            console.print(table)
            return 0
        device = _make_device(args.backend, args.traceback, args.check_bounds, args.config)
    except GpgpuError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130

    reference = "numpy model" if args.no_pocl or args.backend == "pocl" else "PoCL"
    table = Table(title=f"{len(cases)} case(s) on {args.backend}, reference: {reference}")
    for col, justify in (("case", "left"), ("kernel", "left"), ("global / local", "left"),
                         ("launches", "right"), ("wave instrs", "right"),
                         ("lane-instr/s", "right"), ("result", "left")):
        table.add_column(col, justify=justify, overflow="fold")
    rtl = args.backend == "verilator"
    if rtl:     # the compute unit's counters: cycles, IPC, VALU utilization, sim speed
        for col in ("cycles", "IPC", "VALU busy", "cycles/s"):
            table.add_column(col, justify="right")
        if args.stalls:
            for col in ("idle", *(title for _, title in STALLS)):
                table.add_column(col, justify="right")
    failed = 0
    start = time.perf_counter()
    try:
        for n, case in enumerate(cases, 1):
            with err.status(f"[{n}/{len(cases)}] {case.name}"):
                try:
                    ok, text, run = _run_case(case, device, args.backend, not args.no_pocl)
                except GpgpuError as exc:
                    ok, text, run = False, f"ERROR {exc}", None
                except Exception as exc:          # an emulator/runtime bug: report, go on
                    if args.traceback:
                        traceback.print_exc()
                    ok, text, run = False, f"CRASH {type(exc).__name__}: {exc}", None
            failed += not ok
            instrs = f"{run.instructions:,}" if run else "-"
            rate = f"{run.lane_instructions / run.seconds:,.0f}" \
                if run and run.seconds > 0 else "-"
            row = [case.name, case.kernel, _sizes(case), str(len(case.launches)),
                   instrs, rate, Text(text, style="green" if ok else "red")]
            if rtl:
                row += _rtl_figures(run)
                if args.stalls:
                    row += _stall_figures(run)
            table.add_row(*row)
    except KeyboardInterrupt:
        console.print(table)
        return 130
    console.print(table)
    elapsed = time.perf_counter() - start
    console.print(f"{len(cases) - failed} passed, {failed} failed, {len(cases)} case(s) in "
                  f"{elapsed:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
