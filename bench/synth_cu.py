"""Area and Fmax of a compute unit: Yosys for ECP5 and Xilinx 7-series, nextpnr for ECP5.

    python bench/synth_cu.py [--config lanes=4 wave_slots=4 ...] [--target ecp5|xilinx|both]
                             [--no-pnr] [--no-fp] [--no-share] [--freq MHZ] [--seed N]
                             [--placer heap|static|sa] [--timeout SECONDS] [--paths N]
                             [--by-module [DEPTH]] [--by-signal N]

Elaborates the unit of ``CuConfig(**overrides)`` (``gpgpu_hdl.cu.unit.compute_unit``; the
default configuration without ``--config``; ``pipeline=true`` the pipelined unit, with the
ECP5 multiplier and block RAM primitives when ``--target ecp5``) to Verilog, synthesizes it with
:func:`gpgpu_hdl.synth.synthesize`, places and routes the ECP5 netlist on the
configuration's device (``CuConfig.device``, package CABGA381, speed grade 6 by default) and
prints one table. Every tool run is cached under ``--cache-dir``
(``build/synth``): a second run with the same Verilog only converts the design again (about
10 s for the default unit). The default unit takes Yosys about 8 minutes for ECP5 and 9 for
Xilinx, and nextpnr 7 to 11 minutes, on a busy 2-core machine; run it in the background. See
``docs/synth.md``. ``--paths N`` prints the N worst register-to-register paths that
:mod:`gpgpu_hdl.synth_paths` estimates from Yosys' netlist in seconds (with ``--no-pnr``, to
find the paths to cut without waiting an hour for nextpnr's one critical path).
``--by-module`` synthesizes the unit again with its hierarchy kept
(:func:`gpgpu_hdl.synth.area_by_module`) and prints each part's own area, to see where the
area goes (the parts' sum is not the flattened figure: docs/synth.md). ``--by-signal N``
splits the flattened figure itself, by the names of the signals its LUT4s feed.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402

from gpgpu_hdl.config import DEVICES, CuConfig  # noqa: E402
from gpgpu_hdl.cu.fpu.ops import FP_OPS  # noqa: E402
from gpgpu_hdl.cu.unit import compute_unit  # noqa: E402
from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.synth import (  # noqa: E402
    SYNTH_COMMANDS,
    PnrReport,
    SynthError,
    area_by_module,
    place_and_route,
    synthesize,
)
from gpgpu_hdl.synth_paths import PathAnalysis, luts_by_signal  # noqa: E402

TOP = "compute_unit"


def parse_overrides(items: list[str]) -> dict[str, object]:
    """``["lanes=4", "shifter=barrel"]`` -> ``{"lanes": 4, "shifter": "barrel"}``."""
    overrides: dict[str, object] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"--config takes NAME=VALUE items, not {item!r}")
        if value.lower() in ("true", "false"):
            overrides[name] = value.lower() == "true"
            continue
        try:
            overrides[name] = int(value, 0)
        except ValueError:
            overrides[name] = value
    return overrides


class Progress:
    """One status line on a terminal (rewritten in place), else a line per new stage."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.tty = stream.isatty()
        self.last = None

    def __call__(self, stage: str, seconds: float) -> None:
        if self.tty:
            self.stream.write(f"\r\x1b[K  {stage} ({seconds:.0f} s)")
            if stage.endswith(": done"):
                self.stream.write("\n")
        elif stage != self.last:
            self.stream.write(f"  [{seconds:7.1f} s] {stage}\n")
        self.stream.flush()
        self.last = stage


def _pct(used: int, available: int) -> str:
    return f"{used}/{available} ({100 * used / available:.0f}%)" if available else str(used)


def _memory_summary(memories: dict[str, str]) -> str:
    named = {n: how.strip("$_") for n, how in memories.items() if not n.startswith("$")}
    groups: dict[str, list[str]] = {}
    for name, how in named.items():
        groups.setdefault(how, []).append(name)
    roms = sum(1 for n in memories if n.startswith("$"))
    parts = [f"{how}: {', '.join(_compress(names))}" for how, names in sorted(groups.items())]
    if roms:
        parts.append(f"{roms} constant tables as logic")
    return "; ".join(parts)


