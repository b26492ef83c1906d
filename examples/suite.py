"""The reference-check suite: every example kernel, and the extra kernels of ``tests/kernels/``,
run on a device and compared with the same OpenCL source run on PoCL (CPU).

A :class:`Case` is one complete kernel run: the code object, the OpenCL source, a deterministic
input builder, a sequence of :class:`Launch` es (argument list, global and local size), the
output buffers with their comparison rule, and an independent numpy model of the kernel that
validates the PoCL side itself. :data:`CASES` lists them all; ``case.id`` is a pytest id::

    import suite                                  # examples/ on sys.path
    ref = suite.run_pocl(case)                    # {buffer name: ndarray}
    got, run = suite.run_device(case, Device("emu"))
    ok, detail = suite.compare(case, ref, got)

Outside ``examples/``, load the module by path under a unique name registered in
``sys.modules`` (the dataclasses need it), as ``tests/examples/test_pocl_reference.py`` does.

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

Launch notes: every global size is a multiple of its local size (OpenCL 1.2); kernels that
require a local size get it (``matmul_float_tiled``, ``transpose``: 16 x 16; ``scan``: 128).
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
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_KERNELS = ROOT / "examples" / "kernels"
TEST_KERNELS = ROOT / "tests" / "kernels"
#: Where code objects compiled from ``tests/kernels/*.cl`` are cached (keyed by source hash).
CACHE_DIR = Path(os.environ.get("GPGPU_KERNEL_CACHE", ROOT / "build" / "kernels"))

try:
    import gpgpu_hdl  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT))

from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.toolchain import CLANG_FLAGS, compile_cl, find_clang, libclc_bitcode  # noqa: E402

__all__ = [
    "SuiteError", "Buf", "Local", "Launch", "Output", "Case", "DeviceRun",
    "CASES", "CASES_BY_NAME", "select_cases",
    "code_object", "pocl_kernels", "run_pocl", "run_device", "run_model",
    "compare", "max_ulp", "ulp_distance", "replace",
    "ROOT", "EXAMPLE_KERNELS", "TEST_KERNELS", "CACHE_DIR", "POCL_PREAMBLE", "POCL_OPTIONS",
]

#: What :func:`run_pocl` puts in front of every source (see the module docstring).
POCL_PREAMBLE = "#pragma OPENCL FP_CONTRACT OFF\n"
#: Build options of every PoCL build (a case may add more).
POCL_OPTIONS = ("-cl-std=CL1.2", "-cl-denorms-are-zero")


class SuiteError(GpgpuError):
    """A suite problem a user can cause or fix: unknown case name, no PoCL device..."""


# --- case description ------------------------------------------------------------------------

@dataclass(frozen=True)
class Buf:
    """A kernel argument that is one of the case's buffers (``__global``/``__constant``)."""

    name: str


@dataclass(frozen=True)
class Local:
    """A ``__local`` pointer argument of ``nbytes`` bytes."""

    nbytes: int


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

@functools.cache
def _pocl() -> tuple[Any, Any]:
    """(context, in-order queue) on the PoCL CPU device."""
    try:
        import pyopencl as cl
    except ImportError as exc:
        raise SuiteError(f"pyopencl is not installed ({exc})") from None
    seen = []
    for platform in cl.get_platforms():
        seen.append(platform.name)
        if "Portable Computing Language" not in platform.name:
            continue
        devices = platform.get_devices(device_type=cl.device_type.CPU)
        if devices:
            ctx = cl.Context(devices[:1])
            return ctx, cl.CommandQueue(ctx)
    raise SuiteError("no PoCL CPU device found (OpenCL platforms: "
                     f"{', '.join(seen) or 'none'}); install pocl-opencl-icd")


@functools.cache
def _pocl_kernels(source: Path, options: tuple[str, ...], _digest: str, preamble: str
                  ) -> dict[str, Any]:
    """Kernels by name (``_digest``, the source's hash, only keys the cache)."""
    import pyopencl as cl

    ctx, _ = _pocl()
    text = f'{preamble}#line 1 "{source.name}"\n{source.read_text()}'
    with warnings.catch_warnings():
        # pyopencl warns about any non-empty build log; a real error raises below.
        warnings.simplefilter("ignore", cl.CompilerWarning)
        try:
            program = cl.Program(ctx, text).build(options=list(options))
        except cl.Error as exc:
            first = next((line for line in str(exc).splitlines() if "error" in line),
                         str(exc).splitlines()[0])
            raise SuiteError(f"PoCL build of {source.name} failed: {first.strip()}") from None
    return {k.function_name: k for k in program.all_kernels()}


def pocl_kernels(case: Case, *, fp_contract: bool = False) -> dict[str, Any]:
    """The case's kernels, built by PoCL from the case's source (cached per source/options).

    ``fp_contract=True`` builds without :data:`POCL_PREAMBLE`, i.e. with OpenCL's default
    contraction (PoCL then fuses multiply-adds; only for demonstrating why the preamble is
    there)."""
    options = (*POCL_OPTIONS, *case.pocl_options)
    digest = hashlib.sha256(case.source.read_bytes()).hexdigest()
    return _pocl_kernels(case.source, options, digest, "" if fp_contract else POCL_PREAMBLE)


def run_pocl(case: Case, inputs: Mapping[str, np.ndarray] | None = None, *,
             fp_contract: bool = False) -> dict[str, np.ndarray]:
    """Run every launch of ``case`` on PoCL; return its output buffers (see
    :func:`pocl_kernels` for ``fp_contract``)."""
    import pyopencl as cl

    ctx, queue = _pocl()
    kernels = pocl_kernels(case, fp_contract=fp_contract)
    arrays = case.inputs() if inputs is None else {k: v.copy() for k, v in inputs.items()}
    mf = cl.mem_flags
    bufs = {name: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr)
            for name, arr in arrays.items()}
    for la in case.launches:
        if la.kernel not in kernels:
            raise SuiteError(f"{case.name}: {case.source.name} has no kernel {la.kernel!r}")
        args = [bufs[a.name] if isinstance(a, Buf) else
                cl.LocalMemory(a.nbytes) if isinstance(a, Local) else a for a in la.args]
        kernels[la.kernel](queue, la.global_size, la.local_size, *args,
                           global_offset=la.global_offset)
    out = {}
    for o in case.outputs:
        host = np.empty_like(arrays[o.name])
        cl.enqueue_copy(queue, host, bufs[o.name])
        out[o.name] = host
    queue.finish()
    return out


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

def ulp_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise distance in float32 steps (int64). +0 and -0 are 0 apart, two NaNs are 0
    apart, a NaN and a number 2**32 apart."""
    x = np.asarray(x, np.float32)
    y = np.asarray(y, np.float32)

    def key(v: np.ndarray) -> np.ndarray:
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    d = np.abs(key(x) - key(y))
    nx, ny = np.isnan(x), np.isnan(y)
    return np.where(nx & ny, 0, np.where(nx | ny, 1 << 32, d))


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


def _ex(name: str) -> tuple[Path, Path]:
    return EXAMPLE_KERNELS / f"{name}.cl", EXAMPLE_KERNELS / f"{name}.bin"


def _tk(name: str) -> Path:
    return TEST_KERNELS / f"{name}.cl"


def _rand_i32(rng: np.random.Generator, shape: Any, lo: int = -(1 << 31), hi: int = 1 << 31
              ) -> np.ndarray:
    return rng.integers(lo, hi, size=shape, dtype=np.int64).astype(i32)


def _rand_f32(rng: np.random.Generator, shape: Any, lo: float = -1.0, hi: float = 1.0
              ) -> np.ndarray:
    return rng.uniform(lo, hi, size=shape).astype(f32)


def _wrap32(x: np.ndarray) -> np.ndarray:
    """Integers (any width) reduced modulo 2**32 to int32."""
    return (np.asarray(x).astype(np.int64) & 0xFFFFFFFF).astype(np.uint32).view(i32)


def _mm_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b accumulated left to right in float32, one rounding per product and per sum."""
    s = np.zeros((a.shape[0], b.shape[1]), f32)
    for i in range(a.shape[1]):
        s = s + a[:, i:i + 1] * b[i:i + 1, :]
    return s


