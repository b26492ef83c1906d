"""The machinery of the reference-check suite (see the package docstring): the case
description (:class:`Case`, :class:`Launch`, :class:`Output`...), the tahiti code objects, the
PoCL reference, runs on a device, the comparison of outputs, and the helpers and registry
(:data:`CASES`) the case modules use.

Comparison rules
----------------
Integer outputs, and float outputs a kernel only moves, must be bit-exact. Float outputs have a
bound in ulps (distance between the two float32 values in representable steps; +0 and -0 are
equal), chosen per output from what the two sides compute:

* FP contraction. OpenCL C contracts ``a * b + c`` by default (``FP_CONTRACT ON``). clang-19
  for tahiti turns the contracted ``fmuladd`` into ``v_mac_f32``/``v_mad_f32``, which on SI
  round the product and the sum separately (LLVM ``ISD::FMAD``): the result of an unfused
  multiply and add. PoCL 3.1 on x86-64 with FMA turns the same ``fmuladd`` into a fused
  ``vfmadd``, which differs in the last bits for about a third of random operands. PoCL
  refuses ``-ffp-contract=off`` (``CL_INVALID_BUILD_OPTIONS``) and has no ``-cl-*`` option for
  it, so :func:`run_pocl` puts ``#pragma OPENCL FP_CONTRACT OFF`` in front of the unmodified
  source (followed by ``#line 1``). Then both sides compute every product and sum with one
  rounding each, in the order the source gives: 0 ulp.
* Denormals. The tahiti kernels run with FLOAT_MODE 0xC0: f32 denormals are flushed on input
  and output. PoCL builds with ``-cl-denorms-are-zero``, which it honours (DAZ/FTZ). The inputs
  are chosen so that no arithmetic sees a denormal anyway (``transpose`` moves one, which
  must survive bit for bit).
* Division and square root. PoCL divides with ``divss`` and takes ``sqrtss``: correctly
  rounded, with or without ``-cl-fp32-correctly-rounded-divide-sqrt``. clang-19's default for
  tahiti is OpenCL's 2.5 ulp division: ``a * v_rcp_f32(b)`` (with pre-scaling of huge
  denominators), ``1.0f / b`` is a bare ``v_rcp_f32``, and ``sqrt`` a bare ``v_sqrt_f32``
  (3 ulp allowed). Against a correctly rounded reference (0.5 ulp) that is at most 3 ulp for
  a quotient or reciprocal and 4 ulp for a square root. With
  ``-cl-fp32-correctly-rounded-divide-sqrt`` clang emits the ``v_div_scale``/``v_div_fmas``/
  ``v_div_fixup`` sequence and a corrected square root, both correctly rounded: 0 ulp.
* Error propagation. The full Gaussian elimination on a random matrix feeds 3-ulp quotients
  into 15 elimination steps: elements that cancel to small values drift by thousands of ulps,
  so that case uses a norm-wise bound (ulps of the largest reference magnitude). Its twin on
  an exactly representable matrix, where every operation is exact, must be bit-exact.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE_KERNELS = ROOT / "examples" / "kernels"
TEST_KERNELS = ROOT / "tests" / "kernels"
#: Where code objects compiled from ``tests/kernels/*.cl`` are cached (keyed by source hash).
CACHE_DIR = Path(os.environ.get("GPGPU_KERNEL_CACHE", ROOT / "build" / "kernels"))

try:
    import gpgpu_hdl  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT))

from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.fuzz import pocl  # noqa: E402
from gpgpu_hdl.fuzz.compare import ulp_distance  # noqa: E402
# the PoCL preamble and options (see the module docstring), and the argument kinds
from gpgpu_hdl.fuzz.pocl import POCL_OPTIONS, POCL_PREAMBLE, Buf, Local  # noqa: E402
from gpgpu_hdl.toolchain import CLANG_FLAGS, compile_cl, find_clang, libclc_bitcode  # noqa: E402


class SuiteError(GpgpuError):
    """A suite problem a user can cause or fix: unknown case name, no PoCL device..."""


# --- case description ------------------------------------------------------------------------

#: A kernel argument: a buffer, local memory, or a numpy scalar passed by value.
Arg = Buf | Local | np.generic


@dataclass(frozen=True, kw_only=True)
class Launch:
    """One kernel launch: kernel name, arguments in declaration order, NDRange."""

    kernel: str
    args: tuple[Arg, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    global_offset: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        g, lsz = self.global_size, self.local_size
        if not 1 <= len(g) <= 3 or len(g) != len(lsz):
            raise ValueError(f"{self.kernel}: global {g} and local {lsz} must have the same "
                             "1 to 3 dimensions")
        if self.global_offset is not None and len(self.global_offset) != len(g):
            raise ValueError(f"{self.kernel}: global offset {self.global_offset} needs "
                             f"{len(g)} dimensions")
        if any(x <= 0 or y <= 0 or x % y for x, y in zip(g, lsz, strict=True)):
            raise ValueError(f"{self.kernel}: global size {g} must be a positive multiple of "
                             f"the local size {lsz}")
        for a in self.args:
            if not isinstance(a, Buf | Local | np.generic):
                raise TypeError(f"{self.kernel}: argument {a!r} is not a Buf, Local or numpy "
                                "scalar")

    @property
    def work_items(self) -> int:
        return int(np.prod(self.global_size))


@dataclass(frozen=True, kw_only=True)
class Output:
    """An output buffer and how to compare it.

    Integer buffers are always compared bit for bit. Float32 buffers pass when every element is
    within ``ulp`` ulps of the reference, or, if ``norm_ulp`` is set, within ``norm_ulp`` ulps
    of the largest reference magnitude (a norm-wise bound). ``bits=True`` demands identical
    bits (for floats a kernel only moves: NaN payloads, -0 and denormals must survive).
    ``select`` maps a buffer to the elements that carry meaning (applied to both sides).
    """

    name: str
    ulp: int = 0
    norm_ulp: float | None = None
    bits: bool = False
    select: Callable[[np.ndarray], np.ndarray] | None = None
    why: str = ""


def _default_seed(name: str) -> int:
    return zlib.crc32(name.encode())


@dataclass(frozen=True, kw_only=True)
class Case:
    """One reference check: a sequence of launches of one program, outputs and their rules.

    ``binary`` is a committed code object; when it is None the code object is compiled from
    ``source`` by :func:`code_object` with ``tahiti_flags`` (cached under :data:`CACHE_DIR`).
    ``build`` makes the input buffers from a ``numpy.random.Generator`` seeded with ``seed``;
    every buffer an argument names must be among them (outputs included, with their initial
    contents). ``model`` is an independent numpy implementation of the kernel: it receives a
    copy of the inputs and returns the expected output buffers.
    """

    name: str
    source: Path
    binary: Path | None = None
    tahiti_flags: tuple[str, ...] = ()
    pocl_options: tuple[str, ...] = ()
    build: Callable[[np.random.Generator], dict[str, np.ndarray]]
    launches: tuple[Launch, ...]
    outputs: tuple[Output, ...]
    model: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
    seed: int = -1
    note: str = ""

    def __post_init__(self) -> None:
        if self.seed < 0:
            object.__setattr__(self, "seed", _default_seed(self.name))
        if not self.launches:
            raise ValueError(f"{self.name}: no launches")
        used = {a.name for la in self.launches for a in la.args if isinstance(a, Buf)}
        for out in self.outputs:
            if out.name not in used:
                raise ValueError(f"{self.name}: output {out.name!r} is no kernel argument")

    @property
    def id(self) -> str:
        """The pytest id (= the name)."""
        return self.name

    @property
    def kernels(self) -> tuple[str, ...]:
        """The distinct kernel names, in first-launch order."""
        return tuple(dict.fromkeys(la.kernel for la in self.launches))

    @property
    def kernel(self) -> str:
        return "+".join(self.kernels)

    @property
    def global_size(self) -> tuple[int, ...]:
        """NDRange of the first launch (see :attr:`launches` for the rest)."""
        return self.launches[0].global_size

    @property
    def local_size(self) -> tuple[int, ...]:
        return self.launches[0].local_size

    @property
    def args(self) -> tuple[Arg, ...]:
        return self.launches[0].args

    @property
    def work_items(self) -> int:
        """Work-items over all launches."""
        return sum(la.work_items for la in self.launches)

    def inputs(self) -> dict[str, np.ndarray]:
        """Fresh input buffers; the same bytes on every call."""
        arrays = self.build(np.random.default_rng(self.seed))
        out = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
        for la in self.launches:
            for a in la.args:
                if isinstance(a, Buf) and a.name not in out:
                    raise ValueError(f"{self.name}: no input buffer {a.name!r}")
        return out

    def code_object(self) -> Path:
        return code_object(self)


# --- tahiti code objects ---------------------------------------------------------------------

@functools.cache
def _toolchain_id() -> str:
    clang = find_clang()
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout
    lib = libclc_bitcode()
    st = lib.stat()
    return f"{version.splitlines()[0] if version else clang}|{lib}|{st.st_size}|{st.st_mtime_ns}"


def code_object(case: Case) -> Path:
    """The case's code object: the committed ``.bin``, or ``source`` compiled (once, cached)."""
    if case.binary is not None:
        if not case.binary.is_file():
            raise SuiteError(f"{case.name}: code object {case.binary} is missing "
                             "(run `make kernels`)")
        return case.binary
    text = case.source.read_bytes()
    key = hashlib.sha256(b"\0".join([text, *(f.encode() for f in CLANG_FLAGS),
                                     *(f.encode() for f in case.tahiti_flags),
                                     _toolchain_id().encode()])).hexdigest()[:16]
    out = CACHE_DIR / f"{case.source.stem}-{key}.bin"
    if not out.is_file():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        compile_cl(case.source, out, extra_flags=case.tahiti_flags)
    return out


