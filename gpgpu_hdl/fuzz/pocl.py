"""The PoCL reference: OpenCL C built and run by PoCL on the CPU through pyopencl (shared by
the differential runner and the example suite, ``examples/suite/framework.py``).

Every build gets :data:`POCL_PREAMBLE` in front of the source, followed by ``#line 1``:
``#pragma OPENCL FP_CONTRACT OFF``, because PoCL on x86-64 fuses ``a * b + c`` into one
rounding where clang for tahiti rounds the product and the sum separately (PoCL refuses
``-ffp-contract=off``). :data:`POCL_OPTIONS` add ``-cl-denorms-are-zero``, matching the flushed
denormals of the tahiti kernels.
"""

from __future__ import annotations

import functools
import pickle
from collections import namedtuple
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GpgpuError
from ..toolchain import exit_status

__all__ = ["POCL_PREAMBLE", "POCL_OPTIONS", "PoclError", "Buf", "Local", "PoclLaunch",
           "context", "build", "run", "Job", "run_isolated"]

#: What :func:`build` puts in front of every source.
POCL_PREAMBLE = "#pragma OPENCL FP_CONTRACT OFF\n"
#: Build options of every PoCL build (a caller may add more).
POCL_OPTIONS = ("-cl-std=CL1.2", "-cl-denorms-are-zero")


class PoclError(GpgpuError):
    """No PoCL device, or PoCL could not build a program."""


@dataclass(frozen=True)
class Buf:
    """A kernel argument that is one of the buffers (``__global``/``__constant``)."""

    name: str


@dataclass(frozen=True)
class Local:
    """A ``__local`` pointer argument of ``nbytes`` bytes."""

    nbytes: int


#: One launch for :func:`run` (anything with these attributes will do): kernel name, arguments,
#: global and local size, global offset (None: none).
PoclLaunch = namedtuple("PoclLaunch", "kernel args global_size local_size global_offset",
                        defaults=(None,))


@functools.cache
def context() -> tuple[Any, Any]:
    """(context, in-order queue) on the PoCL CPU device."""
    try:
        import pyopencl as cl
    except ImportError as exc:
        raise PoclError(f"pyopencl is not installed ({exc})") from None
    seen = []
    for platform in cl.get_platforms():
        seen.append(platform.name)
        if "Portable Computing Language" not in platform.name:
            continue
        devices = platform.get_devices(device_type=cl.device_type.CPU)
        if devices:
            ctx = cl.Context(devices[:1])
            return ctx, cl.CommandQueue(ctx)
    raise PoclError("no PoCL CPU device found (OpenCL platforms: "
                    f"{', '.join(seen) or 'none'}); install pocl-opencl-icd")


@functools.lru_cache(maxsize=64)
def _build(text: str, name: str, options: tuple[str, ...], preamble: str) -> dict[str, Any]:
    import pyopencl as cl

    ctx, _ = context()
    with warnings.catch_warnings():
        # pyopencl warns about any non-empty build log; a real error raises below.
        warnings.simplefilter("ignore", cl.CompilerWarning)
        try:
            program = cl.Program(ctx, f'{preamble}#line 1 "{name}"\n{text}').build(
                options=list(options))
        except cl.Error as exc:
            first = next((line for line in str(exc).splitlines() if "error" in line),
                         str(exc).splitlines()[0])
            raise PoclError(f"PoCL build of {name} failed: {first.strip()}") from None
    return {k.function_name: k for k in program.all_kernels()}


def build(text: str, name: str, options: Sequence[str] = POCL_OPTIONS, *,
          preamble: str = POCL_PREAMBLE) -> dict[str, Any]:
    """The kernels of the OpenCL C source ``text`` (called ``name`` in messages), built by
    PoCL with ``options`` after ``preamble`` (the last 64 builds are kept)."""
    return _build(text, name, tuple(options), preamble)


