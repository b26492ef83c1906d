"""Helpers shared by the command-line tools (``gpgpu`` and ``trim``): one-line errors and
consistent console output. The tools themselves stay thin: parse, call, print."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click
from rich.console import Console

from .errors import GpgpuError
from .toolchain import atomic_write

__all__ = ["console", "run", "write_json"]


def console() -> Console:
    """A console that does not wrap wide tables when the output is a file or a pipe."""
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", 160))
    return Console(width=width, highlight=False, soft_wrap=False)


def run(command: click.Command, prog: str, args: list[str] | None = None) -> None:
    """Run a click command; user mistakes end with ``prog: error: message`` and exit code 1,
    never a traceback. Nothing half-written is left behind: outputs are written atomically."""
    try:
        command.main(args=args, prog_name=prog, standalone_mode=False)
    except click.exceptions.Abort:
        click.echo(f"{prog}: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except GpgpuError as exc:
        click.echo(f"{prog}: error: {exc}", err=True)
        sys.exit(1)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(f"{prog}: error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)


def write_json(path: str, data: Any) -> None:
    atomic_write(path, json.dumps(data, indent=2) + "\n")