# --- PoCL reference --------------------------------------------------------------------------

def pocl_kernels(case: Case, *, fp_contract: bool = False) -> dict[str, Any]:
    """The case's kernels, built by PoCL from the case's source (cached per source/options).

    ``fp_contract=True`` builds without :data:`POCL_PREAMBLE`, i.e. with OpenCL's default
    contraction (PoCL then fuses multiply-adds; only for demonstrating why the preamble is
    there)."""
    return pocl.build(case.source.read_text(), case.source.name,
                      (*POCL_OPTIONS, *case.pocl_options),
                      preamble="" if fp_contract else POCL_PREAMBLE)


def run_pocl(case: Case, inputs: Mapping[str, np.ndarray] | None = None, *,
             fp_contract: bool = False) -> dict[str, np.ndarray]:
    """Run every launch of ``case`` on PoCL; return its output buffers (see
    :func:`pocl_kernels` for ``fp_contract``)."""
    arrays = case.inputs() if inputs is None else {k: v.copy() for k, v in inputs.items()}
    return pocl.run(pocl_kernels(case, fp_contract=fp_contract), arrays, case.launches,
                    [o.name for o in case.outputs], what=f"{case.name}: {case.source.name}")


def run_model(case: Case, inputs: Mapping[str, np.ndarray] | None = None
              ) -> dict[str, np.ndarray]:
    """The numpy model's output buffers."""
    arrays = case.inputs() if inputs is None else {k: v.copy() for k, v in inputs.items()}
    expected = case.model(arrays)
    return {o.name: np.asarray(expected[o.name]) for o in case.outputs}


