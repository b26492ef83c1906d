"""``gpgpu board``: the boards the project builds for, bitstreams for a kernel set, flashing.

    gpgpu board list
    gpgpu board build KERNELS... --board NAME [-o DIR] [--config NAME=VALUE ...]
                     [--cu-mhz F] [--bus-mhz F] [--baud N] [--seed N]
    gpgpu board flash DIR --board NAME [--cable NAME] [--persist] [--dry-run]

The ``gpgpu`` command (:mod:`gpgpu_hdl.cli`) loads this group by module name: the generator
never imports the board support. The commands only parse, call :mod:`boards.build`,
:mod:`boards.flash` and :mod:`boards.platforms`, and print; see ``docs/boards.md``.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from gpgpu_hdl.cliutil import StepStatus, console

from .platforms import BOARDS, board

__all__ = ["board_group"]

#: Measured compute units (docs/synth.md), for ``board list``: name, then per family the
#: LUTs and multipliers Yosys mapped (None: not measured). Block RAMs are computed from the
#: configuration; the SoC around the unit and a trimmed unit need a build to be known.
KNOWN_UNITS = (
    ("default unit (1 lane, FP32)", {"ecp5": (28_268, 48), "xilinx7": (24_625, 41)}),
    ("1 lane, no FP32", {"ecp5": (13_058, 40), "xilinx7": None}),
)


def _mhz(text: float | None) -> int | None:
    return None if text is None else round(text * 1_000_000)


@click.group("board", context_settings={"help_option_names": ["-h", "--help"]})
def board_group() -> None:
    """FPGA boards: list them, build a bitstream for kernels, flash it."""


@board_group.command("list")
def list_command() -> None:
    """The supported boards, their FPGAs and what fits them."""
    from gpgpu_hdl.config import CuConfig

    from .board_top import RESERVED_BLOCK_RAMS, memory_bytes

    out = console()
    table = Table(box=None, pad_edge=False, title="Boards", title_justify="left")
    for col in ("board", "FPGA", "package", "speed", "LUT", "BRAM", "DSP", "UART", "clock",
                "build"):
        table.add_column(col, justify="right" if col in ("LUT", "BRAM", "DSP") else "left")
    for b in BOARDS.values():
        table.add_row(b.name, b.device, b.package, b.speed, f"{b.luts:,}", str(b.block_rams),
                      str(b.multipliers), b.uart_chip, f"{b.clock_hz / 1e6:g} MHz",
                      "open toolchain" if b.open_toolchain else "vendor tree only")
    out.print(table)

    default = CuConfig()
    need = default.resources().ebr
    fits = Table(box=None, pad_edge=False, title_justify="left",
                 title=f"What fits: the unit alone (LUTs and DSPs measured, docs/synth.md; "
                       f"block RAMs estimated: {need} for the default sizes, "
                       f"{RESERVED_BLOCK_RAMS} more for the SoC)")
    fits.add_column("board")
    for name, _ in KNOWN_UNITS:
        fits.add_column(name)
    fits.add_column("memory window beside it")
    for b in BOARDS.values():
        cells = []
        for _, measured in KNOWN_UNITS:
            figures = measured.get(b.family)
            if figures is None:
                cells.append("not measured")
                continue
            luts, dsps = figures
            short = [what for what, used, have in (
                ("LUT", luts, b.luts), ("DSP", dsps, b.multipliers),
                ("BRAM", need + RESERVED_BLOCK_RAMS, b.block_rams)) if used > have]
            verdict = f"no: {', '.join(short)}" if short else "yes"
            cells.append(f"{verdict} ({100 * luts / b.luts:.0f} % LUT)")
        free = b.block_rams - need - RESERVED_BLOCK_RAMS
        window = (f"{memory_bytes(b, default) // 1024} KiB" if free * b.block_ram_bytes >= 256
                  else "none (trim the unit)")
        fits.add_row(b.name, *cells, window)
    out.print(fits)
    out.print("A unit trimmed for a kernel set (`gpgpu board build`) is smaller; its build "
              "report has the exact figures.")
    for b in BOARDS.values():
        if b.note:
            out.print(f"{b.name}: {b.note}")


@board_group.command("build")
@click.argument("kernels", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--board", "board_name", required=True, metavar="NAME",
              help=f"The board: {', '.join(BOARDS)}.")
@click.option("-o", "--output", metavar="DIR",
              help="Build directory (default: build/boards/NAME).")
@click.option("--config", "overrides", multiple=True, metavar="NAME=VALUE",
              help="The unit before trimming (fields of CuConfig), e.g. --config wave_slots=4.")
@click.option("--cu-mhz", type=float, help="Compute-unit clock (default: the board's).")
@click.option("--bus-mhz", type=float, help="Bus clock (default: the board's).")
@click.option("--baud", type=int, default=None, help="Host link rate (default 115200).")
@click.option("--seed", type=int, default=1, show_default=True, help="nextpnr's placer seed.")
def build_command(kernels: tuple[str, ...], board_name: str, output: str | None,
                  overrides: tuple[str, ...], cu_mhz: float | None, bus_mhz: float | None,
                  baud: int | None, seed: int) -> None:
    """Trim a unit for KERNELS and build the board's bitstream (or, for a board outside the
    open toolchain, its vendor build tree)."""
    from trimmer.cli import parse_config

    from .board_top import BAUD
    from .build import build

    b = board(board_name)
    base = parse_config(overrides)
    out_dir = output
    if out_dir is None:
        out_dir = f"build/boards/{b.name}"
        Path(out_dir).parent.mkdir(parents=True, exist_ok=True)
    with StepStatus() as status:
        result = build(kernels, b.name, out_dir, base=base, cu_hz=_mhz(cu_mhz),
                       bus_hz=_mhz(bus_mhz), baud=BAUD if baud is None else baud, seed=seed,
                       progress=status.steps)
    _print_result(result, console())


def _print_result(r, out: Console) -> None:
    b = r.board
    t = r.trim
    out.print(f"Board {b.name}: {b.title}, {b.package}, speed {b.speed}")
    kept = [d.part for d in t.decisions if d.kept]
    dropped = [d.part for d in t.decisions if not d.kept]
    out.print(f"Unit: trimmed for {len(t.profile.kernels)} kernel(s), "
              f"{len(t.plan.profile)} of {len(t.base_plan.profile)} instructions; kept "
              f"{', '.join(kept) or 'nothing'}; dropped {', '.join(dropped) or 'nothing'}")
    sizing = "; ".join(f"{name} {s['base']} -> {s['trimmed']}"
                       for name, s in t.sizing.items() if s["base"] != s["trimmed"])
    if sizing:
        out.print(f"Sizing: {sizing}")
    out.print(f"Clocks: {r.pll}")
    out.print(f"Memory window: {r.memory_bytes // 1024} KiB, "
              f"{r.memory_bytes // b.block_ram_bytes} of the {b.block_rams} block RAMs (the "
              f"unit's estimate: {r.config.resources().ebr}); host link {r.baud} baud")
    if r.vendor_tree_only:
        out.print(f"Wrote the vendor build tree to {r.out_dir} (Vivado was not run: run "
                  f"build_top.sh there with Vivado to get top.bit)")
        return
    c = r.cells
    out.print(f"Cells (Yosys): {c['luts']:,} LUT4, {c['carries']:,} CCU2C, {c['ffs']:,} FF, "
              f"{c['block_rams']} EBR, {c['dsps']} DSP, {c['distributed_rams']} DPR16X4")
    util = Table(box=None, pad_edge=False, title="Utilisation (nextpnr)", title_justify="left")
    for col in ("bel", "used", "available", "%"):
        util.add_column(col, justify="left" if col == "bel" else "right")
    for name, (used, avail) in r.utilization.items():
        util.add_row(name, f"{used:,}", f"{avail:,}", f"{100 * used / avail:.0f}")
    out.print(util)
    timing = Table(box=None, pad_edge=False, title="Fmax after routing", title_justify="left")
    for col in ("clock", "achieved MHz", "constraint MHz", ""):
        timing.add_column(col, justify="left" if col in ("clock", "") else "right")
    for name, (achieved, constraint) in r.fmax.items():
        timing.add_row(name, f"{achieved:.2f}", f"{constraint:g}",
                       "met" if achieved >= constraint else "[bold]NOT MET[/]")
    out.print(timing)
    out.print("Times: " + ", ".join(f"{k} {v:.0f} s" for k, v in r.seconds.items()))
    out.print(f"Wrote {r.bitstream} ({r.bitstream.stat().st_size:,} bytes) and "
              f"{r.out_dir}/report.json")
    if not r.timing_met:
        click.echo("gpgpu board build: warning: a clock misses its constraint; build with "
                   "lower --cu-mhz/--bus-mhz", err=True)


@board_group.command("flash")
@click.argument("build_dir", metavar="DIR", type=click.Path(path_type=str))
@click.option("--board", "board_name", required=True, metavar="NAME",
              help=f"The board: {', '.join(BOARDS)}.")
@click.option("--cable", metavar="NAME", help="openFPGALoader's cable (-c), e.g. for a board "
                                               "flashed through an external JTAG adapter.")
@click.option("--persist", is_flag=True, help="Write the SPI flash (survives a power cycle) "
                                               "instead of the FPGA's SRAM.")
@click.option("--dry-run", is_flag=True, help="Print the command instead of running it.")
def flash_command_cli(build_dir: str, board_name: str, cable: str | None, persist: bool,
                      dry_run: bool) -> None:
    """Load DIR's bitstream into the board with openFPGALoader."""
    import shlex

    from .flash import find_loader, flash, flash_command

    if dry_run:
        argv = flash_command(build_dir, board_name, cable=cable, persist=persist)
        click.echo(shlex.join(argv))
        if find_loader() is None:
            click.echo(f"gpgpu board flash: note: {argv[0]} is not installed", err=True)
        return
    argv = flash(build_dir, board_name, cable=cable, persist=persist)
    click.echo(f"Loaded {argv[-1]} into {board_name}" + (" (SPI flash)" if persist else ""))