def _mm_wrap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _wrap32(a.astype(np.int64).astype(np.uint64) @ b.astype(np.int64).astype(np.uint64))


def _pad_sentinel(x: np.ndarray, extra: int, value: Any) -> np.ndarray:
    """x followed by ``extra`` elements of ``value`` (a canary for stray writes)."""
    return np.concatenate([x, np.full(extra, value, x.dtype)])


CASES: list[Case] = []


def _add(case: Case) -> Case:
    CASES.append(case)
    return case


# --- examples/kernels ------------------------------------------------------------------------

def _vecadd(n: int = 1000, canary: int = 40) -> None:
    src, binary = _ex("vecadd")
    sentinel = i32(0x5A5A5A5A)

    def build(rng):
        return {"a": _rand_i32(rng, n), "b": _rand_i32(rng, n),
                "c": np.full(n + canary, sentinel, i32)}

    def model(x):
        c = x["c"]
        c[:n] = _wrap32(x["a"].astype(np.int64) + x["b"])
        return {"c": c}

    _add(Case(name="vecadd", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="vecadd", args=(Buf("a"), Buf("b"), Buf("c"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="c"),),
              note=f"n={n}: 24 padding work-items, {canary} canary words after c"))


def _matadd(width: int, height: int, dtype: type) -> None:
    src, binary = _ex("matadd")
    kind = "int" if dtype is i32 else "float"

    def build(rng):
        if dtype is i32:
            a, b = _rand_i32(rng, width * height), _rand_i32(rng, width * height)
        else:
            a, b = _rand_f32(rng, width * height, -1e3, 1e3), _rand_f32(rng, width * height)
        return {"a": a, "b": b, "c": np.zeros(width * height, dtype)}

    def model(x):
        if dtype is i32:
            return {"c": _wrap32(x["a"].astype(np.int64) + x["b"])}
        return {"c": x["a"] + x["b"]}

    _add(Case(name=f"matadd_{kind}", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=f"matadd_{kind}",
                               args=(Buf("a"), Buf("b"), Buf("c"), i32(width), i32(height)),
                               global_size=(_up(width, 16), _up(height, 16)),
                               local_size=(16, 16)),),
              outputs=(Output(name="c", why="one IEEE addition per element"),),
              note=f"{width}x{height}, 2-D grid of several 16x16 workgroups, padded"))


def _matmul(kernel: str, m: int, n: int, k: int) -> None:
    src, binary = _ex("matmul")
    tiled = kernel == "matmul_float_tiled"
    is_int = kernel == "matmul_int"
    lsz = (16, 16) if tiled else (8, 8)

    def build(rng):
        if is_int:
            a, b = _rand_i32(rng, (m, k)), _rand_i32(rng, (k, n))
        else:
            a, b = _rand_f32(rng, (m, k)), _rand_f32(rng, (k, n))
        return {"a": a.reshape(-1), "b": b.reshape(-1), "c": np.zeros(m * n, a.dtype)}

    def model(x):
        a, b = x["a"].reshape(m, k), x["b"].reshape(k, n)
        c = _mm_wrap(a, b) if is_int else _mm_f32(a, b)
        return {"c": c.reshape(-1)}

    why = ("products and sums rounded separately on both sides (v_mac_f32; PoCL with "
           "FP_CONTRACT OFF), same order i = 0..k-1" + (" (the zero padding of the last tile "
                                                         "adds exact zeros)" if tiled else ""))
    _add(Case(name=kernel, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=kernel,
                               args=(Buf("a"), Buf("b"), Buf("c"), i32(m), i32(n), i32(k)),
                               global_size=(_up(n, lsz[0]), _up(m, lsz[1])),
                               local_size=lsz),),
              outputs=(Output(name="c", why="" if is_int else why),),
              note=f"M={m} N={n} K={k}" + (", full-range ints (wrap-around)" if is_int else "")))


def _transpose(width: int = 50, height: int = 40) -> None:
    src, binary = _ex("transpose")

    def build(rng):
        x = _rand_f32(rng, width * height, -100, 100)
        # Values a pure move must keep bit for bit: NaN payload, -0, inf, a denormal.
        special = np.array([0x7FC12345, 0x80000000, 0x7F800000, 0xFF800000, 0x00000123,
                            0xFFFFFFFF], np.uint32).view(f32)
        x[rng.choice(x.size, special.size, replace=False)] = special
        return {"out": np.zeros(width * height, f32), "in": x}

    def model(x):
        return {"out": x["in"].reshape(height, width).T.reshape(-1).copy()}

    _add(Case(name="transpose", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="transpose",
                               args=(Buf("out"), Buf("in"), i32(width), i32(height)),
                               global_size=(_up(width, 16), _up(height, 16)),
                               local_size=(16, 16)),),
              outputs=(Output(name="out", bits=True, why="a pure move through LDS"),),
              note=f"{width}x{height} (not multiples of 16), NaN/-0/inf/denormal inputs"))


def _conv2d(kind: str, width: int, height: int, fsize: int) -> None:
    src, binary = _ex("conv2d")
    dtype = i32 if kind == "int" else f32

    def build(rng):
        if kind == "int":
            img, filt = _rand_i32(rng, width * height, -1000, 1000), \
                _rand_i32(rng, fsize * fsize, -10, 11)
        else:
            img, filt = _rand_f32(rng, width * height), _rand_f32(rng, fsize * fsize)
        return {"in": img, "filter": filt, "out": np.zeros(width * height, dtype)}

    def model(x):
        img = x["in"].reshape(height, width)
        filt = x["filter"].reshape(fsize, fsize)
        r = fsize // 2
        ys, xs = np.arange(height), np.arange(width)
        acc = np.zeros((height, width), np.int64 if kind == "int" else f32)
        for fy in range(fsize):
            cy = np.clip(ys + fy - r, 0, height - 1)
            for fx in range(fsize):
                cx = np.clip(xs + fx - r, 0, width - 1)
                acc = acc + filt[fy, fx] * img[cy][:, cx].astype(acc.dtype)
        return {"out": (_wrap32(acc) if kind == "int" else acc).reshape(-1)}

    _add(Case(name=f"conv2d_{kind}", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=f"conv2d_{kind}",
                               args=(Buf("in"), Buf("filter"), Buf("out"), i32(width),
                                     i32(height), i32(fsize)),
                               global_size=(_up(width, 8), _up(height, 8)),
                               local_size=(8, 8)),),
              outputs=(Output(name="out", why="" if kind == "int" else
                              "separately rounded products and sums (v_mac_f32), fy-major "
                              "order on both sides"),),
              note=f"{width}x{height}, {fsize}x{fsize} filter, clamped borders"))


