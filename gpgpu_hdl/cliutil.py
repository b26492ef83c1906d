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

__all__ = ["StepStatus", "console", "run", "write_json"]


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


class StepStatus:
    """A spinner with the current step on a terminal; otherwise a line per new step (stderr)."""

    def __init__(self) -> None:
        self.err = Console(stderr=True, highlight=False)
        self.last: str | None = None
        self.last_step: str | None = None
        self.status = None

    def __enter__(self) -> StepStatus:
        if self.err.is_terminal:
            self.status = self.err.status("")
            self.status.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)

    def __call__(self, text: str) -> None:
        if self.status is not None:
            self.status.update(text)
        elif text != self.last:
            self.err.print(text, soft_wrap=True)
        self.last = text

    def progress(self, label: str):
        """A ``progress(stage, seconds)`` callback for :func:`~gpgpu_hdl.synth.synthesize`."""
        def report(stage: str, seconds: float) -> None:
            if self.status is not None:
                self(f"{label}: {stage} ({seconds:.0f} s)")
            else:
                self(f"{label}: {stage}")
        return report

    def steps(self, stage: str, seconds: float) -> None:
        """A ``progress(stage, seconds)`` callback for a whole tool flow: on a terminal the
        stage and its time, in a log a line per tool (Yosys' passes are too many to list) and
        per nextpnr stage."""
        if self.status is not None:
            self(f"{stage} ({seconds:.0f} s)")
            return
        key = stage if stage.startswith("nextpnr") else stage.split(":")[0]
        if key != self.last_step:
            self.err.print(f"{key} ({seconds:.0f} s)" if seconds else key, soft_wrap=True)
        self.last_step = key
