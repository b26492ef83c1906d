"""``gpgpu``: inspect Southern Islands code objects and the ISA support of this project.

Commands: ``info`` (code-object summary), ``disasm`` (LLVM-syntax disassembly that llvm-mc
re-assembles to the same bytes), ``isa`` (support manifest), ``cc`` (compile OpenCL C with
clang-19 + libclc for tahiti), ``board`` (FPGA boards: list, build, flash; defined in
:mod:`boards.cli`, which sits above this layer and is loaded by module name when called).
"""

from __future__ import annotations

import importlib
import json
from collections import Counter

import click
from rich.table import Table

from . import __version__
from .cliutil import console, run
from .errors import GpgpuError
from .isa.codeobj import CodeObject
from .isa.decoder import decode
from .isa.disasm import disassemble
from .isa.formats import Format
from .isa.manifest import support_manifest
from .isa.table import OpClass, Unit
from .toolchain import atomic_write, compile_cl

_FILE = click.Path(path_type=str)

#: Command groups of the packages above this layer: name -> (module, attribute), imported only
#: when the command is called or listed (the generator never imports them).
_PLUGINS = {"board": ("boards.cli", "board_group")}


class _Group(click.Group):
    """The ``gpgpu`` group, with the :data:`_PLUGINS` commands loaded by module name."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *_PLUGINS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in _PLUGINS:
            module, attribute = _PLUGINS[name]
            try:
                return getattr(importlib.import_module(module), attribute)
            except ImportError as exc:
                raise click.ClickException(f"the {name!r} commands are not installed "
                                           f"({exc})") from None
        return super().get_command(ctx, name)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpgpu")
def gpgpu() -> None:
    """Soft-GPGPU tools for AMD Southern Islands (tahiti) kernel binaries."""


@gpgpu.command()
@click.argument("file", type=_FILE)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("-v", "--verbose", is_flag=True, help="Also list every header and RSRC field.")
def info(file: str, as_json: bool, verbose: bool) -> None:
    """Describe the kernels of a code object: registers, LDS, kernarg, initial SGPRs..."""
    co = CodeObject.load(file)
    if as_json:
        click.echo(json.dumps(co.to_dict(), indent=2))
    else:
        click.echo(co.describe(verbose=verbose))


@gpgpu.command()
@click.argument("file", type=_FILE)
@click.option("-k", "--kernel", "names", multiple=True,
              help="Kernel to disassemble (repeatable; default: all kernels).")
@click.option("--no-labels", is_flag=True, help="Keep branch targets as numeric offsets.")
@click.option("--no-comments", is_flag=True, help="Omit the offset/encoding comments.")
@click.option("-o", "--output", type=_FILE, help="Write to a file instead of stdout.")
def disasm(file: str, names: tuple[str, ...], no_labels: bool, no_comments: bool,
           output: str | None) -> None:
    """Disassemble kernels in LLVM assembler syntax.

    The text of one kernel assembles with
    `llvm-mc-19 -triple=amdgcn-mesa-mesa3d -mcpu=tahiti -filetype=obj`
    to exactly that kernel's code bytes.
    """
    co = CodeObject.load(file)
    kernels = [co.kernel(n) for n in names] if names else list(co.kernels)
    parts = []
    for k in kernels:
        head = "" if no_comments else (f"; {file}: kernel {k.name}, {len(k.code)} bytes "
                                       f"at .text+{k.code_offset:#x}\n")
        try:
            body = disassemble(k.code, relocations=k.relocations, labels=not no_labels,
                               comments=not no_comments)
        except GpgpuError as exc:
            raise type(exc)(f"{file}: kernel {k.name}: {exc}") from None
        parts.append(head + body)
    text = "\n".join(parts)
    if output:
        atomic_write(output, text)
    else:
        click.echo(text, nl=False)


@gpgpu.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--unit", type=click.Choice([u.value for u in Unit]), multiple=True,
              help="Only these functional units.")
@click.option("--format", "formats", type=click.Choice([f.value for f in Format]),
              multiple=True, help="Only these microcode formats.")
@click.option("--class", "classes", type=click.Choice([c.value for c in OpClass]),
              multiple=True, help="Only these SCRATCH operation classes.")
@click.option("--summary", is_flag=True, help="Only the per-unit totals.")
def isa(as_json: bool, unit: tuple[str, ...], formats: tuple[str, ...],
        classes: tuple[str, ...], summary: bool) -> None:
    """The support manifest: every instruction with its unit and class, and whether the
    decoder, the emulator and the RTL support it."""
    rows = [r for r in support_manifest()
            if (not unit or r.info.unit.value in unit)
            and (not formats or r.info.format.value in formats)
            and (not classes or r.info.op_class.value in classes)]
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in rows], indent=2))
        return
    out = console()
    yes = {True: "yes", False: "no"}
    if not summary:
        table = Table(box=None, pad_edge=False)
        for col in ("format", "op", "e64 op", "mnemonic", "unit", "subunit", "class", "type",
                    "decoder", "emulator", "rtl"):
            table.add_column(col, justify="right" if "op" in col.split() else "left")
        for r in rows:
            i = r.info
            table.add_row(str(i.format), str(i.opcode),
                          "" if i.vop3_opcode is None or i.format is Format.VOP3
                          else str(i.vop3_opcode),
                          i.mnemonic, str(i.unit), i.subunit, str(i.op_class), i.type,
                          yes[r.decoder], yes[r.emulator], yes[r.rtl])
        out.print(table)
    totals = Table(box=None, pad_edge=False, title=None)
    for col in ("unit", "instructions", "decoder", "emulator", "rtl"):
        totals.add_column(col, justify="left" if col == "unit" else "right")
    by_unit: dict[str, Counter] = {}
    for r in rows:
        c = by_unit.setdefault(str(r.info.unit), Counter())
        c.update(n=1, decoder=r.decoder, emulator=r.emulator, rtl=r.rtl)
    for u, c in [*by_unit.items(), ("total", sum(by_unit.values(), Counter()))]:
        totals.add_row(u, *(str(c[k]) for k in ("n", "decoder", "emulator", "rtl")))
    out.print(totals)


@gpgpu.command()
@click.argument("source", type=_FILE)
@click.option("-o", "--output", type=_FILE, help="Output code object (default: SOURCE.bin).")
def cc(source: str, output: str | None) -> None:
    """Compile OpenCL C to a Southern Islands code object (clang-19 + libclc, tahiti)."""
    out = output or source.removesuffix(".cl") + ".bin"
    compile_cl(source, out)
    co = CodeObject.load(out)
    insts = sum(len(decode(k.code)) for k in co.kernels)
    click.echo(f"{out}: {len(co.kernels)} kernel(s), {insts} instructions")


def main(args: list[str] | None = None) -> None:
    run(gpgpu, "gpgpu", args)