def _compress(names: list[str]) -> list[str]:
    """``vgpr0..vgpr15`` instead of sixteen names."""
    numbered: dict[str, list[int]] = {}
    out = []
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m:
            numbered.setdefault(m[1], []).append(int(m[2]))
        else:
            out.append(name)
    for stem, nums in numbered.items():
        nums.sort()
        out.append(f"{stem}{nums[0]}..{stem}{nums[-1]}" if len(nums) > 1 else f"{stem}{nums[0]}")
    return sorted(out)


def _print_paths(area, count: int) -> None:
    """The ``count`` worst estimated paths, and the nets of the worst."""
    analysis = PathAnalysis(area.netlist, TOP)
    paths = analysis.worst(count)
    print("\n  worst estimated paths (ns, LUT4 levels, carry cells; not nextpnr's figures):")
    for p in paths:
        print(f"  {p.arrival_ns:6.2f} {p.levels:3d} {p.carries:3d}  {p.start} -> {p.end}")
    over = analysis.over()
    print("  endpoints estimated over " + ", ".join(f"{t:g} ns: {n}" for t, n in over.items()))
    if paths:
        print("  the worst, net by net:")
        for name, at in paths[0].nets:
            print(f"  {at:6.2f}  {name}")


def _print_signals(area, count: int) -> None:
    """The flattened netlist's LUT4s by the signal they feed: the ``count`` largest groups,
    and the totals of the top-level parts."""
    groups = luts_by_signal(area.netlist, TOP)
    parts = luts_by_signal(area.netlist, TOP, depth=1)
    print(f"\n  LUT4 by the signal they feed (flattened; {area.luts} in all), the {count} "
          f"largest:")
    for name, n in list(groups.items())[:count]:
        print(f"  {n:7d}  {name}")
    print("  by top-level part: " + ", ".join(f"{name} {n}" for name, n in parts.items()
                                             if n * 100 >= area.luts))


def module_groups(modules, top: str, depth: int) -> list[tuple[str, int, dict[str, int]]]:
    """The modules of :func:`~gpgpu_hdl.synth.area_by_module` summed by their path's first
    ``depth`` names below ``top``, numbered siblings together (``valu.lane*``): ``(label,
    instances, area)``, the largest in LUT4 first; the top's own cells are ``(top)``."""
    groups: dict[str, tuple[set[str], dict[str, int]]] = {}
    for mod in modules:
        path = mod.name.removeprefix(top).lstrip(".").split(".") if mod.name != top else []
        kept = path[:depth]
        label = ".".join(re.sub(r"\d+$", "*", part) for part in kept) or "(top)"
        names, area = groups.setdefault(label, (set(), {}))
        names.add(".".join(kept))
        for key, n in mod.area.items():
            area[key] = area.get(key, 0) + n * mod.instances
    rows = [(label, len(names), area) for label, (names, area) in groups.items()]
    return sorted(rows, key=lambda row: -row[2]["luts"])


