#!/usr/bin/env python3
# amaranth: UnusedElaboratable=no
"""Area and Fmax of the pipelined compute unit's building blocks, each alone (milestone 0 of
docs/pipeline.md): Yosys for ECP5, then nextpnr-ecp5 on an LFE5U-85F (CABGA381, speed 6, out
of context) inside :class:`~gpgpu_hdl.synth.Registered`, so Fmax is that of the block's own
register-to-register paths.

    python bench/pipeline_blocks.py [--only NAME ...] [--seed N ...] [--freq MHZ]
                                    [--router router1|router2] [--placer heap|static|sa]
                                    [--timeout SECONDS] [--no-pnr]

``--no-pnr`` stops after Yosys (area only, no Fmax). Results are cached under
``build/synth`` like every synthesis of the project.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402

from gpgpu_hdl.cu.fast_alu import FastLaneAlu  # noqa: E402
from gpgpu_hdl.cu.lds import LdsUnit  # noqa: E402
from gpgpu_hdl.cu.launcher import WaveLauncher  # noqa: E402
from gpgpu_hdl.cu.lsu import BufferUnit  # noqa: E402
from gpgpu_hdl.config import CuConfig  # noqa: E402
from gpgpu_hdl.cu.pipelined import slow_int_ops  # noqa: E402
from gpgpu_hdl.cu.plan import BuildPlan  # noqa: E402
from gpgpu_hdl.cu.scalar_alu import PipelinedScalarAlu  # noqa: E402
from gpgpu_hdl.cu.sgpr_file import SgprFile  # noqa: E402
from gpgpu_hdl.cu.slow_unit import SlowVectorUnit  # noqa: E402
from gpgpu_hdl.cu.vector_unit import VectorSlice  # noqa: E402
from gpgpu_hdl.cu.vgpr_file import VgprFile  # noqa: E402
from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.synth import Registered, place_and_route, synthesize  # noqa: E402

#: name -> (factory, what it is)
DESIGNS = {
    "vgpr16": (lambda: VgprFile(lanes=16, slots=8, vgprs=64, sources=3, ram="ecp5"),
               "VGPR file, 16 lanes, 8 slots x 64 VGPRs, 3 sources, DP16KD output registers"),
    "vgpr16-generic": (lambda: VgprFile(lanes=16, slots=8, vgprs=64, sources=3),
                       "VGPR file, 16 lanes, inferred block RAMs, bank registers in the fabric"),
    "lane": (lambda: FastLaneAlu(dsp="ecp5"), "fast VALU lane, 8 stages, MULT18X18D registers"),
    "lane-generic": (FastLaneAlu, "fast VALU lane, 8 stages, registers in the fabric"),
    "slice16": (lambda: VectorSlice(lanes=16, slots=8, vgprs=64, dsp="ecp5", ram="ecp5"),
                "vector unit + VGPR file, 16 fast lanes, 8 slots x 64 VGPRs"),
    "slice4": (lambda: VectorSlice(lanes=4, slots=8, vgprs=64, dsp="ecp5", ram="ecp5"),
               "vector unit + VGPR file, 4 fast lanes, 8 slots x 64 VGPRs"),
    "vgpr16x6": (lambda: VgprFile(lanes=16, slots=8, vgprs=64, sources=6, ram="ecp5"),
                 "VGPR file, 16 lanes, 8 slots x 64 VGPRs, 6 sources (three 64-bit)"),
    "salu": (lambda: PipelinedScalarAlu(dsp="ecp5"),
             "pipelined scalar ALU, 5 stages, MULT18X18D registers"),
    "sgpr": (lambda: SgprFile(slots=8, sgprs=104, ports=2, ram="ecp5"),
             "SGPR file, 8 slots x (104 SGPRs + VCC), 64-bit rows, 2 read ports, DP16KD "
             "output registers"),
    "sgpr-generic": (lambda: SgprFile(slots=8, sgprs=104, ports=2),
                     "SGPR file, inferred block RAMs, output register in the fabric"),
    "lsu": (lambda: BufferUnit(lanes=16, slots=8, vgprs=64, dsp="ecp5"),
            "buffer load/store unit, 16 lanes, 8 slots x 64 VGPRs, 32 dwords in flight"),
    "lds": (lambda: LdsUnit(lanes=16, slots=8, vgprs=64, lds_bytes=32768, ram="ecp5"),
            "LDS unit, 16-lane passes served 4 lanes a cycle, 4 banks of 2048 dwords (32 KiB), "
            "DP16KD output registers"),
    "lds16": (lambda: LdsUnit(lanes=16, width=16, slots=8, vgprs=64, lds_bytes=32768,
                              ram="ecp5"),
              "LDS unit, 16 lanes served a cycle, 16 banks of 512 dwords (32 KiB), DP16KD "
              "output registers"),
    "launcher": (lambda: WaveLauncher(lanes=16, slots=8, vgprs=64),
                 "wave launcher, 16-lane id passes, 8 slots"),
    "slow": (lambda: SlowVectorUnit(
                lanes=16, slots=8, vgprs=64, width=1, fp_ops=(), shifter=CuConfig().shifter,
                int_ops=slow_int_ops(BuildPlan.of(CuConfig().profile, lds_bytes=0)),
                dsp="ecp5"),
             "slow vector unit, one pipelined lane, the full profile's integer ops but the "
             "fast lanes' (as the pipelined unit builds it), no FP32 lane"),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(DESIGNS), help="designs to measure")
    ap.add_argument("--seed", type=int, nargs="+", default=[1], help="nextpnr placer seeds")
    ap.add_argument("--freq", type=float, default=150.0,
                    help="clock constraint for nextpnr in MHz (default 150)")
    ap.add_argument("--router", choices=("router1", "router2"), default="router2",
                    help="nextpnr's router (router2 diverges on the vector slices; router1 "
                         "routes them)")
    ap.add_argument("--placer", choices=("heap", "static", "sa"), default=None,
                    help="nextpnr's placer (default: nextpnr's, heap); static spreads the "
                         "design over the chip, which the 16-lane slice needs to route")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per tool run")
    ap.add_argument("--no-pnr", action="store_true",
                    help="Yosys only: area without nextpnr's Fmax")
    args = ap.parse_args(argv)
    cache = ROOT / "build/synth"
    print(f"{'design':9} {'LUT4':>7} {'FF':>7} {'EBR':>4} {'DSP':>4} {'CCU2C':>6} "
          f"{'DPR16':>5} {'seed':>4} {'Fmax':>7} {'s':>6}  what", flush=True)
    for name in args.only or list(DESIGNS):
        factory, what = DESIGNS[name]
        top = f"{name}_reg"
        text = verilog.convert(Registered(factory()), name=top, emit_src=False,
                               strip_internal_attrs=True)
        for seed in [None] if args.no_pnr else args.seed:
            start = time.monotonic()
            try:
                area = synthesize(text, top, "ecp5", cache_dir=cache, timeout=args.timeout)
                timing = None if args.no_pnr else place_and_route(
                    area, frequency_mhz=args.freq, seed=seed, router=args.router,
                    placer=args.placer, cache_dir=cache, timeout=args.timeout)
            except GpgpuError as exc:
                print(f"{name:9} failed: {str(exc).splitlines()[0]}", flush=True)
                return 1
            fmax = "-" if timing is None else f"{timing.fmax_mhz:.2f}"
            print(f"{name:9} {area.luts:>7,} {area.ffs:>7,} {area.block_rams:>4} "
                  f"{area.dsps:>4} {area.carries:>6,} {area.distributed_rams:>5} "
                  f"{'-' if seed is None else seed:>4} {fmax:>7} "
                  f"{time.monotonic() - start:>6.0f}  {what}", flush=True)
            if timing is None:
                continue
            log = timing.log
            log = log.relative_to(ROOT) if log.is_relative_to(ROOT) else log
            print(f"{'':9} nextpnr log (critical path): {log}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
