"""Generated programs must compute the same on PoCL, the emulator and the RTL; the kept
regression cases must still hold; the reducer, the comparison and PoCL's isolation work.

``make test`` runs 40 seeds on PoCL and the emulator and a handful on the RTL; ``-m slow``
runs 400 more (those that differ from PoCL again on the RTL) and 24 on the RTL
(``bench/fuzz.py`` is the long campaign).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpgpu_hdl.fuzz import pocl
from gpgpu_hdl.fuzz.compare import first_mismatch, ulp_distance
from gpgpu_hdl.fuzz.differential import (SOFT_DIVISION_AGREES, Difference, run_batch,
                                         run_program)
from gpgpu_hdl.fuzz.generate import Limits, generate
from gpgpu_hdl.fuzz.program import Call, prelude, render, soft_division
from gpgpu_hdl.fuzz.reduce import reduce_program
from gpgpu_hdl.fuzz.regression import check_case, load_case, save_case
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.toolchain import compile_cl

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
CASES = sorted(REGRESSIONS.glob("*.json"))
#: seeds whose programs the compute unit can run (checked by the test), small enough for the
#: 1-lane unit to simulate in seconds
RTL_SEEDS = (3, 9, 12, 21)


def _differences(outcomes) -> list[str]:
    return [str(d) for o in outcomes for d in o.differences]


@pytest.mark.parametrize("start", range(5000, 5040, 10))
def test_generated_programs_agree_on_pocl_and_the_emulator(start):
    outcomes = run_batch([generate(s) for s in range(start, start + 10)])
    assert all(o.ran == ["pocl", "emu"] for o in outcomes)
    assert not _differences(outcomes)


@pytest.mark.slow
@pytest.mark.parametrize("start", range(6000, 6400, 20))
def test_many_generated_programs_agree(start):
    """About 2 % of these programs differ between PoCL and the tahiti code object, through
    clang-19 bugs (docs/fuzz.md, the ``clang19-*`` regression cases). Such a program must run
    on the RTL exactly as on the emulator: the code object computes it, not the emulator."""
    programs = [generate(s) for s in range(start, start + 20)]
    differing = {o.seed for o in run_batch(programs) if o.differences}
    if not differing:
        return
    # the same batch again (the same code object), the differing programs on the RTL too
    for o in run_batch(programs, rtl=lambda p: p.seed in differing):
        if o.seed not in differing:
            continue
        assert all(d.kind == "mismatch" and "pocl" in d.impls for d in o.differences), \
            _differences([o])
        assert "rtl" in o.ran, f"seed {o.seed}: {o.rtl}: {_differences([o])}"


def _on_rtl(seeds) -> None:
    small = Limits(work_items=128, statements=20)
    programs = [generate(s, limits=small) for s in seeds]
    outcomes = run_batch(programs, rtl=lambda _: True)
    assert not _differences(outcomes)
    assert all(o.ran == ["pocl", "emu", "rtl"] for o in outcomes), \
        [(o.seed, o.rtl) for o in outcomes if "rtl" not in o.ran]


def test_generated_programs_agree_on_the_rtl():
    _on_rtl(RTL_SEEDS)


@pytest.mark.slow
@pytest.mark.parametrize("start", range(100, 124, 6))
def test_more_generated_programs_agree_on_the_rtl(start):
    _on_rtl(range(start, start + 6))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_regression_case_holds(path):
    """Each kept case still holds; where the unit can run it, the RTL agrees with the emulator
    (a case whose kernel never ends is left to the emulator)."""
    case = load_case(path)
    _, problems = check_case(case, rtl=case.found["kind"] == "mismatch")
    assert not problems, "\n".join(problems)


def test_a_difference_is_reported_with_the_first_differing_element():
    left = {"out": np.array([1, 2, 3], np.uint64), "fout": np.array([0.0, 1.0], np.float32)}
    right = {"out": np.array([1, 5, 7], np.uint64), "fout": np.array([-0.0, 1.0], np.float32)}
    m = first_mismatch(left, right)
    assert (m.buffer, m.index, m.left, m.right, m.count) == ("out", 1, "2", "5", 2)
    same = {"out": left["out"], "fout": np.array([-0.0, np.float32(1.0)], np.float32)}
    assert first_mismatch(left, same) is None            # +0 == -0
    nan = np.array([np.nan, 1.0], np.float32)
    assert list(ulp_distance(nan, np.array([np.nan, np.nextafter(1, 2, dtype=np.float32)],
                                           np.float32))) == [0, 1]
    m = first_mismatch({"f": nan}, {"f": np.array([1.0, 1.0], np.float32)})
    assert m.index == 0 and "nan" in m.left


def test_pocl_crashes_cost_only_their_program():
    # The pointer comes from the buffer (0 at run time), so the compiler cannot see the null
    # and drop the store as undefined behaviour, as it does for a literal null pointer.
    text = ("__kernel void boom(__global int *out) { volatile __global int *p ="
            " (volatile __global int *)(size_t)out[1]; p[get_global_id(0)] = 1; out[0] = 1; }\n"
            "__kernel void fine(__global int *out) { out[get_global_id(0)] = 7; }\n")
    jobs = [([pocl.PoclLaunch(k, (pocl.Buf("out"),), (64,), (64,))],
             {"out": np.zeros(64, np.int32)}, ["out"]) for k in ("fine", "boom", "fine")]
    first, crash, last = pocl.run_isolated(text, "boom.cl", pocl.POCL_OPTIONS, jobs)
    assert (first["out"] == 7).all() and (last["out"] == 7).all()
    assert crash.startswith("PoclCrash: the PoCL process was killed by SIGSEGV"), crash


def test_reducer_keeps_what_the_oracle_asks_for_and_stays_compilable(tmp_path):
    """With an oracle that only wants a ``popcount`` in the kernel, the reducer leaves little
    else; the result still builds and runs the same on PoCL and the emulator."""
    program = generate(7)
    assert "popcount(" in render(program, with_prelude=False)
    fake = Difference(7, program.name, "mismatch", ("pocl", "emu"), "fake", "out")

    def oracle(cands):
        return [fake if "popcount(" in render(c, with_prelude=False) else None for c in cands]

    r = reduce_program(program, fake, oracle=oracle, batch=8)
    text = render(r.program, with_prelude=False)
    assert "popcount(" in text and r.accepted > 5
    assert text.count(";") < render(program, with_prelude=False).count(";") // 3
    assert r.program.global_size == r.program.local_size == (1,)
    calls = [e for e in _calls(r.program) if e.op == "popcount"]
    assert calls
    outcome = run_program(r.program)
    assert outcome.ran == ["pocl", "emu"] and not outcome.differences
    path = save_case(tmp_path, "example", r.program, fake, "fixed", "a test")
    case = load_case(path)
    assert case.program.buffers == r.program.buffers and case.source.read_text() == r.source
    assert not check_case(case)[1]


def _calls(program):
    from gpgpu_hdl.fuzz.program import walk_exprs
    for _, _, init in program.variables:
        for e in walk_exprs(init):
            if isinstance(e, Call):
                yield e
    for path_expr in _body_exprs(program.body):
        for e in walk_exprs(path_expr):
            if isinstance(e, Call):
                yield e


def _body_exprs(stmts):
    for s in stmts:
        for name in ("value", "cond", "bound", "index"):
            e = getattr(s, name, None)
            if e is not None:
                yield e
        for name in ("then", "orelse", "body", "default"):
            yield from _body_exprs(getattr(s, name, ()) or ())
        for c in getattr(s, "cases", ()):
            yield from _body_exprs(c.body)


def test_soft_division_computes_what_the_operators_do(tmp_path):
    """The long-division helpers that the second opinion swaps in give the guarded helpers'
    values (a zero divisor gives the dividend) for every unsigned type, on edge values."""
    types = {"uchar": np.uint8, "ushort": np.uint16, "uint": np.uint32, "ulong": np.uint64}
    kernels = "".join(
        f"__kernel void k_{t}(__global const {t} *a, __global const {t} *b, "
        f"__global {t} *q, __global {t} *r) {{ size_t i = get_global_id(0); "
        f"q[i] = fz_div_{t}(a[i], b[i]); r[i] = fz_mod_{t}(a[i], b[i]); }}\n" for t in types)
    source = soft_division(prelude(kernels) + kernels)
    assert "a / b" not in source and "a % b" not in source
    cl = tmp_path / "soft.cl"
    cl.write_text(source)
    device = Device("emu")
    program = device.load(compile_cl(cl, tmp_path / "soft.bin"))
    for t, dtype in types.items():
        bits = np.iinfo(dtype).bits
        edges = [0, 1, 2, 3, 7, (1 << bits) - 1, (1 << bits) - 2, 1 << (bits - 1),
                 (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]
        a = np.repeat(np.array(edges, dtype), len(edges))
        b = np.tile(np.array(edges, dtype), len(edges))
        n = len(a)
        bufs = [device.array(x) for x in (a, b, np.zeros(n, dtype), np.zeros(n, dtype))]
        getattr(program, f"k_{t}")(*bufs, global_size=(n,), local_size=(n,))
        safe = np.where(b == 0, 1, b).astype(dtype)
        assert (bufs[2].numpy() == np.where(b == 0, a, a // safe)).all(), t
        assert (bufs[3].numpy() == np.where(b == 0, a, a % safe)).all(), t


def test_a_division_miscompile_is_told_apart_by_the_second_opinion():
    """The kept LLVM 19 division-narrowing case: its -O2 build with long division agrees with
    PoCL, and the difference says so."""
    case = load_case(REGRESSIONS / "clang19-udiv32-isel-narrowed.json")
    outcome, problems = check_case(case)
    assert not problems
    (difference,) = outcome.differences
    assert SOFT_DIVISION_AGREES in difference.note
