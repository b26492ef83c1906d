"""The compute unit's RTL under Verilator against the golden model.

Every suite case whose kernels use only instructions the RTL implements (found by decoding the
binaries, see :func:`rtl_ready`) runs on ``Device("verilator")``; its outputs must equal the
emulator's bit for bit, and its commit trace must match the emulator's instruction by
instruction. The first run builds the Verilator model (about a minute and a half on two
cores, half of it the Verilog conversion); later runs reuse ``build/verilator``.

Every case the RTL can run is in ``make test`` but two kinds, which run only with ``-m slow``
(``make test-all``): a case that retires more than ``_DEFAULT_BUDGET`` wave-instructions, and
a costly case whose instructions all run in cheaper cases of the default run
(:func:`_covered`: the same kernels with other inputs, or kernels of the same
instructions). Cases that need
instructions the RTL does not implement (FP64) are not run; one of them checks that such a
kernel stops with ``IllegalInstruction`` at the right instruction instead of computing
garbage.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_hdl.cu.decode import SUPPORTED_MNEMONICS
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.runtime import IllegalInstruction
from gpgpu_hdl.sim.trace import compare_traces

from tests._suite import cycle_limit, emu_cost, load_suite, mnemonics, rtl_ready

suite = load_suite()

#: wave-instructions (on the emulator) above which a case runs only with ``-m slow``. The model
#: simulates 36-92 thousand cycles a second; in CI the cases above it took 13-55 s each
#: (matmul_float 8,600 wave-instructions 55 s, syrk, histogram_global, private_sort, jacobi2d
#: 15,040 41 s). histogram_global and private_sort still run in CI on the SoC
#: (``tests/soc/test_top.py``).
_DEFAULT_BUDGET = 8_000


#: cases seen to misbehave on the RTL, kept visible as strict expected failures (opt-in runs)
_KNOWN_BAD: dict[str, str] = {}


#: wave-instructions above which a case whose instructions all run in cheaper cases of the
#: default run (:func:`_covered`) runs only with ``-m slow``; the cheap ones all stay (the
#: ``ids3d`` variants try the dispatcher's geometries)
_COVERED_BUDGET = 3_000


def _covered(costs: dict[str, int]) -> set[str]:
    """Of the cases in ``costs`` (name -> wave-instructions), those above
    ``_COVERED_BUDGET`` that use no instruction the cheaper cases of the default run do not
    (bitonic_sort beside bitonic_sort_desc, the same kernels with other inputs; gemm, mvt and
    atax beside the cheaper float kernels): they add no instruction to the default run, so
    they run only with ``-m slow``. Cases are taken cheapest first."""
    seen: set[str] = set()
    out: set[str] = set()
    by_name = {case.name: case for case in suite.CASES}
    for cost, name in sorted((cost, name) for name, cost in costs.items()
                             if cost <= _DEFAULT_BUDGET):
        used = mnemonics(by_name[name])
        if cost > _COVERED_BUDGET and used <= seen:
            out.add(name)
        else:
            seen |= used
    return out


def _cases():
    """The cases the RTL can run (the others are covered by the trap test below)."""
    out = []
    costs = {case.name: emu_cost(case) for case in suite.CASES if rtl_ready(case)}
    covered = _covered(costs)
    for case in suite.CASES:
        if case.name not in costs:
            continue
        marks = []
        if (costs[case.name] > _DEFAULT_BUDGET or case.name in _KNOWN_BAD
                or case.name in covered):
            marks.append(pytest.mark.slow)
        if case.name in _KNOWN_BAD:
            marks.append(pytest.mark.xfail(strict=True, reason=_KNOWN_BAD[case.name]))
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


@pytest.fixture(scope="module")
def rtl_device():
    """A factory of fresh ``Device("verilator")`` (the model is built once, here)."""
    Device("verilator").backend.build()
    return lambda **kw: Device("verilator", **kw)


@pytest.mark.parametrize("case", _cases())
def test_case_matches_emulator(case, rtl_device):
    inputs = case.inputs()
    want, emu = suite.run_device(case, Device("emu"), inputs, trace=True)
    got, run = suite.run_device(case, rtl_device(max_cycles=cycle_limit(case)), inputs,
                                trace=True)
    for e, r in zip(emu.results, run.results, strict=True):
        assert r.cycles and r.cycles > 0
        assert len(r.trace) == len(e.trace.records) > 0
        problems = compare_traces(e.trace.records, r.trace)
        assert not problems, "\n".join(map(str, problems))
    for name, ref in want.items():
        assert np.array_equal(np.asarray(got[name]).view(np.uint8),
                              np.asarray(ref).view(np.uint8)), f"{case.name}: {name} differs"


def test_outside_the_rtl_traps_with_pc_and_instruction(rtl_device):
    case = next(c for c in suite.CASES if c.name == "scale_f64")     # FP64: not built
    obj = CodeObject.load(suite.code_object(case))
    code = obj.kernel(case.kernels[0]).code
    first = next(i for i in decode(code) if i.info.mnemonic not in SUPPORTED_MNEMONICS)
    with pytest.raises(IllegalInstruction) as info:
        suite.run_device(case, rtl_device(), case.inputs())
    assert f"at pc {first.offset:#x}" in str(info.value)
    assert first.info.mnemonic in str(info.value)


def _pipelined_cases():
    """The suite cases whose instructions the pipelined unit runs (opt-in: ``-m slow``)."""
    from gpgpu_hdl.cu.pipelined import runs
    from tests._suite import mnemonics
    return [pytest.param(c, id=c.name, marks=pytest.mark.slow) for c in suite.CASES
            if all(runs(m) for m in mnemonics(c))]


@pytest.fixture(scope="module")
def pipelined_device():
    """A factory of ``Device("verilator")`` on the 16-lane pipelined unit (built once)."""
    from gpgpu_hdl.config import CuConfig
    config = CuConfig(lanes=16, pipeline=True)
    Device("verilator", config=config).backend.build()
    return lambda **kw: Device("verilator", config=config, **kw)


@pytest.mark.parametrize("case", _pipelined_cases())
def test_case_matches_emulator_on_the_pipelined_unit(case, pipelined_device):
    inputs = case.inputs()
    want, emu = suite.run_device(case, Device("emu"), inputs, trace=True)
    got, run = suite.run_device(case, pipelined_device(max_cycles=cycle_limit(case)), inputs,
                                trace=True)
    for e, r in zip(emu.results, run.results, strict=True):
        assert len(r.trace) == len(e.trace.records) > 0
        problems = compare_traces(e.trace.records, r.trace)
        assert not problems, "\n".join(map(str, problems))
    for name, ref in want.items():
        assert np.array_equal(np.asarray(got[name]).view(np.uint8),
                              np.asarray(ref).view(np.uint8)), f"{case.name}: {name} differs"
