# amaranth: UnusedElaboratable=no
"""Area and Fmax of the FP32 sub-units of one lane: Yosys for ECP5 (optionally Xilinx 7-series),
nextpnr-ecp5 for Fmax.

    python bench/fp_area.py [--xilinx] [--pnr [--freq MHZ] [--seed N]] [--only NAME ...]
                            [--timeout SECONDS]

Each sub-unit of :mod:`gpgpu_hdl.cu.fpu` is built with every instruction it implements and
synthesized on its own (its ports are the design's outputs), then the whole lane FP unit
(:class:`~gpgpu_hdl.cu.fpu.unit.FpLaneUnit` with every FP32 instruction, modifiers included).
One line per design: LUT4, FF, DSP (MULT18X18D), carry cells, and the latency in cycles.

With ``--pnr`` each design is also placed and routed on an LFE5U-85F (CABGA381, speed grade 6
unless ``--speed``, out of context) inside :class:`Registered`, a wrapper that puts a register
on every input and output port, so the reported Fmax is that of the unit's own
register-to-register paths (plus one level of routing to the port registers), not of paths
through the ports. The area columns stay those of the bare unit.

Results are cached under ``build/synth`` like every synthesis of the project.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402

from gpgpu_hdl.cu.fpu.arith import FpAdd, FpFma, FpMul, FpMulAdd  # noqa: E402
from gpgpu_hdl.cu.fpu.cmp import FpCmp  # noqa: E402
from gpgpu_hdl.cu.fpu.cvt import FpCvt  # noqa: E402
from gpgpu_hdl.cu.fpu.trans import FpTrans  # noqa: E402
from gpgpu_hdl.cu.fpu.unit import FP_BUILT_OPS, FpLaneUnit  # noqa: E402
from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.synth import Registered, SynthError, place_and_route, synthesize  # noqa: E402

#: name -> (factory, what it is)
DESIGNS = {
    "add": (lambda: FpAdd(), "adder (add/sub/subrev)"),
    "mul": (lambda: FpMul(), "multiplier (mul, legacy, mullit, cube)"),
    "muladd": (lambda: FpMulAdd(), "adder + multiplier chained (all add/mul/mad)"),
    "fma": (lambda: FpFma(), "fused multiply-add (fma, div_fmas)"),
    "cmp": (lambda: FpCmp(), "compares, class, min/max/med3"),
    "cvt": (lambda: FpCvt(), "conversions, rounding, ldexp/frexp, packing"),
    "trans": (lambda: FpTrans(), "rcp/sqrt/rsq, exp/log/sin/cos, div_scale/fixup"),
    "trans_div": (lambda: FpTrans(ops=[o for o in FpTrans.OPS if "rcp" in o or "sqrt" in o
                                       or "rsq" in o or "div_" in o]),
                  "trans with rcp/sqrt/rsq and the division helpers only"),
    "trans_exp": (lambda: FpTrans(ops=["v_exp_f32"]), "trans with v_exp_f32 only"),
    "trans_log": (lambda: FpTrans(ops=["v_log_f32", "v_log_clamp_f32"]),
                  "trans with v_log_f32, v_log_clamp_f32 only"),
    "trans_trig": (lambda: FpTrans(ops=["v_sin_f32", "v_cos_f32"]),
                   "trans with v_sin_f32, v_cos_f32 only"),
    "lane": (lambda: FpLaneUnit(ops=FP_BUILT_OPS), "the whole lane FP unit with modifiers"),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xilinx", action="store_true", help="also synthesize for Xilinx 7-series")
    ap.add_argument("--pnr", action="store_true",
                    help="also place and route each design, registered, with nextpnr-ecp5")
    ap.add_argument("--freq", type=float, default=60.0,
                    help="clock constraint for nextpnr in MHz (default 60)")
    ap.add_argument("--seed", type=int, default=1, help="nextpnr placer seed (default 1)")
    ap.add_argument("--speed", type=int, default=6, choices=(6, 7, 8),
                    help="ECP5 speed grade (default 6, the slowest)")
    ap.add_argument("--only", nargs="+", choices=sorted(DESIGNS), help="designs to measure")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per tool run")
    args = ap.parse_args(argv)
    names = args.only or list(DESIGNS)
    targets = ["ecp5", "xilinx"] if args.xilinx else ["ecp5"]
    cache = ROOT / "build/synth"
    fmax_head = f" {'Fmax':>6}" if args.pnr else ""
    print(f"{'design':10} {'target':6} {'LUT':>7} {'FF':>6} {'DSP':>4} {'carry':>6} "
          f"{'lat':>4}{fmax_head} {'s':>6}  what", flush=True)
    for name in names:
        factory, what = DESIGNS[name]
        unit = factory()
        latency = unit.latency
        text = verilog.convert(unit, name=f"fp_{name}", emit_src=False,
                               strip_internal_attrs=True)
        for target in targets:
            start = time.monotonic()
            fmax = ""
            try:
                r = synthesize(text, f"fp_{name}", target, cache_dir=cache,
                               timeout=args.timeout)
                if args.pnr and target == "ecp5":
                    top = f"fp_{name}_reg"
                    wrapped = verilog.convert(Registered(factory()), name=top, emit_src=False,
                                              strip_internal_attrs=True)
                    area = synthesize(wrapped, top, "ecp5", cache_dir=cache,
                                      timeout=args.timeout)
                    timing = place_and_route(area, speed=args.speed, frequency_mhz=args.freq,
                                             seed=args.seed, cache_dir=cache,
                                             timeout=args.timeout)
                    fmax = f" {timing.fmax_mhz:>6.2f}"
                elif args.pnr:
                    fmax = f" {'-':>6}"
            except SynthError as exc:
                print(f"{name:10} {target:6} failed: {str(exc).splitlines()[0]}", flush=True)
                return 1
            except GpgpuError as exc:
                print(f"{name:10} {target:6} failed: {exc}", flush=True)
                return 1
            print(f"{name:10} {target:6} {r.luts:>7,} {r.ffs:>6,} "
                  f"{r.dsps:>4} {r.carries:>6,} {latency:>4}{fmax} "
                  f"{time.monotonic() - start:>6.0f}  {what}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