# --- device ----------------------------------------------------------------------------------

@dataclass
class DeviceRun:
    """What :func:`run_device` measured: the runtime's result objects (one per launch),
    their summed (wave-)instruction and lane-instruction counts and per-class counts, and the
    wall time of the whole case (load, copies and launches)."""

    results: list[Any] = field(default_factory=list)
    instructions: int = 0
    lane_instructions: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def launches(self) -> int:
        return len(self.results)

    def add(self, result: Any) -> None:
        self.results.append(result)
        n = int(getattr(result, "instructions", 0) or 0)
        self.instructions += n
        self.lane_instructions += int(getattr(result, "lane_instructions", 64 * n))
        for k, v in (getattr(result, "counts", None) or {}).items():
            self.counts[k] = self.counts.get(k, 0) + v


def run_device(case: Case, device: Any, inputs: Mapping[str, np.ndarray] | None = None,
               *, trace: bool = False) -> tuple[dict[str, np.ndarray], DeviceRun]:
    """Run every launch of ``case`` through the runtime on ``device`` (a
    ``gpgpu_hdl.runtime.Device``); return the output buffers and a :class:`DeviceRun`
    (with ``trace``, each launch's result carries its commit trace)."""
    from gpgpu_hdl.runtime import LocalMemory

    arrays = case.inputs() if inputs is None else {k: v.copy() for k, v in inputs.items()}
    run = DeviceRun()
    start = time.perf_counter()
    program = device.load(str(code_object(case)))
    bufs = {name: device.array(arr) for name, arr in arrays.items()}
    for la in case.launches:
        args = [bufs[a.name] if isinstance(a, Buf) else
                LocalMemory(a.nbytes) if isinstance(a, Local) else a for a in la.args]
        extra = {} if la.global_offset is None else {"global_offset": la.global_offset}
        if trace:
            extra["trace"] = True
        run.add(getattr(program, la.kernel)(*args, global_size=la.global_size,
                                            local_size=la.local_size, **extra))
    out = {o.name: np.asarray(bufs[o.name].numpy()) for o in case.outputs}
    run.seconds = time.perf_counter() - start
    return out, run


# --- comparison ------------------------------------------------------------------------------

def _where(shape: tuple[int, ...], flat: int, selected: bool) -> str:
    if selected or len(shape) <= 1:
        return f"[{flat}]"
    return str(list(np.unravel_index(flat, shape))).replace(" ", "")