def _print_modules(text: str, args, progress) -> None:
    modules = area_by_module(text, TOP, cache_dir=args.cache_dir, progress=progress,
                             timeout=args.timeout)
    rows = module_groups(modules, TOP, args.by_module)
    total = sum(area["luts"] for _, _, area in rows) or 1
    print(f"\n  area by module (hierarchy kept, `abc -lut 4`; {len(modules)} modules; their "
          f"sum is not the flattened figure):")
    print(f"  {'module':32} {'LUT4':>7} {'%':>5} {'FF':>7} {'CCU2C':>6} {'DPR16X4':>7} "
          f"{'DSP':>4} {'EBR':>4}")
    for label, count, a in rows:
        name = f"{label} ({count})" if count > 1 else label
        print(f"  {name:32} {a['luts']:>7} {100 * a['luts'] / total:>5.1f} {a['ffs']:>7} "
              f"{a['carries']:>6} {a['distributed_rams']:>7} {a['dsps']:>4} "
              f"{a['block_rams']:>4}")
    sums = {k: sum(a[k] for _, _, a in rows) for k in ("luts", "ffs", "carries", "dsps")}
    print(f"  {'sum':32} {sums['luts']:>7} {100.0:>5.1f} {sums['ffs']:>7} "
          f"{sums['carries']:>6}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", nargs="*", default=[], metavar="NAME=VALUE",
                        help="CuConfig overrides, e.g. lanes=4 wave_slots=4")
    parser.add_argument("--target", choices=("ecp5", "xilinx", "both"), default="both")
    parser.add_argument("--no-pnr", action="store_true", help="skip nextpnr-ecp5")
    parser.add_argument("--no-fp", action="store_true",
                        help="leave the FP32 instructions out of the profile (no FP unit)")
    parser.add_argument("--freq", type=float, default=50.0,
                        help="clock constraint for nextpnr in MHz (default 50)")
    parser.add_argument("--seed", type=int, default=1, help="nextpnr placer seed (default 1)")
    parser.add_argument("--router", choices=("router1", "router2"), default="router2")
    parser.add_argument("--placer", choices=("heap", "static", "sa"), default=None,
                        help="nextpnr's placer (default: nextpnr's, heap); static spreads the "
                             "design over the chip, which the 16-lane vector slice needs to "
                             "route")
    parser.add_argument("--package", default="CABGA381")
    parser.add_argument("--speed", type=int, default=6, choices=(6, 7, 8))
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed for each tool run (default: no limit)")
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "build" / "synth")
    parser.add_argument("--paths", type=int, default=0, metavar="N",
                        help="ECP5: print the N worst register-to-register paths estimated "
                             "from the netlist (gpgpu_hdl.synth_paths), in seconds, before "
                             "nextpnr; with --no-pnr, instead of it")
    parser.add_argument("--by-signal", type=int, default=0, metavar="N",
                        help="ECP5: print the N largest groups of the flattened netlist's "
                             "LUT4s by the signal they feed (gpgpu_hdl.synth_paths."
                             "luts_by_signal), and the top-level parts' totals")
    parser.add_argument("--no-share", action="store_true",
                        help="ECP5: keep Yosys' share pass from merging multipliers and shifters "
                             "that are never busy together (more DSPs, higher Fmax)")
    parser.add_argument("--by-module", type=int, nargs="?", const=2, default=None,
                        metavar="DEPTH",
                        help="ECP5: also synthesize with the hierarchy kept and print each "
                             "part's own area, grouped DEPTH levels below the top (default 2), "
                             "numbered siblings together (lane0, lane1, ... as lane*)")
    args = parser.parse_args(argv)
    if args.by_module is not None and args.by_module < 1:
        parser.error("--by-module takes a depth of 1 or more")

    try:
        config = CuConfig(**parse_overrides(args.config))
        if args.no_fp:
            config = dataclasses.replace(config, profile=config.profile - frozenset(FP_OPS))
    except (GpgpuError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    targets = ("ecp5", "xilinx") if args.target == "both" else (args.target,)
    shown = ", ".join(f"{k}={v}" for k, v in vars(config).items() if k != "profile")
    profile = "full" if config.is_full else f"{len(config.profile)} instructions"
    print(f"compute unit: {shown}, profile={profile}")

    start = time.monotonic()
    # the pipelined unit instantiates the ECP5 primitives (multipliers, block RAMs with their
    # output registers) when the Verilog is for ECP5 only
    unit = compute_unit(config, style="ecp5" if targets == ("ecp5",) else "generic")
    text = verilog.convert(unit, name=TOP, emit_src=False, strip_internal_attrs=True)
    print(f"Verilog: {len(text) / 1e6:.1f} MB in {time.monotonic() - start:.1f} s")
    progress = Progress()
    res = config.resources()
    device = DEVICES[config.device]
    rows = []          # (target, area, timing or None)
    try:
        for target in targets:
            share = not (args.no_share and target == "ecp5")
            area = synthesize(text, TOP, target, cache_dir=args.cache_dir,
                              progress=progress, timeout=args.timeout, share=share)
            cached = " (cached)" if area.cached else ""
            flow = SYNTH_COMMANDS[target].format(top=TOP) + ("" if share else ", without share")
            print(f"\n{target}: yosys {area.tool}, `{flow}`, "
                  f"{area.seconds:.0f} s{cached}")
            if target == "ecp5":
                print(f"  {'LUT4':>7} {'FF':>7} {'EBR':>5} {'DSP':>5} {'CCU2C':>6} "
                      f"{'DPR16X4':>7} {'PFUMX+L6':>8} {'cells':>7}")
                print(f"  {area.luts:>7} {area.ffs:>7} {area.block_rams:>5} {area.dsps:>5} "
                      f"{area.carries:>6} {area.distributed_rams:>7} {area.wide_muxes:>8} "
                      f"{area.total_cells:>7}")
                print(f"  EBR estimate of the configuration: {res.ebr} ({res.breakdown()}); "
                      f"{device.name} has {device.ebr} EBR, {device.dsp} DSP")
            else:
                print(f"  {'LUT':>7} {'FF':>7} {'BRAM18':>6} {'DSP48':>5} {'CARRY4':>6} "
                      f"{'LUTRAM':>6} {'MUXF7/8':>7} {'cells':>7}")
                print(f"  {area.luts:>7} {area.ffs:>7} {area.block_ram_18k:>6} "
                      f"{area.dsps:>5} {area.carries:>6} {area.distributed_rams:>6} "
                      f"{area.wide_muxes:>7} {area.total_cells:>7}")
            print(f"  memories: {_memory_summary(area.memories)}")
            print(f"  cells: {', '.join(f'{c} {n}' for c, n in area.cells.items())}")
            if target == "ecp5" and args.paths:
                _print_paths(area, args.paths)
            if target == "ecp5" and args.by_signal:
                _print_signals(area, args.by_signal)
            if target == "ecp5" and args.by_module is not None:
                _print_modules(text, args, progress)
            timing = None
            if target == "ecp5" and not args.no_pnr:
                try:
                    timing = place_and_route(area, device=config.device, package=args.package,
                                             speed=args.speed, frequency_mhz=args.freq,
                                             seed=args.seed, router=args.router,
                                             placer=args.placer, cache_dir=args.cache_dir,
                                             progress=progress, timeout=args.timeout)
                except SynthError as exc:      # e.g. does not fit: still show the other target
                    lines = str(exc).splitlines()
                    print(f"  nextpnr-ecp5: {lines[0]}\n  {lines[-1]}")
                    timing = lines[0]
            if isinstance(timing, PnrReport):
                cached = " (cached)" if timing.cached else ""
                print(f"  nextpnr-ecp5 {timing.tool}: {timing.device}-{timing.speed} "
                      f"{timing.package}, seed {timing.seed}, {timing.router}, out of context, "
                      f"{timing.seconds:.0f} s{cached}")
                print(f"  Fmax {timing.fmax_mhz:.2f} MHz (constraint {timing.target_mhz:g} "
                      f"MHz)")
                print("  utilization: " + ", ".join(
                    f"{bel} {_pct(u, a)}" for bel, (u, a) in timing.utilization.items()))
            rows.append((target, area, timing))
    except GpgpuError as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:           # the tool was killed and its half-done run removed
        print("\ninterrupted", file=sys.stderr)
        return 130
    print(f"\n{'target':8} {'LUT':>7} {'FF':>7} {'BRAM18':>6} {'DSP':>5} {'carry':>6} "
          f"{'yosys s':>8} {'pnr s':>7} {'Fmax MHz':>9}")
    for target, area, timing in rows:
        if isinstance(timing, PnrReport):
            pnr = f"{timing.seconds:>7.0f} {timing.fmax_mhz:>9.2f}"
        else:
            pnr = f"{'-':>7} {'-' if timing is None else 'failed':>9}"
        print(f"{target:8} {area.luts:>7} {area.ffs:>7} {area.block_ram_18k:>6} {area.dsps:>5} "
              f"{area.carries:>6} {area.seconds:>8.0f} {pnr}")
    failed = [timing for _, _, timing in rows if isinstance(timing, str)]
    if failed:
        print(f"place and route: {failed[0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
