"""Measure the Verilator/cocotb infrastructure on the demo design (2**18-word memory).

Run: ``.venv/bin/python cocotb_tests/sim_demo/bench.py [--fresh]`` (``--fresh`` rebuilds in a
temporary directory to time the builds). Figures are documented in
:mod:`gpgpu_hdl.sim.verilator`.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from cocotb_tests.sim_demo.design import TOPLEVEL, demo_verilog  # noqa: E402

from gpgpu_hdl.sim.verilator import build  # noqa: E402

DEPTH = 1 << 18
VARIANTS = {
    "cocotb Clock": {"clock": None},
    "internal clock": {"clock": "clk"},
    "internal clock -O2": {"clock": "clk", "extra_args": ("-CFLAGS", "-O2")},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fresh", action="store_true", help="build in a temporary directory")
    parser.add_argument("--count", type=int, default=1 << 20, help="words the walker sums")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp()) if args.fresh else HERE.parent.parent / "build" / "verilator"
    source = (HERE / "design.py").read_text()
    verilog = None

    def make_verilog():
        nonlocal verilog
        if verilog is None:
            t = time.monotonic()
            verilog = demo_verilog(depth=DEPTH)
            print(f"Amaranth -> Verilog ({len(verilog) / 1e6:.1f} MB): "
                  f"{time.monotonic() - t:.1f} s")
        return verilog

    for name, options in VARIANTS.items():
        sim = build(make_verilog, TOPLEVEL, build_root=root, memories=["gmem.mem"],
                    key=f"bench depth={DEPTH}\n{source}", **options)
        print(f"\n== {name}: build {sim.seconds:.1f} s (cached: {sim.cached})")
        params = {"internal_clock": options["clock"] is not None, "hooks": True,
                  "vpi_words": DEPTH, "cocotb_words": 1 << 14, "count": args.count}
        t = time.monotonic()
        r = sim.run("bench_tb", params, timeout=900, python_path=[HERE])
        print(f"run: {time.monotonic() - t:.1f} s")
        for key in ("hooks_write", "hooks_read", "vpi_write_first", "vpi_write_again",
                    "vpi_read_again", "cocotb_value_write_first", "cocotb_value_write_again"):
            print(f"  {key:28s} {r[key] / 1e6:6.2f} M words/s")
        print(f"  done only                    {r['done_only'] / 1e6:6.2f} M cycles/s "
              f"({r['cycles']:.0f} cycles)")
        print(f"  every RisingEdge(clk)        {r['every_edge'] / 1e6:6.2f} M cycles/s")
        done_s = r["cycles"] / r["done_only"]
        per_event = (r["trace_seconds"] - done_s) / r["trace_events"]
        print(f"  with trace monitor           {r['trace'] / 1e6:6.2f} M cycles/s, "
              f"{per_event * 1e6:.1f} us per event ({r['trace_events']} events)")


if __name__ == "__main__":
    main()