def run(kernels: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
        launches: Iterable[Any], outputs: Iterable[str], *, what: str = "program"
        ) -> dict[str, np.ndarray]:
    """Run ``launches`` (each with ``kernel``, ``args``, ``global_size``, ``local_size``,
    ``global_offset``; an argument is a :class:`Buf`, a :class:`Local` or a numpy scalar) in
    order on copies of ``arrays``; return the ``outputs`` buffers afterwards."""
    import pyopencl as cl

    ctx, queue = context()
    mf = cl.mem_flags
    bufs = {name: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr)
            for name, arr in arrays.items()}
    for la in launches:
        if la.kernel not in kernels:
            raise PoclError(f"{what} has no kernel {la.kernel!r}")
        args = [bufs[a.name] if isinstance(a, Buf) else
                cl.LocalMemory(a.nbytes) if isinstance(a, Local) else a for a in la.args]
        kernels[la.kernel](queue, la.global_size, la.local_size, *args,
                           global_offset=la.global_offset)
    out = {}
    for name in outputs:
        host = np.empty_like(arrays[name])
        cl.enqueue_copy(queue, host, bufs[name])
        out[name] = host
    queue.finish()
    return out


# --- in a child process ----------------------------------------------------------------------

#: One program run for :func:`run_isolated`: its launches, input arrays and output names.
Job = tuple[Sequence[Any], Mapping[str, np.ndarray], Sequence[str]]


def run_isolated(text: str, name: str, options: Sequence[str], jobs: Sequence[Job], *,
                 timeout: float = 120.0) -> list[dict[str, np.ndarray] | str]:
    """Build ``text`` and run each job (:func:`run`) in a child process, so that PoCL
    crashing or hanging on a program costs the child only. Returns, per job, its output
    buffers or one line saying what went wrong (``PoclError: ...`` for a failed build or run,
    ``PoclCrash: ...`` for the job during which the child died, ``PoclTimeout: ...`` when one
    job took longer than ``timeout`` seconds); after a crash or a hang the remaining jobs run
    in a new child."""
    results: list[dict[str, np.ndarray] | str] = []
    while len(results) < len(jobs):
        todo = list(jobs[len(results):])
        with tempfile.TemporaryDirectory() as tmp:
            answers = Path(tmp) / "answers"
            request = pickle.dumps((text, name, tuple(options), todo, str(answers)))
            try:
                proc = subprocess.run([sys.executable, "-c", _CHILD], input=request,
                                      capture_output=True, timeout=timeout * len(todo) + 60)
                failure = "" if proc.returncode == 0 else (
                    f"PoclCrash: the PoCL process {exit_status(proc.returncode)}"
                    f"{_last_line(proc.stderr)}")
            except subprocess.TimeoutExpired:
                failure = f"PoclTimeout: no result within {timeout:.0f} s per program"
            done = _read_answers(answers) if answers.exists() else []
        results.extend(done)
        if len(results) < len(jobs):
            results.append(failure or "PoclCrash: the PoCL process stopped without an answer")
    return results


_CHILD = "from gpgpu_hdl.fuzz.pocl import _serve; _serve()"


def _last_line(stderr: bytes) -> str:
    lines = [x for x in stderr.decode(errors="replace").splitlines() if x.strip()]
    return f" ({lines[-1].strip()[:200]})" if lines else ""


def _read_answers(path: Path) -> list[Any]:
    out = []
    with open(path, "rb") as f:
        while True:
            try:
                out.append(pickle.load(f))
            except EOFError:
                return out
            except pickle.UnpicklingError:      # a half-written answer of a dying child
                return out


def _serve() -> None:
    """The child's side of :func:`run_isolated`: answers appended to a file, one per job."""
    text, name, options, jobs, answers = pickle.loads(sys.stdin.buffer.read())
    with open(answers, "ab") as out:
        def answer(value: Any) -> None:
            pickle.dump(value, out)
            out.flush()                 # in the OS's hands: survives a crash of the child
        try:
            kernels = build(text, name, options)
        except GpgpuError as exc:
            for _ in jobs:
                answer(f"PoclError: {exc}")
            return
        for launches, arrays, outputs in jobs:
            try:
                answer(run(kernels, arrays, launches, outputs, what=name))
            except Exception as exc:        # pyopencl's errors: the job's answer, not a crash
                answer(f"PoclError: {type(exc).__name__}: {str(exc).strip()[:300]}")
