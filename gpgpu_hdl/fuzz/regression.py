"""Regression cases: reduced programs that once showed a difference, kept as an OpenCL file
and a small JSON description next to it (``tests/fuzz/regressions/``).

The JSON holds what the source alone does not: the seed (which, with the buffer list, fixes
the input bytes by :func:`~.program.fill_buffers`), the kernel name, the launch, the buffers
in argument order, clang's options for the tahiti code object, the difference as it was
found, and the verdict:

``status``
    ``fixed``: an implementation was wrong and is fixed; all implementations must agree.
    ``reference-wrong``: the tahiti side is right and the reference (PoCL) is not: every
    implementation but PoCL must agree, and PoCL must still show the recorded difference (so
    that the case is looked at again when PoCL changes). ``compiler-wrong``: clang/libclc
    for tahiti computes something the OpenCL specification does not allow, which the emulator
    and the RTL execute faithfully: they must agree with each other, and PoCL must still
    differ. ``rtl-wrong``: the RTL disagrees with the emulator and PoCL, not fixed yet: the
    recorded difference must still show (so that the case is updated when the RTL is
    fixed). ``reason`` says why, in a sentence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .differential import CLANG_FUZZ_FLAGS, Difference, Outcome, run_source
from .program import INPUT_RULE, TYPES, Buffer, Program, render

__all__ = ["STATUSES", "RegressionCase", "load_case", "save_case", "check_case"]

STATUSES = ("fixed", "reference-wrong", "compiler-wrong", "rtl-wrong")


@dataclass(frozen=True)
class RegressionCase:
    """A kept case: its files, the program's interface (a :class:`Program` with no body) and
    the verdict."""

    name: str
    source: Path
    program: Program
    status: str
    reason: str
    found: dict[str, Any]
    clang_flags: tuple[str, ...] = CLANG_FUZZ_FLAGS

    @property
    def reference_differs(self) -> bool:
        return self.status != "fixed"


def save_case(directory: str | Path, name: str, program: Program, difference: Difference,
              status: str, reason: str, *,
              clang_flags: tuple[str, ...] = CLANG_FUZZ_FLAGS) -> Path:
    """Write ``<name>.cl`` and ``<name>.json`` into ``directory``; return the JSON's path.
    ``clang_flags``: the options the tahiti code object is built with (the fuzzer's)."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.cl").write_text(render(program))
    meta = {
        "seed": program.seed, "kernel": program.name,
        "global_size": list(program.global_size), "local_size": list(program.local_size),
        "buffers": [[b.name, b.type.name, b.length, b.role] for b in program.buffers],
        "inputs": INPUT_RULE, "clang_flags": list(clang_flags), "found": difference.as_dict(),
        "status": status, "reason": reason,
    }
    path = directory / f"{name}.json"
    path.write_text(json.dumps(meta, indent=2) + "\n")
    return path


def load_case(path: str | Path) -> RegressionCase:
    """Read the case described by ``<name>.json`` (its ``.cl`` beside it)."""
    path = Path(path)
    meta = json.loads(path.read_text())
    if meta.get("inputs") != INPUT_RULE:
        raise ValueError(f"{path}: inputs rule {meta.get('inputs')!r}, this version fills "
                         f"buffers by {INPUT_RULE!r}")
    if meta["status"] not in STATUSES:
        raise ValueError(f"{path}: unknown status {meta['status']!r}")
    buffers = tuple(Buffer(n, TYPES[t], int(length), role)
                    for n, t, length, role in meta["buffers"])
    program = Program(seed=int(meta["seed"]), name=meta["kernel"],
                      global_size=tuple(meta["global_size"]),
                      local_size=tuple(meta["local_size"]), buffers=buffers, variables=(),
                      arrays=(), body=(), outputs=(), int_slots=0, float_slots=0)
    return RegressionCase(path.stem, path.with_suffix(".cl"), program, meta["status"],
                          meta["reason"], meta["found"],
                          tuple(meta.get("clang_flags", CLANG_FUZZ_FLAGS)))


def check_case(case: RegressionCase, *, rtl: bool = False) -> tuple[Outcome, list[str]]:
    """Run the case (on the RTL too with ``rtl``, when the unit can run it); return the
    outcome and what contradicts the verdict (empty when the case holds): for ``fixed``, any
    difference; otherwise the recorded difference gone, or any other difference between the
    tahiti implementations (emulator and RTL)."""
    outcome = run_source(case.program, case.source.read_text(), rtl=rtl,
                         clang_flags=case.clang_flags)
    if not case.reference_differs:
        return outcome, [str(d) for d in outcome.differences]
    found = case.found
    kept = [d for d in outcome.differences
            if list(d.impls) == list(found["impls"]) and d.kind == found["kind"]
            and d.buffer == found.get("buffer", "")]
    problems = [] if kept else [
        f"the recorded difference ({' vs '.join(found['impls'])}: {found['detail']}) is gone; "
        f"{case.status}: {case.reason}: look at the case again"]
    problems += [f"the tahiti implementations disagree: {d}" for d in outcome.differences
                 if "pocl" not in d.impls and d not in kept]
    return outcome, problems