def _compare_one(out: Output, ref: np.ndarray, got: np.ndarray) -> tuple[bool, str, int | None]:
    """(ok, detail, max ulp or None for bit comparisons)."""
    name = out.name
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return False, (f"{name}: got {got.dtype}{list(got.shape)}, "
                       f"expected {ref.dtype}{list(ref.shape)}"), None
    shape = ref.shape
    if out.select is not None:
        ref, got = np.asarray(out.select(ref)), np.asarray(out.select(got))
    ref, got = ref.reshape(-1), got.reshape(-1)
    selected = out.select is not None
    if ref.dtype.kind in "iub" or out.bits or ref.dtype.kind != "f":
        width = ref.dtype.itemsize
        raw = np.dtype(f"u{width}") if width in (1, 2, 4, 8) else np.uint8
        bad = np.flatnonzero(ref.view(raw) != got.view(raw))
        if bad.size == 0:
            return True, f"{name}: exact", None
        i = int(bad[0])
        return False, (f"{name}{_where(shape, i, selected)}: got {got[i]!r}, expected "
                       f"{ref[i]!r} ({bad.size} of {ref.size} differ)"), None
    if ref.dtype != np.float32:
        raise SuiteError(f"{name}: only float32 outputs have an ulp rule, not {ref.dtype}")
    d = ulp_distance(ref, got)
    ok = d <= out.ulp
    scale_note = ""
    if out.norm_ulp is not None:
        finite = ref[np.isfinite(ref)]
        scale = np.float32(np.abs(finite).max()) if finite.size else np.float32(0)
        unit = float(np.spacing(scale))
        err = np.abs(ref.astype(np.float64) - got.astype(np.float64))
        ok |= err <= out.norm_ulp * unit
        worst = float(np.nanmax(err)) / unit if unit else 0.0
        scale_note = f", {worst:.2g} ulp of max|ref| (norm-wise bound {out.norm_ulp:g})"
    worst_ulp = int(d.max()) if d.size else 0
    bound = f" (bound {out.ulp})" if out.norm_ulp is None else scale_note
    if ok.all():
        return True, f"{name}: max {worst_ulp} ulp{bound}", worst_ulp
    i = int(np.flatnonzero(~ok)[0])
    return False, (f"{name}{_where(shape, i, selected)}: got {got[i]!r}, expected {ref[i]!r}: "
                   f"{int(d[i])} ulp{bound}; {int((~ok).sum())} of {ref.size} outside"
                   ), worst_ulp


def compare(case: Case, ref: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray]
            ) -> tuple[bool, str]:
    """Check every output of ``case``; return (all passed, one line per output joined by
    ``"; "``: failures first)."""
    fails, passes = [], []
    for out in case.outputs:
        if out.name not in got:
            fails.append(f"{out.name}: missing")
            continue
        ok, detail, _ = _compare_one(out, np.asarray(ref[out.name]), np.asarray(got[out.name]))
        (passes if ok else fails).append(detail)
    return not fails, "; ".join(fails + passes)


def max_ulp(case: Case, ref: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray]
            ) -> int | None:
    """The largest ulp distance over the float outputs (None when all are bit-compared)."""
    worst = None
    for out in case.outputs:
        with contextlib.suppress(KeyError):
            _, _, u = _compare_one(out, np.asarray(ref[out.name]), np.asarray(got[out.name]))
            if u is not None:
                worst = u if worst is None else max(worst, u)
    return worst


# --- helpers for the case definitions --------------------------------------------------------

i32, u32, i64, u64, f32 = np.int32, np.uint32, np.int64, np.uint64, np.float32


def _up(x: int, m: int) -> int:
    """x rounded up to a multiple of m."""
    return -(-x // m) * m


def _rand_i32(rng: np.random.Generator, shape: Any, lo: int = -(1 << 31), hi: int = 1 << 31
              ) -> np.ndarray:
    return rng.integers(lo, hi, size=shape, dtype=np.int64).astype(i32)


def _rand_f32(rng: np.random.Generator, shape: Any, lo: float = -1.0, hi: float = 1.0
              ) -> np.ndarray:
    return rng.uniform(lo, hi, size=shape).astype(f32)


def _pad_sentinel(x: np.ndarray, extra: int, value: Any) -> np.ndarray:
    """x followed by ``extra`` elements of ``value`` (a canary for stray writes)."""
    return np.concatenate([x, np.full(extra, value, x.dtype)])


CASES: list[Case] = []


def _add(case: Case) -> Case:
    CASES.append(case)
    return case


def replace(case: Case, **changes: Any) -> Case:
    """A modified copy of a case (e.g. another seed)."""
    return dataclasses.replace(case, **changes)
