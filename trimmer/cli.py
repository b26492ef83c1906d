"""``trim``: profile kernel binaries and (once the compute unit exists) build a CU trimmed to them.

This release validates its inputs and prints the application profile: the instruction histogram
per functional unit and SCRATCH class (SCRATCH Fig. 4/5), the sub-units used, and the register
and LDS needs. ``--report`` saves the same as JSON. Elaborating and emitting the trimmed Verilog
(``-o cu.v``) comes with the compute unit; until then ``-o`` is refused with a clear error after
the profile is printed, and no file is written.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from gpgpu_hdl import __version__
from gpgpu_hdl.cliutil import console, run, write_json
from gpgpu_hdl.errors import GpgpuError
from gpgpu_hdl.isa.table import OpClass, Unit

from .profile import Profile

_UNIT_NAMES = [u.value for u in Unit]


class TrimError(GpgpuError):
    """A trimming request that cannot be carried out."""


def _check_output(path: str | None) -> None:
    if path is None:
        return
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise TrimError(f"{path}: directory {parent} does not exist")


def print_profile(profile: Profile) -> None:
    out = console()
    hist = profile.histogram()
    classes = [c for c in OpClass if any(c in cnt for cnt in hist.values())]
    table = Table(title="Static instructions per unit and class", box=None, pad_edge=False,
                  title_justify="left")
    table.add_column("unit")
    for c in classes:
        table.add_column(str(c), justify="right")
    table.add_column("total", justify="right")
    for unit, cnt in hist.items():
        table.add_row(str(unit), *(str(cnt.get(c, "")) for c in classes),
                      str(sum(cnt.values())))
    column_totals = [sum(cnt.get(c, 0) for cnt in hist.values()) for c in classes]
    table.add_row("total", *map(str, column_totals), str(sum(column_totals)))
    out.print(table)

    used = profile.subunits()
    units = Table(title="Units", box=None, pad_edge=False, title_justify="left")
    for col in ("unit", "used", "sub-units used"):
        units.add_column(col)
    for unit in Unit:
        units.add_row(str(unit), "yes" if unit in used else "no",
                      ", ".join(sorted(used.get(unit, ()))))
    out.print(units)

    kernels = Table(title="Kernels", box=None, pad_edge=False, title_justify="left")
    for col in ("file", "kernel", "instructions", "VGPRs", "SGPRs", "LDS bytes",
                "scratch bytes"):
        kernels.add_column(col, justify="left" if col in ("file", "kernel") else "right")
    for k in profile.kernels:
        kernels.add_row(k.file, k.name, str(len(k.instructions)), str(k.vgprs), str(k.sgprs),
                        str(k.lds_bytes), str(k.scratch_bytes))
    kernels.add_row("union", "", str(sum(len(k.instructions) for k in profile.kernels)),
                    str(profile.max_vgprs), str(profile.max_sgprs), str(profile.max_lds_bytes),
                    str(profile.max_scratch_bytes))
    out.print(kernels)
    out.print("Features: " + ", ".join(f"{name} {n}"
                                       for name, n in sorted(profile.features().items())))
    out.print(f"{len(profile.mnemonics)} distinct instructions: "
              + ", ".join(f"{m}({n})" for m, n in profile.mnemonics.most_common()))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("kernels", nargs=-1, required=True,
                type=click.Path(path_type=str))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str),
              help="Verilog of the trimmed compute unit (cu.v).")
@click.option("--report", type=click.Path(dir_okay=False, path_type=str),
              help="Write the profile/report as JSON.")
@click.option("--keep", multiple=True, type=click.Choice(_UNIT_NAMES),
              help="Keep this unit even if no kernel uses it (repeatable).")
@click.option("--drop", multiple=True, type=click.Choice(_UNIT_NAMES),
              help="Drop this unit even if a kernel uses it (repeatable).")
@click.option("--full", is_flag=True, help="Emit the untrimmed CU of the same configuration.")
@click.version_option(__version__, prog_name="trim")
def trim(kernels: tuple[str, ...], output: str | None, report: str | None,
         keep: tuple[str, ...], drop: tuple[str, ...], full: bool) -> None:
    """Trim a compute unit to what KERNELS (Southern Islands code objects) need."""
    clash = set(keep) & set(drop)
    if clash:
        raise TrimError(f"unit(s) {', '.join(sorted(clash))} given to both --keep and --drop")
    _check_output(output)
    _check_output(report)
    profile = Profile.from_files(kernels)
    print_profile(profile)
    if report:
        write_json(report, {"profile": profile.to_dict(), "keep": list(keep),
                            "drop": list(drop), "full": full})
    if output:
        raise TrimError("emitting Verilog needs the compute unit generator, which is not in "
                        f"this release; {output} was not written (use --report for the profile)")


def main(args: list[str] | None = None) -> None:
    run(trim, "trim", args)
