"""The reference-check suite: every example kernel, and the extra kernels of ``tests/kernels/``,
run on a device and compared with the same OpenCL source run on PoCL (CPU).

A :class:`Case` is one complete kernel run: the code object, the OpenCL source, a deterministic
input builder, a sequence of :class:`Launch` es (argument list, global and local size), the
output buffers with their comparison rule, and an independent numpy model of the kernel that
validates the PoCL side itself. :data:`CASES` lists them all; ``case.id`` is a pytest id::

    import suite                                  # examples/ on sys.path
    ref = suite.run_pocl(case)                    # {buffer name: ndarray}
    got, run = suite.run_device(case, Device("emu"))
    ok, detail = suite.compare(case, ref, got)

Outside ``examples/``, load the package by path under a unique name registered in
``sys.modules`` (the dataclasses need it), as ``tests/_suite.py`` does: its submodules import
each other relatively, so the spec needs ``submodule_search_locations``.

The package: :mod:`.framework` is the machinery (case description, code objects, the PoCL
reference, device runs, comparison) and documents the comparison rules, i.e. how each float
output's ulp bound follows from what the two sides compute; :mod:`.cases_examples` holds the
cases of ``examples/kernels``, :mod:`.cases_tests` those of ``tests/kernels`` (each output's
bound and its reason are given there, with the case).

Launch notes: every global size is a multiple of its local size (OpenCL 1.2); kernels that
require a local size get it (``matmul_float_tiled``, ``transpose``: 16 x 16; ``scan``: 128).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import cases_corpus_part2, cases_examples, cases_tests
from .framework import (
    CACHE_DIR, CASES, EXAMPLE_KERNELS, POCL_OPTIONS, POCL_PREAMBLE, ROOT, TEST_KERNELS, Buf, Case,
    DeviceRun, Launch, Local, Output, SuiteError, code_object, compare, max_ulp, pocl_kernels,
    replace, run_device, run_model, run_pocl, ulp_distance,
)

__all__ = [
    "SuiteError", "Buf", "Local", "Launch", "Output", "Case", "DeviceRun",
    "CASES", "CASES_BY_NAME", "select_cases",
    "code_object", "pocl_kernels", "run_pocl", "run_device", "run_model",
    "compare", "max_ulp", "ulp_distance", "replace",
    "ROOT", "EXAMPLE_KERNELS", "TEST_KERNELS", "CACHE_DIR", "POCL_PREAMBLE", "POCL_OPTIONS",
]

cases_examples.define_cases()       # examples/kernels: all 20 kernels
cases_tests.define_cases()          # tests/kernels
cases_corpus_part2.define_cases()   # tests/kernels/corpus: kernels as users write them

#: Cases by name.
CASES_BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
if len(CASES_BY_NAME) != len(CASES):
    raise RuntimeError("duplicate case names")


def select_cases(names: Sequence[str] | None) -> list[Case]:
    """The named cases (all when ``names`` is empty), in suite order. A name may also be a
    kernel name, selecting every case that launches it."""
    if not names:
        return list(CASES)
    wanted: set[str] = set()
    for name in names:
        hits = {c.name for c in CASES if c.name == name or name in c.kernels}
        if not hits:
            raise SuiteError(f"unknown case or kernel {name!r} (known cases: "
                             f"{', '.join(CASES_BY_NAME)})")
        wanted |= hits
    return [c for c in CASES if c.name in wanted]