def _bitonic(name: str, log2n: int, ascending: bool) -> None:
    src, binary = _ex("bitonic")
    n = 1 << log2n

    def build(rng):
        data = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
        data[rng.choice(n, n // 8, replace=False)] = data[:n // 8]      # duplicates
        data[:2] = (0, 0xFFFFFFFF)
        return {"data": data}

    def model(x):
        s = np.sort(x["data"])
        return {"data": s if ascending else s[::-1].copy()}

    launches = tuple(
        Launch(kernel="bitonic_step",
               args=(Buf("data"), u32(stage), u32(p), u32(1 if ascending else 0)),
               global_size=(n // 2,), local_size=(min(64, n // 2),))
        for stage in range(log2n) for p in range(stage + 1))
    _add(Case(name=name, source=src, binary=binary, build=build, model=model,
              launches=launches, outputs=(Output(name="data"),),
              note=f"n={n} {'ascending' if ascending else 'descending'}: "
                   f"{len(launches)} launches of global n/2 (must be exact)"))


def _reduce(name: str, n: int, lsz: int) -> None:
    src, binary = _ex("reduction")
    groups = _up(n, lsz) // lsz

    def build(rng):
        return {"in": _rand_i32(rng, n), "partial": np.full(groups, -1, i32)}

    def model(x):
        padded = np.zeros(groups * lsz, np.int64)
        padded[:n] = x["in"]
        return {"partial": _wrap32(padded.reshape(groups, lsz).sum(axis=1))}

    _add(Case(name=name, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="reduce_sum",
                               args=(Buf("in"), Buf("partial"), Local(lsz * 4), i32(n)),
                               global_size=(groups * lsz,), local_size=(lsz,)),),
              outputs=(Output(name="partial"),),
              note=f"n={n}, L={lsz}: {groups} workgroups, dynamic LDS {lsz * 4} B"))


def _autocorr(n: int = 256, nlags: int = 200) -> None:
    src, binary = _ex("autocorr")

    def build(rng):
        return {"x": _rand_i32(rng, n), "r": np.full(_up(nlags, 64), -1, i32)}

    def model(x):
        s = x["x"].astype(np.int64).astype(np.uint64)
        r = x["r"]
        r[:nlags] = [_wrap32(np.sum(s[:n - lag] * s[lag:])) for lag in range(nlags)]
        return {"r": r}

    _add(Case(name="autocorr", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="autocorr",
                               args=(Buf("x"), Buf("r"), i32(n), i32(nlags)),
                               global_size=(_up(nlags, 64),), local_size=(64,)),),
              outputs=(Output(name="r"),),
              note=f"n={n} nlags={nlags}: divergent trip counts, full-range ints"))


def _pool(kind: str, in_w: int = 63, in_h: int = 47) -> None:
    src, binary = _ex("pooling")
    ow, oh = in_w // 2, in_h // 2

    def build(rng):
        return {"in": _rand_i32(rng, in_w * in_h, -1_000_000, 1_000_001),
                "out": np.full(ow * oh, 0x11111111, i32)}

    def model(x):
        img = x["in"].reshape(in_h, in_w)[:2 * oh, :2 * ow].astype(np.int64)
        a, b = img[0::2, 0::2], img[0::2, 1::2]
        c, d = img[1::2, 0::2], img[1::2, 1::2]

        def tdiv(v, k):                    # C division, truncated toward zero
            return np.sign(v) * (np.abs(v) // k)

        if kind == "max":
            r = np.maximum(np.maximum(a, b), np.maximum(c, d))
        elif kind == "median":
            m1 = np.maximum(np.minimum(a, b), np.minimum(c, d))
            m2 = np.minimum(np.maximum(a, b), np.maximum(c, d))
            r = tdiv(m1 + m2, 2)
        else:
            r = tdiv(a + b + c + d, 4)
        return {"out": r.astype(i32).reshape(-1)}

    kernel = f"{kind}pool2x2"
    _add(Case(name=kernel, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=kernel,
                               args=(Buf("in"), Buf("out"), i32(in_w), i32(in_h)),
                               global_size=(_up(ow, 8), _up(oh, 8)), local_size=(8, 8)),),
              outputs=(Output(name="out"),),
              note=f"{in_w}x{in_h} input (odd: last row/column dropped) -> {ow}x{oh}"))


def _kmeans_swap(npoints: int = 1000, nfeatures: int = 4) -> None:
    src, binary = _ex("kmeans")

    def build(rng):
        return {"feature": _rand_f32(rng, npoints * nfeatures, -10, 10),
                "feature_swap": np.zeros(npoints * nfeatures, f32)}

    def model(x):
        return {"feature_swap": x["feature"].reshape(npoints, nfeatures).T.reshape(-1).copy()}

    _add(Case(name="kmeans_swap", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="kmeans_swap",
                               args=(Buf("feature"), Buf("feature_swap"), i32(npoints),
                                     i32(nfeatures)),
                               global_size=(_up(npoints, 64),), local_size=(64,)),),
              outputs=(Output(name="feature_swap", bits=True, why="a pure move"),),
              note=f"{npoints} points x {nfeatures} features"))


def _kmeans_assign(npoints: int = 1000, nclusters: int = 5, nfeatures: int = 4) -> None:
    src, binary = _ex("kmeans")

    def build(rng):
        centers = rng.integers(-8, 9, (nclusters, nfeatures)).astype(f32)
        which = rng.integers(0, nclusters, npoints)
        pts = centers[which] + rng.normal(0, 3, (npoints, nfeatures)).astype(f32)
        # A third of the points on the integer grid: exact distance ties (lowest index wins).
        grid = rng.random(npoints) < 1 / 3
        pts[grid] = np.round(pts[grid])
        return {"feature_swap": pts.T.reshape(-1).astype(f32), "clusters": centers.reshape(-1),
                "membership": np.full(npoints, -1, i32)}

    def model(x):
        fs = x["feature_swap"].reshape(nfeatures, npoints)
        cl = x["clusters"].reshape(nclusters, nfeatures)
        best = np.zeros(npoints, i32)
        mind = np.full(npoints, np.finfo(f32).max, f32)
        for c in range(nclusters):
            dist = np.zeros(npoints, f32)
            for f in range(nfeatures):
                diff = fs[f] - cl[c, f]
                dist = dist + diff * diff
            better = dist < mind
            mind = np.where(better, dist, mind)
            best = np.where(better, i32(c), best)
        return {"membership": best}

    _add(Case(name="kmeans_assign", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="kmeans_assign",
                               args=(Buf("feature_swap"), Buf("clusters"), Buf("membership"),
                                     i32(npoints), i32(nclusters), i32(nfeatures)),
                               global_size=(_up(npoints, 64),), local_size=(64,)),),
              outputs=(Output(name="membership"),),
              note=f"{npoints} points, {nclusters} clusters, {nfeatures} features; "
                   "integer-grid points make exact ties (unfused distances on both sides)"))


