"""Trimmed compute units under Verilator (rung 5 of the verification ladder).

``Device("verilator", profile=trim_config([...]))`` simulates the unit ``trim`` builds for
those code objects. The unit trimmed for a kernel must run it with outputs and commit trace
equal to the emulator's; a kernel that needs an instruction outside the profile must stop with
``IllegalInstruction`` at that instruction; a union profile must run all its kernels.

Each trimmed configuration is a separate Verilator build (a minute or more), so the default
run builds one: a union of three kernels with LDS and 8/16-bit memory, which runs all three
and on which a fourth kernel traps. Every integer suite case trimmed for itself (vecadd's
among them) runs with ``-m slow``.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.plan import BuildPlan
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.runtime import ArgumentError, BackendError, Device, IllegalInstruction
from gpgpu_hdl.sim.trace import compare_traces
from trimmer.policy import TrimError, trim_config

from tests._suite import cycle_limit, load_suite, rtl_ready

#: each trimmed unit is a Verilator build of its own (about a minute): not the run's tail
pytestmark = pytest.mark.early

suite = load_suite()
_BY_NAME = {c.name: c for c in suite.CASES}


def _entries(case) -> list[str]:
    """``path:kernel`` profile entries of the kernels a case launches."""
    path = suite.code_object(case)
    return [f"{path}:{k}" for k in case.kernels]


def _check(case, device) -> None:
    inputs = case.inputs()
    want, emu = suite.run_device(case, Device("emu"), inputs, trace=True)
    got, run = suite.run_device(case, device, inputs, trace=True)
    for e, r in zip(emu.results, run.results, strict=True):
        problems = compare_traces(e.trace.records, r.trace)
        assert not problems, "\n".join(map(str, problems))
    for name, ref in want.items():
        assert np.array_equal(np.asarray(got[name]).view(np.uint8),
                              np.asarray(ref).view(np.uint8)), f"{case.name}: {name} differs"


def _trimmed_cases():
    out = []
    for case in suite.CASES:
        if not rtl_ready(case):
            continue
        # all only with -m slow (vecadd's was 66 s of a CI worker, its own Verilator build):
        # the default run has the union unit below run its three kernels
        marks = [pytest.mark.slow]
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


@pytest.mark.parametrize("case", _trimmed_cases())
def test_unit_trimmed_for_a_kernel_runs_it(case):
    device = Device("verilator", profile=trim_config(_entries(case)), max_cycles=cycle_limit(case))
    config = device.backend.config
    assert not config.is_full
    _check(case, device)


#: a union profile with LDS, 8/16-bit buffer access and a multiply (one Verilator build, shared
#: by the two tests that use it)
_UNION = ("reduce_sum", "rgba_to_grey", "mix_small")


def _union_entries() -> list[str]:
    return [e for n in _UNION for e in _entries(_BY_NAME[n])]


def test_union_profile_runs_all_its_kernels():
    cases = [_BY_NAME[n] for n in _UNION]
    entries = _union_entries()
    limit = max(cycle_limit(c) for c in cases)
    device = Device("verilator", profile=trim_config(entries), max_cycles=limit)
    plan = BuildPlan.of(device.backend.config.profile,
                        lds_bytes=device.backend.config.lds_bytes)
    assert {"lds", "subdword", "vmem"} <= set(plan.kept)
    assert "funnel" in plan.dropped and len(plan.profile) < len(BuildPlan.of(
        Device("verilator").backend.config.profile, lds_bytes=1024).profile)
    for case in cases:
        _check(case, Device("verilator", profile=trim_config(entries), max_cycles=limit))


def test_kernel_outside_the_profile_traps_at_its_first_foreign_instruction():
    # the union unit has the registers maxpool2x2 needs, but not its s_add_i32
    other = _BY_NAME["maxpool2x2"]
    device = Device("verilator", profile=trim_config(_union_entries()),
                    max_cycles=cycle_limit(other))
    profile = device.backend.config.profile
    code = CodeObject.load(suite.code_object(other)).kernel(other.kernels[0]).code
    # the kernel's first foreign instruction comes before any branch
    first = next(i for i in decode(code) if i.info.mnemonic not in profile)
    with pytest.raises(IllegalInstruction) as info:
        suite.run_device(other, device, other.inputs())
    assert type(info.value).__name__.find("Illegal") >= 0
    assert f"at pc {first.offset:#x}" in str(info.value)
    assert first.info.mnemonic in str(info.value)


def test_profile_is_only_for_the_rtl():
    with pytest.raises(BackendError, match="profile="):
        Device("emu", profile=trim_config(["examples/kernels/vecadd.bin"]))


def test_profile_is_a_configuration_the_trimmer_built():
    with pytest.raises(ArgumentError, match=r"profile= takes the configuration.*trim_config"):
        Device("verilator", profile=["examples/kernels/vecadd.bin"])
    with pytest.raises(ArgumentError, match="config= or profile=, not both"):
        Device("verilator", profile=trim_config(["examples/kernels/vecadd.bin"]),
               config=CuConfig())


def test_profile_naming_a_missing_kernel_is_refused():
    with pytest.raises(TrimError, match="no kernel 'nope'"):
        trim_config(["examples/kernels/vecadd.bin:nope"])

