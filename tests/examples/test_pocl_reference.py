"""The PoCL side of the reference suite (examples/suite.py), without any emulator.

Every case builds the same inputs on every call, its kernels compile for tahiti, and PoCL's
results agree bit for bit with the case's independent numpy model (the ulp bounds of the
cases are for the device; PoCL and numpy both round every operation correctly). The suite
covers every kernel in examples/kernels and tests/kernels. Needs clang-19 + libclc-19 and
pyopencl with the PoCL CPU device; missing tools make the tests FAIL, not skip.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests._suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
suite = load_suite()

from gpgpu_hdl.isa.codeobj import CodeObject  # noqa: E402

CASES = suite.CASES
KERNEL_RE = re.compile(r"__kernel\b[^;{]*?\bvoid\s+(\w+)\s*\(", re.S)


def _kernels_in(directory: Path) -> set[str]:
    return {name for cl in directory.glob("*.cl") for name in KERNEL_RE.findall(cl.read_text())}


def _exact(case):
    """The case with every float bound set to 0 ulp."""
    outs = tuple(dataclasses.replace(o, ulp=0, norm_ulp=None) for o in case.outputs)
    return dataclasses.replace(case, outputs=outs)


# --- the case table --------------------------------------------------------------------------

def test_every_example_kernel_is_covered():
    kernels = _kernels_in(suite.EXAMPLE_KERNELS)
    assert len(kernels) == 20
    covered = {k for c in CASES if c.binary is not None for k in c.kernels}
    assert kernels - covered == set()


def test_every_test_kernel_is_covered():
    kernels = _kernels_in(suite.TEST_KERNELS)
    assert len(list(suite.TEST_KERNELS.glob("*.cl"))) >= 8
    covered = {k for c in CASES if c.binary is None for k in c.kernels}
    assert kernels - covered == set()


def test_grids_cover_multi_group_and_2d_3d():
    def groups(la):
        return [g // lsz for g, lsz in zip(la.global_size, la.local_size, strict=True)]

    launches = [la for c in CASES for la in c.launches]
    assert any(len(la.global_size) == 2 and min(groups(la)) > 1 for la in launches)
    assert any(len(la.global_size) == 3 and min(groups(la)) > 1 for la in launches)


def test_select_cases():
    assert [c.name for c in suite.select_cases(["vecadd"])] == ["vecadd"]
    assert {c.name for c in suite.select_cases(["fan1"])} == {"fan1", "gaussian",
                                                               "gaussian_exact"}
    with pytest.raises(suite.SuiteError, match="unknown case or kernel 'nope'"):
        suite.select_cases(["nope"])


def test_launch_validation():
    with pytest.raises(ValueError, match="multiple of the local size"):
        suite.Launch(kernel="k", args=(), global_size=(100,), local_size=(64,))
    with pytest.raises(TypeError, match="not a Buf"):
        suite.Launch(kernel="k", args=(3,), global_size=(64,), local_size=(64,))


# --- per case --------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_inputs_are_deterministic(case):
    first, second = case.inputs(), case.inputs()
    assert first.keys() == second.keys()
    for name, arr in first.items():
        assert arr.flags.c_contiguous and arr.size > 0, name
        assert arr.dtype == second[name].dtype and arr.tobytes() == second[name].tobytes(), name
    for out in case.outputs:
        assert out.name in first


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_code_object_has_the_kernels(case):
    obj = CodeObject.load(suite.code_object(case))
    assert set(case.kernels) <= {k.name for k in obj.kernels}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_pocl_matches_numpy_model(case):
    inputs = case.inputs()
    got = suite.run_pocl(case, inputs)
    expected = suite.run_model(case, inputs)
    ok, detail = suite.compare(_exact(case), expected, got)
    assert ok, detail
    for name, arr in inputs.items():              # run_* must not touch the caller's inputs
        assert arr.tobytes() == case.inputs()[name].tobytes()


# --- why the PoCL build needs FP_CONTRACT OFF, and the claims of the kernel headers -----------

def test_pocl_contracts_multiply_adds_by_default():
    case = suite.CASES_BY_NAME["matmul_float"]
    fused = suite.run_pocl(case, fp_contract=True)
    ok, detail = suite.compare(case, suite.run_model(case), fused)
    assert not ok and "ulp" in detail


def test_private_sort_uses_scratch():
    obj = CodeObject.load(suite.code_object(suite.CASES_BY_NAME["private_sort"]))
    assert obj.kernel("sort_rows").header.private_segment_bytes > 0


def test_crc32_table_is_relocated():
    obj = CodeObject.load(suite.code_object(suite.CASES_BY_NAME["crc32"]))
    assert {r.type for r in obj.kernel("crc32_records").relocations} == {
        "R_AMDGPU_ABS32_LO", "R_AMDGPU_ABS32_HI"}


def test_fdiv_variants_differ():
    default = CodeObject.load(suite.code_object(suite.CASES_BY_NAME["fdiv_default"]))
    exact = CodeObject.load(suite.code_object(suite.CASES_BY_NAME["fdiv_cr"]))
    assert len(exact.kernel("fdiv_sqrt").code) > len(default.kernel("fdiv_sqrt").code)


# --- the comparison rules --------------------------------------------------------------------

def test_ulp_distance():
    f = np.float32
    x = np.array([0.0, -0.0, 1.0, np.nan, np.nan, 1e-45, 3.0], f)
    y = np.array([-0.0, 0.0, np.nextafter(f(1), f(2)), np.nan, 1.0, -1e-45, 3.0], f)
    assert suite.ulp_distance(x, y).tolist() == [0, 0, 1, 0, 1 << 32, 2, 0]


def test_compare_reports_float_and_int_mismatches():
    case = suite.CASES_BY_NAME["gemm"]
    ref = suite.run_model(case)
    got = {"c": ref["c"].copy()}
    got["c"][7] = np.nextafter(got["c"][7], np.float32(10))
    ok, detail = suite.compare(case, ref, got)
    assert not ok and detail.startswith("c[7]: ") and "1 ulp (bound 0)" in detail

    loose = dataclasses.replace(case, outputs=(dataclasses.replace(case.outputs[0], ulp=1),))
    assert suite.compare(loose, ref, got) == (True, "c: max 1 ulp (bound 1)")

    case = suite.CASES_BY_NAME["matmul_int"]
    ref = suite.run_model(case)
    got = {"c": ref["c"].reshape(24, 40).copy()}
    ok, detail = suite.compare(case, ref, got)
    assert not ok and "got int32[24, 40], expected int32[960]" in detail
    got = {"c": ref["c"].copy()}
    got["c"][[5, 9]] += 1
    ok, detail = suite.compare(case, ref, got)
    assert not ok and detail.startswith("c[5]: got ") and "(2 of 960 differ)" in detail
    assert suite.compare(case, ref, {}) == (False, "c: missing")


def test_compare_bits_rule_keeps_nan_payload_and_sign_of_zero():
    case = suite.CASES_BY_NAME["transpose"]
    ref = suite.run_model(case)
    bits = ref["out"].view(np.uint32)
    for special, other in ((0x80000000, 0x00000000), (0x7FC12345, 0x7FC00000)):
        got = {"out": ref["out"].copy()}
        i = int(np.flatnonzero(bits == special)[0])
        got["out"].view(np.uint32)[i] = other
        ok, detail = suite.compare(case, ref, got)
        assert not ok and detail.startswith(f"out[{i}]: got "), detail


def test_compare_norm_wise_bound():
    case = suite.CASES_BY_NAME["gaussian"]
    ref = suite.run_model(case)
    got = {k: v.copy() for k, v in ref.items()}
    upper = np.flatnonzero(np.triu(np.ones((16, 16), bool)).reshape(-1))
    small = upper[np.argmin(np.abs(ref["a"][upper]))]
    got["a"][small] = np.nextafter(got["a"][small], np.float32(np.inf)) * np.float32(1.0001)
    ok, detail = suite.compare(case, ref, got)    # many ulps, but tiny next to max |a|
    assert ok, detail
    got["a"][upper[0]] *= np.float32(1.001)
    assert not suite.compare(case, ref, got)[0]


# --- the command line ------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "examples" / "run_suite.py"), *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_cli_unknown_case_is_one_line():
    proc = _cli("--backend", "pocl", "--only", "no_such_case")
    assert proc.returncode == 1
    assert proc.stderr.startswith("run_suite.py: error: unknown case or kernel 'no_such_case'")
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_cli_runs_pocl_against_the_models():
    proc = _cli("--backend", "pocl", "--only", "vecadd", "fan1")   # fan1: 3 cases launch it
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed, 0 failed" in proc.stdout