def _diag_dominant(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.uniform(-1, 1, (size, size))
    a[np.diag_indices(size)] = size * np.where(rng.random(size) < 0.5, -1.0, 1.0) \
        + rng.uniform(-1, 1, size)
    return a.astype(f32), rng.uniform(-1, 1, size).astype(f32)


def _gauss_model(a: np.ndarray, b: np.ndarray, m: np.ndarray, steps: Sequence[int],
                 fan2: bool = True) -> None:
    """Rodinia Fan1/Fan2 in float32, in place, one rounding per operation."""
    for t in steps:
        m[t + 1:, t] = a[t + 1:, t] / a[t, t]
        if fan2:
            a[t + 1:, t:] = a[t + 1:, t:] - m[t + 1:, t:t + 1] * a[t:t + 1, t:]
            b[t + 1:] = b[t + 1:] - m[t + 1:, t] * b[t]


def _fan_launches(size: int, steps: Sequence[int], fan2: bool = True) -> tuple[Launch, ...]:
    args = (Buf("m"), Buf("a"), Buf("b"), i32(size))
    out: list[Launch] = []
    for t in steps:
        out.append(Launch(kernel="fan1", args=(*args, i32(t)),
                          global_size=(_up(size - 1 - t, 64),), local_size=(64,)))
        if fan2:
            out.append(Launch(kernel="fan2", args=(*args, i32(t)),
                              global_size=(_up(size, 8), _up(size, 8)), local_size=(8, 8)))
    return tuple(out)


def _fan1(size: int = 40, t: int = 2) -> None:
    src, binary = _ex("gaussian")

    def build(rng):
        a, b = _diag_dominant(rng, size)
        a[t, t] = f32(3e29)                   # > 2**96: the pre-scaled path of the division
        a[t + 1:, t] *= f32(1e29)
        a[t + 1, t] = f32(0.0)
        return {"m": np.zeros(size * size, f32), "a": a.reshape(-1), "b": b}

    def model(x):
        m, a = x["m"].reshape(size, size), x["a"].reshape(size, size)
        _gauss_model(a, x["b"], m, [t], fan2=False)
        return {"m": m.reshape(-1)}

    _add(Case(name="fan1", source=src, binary=binary, build=build, model=model,
              launches=_fan_launches(size, [t], fan2=False),
              outputs=(Output(name="m", ulp=3,
                              why="clang's default 2.5-ulp division (a * v_rcp_f32(b), "
                                  "pre-scaled) vs PoCL's correctly rounded divss"),),
              note=f"size={size}, t={t}: one launch, pivot 3e29 (> 2^96, scaled division)"))


def _gaussian_random(size: int = 16) -> None:
    src, binary = _ex("gaussian")
    steps = range(size - 1)
    upper = np.triu_indices(size)
    lower = np.tril_indices(size, -1)

    def build(rng):
        a, b = _diag_dominant(rng, size)
        return {"m": np.zeros(size * size, f32), "a": a.reshape(-1), "b": b}

    def model(x):
        m, a = x["m"].reshape(size, size), x["a"].reshape(size, size)
        _gauss_model(a, x["b"], m, steps)
        return {"m": m.reshape(-1), "a": a.reshape(-1), "b": x["b"]}

    why = ("each 2.5-ulp quotient (v_rcp_f32) feeds 15 elimination steps; elements that cancel "
           "drift by thousands of ulps while the error stays ~1 ulp of the largest element "
           "(measured 2 ulp with a 1-ulp-off reciprocal over 200 seeds)")
    _add(Case(name="gaussian", source=src, binary=binary, build=build, model=model,
              launches=_fan_launches(size, steps),
              outputs=(Output(name="a", norm_ulp=16, select=lambda v: v.reshape(size, size)
                              [upper], why=why),
                       Output(name="b", norm_ulp=16, why=why),
                       Output(name="m", norm_ulp=16, select=lambda v: v.reshape(size, size)
                              [lower], why=why)),
              note=f"size={size}, random diagonally dominant: {2 * (size - 1)} launches; "
                   "lower triangle of a is cancellation residue, not compared"))


def _gaussian_exact(size: int = 16) -> None:
    src, binary = _ex("gaussian")
    steps = range(size - 1)

    def build(rng):
        # A = L U with dyadic entries: every quotient is l[i][t] (pivots are powers of two)
        # and every intermediate value has few bits, so each operation is exact anywhere.
        lo = np.tril(rng.integers(-4, 5, (size, size)) / 4, -1) + np.eye(size)
        up = np.triu(rng.integers(-8, 9, (size, size)).astype(float), 1)
        up[np.diag_indices(size)] = rng.choice([-8.0, -4.0, -2.0, 2.0, 4.0, 8.0], size)
        y = rng.integers(-8, 9, size).astype(float)
        return {"m": np.zeros(size * size, f32), "a": (lo @ up).astype(f32).reshape(-1),
                "b": (lo @ y).astype(f32)}

    def model(x):
        m, a = x["m"].reshape(size, size), x["a"].reshape(size, size)
        _gauss_model(a, x["b"], m, steps)
        return {"m": m.reshape(-1), "a": a.reshape(-1), "b": x["b"]}

    why = "every operation is exact (dyadic LU factors, power-of-two pivots)"
    _add(Case(name="gaussian_exact", source=src, binary=binary, build=build, model=model,
              launches=_fan_launches(size, steps),
              outputs=(Output(name="a", why=why), Output(name="b", why=why),
                       Output(name="m", why=why)),
              note=f"size={size}: {2 * (size - 1)} launches, bit-exact by construction"))


_CNN_W = np.array([
    [[0, 0, 0], [0, 16, 0], [0, 0, 0]], [[2, 2, 2], [2, 2, 2], [2, 2, 2]],
    [[-16, 0, 16], [-32, 0, 32], [-16, 0, 16]], [[-16, -32, -16], [0, 0, 0], [16, 32, 16]],
    [[0, 16, 0], [16, -64, 16], [0, 16, 0]], [[0, -16, 0], [-16, 80, -16], [0, -16, 0]],
    [[-32, -16, 0], [-16, 16, 16], [0, 16, 32]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]]], np.int64)
_CNN_B = np.array([0, -8, 4, 4, 0, -16, 8, 2], np.int64)


def _cnn(name: str, width: int, height: int, nmaps: int) -> None:
    src, binary = _ex("cnn")
    ow, oh = (width - 2) // 2, (height - 2) // 2
    maps = min(nmaps, 8)

    def build(rng):
        return {"in": _rand_i32(rng, width * height, -256, 256),
                "out": np.full(maps * ow * oh + 16, -7, i32)}

    def model(x):
        img = x["in"].reshape(height, width).astype(np.int64)
        out = x["out"]
        for f in range(maps):
            conv = np.full((height - 2, width - 2), _CNN_B[f], np.int64)
            for ky in range(3):
                for kx in range(3):
                    conv += _CNN_W[f, ky, kx] * img[ky:ky + height - 2, kx:kx + width - 2]
            act = np.maximum(conv >> 4, 0)[:2 * oh, :2 * ow]
            pooled = np.maximum(np.maximum(act[0::2, 0::2], act[0::2, 1::2]),
                                np.maximum(act[1::2, 0::2], act[1::2, 1::2]))
            out[f * oh * ow:(f + 1) * oh * ow] = pooled.reshape(-1)
        return {"out": out}

    _add(Case(name=name, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="cnn_layer",
                               args=(Buf("in"), Buf("out"), i32(width), i32(height),
                                     i32(nmaps)),
                               global_size=(_up(ow, 8), _up(oh, 8)), local_size=(8, 8)),),
              outputs=(Output(name="out"),),
              note=f"{width}x{height}, nmaps={nmaps}" + (" (clamped to 8)" if nmaps > 8 else "")
                   + f" -> {ow}x{oh}x{maps}, 16 canary words"))


