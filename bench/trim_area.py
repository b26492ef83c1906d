"""Area saved by trimming, per example kernel: the full unit against the unit trimmed for it.

    python bench/trim_area.py [--config lanes=4 ...] [--only NAME ...] [--examples] [--xilinx]
                              [--timeout SECONDS] [--cache-dir build/synth]

For every kernel of the suite that the RTL implements (one row per kernel; ``--examples``: only
those of ``examples/kernels``), the unit ``trim`` builds
for the kernel and the untrimmed unit of the same configuration go through Yosys
(``synth_ecp5``, and ``synth_xilinx`` with ``--xilinx``); the table gives LUT4, FF, EBR and DSP
of each and the reduction, then the averages over the kernels (SCRATCH's figure to beat:
36 % LUTs, 41 % FFs). Every run is cached under ``--cache-dir``, so an interrupted table resumes
where it stopped. The default unit (1 lane, FP32 included) takes Yosys about 8 minutes, each
trimmed unit one or two; the reductions depend on the configuration (``--config lanes=2``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _suite import load_suite  # noqa: E402
from synth_cu import Progress, parse_overrides  # noqa: E402

from gpgpu_hdl.config import CuConfig  # noqa: E402
from gpgpu_hdl.cu.decode import SUPPORTED_MNEMONICS  # noqa: E402
from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.synth import synthesize  # noqa: E402
from trimmer.emit import emit_verilog  # noqa: E402
from trimmer.policy import trim  # noqa: E402
from trimmer.profile import Profile  # noqa: E402

TOP = "compute_unit"
_FIELDS = (("LUT", "luts"), ("FF", "ffs"), ("EBR", "block_rams"), ("DSP", "dsps"))


def kernels(examples_only: bool = False) -> list[tuple[str, Path]]:
    """(kernel, code object) of every kernel the RTL implements, suite order (with
    ``examples_only``, those of ``examples/kernels`` only)."""
    suite = load_suite()
    out, seen = [], set()
    for case in suite.CASES:
        path = suite.code_object(case)
        if examples_only and path.parent != suite.EXAMPLE_KERNELS:
            continue
        for k in Profile.from_files([path]).kernels:
            if k.name not in seen and set(k.mnemonics) <= SUPPORTED_MNEMONICS:
                seen.add(k.name)
                out.append((k.name, path))
    return out


def area(config: CuConfig, target: str, args, label: str):
    progress = Progress()
    start = time.monotonic()
    text = emit_verilog(config, TOP)
    report = synthesize(text, TOP, target, cache_dir=args.cache_dir,
                        progress=lambda stage, s: progress(f"{label}: {stage}", s),
                        timeout=args.timeout)
    print(f"  {label} ({target}): {'cached' if report.cached else 'synthesized'}, "
          f"{time.monotonic() - start:.0f} s", file=sys.stderr)
    return report


def _pct(full: int, trimmed: int) -> float:
    return 100.0 * (full - trimmed) / full if full else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--only", nargs="*", default=[], metavar="KERNEL")
    parser.add_argument("--examples", action="store_true",
                        help="only the kernels of examples/kernels (the example suite)")
    parser.add_argument("--xilinx", action="store_true", help="also synth_xilinx")
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "build" / "synth")
    args = parser.parse_args(argv)
    try:
        base = CuConfig(**parse_overrides(args.config))
        rows = [(k, p) for k, p in kernels(args.examples) if not args.only or k in args.only]
        if not rows:
            raise GpgpuError(f"no kernel matches {args.only}")
        targets = ["ecp5", "xilinx"] if args.xilinx else ["ecp5"]
        print(f"base unit: {base.key().split(';profile=')[0]}")
        for target in targets:
            full = area(base, target, args, "full unit")
            header = ["kernel"] + [f"{n} full/trim" for n, _ in _FIELDS] + ["LUT -%", "FF -%"]
            print(f"\n{target}: full unit " + ", ".join(
                f"{n} {getattr(full, f)}" for n, f in _FIELDS))
            print(" | ".join(header))
            saved = []
            for name, path in rows:
                result = trim(Profile(tuple(k for k in Profile.from_files([path]).kernels
                                            if k.name == name)), base)
                r = area(result.config, target, args, name)
                cells = [f"{getattr(full, f)}/{getattr(r, f)}" for _, f in _FIELDS]
                lut, ff = _pct(full.luts, r.luts), _pct(full.ffs, r.ffs)
                saved.append((lut, ff))
                print(" | ".join([name, *cells, f"{lut:.1f}", f"{ff:.1f}"]), flush=True)
            n = len(saved)
            print(f"average over {n} kernels: LUT -{sum(s[0] for s in saved) / n:.1f} %, "
                  f"FF -{sum(s[1] for s in saved) / n:.1f} % "
                  f"(max LUT -{max(s[0] for s in saved):.1f} %, "
                  f"FF -{max(s[1] for s in saved):.1f} %)")
    except GpgpuError as exc:
        print(f"trim_area: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
