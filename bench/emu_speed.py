"""Emulator speed: lane-instructions per second on a few example kernels.

    python bench/emu_speed.py [--repeat N]

Each kernel runs ``--repeat`` times (best time kept). The baseline, measured in the same
run, is a bare numpy loop doing one 64-lane integer add with an EXEC-masked write per
iteration: the cost floor of any wave64 emulator written on numpy. The ratio column says
how many of those floor operations one emulated instruction costs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpgpu_hdl.runtime import Device, LocalMemory  # noqa: E402

K = ROOT / "examples" / "kernels"


def _cases(dev: Device, rng: np.random.Generator):
    n = 64
    a = dev.array(rng.integers(-1000, 1000, (n, n), dtype=np.int32))
    b = dev.array(rng.integers(-1000, 1000, (n, n), dtype=np.int32))
    c = dev.array(np.zeros((n, n), np.int32))
    mm = dev.load(K / "matmul.bin")
    yield "matmul_int 64^3", lambda: mm.matmul_int(a, b, c, np.int32(n), np.int32(n),
                                                   np.int32(n), global_size=(n, n),
                                                   local_size=(8, 8))
    fa = dev.array(rng.random((n, n), dtype=np.float32))
    fb = dev.array(rng.random((n, n), dtype=np.float32))
    fc = dev.array(np.zeros((n, n), np.float32))
    yield "matmul_float_tiled 64^3", lambda: mm.matmul_float_tiled(
        fa, fb, fc, np.int32(n), np.int32(n), np.int32(n), global_size=(n, n),
        local_size=(16, 16))
    size = 1 << 16
    va = dev.array(np.arange(size, dtype=np.int32))
    vc = dev.array(np.zeros(size, np.int32))
    vec = dev.load(K / "vecadd.bin")
    yield "vecadd 64K", lambda: vec.vecadd(va, va, vc, np.int32(size), global_size=size,
                                           local_size=256)
    red = dev.load(K / "reduction.bin")
    partial = dev.array(np.zeros(size // 256, np.int32))
    vin = dev.array(rng.integers(-1000, 1000, size, dtype=np.int32))
    yield "reduce_sum 64K", lambda: red.reduce_sum(vin, partial, LocalMemory(256 * 4),
                                                   np.int32(size), global_size=size,
                                                   local_size=256)


def baseline(iterations: int = 20000) -> float:
    """Seconds per iteration of the numpy floor loop."""
    v = np.zeros((4, 64), dtype=np.uint32)
    mask = np.ones(64, dtype=bool)
    start = time.perf_counter()
    for _ in range(iterations):
        np.copyto(v[2], v[0] + v[1], where=mask)
    return (time.perf_counter() - start) / iterations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    dev = Device("emu")
    rng = np.random.default_rng(1)
    floor = baseline()
    print(f"baseline: numpy 64-lane add + masked write = {floor * 1e6:.2f} us")
    print(f"{'kernel':26} {'wave-instr':>10} {'seconds':>8} {'lane-instr/s':>13} "
          f"{'us/instr':>9} {'x floor':>8}")
    total_i = total_s = 0.0
    for name, call in _cases(dev, rng):
        best = None
        for _ in range(args.repeat):
            res = call()
            best = res if best is None or res.seconds < best.seconds else best
        per = best.seconds / best.instructions
        total_i += best.instructions
        total_s += best.seconds
        print(f"{name:26} {best.instructions:>10} {best.seconds:>8.3f} "
              f"{best.lane_instructions / best.seconds / 1e6:>11.2f} M {per * 1e6:>9.2f} "
              f"{per / floor:>8.1f}")
    print(f"{'overall':26} {int(total_i):>10} {total_s:>8.3f} "
          f"{64 * total_i / total_s / 1e6:>11.2f} M")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