# --- tests/kernels: PolyBench/GPU-style float kernels ------------------------------------------

_CONTRACT = ("products and sums rounded separately on both sides (v_mad/v_mac_f32; PoCL with "
             "FP_CONTRACT OFF), same order")


def _gemm(ni: int = 24, nj: int = 50, nk: int = 16) -> None:
    alpha, beta = f32(1.5), f32(0.75)

    def build(rng):
        return {"a": _rand_f32(rng, ni * nk), "b": _rand_f32(rng, nk * nj),
                "c": _rand_f32(rng, ni * nj)}

    def model(x):
        a, b = x["a"].reshape(ni, nk), x["b"].reshape(nk, nj)
        c = x["c"].reshape(ni, nj) * beta
        for k in range(nk):
            c = c + (alpha * a[:, k:k + 1]) * b[k:k + 1, :]
        return {"c": c.reshape(-1)}

    _add(Case(name="gemm", source=_tk("gemm"), build=build, model=model,
              launches=(Launch(kernel="gemm",
                               args=(Buf("a"), Buf("b"), Buf("c"), alpha, beta, i32(ni),
                                     i32(nj), i32(nk)),
                               global_size=(_up(nj, 32), _up(ni, 8)), local_size=(32, 8)),),
              outputs=(Output(name="c", why=_CONTRACT),),
              note=f"NI={ni} NJ={nj} NK={nk}, local (32, 8): 2x3 workgroups"))


def _atax(nx: int = 96, ny: int = 80) -> None:
    def build(rng):
        return {"A": _rand_f32(rng, nx * ny), "x": _rand_f32(rng, ny),
                "y": np.zeros(ny, f32), "tmp": np.zeros(nx, f32)}

    def model(v):
        a = v["A"].reshape(nx, ny)
        tmp = np.zeros(nx, f32)
        for j in range(ny):
            tmp = tmp + a[:, j] * v["x"][j]
        y = np.zeros(ny, f32)
        for i in range(nx):
            y = y + a[i, :] * tmp[i]
        return {"tmp": tmp, "y": y}

    _add(Case(name="atax", source=_tk("atax"), build=build, model=model,
              launches=(Launch(kernel="atax_kernel1",
                               args=(Buf("A"), Buf("x"), Buf("tmp"), i32(nx), i32(ny)),
                               global_size=(_up(nx, 64),), local_size=(64,)),
                        Launch(kernel="atax_kernel2",
                               args=(Buf("A"), Buf("y"), Buf("tmp"), i32(nx), i32(ny)),
                               global_size=(_up(ny, 64),), local_size=(64,))),
              outputs=(Output(name="tmp", why=_CONTRACT), Output(name="y", why=_CONTRACT)),
              note=f"NX={nx} NY={ny}: two dependent launches"))


def _conv2d_pb(ni: int = 40, nj: int = 60) -> None:
    c = [f32(v) for v in (0.2, 0.5, -0.8, -0.3, 0.6, -0.9, 0.4, 0.7, 0.10)]

    def build(rng):
        return {"A": _rand_f32(rng, ni * nj), "B": np.full(ni * nj, -7.0, f32)}

    def model(v):
        a = v["A"].reshape(ni, nj)
        b = v["B"].reshape(ni, nj)

        def at(di, dj):
            return a[1 + di:ni - 1 + di, 1 + dj:nj - 1 + dj]

        terms = [c[0] * at(-1, -1), c[1] * at(-1, 0), c[2] * at(-1, 1),
                 c[3] * at(0, -1), c[4] * at(0, 0), c[5] * at(0, 1),
                 c[6] * at(1, -1), c[7] * at(1, 0), c[8] * at(1, 1)]
        s = terms[0]
        for t in terms[1:]:
            s = s + t
        b[1:ni - 1, 1:nj - 1] = s
        return {"B": b.reshape(-1)}

    _add(Case(name="conv2d_pb", source=_tk("conv2d_pb"), build=build, model=model,
              launches=(Launch(kernel="Convolution2D_kernel",
                               args=(Buf("A"), Buf("B"), i32(ni), i32(nj)),
                               global_size=(_up(nj, 32), _up(ni, 8)), local_size=(32, 8)),),
              outputs=(Output(name="B", why=_CONTRACT),),
              note=f"NI={ni} NJ={nj}: 2x5 workgroups, border of B must stay untouched"))


def _jacobi2d(n: int = 40, tsteps: int = 4) -> None:
    def build(rng):
        return {"A": _rand_f32(rng, n * n, 0, 10), "B": _rand_f32(rng, n * n, 0, 10)}

    def model(v):
        a, b = v["A"].reshape(n, n), v["B"].reshape(n, n)
        for _ in range(tsteps):
            s = a[1:-1, 1:-1] + a[1:-1, :-2]
            s = s + a[1:-1, 2:]
            s = s + a[2:, 1:-1]
            s = s + a[:-2, 1:-1]
            b[1:-1, 1:-1] = f32(0.2) * s
            a[1:-1, 1:-1] = b[1:-1, 1:-1]
        return {"A": a.reshape(-1), "B": b.reshape(-1)}

    launches = []
    for _ in range(tsteps):
        for k in ("runJacobi2D_kernel1", "runJacobi2D_kernel2"):
            launches.append(Launch(kernel=k, args=(Buf("A"), Buf("B"), i32(n)),
                                   global_size=(_up(n, 32), _up(n, 8)), local_size=(32, 8)))
    _add(Case(name="jacobi2d", source=_tk("jacobi2d"), build=build, model=model,
              launches=tuple(launches),
              outputs=(Output(name="A", why="adds in source order, then one multiply"),
                       Output(name="B", why="adds in source order, then one multiply")),
              note=f"N={n}, {tsteps} time steps = {2 * tsteps} launches"))


def _mvt(n: int = 100) -> None:
    def build(rng):
        return {"a": _rand_f32(rng, n * n), "x1": _rand_f32(rng, n), "x2": _rand_f32(rng, n),
                "y_1": _rand_f32(rng, n), "y_2": _rand_f32(rng, n)}

    def model(v):
        a = v["a"].reshape(n, n)
        x1, x2 = v["x1"], v["x2"]
        for j in range(n):
            x1 = x1 + a[:, j] * v["y_1"][j]
            x2 = x2 + a[j, :] * v["y_2"][j]
        return {"x1": x1, "x2": x2}

    g = (_up(n, 64),)
    _add(Case(name="mvt", source=_tk("mvt"), build=build, model=model,
              launches=(Launch(kernel="mvt_kernel1", args=(Buf("a"), Buf("x1"), Buf("y_1"),
                                                           i32(n)),
                               global_size=g, local_size=(64,)),
                        Launch(kernel="mvt_kernel2", args=(Buf("a"), Buf("x2"), Buf("y_2"),
                                                           i32(n)),
                               global_size=g, local_size=(64,))),
              outputs=(Output(name="x1", why=_CONTRACT), Output(name="x2", why=_CONTRACT)),
              note=f"N={n}: row and column (strided) traversals"))


