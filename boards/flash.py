"""``gpgpu board flash``: load a built bitstream into a board with openFPGALoader.

:func:`flash_command` is the command line (``--dry-run`` prints it); :func:`flash` runs it and
turns its failures (no such tool, no cable or board found, a JTAG that reads no device) into
one-line :class:`FlashError`\\ s. openFPGALoader is the Debian package ``openfpgaloader``
(``scripts/setup.sh`` installs it); ``$OPENFPGALOADER`` names another binary, as for
amaranth-boards' own programming.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from gpgpu_hdl.errors import GpgpuError
from gpgpu_hdl.toolchain import exit_status

from .platforms import Board, board

__all__ = ["FlashError", "BITSTREAM", "find_loader", "flash_command", "flash"]

#: The bitstream of a build directory (``top.bit``, :mod:`boards.build`).
BITSTREAM = "top.bit"
_LOADER = "openFPGALoader"
#: Seconds openFPGALoader may take (a 85F over the ULX3S' FT231X bit-bang JTAG: about 20 s).
TIMEOUT = 300


class FlashError(GpgpuError):
    """The bitstream could not be loaded."""


def find_loader() -> str | None:
    """openFPGALoader's path (``$OPENFPGALOADER`` first), or None when it is not installed."""
    named = os.environ.get("OPENFPGALOADER")
    if named:
        return shutil.which(named)
    return shutil.which(_LOADER)


def _bitstream(build_dir: Path, b: Board) -> Path:
    if not build_dir.is_dir():
        raise FlashError(f"{build_dir}: no such build directory (make one with `gpgpu board "
                         f"build ... --board {b.name} -o {build_dir}`)")
    report = build_dir / "report.json"
    if report.is_file():
        try:
            built_for = json.loads(report.read_text()).get("board")
        except ValueError:
            built_for = None
        if built_for and built_for != b.name:
            raise FlashError(f"{build_dir} was built for {built_for}, not {b.name}")
    bit = build_dir / BITSTREAM
    if not bit.is_file():
        if not b.open_toolchain:
            raise FlashError(f"{build_dir} has no {BITSTREAM} yet: it is a vendor build tree; "
                             f"run its build_top.sh with Vivado first")
        raise FlashError(f"{build_dir} has no {BITSTREAM} (did the build finish?)")
    return bit


def flash_command(build_dir: str | os.PathLike, board_name: str, *, cable: str | None = None,
                  persist: bool = False) -> list[str]:
    """openFPGALoader's command line that loads ``build_dir``'s bitstream into the board's
    FPGA (``persist``: writes its SPI flash instead, so that it survives a power cycle)."""
    b = board(board_name)
    bit = _bitstream(Path(build_dir), b)
    loader = find_loader() or os.environ.get("OPENFPGALOADER") or _LOADER
    argv = [loader, *b.loader_args]
    if cable:
        argv += ["-c", cable]
    argv += ["-f" if persist else "-m", str(bit)]
    return argv


def _reason(output: str) -> str:
    """The line of openFPGALoader's output that says what went wrong."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for key in ("error", "fail", "not found", "unable", "no device", "cannot"):
        for line in reversed(lines):
            if key in line.lower():
                return line
    return lines[-1] if lines else "no output"


def flash(build_dir: str | os.PathLike, board_name: str, *, cable: str | None = None,
          persist: bool = False, timeout: float = TIMEOUT) -> list[str]:
    """Load the bitstream (see :func:`flash_command`); return the command that did it."""
    argv = flash_command(build_dir, board_name, cable=cable, persist=persist)
    if find_loader() is None:
        raise FlashError(f"{argv[0]} is not installed (Debian: `apt-get install "
                         f"openfpgaloader`, or `make setup` as root; or set $OPENFPGALOADER)")
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FlashError(f"{board_name}: openFPGALoader did not finish within {timeout:g} s: "
                         "is the board connected and powered?") from None
    except OSError as exc:
        raise FlashError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        raise FlashError(f"{board_name} does not answer: openFPGALoader "
                         f"{exit_status(proc.returncode)}: "
                         f"{_reason(proc.stderr + proc.stdout)}")
    return argv
