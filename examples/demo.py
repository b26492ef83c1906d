#!/usr/bin/env python3
"""`make demo`: the tools end to end on the bundled example kernels.

1. the ISA support manifest (`gpgpu isa --summary`);
2. what a real clang-19 code object asks of the hardware (`gpgpu info`);
3. its disassembly, re-assembled by llvm-mc-19 to prove it is byte-exact (`gpgpu disasm`);
4. the application profile the trimmer builds from the whole suite (`trim ... --report`);
5. the compute unit trimmed for the kernel (`trim KERNEL.bin -o cu.v`): audited Verilog, the
   parts kept and dropped and why (`--area` adds Yosys area, base against trimmed: minutes);
6. the kernel run on the golden-model emulator through the host runtime, then on the trimmed
   unit's RTL under Verilator (`Device("verilator", profile=trim_config([...]))`, built once
   and cached), then the whole reference suite (every example kernel and more) on the emulator,
   checked against PoCL.

Outputs go to --out (default build/demo).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "examples" / "kernels"


def step(title: str, *cmd: str) -> None:
    print(f"\n=== {title}\n$ {shlex.join(cmd)}", flush=True)
    subprocess.run([sys.executable, "-m", *cmd], check=True, cwd=ROOT)


def run_vecadd(dev, binary: Path, n: int = 1000):
    """c = a + 7 on ``dev``; prints the first elements; the kernel's result, or None if wrong."""
    import numpy as np
    a = dev.array(np.arange(n, dtype=np.int32))
    b = dev.array(np.full(n, 7, np.int32))
    c = dev.array(np.zeros(n, np.int32))
    res = dev.load(binary).vecadd(a, b, c, np.int32(n), global_size=1024, local_size=64)
    ok = (c.numpy() == np.arange(n) + 7).all()
    print(f"c[:5] = {c.numpy()[:5]}  ({'correct' if ok else 'WRONG'})")
    return res if ok else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "demo")
    parser.add_argument("--kernel", default="vecadd", help="example to show (default vecadd)")
    parser.add_argument("--area", action="store_true",
                        help="synthesize the base and the trimmed unit with Yosys (about 10 "
                             "minutes on two cores the first time; cached after)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    binary = KERNELS / f"{args.kernel}.bin"
    rel = binary.relative_to(ROOT)
    asm = args.out / f"{args.kernel}.s"

    step("Instruction support manifest", "gpgpu_hdl", "isa", "--summary")
    step(f"Code object {rel}", "gpgpu_hdl", "info", str(rel))
    step(f"Disassembly of {rel}", "gpgpu_hdl", "disasm", str(rel), "-o", str(asm))
    print(asm.read_text(), end="")

    from gpgpu_hdl.isa.codeobj import CodeObject
    from gpgpu_hdl.isa.disasm import disassemble
    from gpgpu_hdl.toolchain import assemble_text

    print("\n=== Round trip through llvm-mc-19")
    for k in CodeObject.load(binary).kernels:
        again = assemble_text(disassemble(k.code, relocations=k.relocations))
        verdict = "identical" if again == k.code else "DIFFERENT"
        print(f"kernel {k.name}: {len(k.code)} bytes of code, re-assembled bytes {verdict}")
        if again != k.code:
            return 1

    report = args.out / "profile.json"
    bins = [str(p.relative_to(ROOT)) for p in sorted(KERNELS.glob("*.bin"))]
    step("Application profile of the example suite (trimmer step 1: one unit for every "
         "example kernel)", "trimmer", *bins, "--report", str(report))
    print(f"\nprofile written to {report}")

    verilog = args.out / f"cu_{args.kernel}.v"
    trim_report = args.out / f"trim_{args.kernel}.json"
    step(f"The compute unit trimmed for {rel}", "trimmer", str(rel), "-o", str(verilog),
         "--report", str(trim_report), *(["--area"] if args.area else []))
    print(f"\ntrimmed Verilog: {verilog} ({verilog.stat().st_size:,} bytes), report: "
          f"{trim_report}")

    if args.kernel == "vecadd":
        from gpgpu_hdl.runtime import Device
        from trimmer.policy import trim_config

        print("\n=== vecadd on the golden-model emulator (gpgpu_hdl.runtime)")
        res = run_vecadd(Device("emu"), binary)
        if res is None:
            return 1
        print(f"{res.instructions} wave-instructions in {res.waves} waves, {res.counts}")
        print("\n=== vecadd on the trimmed compute unit's RTL (Verilator; the first run "
              "builds the model, a few minutes)", flush=True)
        res = run_vecadd(Device("verilator", profile=trim_config([binary])), binary)
        if res is None:
            return 1
        print(f"{res.instructions} wave-instructions in {res.cycles:,} cycles (VALU busy "
              f"{res.extra['valu_busy'] / res.cycles:.1%})")
    print("\n=== The reference suite on the emulator, against PoCL", flush=True)
    return subprocess.run([sys.executable, str(ROOT / "examples" / "run_suite.py"),
                           "--backend", "emu"], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