def _gesummv(n: int = 100) -> None:
    alpha, beta = f32(1.5), f32(-1.25)

    def build(rng):
        return {"a": _rand_f32(rng, n * n), "b": _rand_f32(rng, n * n), "x": _rand_f32(rng, n),
                "y": np.zeros(n, f32), "tmp": np.zeros(n, f32)}

    def model(v):
        a, b, x = v["a"].reshape(n, n), v["b"].reshape(n, n), v["x"]
        tmp, y = v["tmp"], v["y"]
        for j in range(n):
            tmp = tmp + a[:, j] * x[j]
            y = y + b[:, j] * x[j]
        return {"tmp": tmp, "y": alpha * tmp + beta * y}

    _add(Case(name="gesummv", source=_tk("gesummv"), build=build, model=model,
              launches=(Launch(kernel="gesummv_kernel",
                               args=(Buf("a"), Buf("b"), Buf("x"), Buf("y"), Buf("tmp"), alpha,
                                     beta, i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="tmp", why=_CONTRACT), Output(name="y", why=_CONTRACT)),
              note=f"N={n}, alpha={alpha} beta={beta}"))


def _syrk(n: int = 40, m: int = 16) -> None:
    alpha, beta = f32(1.25), f32(0.5)

    def build(rng):
        return {"a": _rand_f32(rng, n * m), "c": _rand_f32(rng, n * n)}

    def model(v):
        a = v["a"].reshape(n, m)
        c = v["c"].reshape(n, n) * beta
        for k in range(m):
            c = c + (alpha * a[:, k:k + 1]) * a[:, k][None, :]
        return {"c": c.reshape(-1)}

    _add(Case(name="syrk", source=_tk("syrk"), build=build, model=model,
              launches=(Launch(kernel="syrk_kernel",
                               args=(alpha, beta, Buf("a"), Buf("c"), i32(m), i32(n)),
                               global_size=(_up(n, 32), _up(n, 8)), local_size=(32, 8)),),
              outputs=(Output(name="c", why=_CONTRACT),),
              note=f"N={n} M={m}: scalar arguments before the pointers"))


# --- tests/kernels: integer, memory and builtin kernels ---------------------------------------

def _histogram_global(n: int = 1536, nbins: int = 100) -> None:
    def build(rng):
        data = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
        data[: n // 4] = rng.integers(0, 300, n // 4).astype(u32)      # a skewed part
        return {"data": data, "hist": np.zeros(nbins, u32), "total": np.zeros(1, u32)}

    def model(v):
        d = v["data"]
        return {"hist": np.bincount(d % nbins, minlength=nbins).astype(u32),
                "total": np.array([np.sum(d & 0xFF, dtype=np.uint64) & 0xFFFFFFFF], u32)}

    _add(Case(name="histogram_global", source=_tk("histogram"), build=build, model=model,
              launches=(Launch(kernel="histogram_global",
                               args=(Buf("data"), Buf("hist"), Buf("total"), i32(n),
                                     u32(nbins)),
                               global_size=(256,), local_size=(64,)),),
              outputs=(Output(name="hist"), Output(name="total")),
              note=f"n={n}, {nbins} bins: global atomic_inc/atomic_add, grid-stride loop"))


def _histogram_local(n: int = 4096) -> None:
    def build(rng):
        return {"data": rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32),
                "hist": np.zeros(256, u32)}

    def model(v):
        return {"hist": np.bincount(v["data"] & 0xFF, minlength=256).astype(u32)}

    _add(Case(name="histogram_local", source=_tk("histogram"), build=build, model=model,
              launches=(Launch(kernel="histogram_local",
                               args=(Buf("data"), Buf("hist"), i32(n)),
                               global_size=(256,), local_size=(64,)),),
              outputs=(Output(name="hist"),),
              note=f"n={n}: LDS atomic_inc sub-histograms merged with global atomic_add"))


def _scan(n: int = 1000) -> None:
    block = 128
    nb = _up(n, block) // block

    def build(rng):
        return {"in": _rand_i32(rng, n, -(1 << 20), 1 << 20), "out": np.zeros(n, i32),
                "sums": np.zeros(nb, i32), "sums_scan": np.zeros(nb, i32),
                "dummy": np.zeros(1, i32)}

    def model(v):
        out = np.cumsum(v["in"].astype(np.int64))
        padded = np.zeros(nb * block, np.int64)
        padded[:n] = v["in"]
        sums = padded.reshape(nb, block).sum(axis=1)
        return {"out": out.astype(i32), "sums": sums.astype(i32),
                "sums_scan": np.cumsum(sums).astype(i32)}

    _add(Case(name="scan", source=_tk("scan"), build=build, model=model,
              launches=(Launch(kernel="scan_block",
                               args=(Buf("in"), Buf("out"), Buf("sums"), i32(n)),
                               global_size=(nb * block,), local_size=(block,)),
                        Launch(kernel="scan_block",
                               args=(Buf("sums"), Buf("sums_scan"), Buf("dummy"), i32(nb)),
                               global_size=(block,), local_size=(block,)),
                        Launch(kernel="scan_add",
                               args=(Buf("out"), Buf("sums_scan"), i32(n)),
                               global_size=(nb * block,), local_size=(block,))),
              outputs=(Output(name="out"), Output(name="sums"), Output(name="sums_scan")),
              note=f"n={n}: {nb} blocks of 128 (required size), 3 launches"))


def _private_sort(nrows: int = 100, row_len: int = 20) -> None:
    def build(rng):
        return {"in": _rand_i32(rng, nrows * row_len, -50, 50),
                "out": np.zeros(nrows * row_len, i32), "median": np.zeros(nrows, i32)}

    def model(v):
        s = np.sort(v["in"].reshape(nrows, row_len), axis=1)
        return {"out": s.reshape(-1), "median": s[:, (row_len - 1) // 2].copy()}

    _add(Case(name="private_sort", source=_tk("private_sort"), build=build, model=model,
              launches=(Launch(kernel="sort_rows",
                               args=(Buf("in"), Buf("out"), Buf("median"), i32(nrows),
                                     i32(row_len)),
                               global_size=(_up(nrows, 64),), local_size=(64,)),),
              outputs=(Output(name="out"), Output(name="median")),
              note=f"{nrows} rows of {row_len}: scratch memory, data-dependent loops"))


def _div_operands(rng: np.random.Generator, n: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    dt = i32 if bits == 32 else i64
    a = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
    b = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
    # small divisors, divisors near a, powers of two, the extremes
    q = n // 5
    b[:q] = rng.integers(-40, 41, q)
    b[q:2 * q] = a[q:2 * q] // rng.integers(1, 5, q) + rng.integers(-1, 2, q)
    b[2 * q:2 * q + 40] = (1 << rng.integers(0, bits - 1, 40)) * rng.choice([-1, 1], 40)
    edge_a = [lo, lo, lo, hi, hi, -1, 0, 7, -7, lo, hi, lo + 1]
    edge_b = [1, 2, hi, -1, lo, lo, 5, -7, 2, lo, hi, -1]
    a[-len(edge_a):], b[-len(edge_b):] = edge_a, edge_b
    b[b == 0] = 3
    b[(a == lo) & (b == -1)] = -2
    return a.astype(dt), b.astype(dt)


def _c_divmod(a: np.ndarray, b: np.ndarray) -> tuple[list[int], list[int]]:
    q = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a, b, strict=True)]
    return q, [x - y * z for x, y, z in zip(a, b, q, strict=True)]


def _intdiv(bits: int, n: int = 500) -> None:
    st, ut = (i32, u32) if bits == 32 else (i64, u64)

    def build(rng):
        a, b = _div_operands(rng, n, bits)
        return {"a": a, "b": b, "q": np.zeros(n, st), "r": np.zeros(n, st),
                "uq": np.zeros(n, ut), "ur": np.zeros(n, ut)}

    def model(v):
        a, b = [int(x) for x in v["a"]], [int(x) for x in v["b"]]
        q, r = _c_divmod(a, b)
        ua, ub = [int(x) for x in v["a"].view(ut)], [int(x) for x in v["b"].view(ut)]
        return {"q": np.array(q, st), "r": np.array(r, st),
                "uq": np.array([x // y for x, y in zip(ua, ub, strict=True)], ut),
                "ur": np.array([x % y for x, y in zip(ua, ub, strict=True)], ut)}

    name = f"intdiv{bits}"
    _add(Case(name=name, source=_tk("intdiv"), build=build, model=model,
              launches=(Launch(kernel=name,
                               args=(Buf("a"), Buf("b"), Buf("q"), Buf("r"), Buf("uq"),
                                     Buf("ur"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=tuple(Output(name=k) for k in ("q", "r", "uq", "ur")),
              note=f"n={n} {bits}-bit operands: random, small, near-equal, powers of two, "
                   "MIN/MAX"))


def _ids(name: str, gsize: tuple[int, ...], lsize: tuple[int, ...],
         offset: tuple[int, ...] | None = None) -> None:
    dims = len(gsize)
    g3 = (*gsize, *(1,) * (3 - dims))
    l3 = (*lsize, *(1,) * (3 - dims))
    o3 = (*(offset or ()), *(0,) * (3 - len(offset or ())))
    total = int(np.prod(g3))

    def build(_rng):
        return {"out": np.full(16 * total, 0xDEADBEEF, u32)}

    def model(_v):
        z, y, x = np.meshgrid(*(np.arange(k) for k in g3[::-1]), indexing="ij")
        ids = [x.reshape(-1), y.reshape(-1), z.reshape(-1)]
        rec = np.zeros((total, 16), u32)
        for d in range(3):
            rec[:, d] = ids[d] + o3[d]
            rec[:, 3 + d] = ids[d] % l3[d]
            rec[:, 6 + d] = ids[d] // l3[d]
            rec[:, 9 + d] = l3[d]
            rec[:, 12 + d] = g3[d] // l3[d]
        rec[:, 15] = dims + 1000 * o3[0] + 100000 * o3[1] + 10000000 * o3[2]
        return {"out": rec.reshape(-1)}

    _add(Case(name=name, source=_tk("ids3d"), build=build, model=model,
              launches=(Launch(kernel="ids3d", args=(Buf("out"),), global_size=gsize,
                               local_size=lsize, global_offset=offset),),
              outputs=(Output(name="out"),),
              note=f"{dims}-D: global {gsize}, local {lsize}, "
                   f"{total // int(np.prod(l3))} workgroups of {int(np.prod(l3))}"
                   + (f", global offset {offset}" if offset else "")))


def _fdiv(name: str, correctly_rounded: bool, n: int = 1000) -> None:
    flags = ("-cl-fp32-correctly-rounded-divide-sqrt",) if correctly_rounded else ()

    def build(rng):
        def mag(lo, hi):
            return (np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n))

        a, b = mag(-20, 20), mag(-20, 20)
        b[:50] = mag(96, 100)[:50]                   # huge denominators: the scaled path
        a[50:100] = b[50:100] * rng.integers(1, 9, 50)   # exact quotients
        a[100:110] = np.arange(1, 11) ** 2                # exact roots
        return {"a": a.astype(f32), "b": b.astype(f32), "quot": np.zeros(n, f32),
                "recip": np.zeros(n, f32), "root": np.zeros(n, f32)}

    def model(v):
        a, b = v["a"], v["b"]
        return {"quot": a / b, "recip": f32(1) / b, "root": np.sqrt(np.abs(a))}

    if correctly_rounded:
        outs = tuple(Output(name=k, why="-cl-fp32-correctly-rounded-divide-sqrt on both sides")
                     for k in ("quot", "recip", "root"))
    else:
        outs = (Output(name="quot", ulp=3, why="OpenCL 2.5 ulp division (a * v_rcp_f32(b)) vs "
                                               "the correctly rounded reference"),
                Output(name="recip", ulp=3, why="bare v_rcp_f32 (2.5 ulp allowed)"),
                Output(name="root", ulp=4, why="bare v_sqrt_f32 (3 ulp allowed)"))
    _add(Case(name=name, source=_tk("fdiv"), tahiti_flags=flags, pocl_options=flags,
              build=build, model=model,
              launches=(Launch(kernel="fdiv_sqrt",
                               args=(Buf("a"), Buf("b"), Buf("quot"), Buf("recip"),
                                     Buf("root"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=outs,
              note=f"n={n}, " + ("built with -cl-fp32-correctly-rounded-divide-sqrt"
                                 if correctly_rounded else "clang's default fast division")))


def _splitmix64(n: int = 300, seed: int = 0x0123456789ABCDEF) -> None:
    def build(_rng):
        return {"out": np.zeros(n, u64)}

    def model(_v):
        z = u64(seed) + (np.arange(1, n + 1, dtype=u64) * u64(0x9E3779B97F4A7C15))
        z = (z ^ (z >> u64(30))) * u64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u64(27))) * u64(0x94D049BB133111EB)
        return {"out": z ^ (z >> u64(31))}

    _add(Case(name="splitmix64", source=_tk("long_arith"), build=build, model=model,
              launches=(Launch(kernel="splitmix64", args=(Buf("out"), u64(seed), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: 64-bit multiply, shifts and xor, ulong scalar argument"))


def _long_ops(n: int = 300) -> None:
    def build(rng):
        a = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True)
        b = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True)
        b[: n // 4] = rng.integers(-100, 100, n // 4)
        edges = [(-(1 << 63), -1), ((1 << 63) - 1, 5), (0, 63), (-1, 64 + 32), (1, -1)]
        for k, (x, y) in enumerate(edges):
            a[n - 1 - k], b[n - 1 - k] = x, y
        return {"a": a, "b": b, "out": np.zeros(8 * n, i64)}

    def model(v):
        mask = (1 << 64) - 1
        out = []
        for x, y in zip((int(t) for t in v["a"]), (int(t) for t in v["b"]), strict=True):
            ux, uy, s = x & mask, y & mask, y & 63
            out += [ux + uy, ux - uy, ux * uy, x >> s, ux >> s, ux << s, (ux * uy) >> 64,
                    (max(x, y) & mask) - (x < y) + (ux > uy)]
        return {"out": np.array([o & mask for o in out], np.uint64).view(i64)}

    _add(Case(name="long_ops", source=_tk("long_arith"), build=build, model=model,
              launches=(Launch(kernel="long_ops", args=(Buf("a"), Buf("b"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: add/sub/mul/shifts/mul_hi/compare on long and ulong"))


def _rgba_to_grey(npixels: int = 1000) -> None:
    def build(rng):
        return {"rgba": rng.integers(0, 256, 4 * npixels).astype(np.uint8),
                "grey": np.full(npixels + 3, 0xA5, np.uint8)}

    def model(v):
        p = v["rgba"].reshape(npixels, 4).astype(np.uint32)
        grey = v["grey"]
        grey[:npixels] = (77 * p[:, 0] + 150 * p[:, 1] + 29 * p[:, 2] + 128) >> 8
        return {"grey": grey}

    _add(Case(name="rgba_to_grey", source=_tk("subword"), build=build, model=model,
              launches=(Launch(kernel="rgba_to_grey",
                               args=(Buf("rgba"), Buf("grey"), i32(npixels)),
                               global_size=(_up(npixels, 64),), local_size=(64,)),),
              outputs=(Output(name="grey"),),
              note=f"{npixels} pixels: byte loads, one byte store per work-item, 3 canary "
                   "bytes"))


def _mix_small(n: int = 1000) -> None:
    def build(rng):
        return {"c": rng.integers(-128, 128, n).astype(np.int8),
                "s": rng.integers(-32768, 32768, n).astype(np.int16),
                "u": rng.integers(0, 256, n).astype(np.uint8),
                "out16": np.zeros(n, np.int16), "out8": np.zeros(n, np.int8),
                "outu": np.zeros(n, np.uint8)}

    def model(v):
        c, s, u = (v[k].astype(np.int64) for k in ("c", "s", "u"))
        return {"out16": ((s * 3 - c) & 0xFFFF).astype(np.uint16).view(np.int16),
                "out8": ((c >> 1) ^ (u - ((u & 0x80) << 1))).astype(np.int8),
                "outu": np.minimum(u + (c & 0x7F), 255).astype(np.uint8)}

    _add(Case(name="mix_small", source=_tk("subword"), build=build, model=model,
              launches=(Launch(kernel="mix_small",
                               args=(Buf("c"), Buf("s"), Buf("u"), Buf("out16"), Buf("out8"),
                                     Buf("outu"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out16"), Output(name="out8"), Output(name="outu")),
              note=f"n={n}: signed/unsigned 8- and 16-bit loads and stores, add_sat"))


def _crc32(nrecords: int = 200, record_len: int = 23) -> None:
    def build(rng):
        return {"data": rng.integers(0, 256, nrecords * record_len).astype(np.uint8),
                "crc": np.zeros(nrecords, u32)}

    def model(v):
        d = v["data"].tobytes()
        return {"crc": np.array([zlib.crc32(d[r * record_len:(r + 1) * record_len])
                                 for r in range(nrecords)], u32)}

    _add(Case(name="crc32", source=_tk("crc32"), build=build, model=model,
              launches=(Launch(kernel="crc32_records",
                               args=(Buf("data"), Buf("crc"), i32(record_len), i32(nrecords)),
                               global_size=(_up(nrecords, 64),), local_size=(64,)),),
              outputs=(Output(name="crc"),),
              note=f"{nrecords} records of {record_len} bytes: __constant table (relocated), "
                   "per-lane table reads; checked against zlib.crc32"))


def _poly_eval(n: int = 500) -> None:
    coef = np.array([7, -3, 0, 11, -2, 5, 1], i32)

    def build(rng):
        return {"coef": coef.copy(), "x": _rand_i32(rng, n), "y": np.zeros(n, i32)}

    def model(v):
        x = v["x"].view(u32).astype(np.uint64)
        acc = np.zeros(n, np.uint64)
        for k in v["coef"][::-1].view(u32).astype(np.uint64):
            acc = (acc * x + k) & 0xFFFFFFFF
        return {"y": acc.astype(u32).view(i32)}

    _add(Case(name="poly_eval", source=_tk("crc32"), build=build, model=model,
              launches=(Launch(kernel="poly_eval",
                               args=(Buf("coef"), i32(len(coef)), Buf("x"), Buf("y"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="y"),),
              note=f"n={n}: __constant pointer argument, Horner modulo 2^32"))


def _scale_f64(n: int = 200, scale: float = -3.75) -> None:
    def build(rng):
        return {"x": _rand_f32(rng, n, -1e3, 1e3), "out": np.zeros(n, np.float64)}

    def model(v):
        return {"out": v["x"].astype(np.float64) * np.float64(f32(scale))}

    _add(Case(name="scale_f64", source=_tk("scale_f64"), build=build, model=model,
              launches=(Launch(kernel="scale_f64",
                               args=(Buf("out"), Buf("x"), f32(scale), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", bits=True,
                              why="a product of two floats is exact in double"),),
              note=f"n={n}: f64 conversion and multiply (no FP64 in the RTL: it traps there)"))


def _define_cases() -> None:
    # examples/kernels: all 20 kernels
    _vecadd()
    _matadd(60, 40, i32)
    _matadd(50, 30, f32)
    _matmul("matmul_int", m=24, n=40, k=20)
    _matmul("matmul_float", m=36, n=28, k=32)
    _matmul("matmul_float_tiled", m=40, n=24, k=20)
    _transpose()
    _conv2d("int", 30, 22, 3)
    _conv2d("float", 24, 20, 5)
    _bitonic("bitonic_sort", 9, ascending=True)
    _bitonic("bitonic_sort_desc", 7, ascending=False)
    _reduce("reduce_sum", 1000, 256)
    _reduce("reduce_sum_l64", 300, 64)
    _autocorr()
    for kind in ("max", "median", "avg"):
        _pool(kind)
    _kmeans_swap()
    _kmeans_assign()
    _fan1()
    _gaussian_random()
    _gaussian_exact()
    _cnn("cnn_layer", 34, 34, 8)
    _cnn("cnn_layer_clamped", 27, 20, 11)
    # tests/kernels
    _gemm()
    _atax()
    _conv2d_pb()
    _jacobi2d()
    _mvt()
    _gesummv()
    _syrk()
    _histogram_global()
    _histogram_local()
    _scan()
    _private_sort()
    _intdiv(32)
    _intdiv(64)
    _ids("ids3d", (8, 6, 4), (4, 3, 2))
    _ids("ids3d_as_2d", (16, 12), (8, 4))
    _ids("ids3d_as_1d", (96,), (32,))
    _ids("ids3d_offset", (8, 6, 4), (4, 3, 2), offset=(3, 1, 2))
    _fdiv("fdiv_default", correctly_rounded=False)
    _fdiv("fdiv_cr", correctly_rounded=True)
    _splitmix64()
    _long_ops()
    _rgba_to_grey()
    _mix_small()
    _crc32()
    _poly_eval()
    _scale_f64()


_define_cases()

#: Cases by name.
CASES_BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
if len(CASES_BY_NAME) != len(CASES):
    raise RuntimeError("duplicate case names")


def select_cases(names: Sequence[str] | None) -> list[Case]:
    """The named cases (all when ``names`` is empty), in suite order. A name may also be a
    kernel name, selecting every case that launches it."""
    if not names:
        return list(CASES)
    wanted: set[str] = set()
    for name in names:
        hits = {c.name for c in CASES if c.name == name or name in c.kernels}
        if not hits:
            raise SuiteError(f"unknown case or kernel {name!r} (known cases: "
                             f"{', '.join(CASES_BY_NAME)})")
        wanted |= hits
    return [c for c in CASES if c.name in wanted]


def replace(case: Case, **changes: Any) -> Case:
    """A modified copy of a case (e.g. another seed)."""
    return dataclasses.replace(case, **changes)
