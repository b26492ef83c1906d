"""SoC speedups on suite kernels: the prefetch buffer and a second compute unit, measured on the
simulated SoC (Verilator, cocotbext-axi host and DDR) against one unit without prefetch.

    python bench/soc_speedup.py [--kernel vecadd ...] [--latency 40] [--clocks 50 200]

Every configuration runs the same inputs; outputs are checked against the golden model before
a figure is printed. Cycles are compute-unit cycles from start to done (the host's transfers
of the prefetch window are not counted); beats/burst is the average AXI burst length each way
(code, kernel arguments and buffers together). The first run builds three Verilator models (a few
minutes); later runs reuse them from ``build/verilator``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _suite import load_suite  # noqa: E402

from gpgpu_hdl.runtime import Device  # noqa: E402

CONFIGS = (("1 CU", {"cus": 1, "prefetch": False}),
           ("1 CU + prefetch", {"cus": 1, "prefetch": True}),
           ("2 CUs", {"cus": 2, "prefetch": False}),
           ("2 CUs + prefetch", {"cus": 2, "prefetch": True}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", nargs="+", default=["vecadd", "matmul_int"],
                    help="suite cases to run (default: vecadd matmul_int)")
    ap.add_argument("--latency", type=int, default=40, help="DDR latency in bus cycles")
    ap.add_argument("--clocks", type=float, nargs=2, default=(50, 200),
                    metavar=("CU_MHZ", "BUS_MHZ"))
    args = ap.parse_args()
    suite = load_suite()
    cases = {c.name: c for c in suite.CASES}
    unknown = [k for k in args.kernel if k not in cases]
    if unknown:
        ap.error(f"unknown suite case(s): {', '.join(unknown)}")
    print(f"DDR latency {args.latency} bus cycles, clocks {args.clocks[0]:g}/"
          f"{args.clocks[1]:g} MHz (CU/bus)")
    print(f"{'kernel':14} {'configuration':18} {'cycles':>9} {'speedup':>8} {'sim s':>6}  "
          f"beats/burst (read, write)")
    for name in args.kernel:
        case = cases[name]
        inputs = case.inputs()
        want, _ = suite.run_device(case, Device("emu"), inputs)
        base = None
        for label, kw in CONFIGS:
            dev = Device("verilator", clocks=tuple(args.clocks), mem_latency=args.latency, **kw)
            start = time.perf_counter()
            got, run = suite.run_device(case, dev, inputs)
            seconds = time.perf_counter() - start
            for out, ref in want.items():
                if not np.array_equal(np.asarray(got[out]).view(np.uint8),
                                      np.asarray(ref).view(np.uint8)):
                    print(f"{name}: {label}: output {out} differs from the golden model")
                    return 1
            cycles = sum(r.cycles for r in run.results)
            base = base or cycles
            b = {k: sum(r.extra["bursts"][k] for r in run.results)
                 for k in run.results[0].extra["bursts"]}
            per = "  ".join(f"{b[f'{d}_beats'] / max(1, b[f'{d}_bursts']):5.2f}"
                            for d in ("read", "write"))
            print(f"{name:14} {label:18} {cycles:9d} {base / cycles:7.2f}x {seconds:6.1f}  "
                  f"{per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
