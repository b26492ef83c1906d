"""Load ``examples/suite/`` (the reference-check suite, a package) for the tests, and say which
of its cases the RTL can run and for how long.

It is loaded by path under a unique module name, registered in ``sys.modules`` before it
runs because its dataclasses look their module up. Its submodules import each other
relatively, so the spec names the package directory as its submodule search location.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "gpgpu_examples_suite"


def load_suite():
    if NAME not in sys.modules:
        package = ROOT / "examples" / "suite"
        spec = importlib.util.spec_from_file_location(
            NAME, package / "__init__.py", submodule_search_locations=[str(package)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = module
        spec.loader.exec_module(module)
    return sys.modules[NAME]


def mnemonics(case) -> set[str]:
    """The instructions of the kernels a suite case launches (decoded once per process)."""
    return set(_mnemonics(case.name))


@functools.cache
def _mnemonics(name: str) -> frozenset[str]:
    from gpgpu_hdl.isa.codeobj import CodeObject
    from gpgpu_hdl.isa.decoder import decode
    suite = load_suite()
    case = next(c for c in suite.CASES if c.name == name)
    obj = CodeObject.load(suite.code_object(case))
    wanted = set(case.kernels)
    return frozenset(inst.info.mnemonic for k in obj.kernels if k.name in wanted
                     for inst in decode(k.code))


def rtl_ready(case) -> bool:
    """Whether the compute unit implements every instruction of the case's kernels."""
    from gpgpu_hdl.cu.decode import SUPPORTED_MNEMONICS
    return mnemonics(case) <= SUPPORTED_MNEMONICS


def emu_cost(case) -> int:
    """Wave-instructions the case retires on the emulator."""
    from gpgpu_hdl.runtime import Device
    _, run = load_suite().run_device(case, Device("emu"), case.inputs())
    return sum(r.instructions for r in run.results)


def cycle_limit(case) -> int:
    """Clock cycles after which an RTL run of the case stops: a hang fails within a bounded
    time, generous against the emulator's work."""
    return 400 * emu_cost(case) + 200_000
