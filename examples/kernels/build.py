#!/usr/bin/env python3
"""Rebuild the example kernels' Southern Islands code objects (``NAME.bin``) from ``NAME.cl``.

Usage::

    python3 examples/kernels/build.py [--check] [NAME ...]

Without names every ``*.cl`` in this directory is built. A name may be given as ``vecadd``,
``vecadd.cl`` or a path to the ``.cl`` file. ``--check`` builds into a temporary directory
instead and compares the result with the committed ``.bin`` bytes; it exits with status 1 and
lists every mismatch (and, when run on all kernels, every ``.bin`` without a ``.cl``).

The build is reproducible: clang-19 runs with the working directory set to this directory and
the *relative* source file name, with the flags of :data:`gpgpu_hdl.toolchain.CLANG_FLAGS` and
the libclc bitcode, so the object holds no absolute path. The bytes still depend on the exact
clang-19 build (its version string is stored in the ``.comment`` section).

Errors (clang-19 or libclc missing, a compile error, an unknown name) are reported on one line,
without a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent
REPO_ROOT = KERNEL_DIR.parent.parent

try:
    import gpgpu_hdl  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO_ROOT))

from gpgpu_hdl.errors import GpgpuError  # noqa: E402
from gpgpu_hdl.toolchain import compile_cl, find_clang, libclc_bitcode  # noqa: E402

PROG = "build.py"


class UsageError(GpgpuError):
    """A bad command-line argument (unknown kernel name...)."""


def all_names() -> list[str]:
    """The stem of every ``.cl`` file in the kernel directory, sorted."""
    return sorted(p.stem for p in KERNEL_DIR.glob("*.cl"))


def resolve_names(args: list[str]) -> list[str]:
    """Map command-line names (``vecadd``, ``vecadd.cl``, ``path/to/vecadd.cl``) to stems."""
    if not args:
        return all_names()
    known = set(all_names())
    names: list[str] = []
    for arg in args:
        path = Path(arg)
        if len(path.parts) > 1 and path.resolve().parent != KERNEL_DIR:
            raise UsageError(f"{arg}: not in the kernel directory {KERNEL_DIR}")
        stem = path.stem if path.suffix in (".cl", ".bin") else path.name
        if stem not in known:
            raise UsageError(f"{arg}: no such kernel source {stem}.cl in {KERNEL_DIR} "
                             f"(known: {', '.join(sorted(known))})")
        if stem not in names:
            names.append(stem)
    return names


def check_toolchain() -> None:
    """Fail early, with a one-line message, if clang-19 or the libclc bitcode is missing."""
    find_clang()
    libclc_bitcode()


def build_one(name: str, outdir: str | os.PathLike | None = None) -> Path:
    """Compile ``NAME.cl`` to ``OUTDIR/NAME.bin`` (default: next to the source).

    clang runs from the kernel directory on the relative file name, so no absolute path can
    reach the object file.
    """
    output = Path(outdir).resolve() / f"{name}.bin" if outdir is not None \
        else KERNEL_DIR / f"{name}.bin"
    with contextlib.chdir(KERNEL_DIR):
        compile_cl(f"{name}.cl", output)
    # The atomic write goes through mkstemp (mode 0600); give the file the usual mode.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(output, 0o666 & ~umask)
    return output


def check(names: list[str], orphans: bool) -> list[str]:
    """Rebuild ``names`` in a temporary directory; return one message per mismatch."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kernels-check-") as tmp:
        for name in names:
            committed = KERNEL_DIR / f"{name}.bin"
            fresh = build_one(name, tmp).read_bytes()
            if not committed.is_file():
                problems.append(f"{name}.bin: missing (run build.py {name})")
            elif committed.read_bytes() != fresh:
                problems.append(f"{name}.bin: differs from a fresh build of {name}.cl "
                                f"({committed.stat().st_size} committed vs {len(fresh)} "
                                "rebuilt bytes)")
    if orphans:
        sources = set(all_names())
        for binary in sorted(KERNEL_DIR.glob("*.bin")):
            if binary.stem not in sources:
                problems.append(f"{binary.name}: no {binary.stem}.cl source")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Rebuild examples/kernels/*.bin from *.cl with clang-19 + libclc.")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary directory and compare with the "
                             "committed .bin files instead of overwriting them")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="kernel sources to build (default: all *.cl)")
    args = parser.parse_args(argv)

    try:
        names = resolve_names(args.names)
        check_toolchain()
        if args.check:
            problems = check(names, orphans=not args.names)
            if problems:
                for line in problems:
                    print(f"{PROG}: mismatch: {line}", file=sys.stderr)
                print(f"{PROG}: {len(problems)} problem(s) in {len(names)} kernel file(s)",
                      file=sys.stderr)
                return 1
            print(f"{PROG}: {len(names)} kernel file(s) match their committed .bin")
            return 0
        for name in names:
            out = build_one(name)
            print(f"built {out.relative_to(KERNEL_DIR)} ({out.stat().st_size} bytes)")
        return 0
    except GpgpuError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
