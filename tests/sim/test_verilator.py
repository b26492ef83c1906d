"""Verilator builds and cocotb runs (:mod:`gpgpu_hdl.sim.verilator`) of a small demo design.

The demo (``cocotb_tests/sim_demo``) sums a block of its word memory; ``sim_demo/demo_tb.py`` is the
cocotb side. One build (cocotb clock, memory hooks) is shared by the test workers through the
repository's ``build/verilator`` cache; the caching test makes its own build (internal clock,
no hooks) in a temporary directory, so both clocking styles and both memory access methods run.
"""

import functools
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from cocotb_tests.sim_demo.design import TOPLEVEL, demo_verilog

from gpgpu_hdl.errors import SimulationError
from gpgpu_hdl.sim.cocotb_io import read_data, write_data
from gpgpu_hdl.sim.verilator import build
from gpgpu_hdl.sim.verilog_edit import prepare_verilog

ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = ROOT / "cocotb_tests" / "sim_demo"
DEPTH = 1 << 12
TIMEOUT = 60


@functools.cache
def _verilog() -> str:
    return demo_verilog(depth=DEPTH)


def run_demo(sim, testcase, params, **kwargs):
    return sim.run("demo_tb", params, timeout=kwargs.pop("timeout", TIMEOUT),
                   python_path=[DEMO_DIR], testcase=testcase, **kwargs)


def sum_params(rng, *, internal_clock, method, count=700):
    image = rng.integers(0, 1 << 32, size=1000, dtype=np.uint32)
    return {
        "internal_clock": internal_clock, "method": method,
        "image": image, "image_base": 300,
        "base": 400, "count": count, "dest": 2000,
        "read_base": 250, "read_count": 1800,   # covers words never written: zeros
        "max_cycles": 4 * count + 10,
        "echo": {"nested": [1, "two", 3.5, None, True], "array": np.arange(3, dtype=np.int16)},
    }


def check_sum(params, results):
    """Compare a ``sum_block`` run with a numpy model of the demo."""
    memory = np.zeros(DEPTH, dtype=np.uint32)
    memory[params["image_base"]:params["image_base"] + params["image"].size] = params["image"]
    addresses = (params["base"] + np.arange(params["count"])) % DEPTH
    words = memory[addresses]
    total = int(words.sum(dtype=np.uint64) & 0xFFFF_FFFF)
    memory[params["dest"]] = total
    assert results["sum"] == total
    assert results["cycles"] == 2 * params["count"] + 1
    np.testing.assert_array_equal(results["trace_index"], np.arange(params["count"]))
    np.testing.assert_array_equal(results["trace_data"], words)
    expected = memory[params["read_base"]:params["read_base"] + params["read_count"]]
    assert results["readback"].dtype == np.uint32
    np.testing.assert_array_equal(results["readback"], expected)
    assert results["echo"]["nested"] == [1, "two", 3.5, None, True]
    np.testing.assert_array_equal(results["echo"]["array"], np.arange(3, dtype=np.int16))
    assert results["echo"]["array"].dtype == np.int16


@pytest.fixture(scope="module")
def shared_sim():
    """Cocotb-driven clock, bulk hooks on the memory; cached across runs and workers."""
    return build(_verilog(), TOPLEVEL, build_root=ROOT / "build" / "verilator",
                 memories=["gmem.mem"])


# --- without a simulator ------------------------------------------------------------------

def test_exchange_files_roundtrip(tmp_path):
    data = {"a": np.arange(5, dtype=np.uint32), "b": [{"c": np.eye(2)}, (1, 2)], "d": "x",
            "e": np.int64(7)}
    write_data(data, tmp_path / "x.json")
    back = read_data(tmp_path / "x.json")
    np.testing.assert_array_equal(back["a"], data["a"])
    assert back["a"].dtype == np.uint32
    np.testing.assert_array_equal(back["b"][0]["c"], np.eye(2))
    assert back["b"][1] == [1, 2] and back["d"] == "x" and back["e"] == 7
    write_data({"plain": 1}, tmp_path / "x.json")  # a stale .npz must not survive
    assert not (tmp_path / "x.npz").exists()
    with pytest.raises(TypeError, match=r"dict keys must be str"):
        write_data({"k": {1: 2}}, tmp_path / "y.json")
    with pytest.raises(TypeError, match=r"set cannot be passed"):
        write_data({"k": {1, 2}}, tmp_path / "y.json")


def test_build_error_is_reported(tmp_path):
    broken = "module broken(input a, output b);\n  assign b = a +;\nendmodule\n"
    with pytest.raises(SimulationError, match=r"(?s)Verilator build of broken failed.*%Error"):
        build(broken, "broken", build_root=tmp_path)
    # only the log and the Verilog of the failed build stay
    (failed,) = tmp_path.glob("broken-*.failed")
    assert sorted(p.name for p in failed.iterdir()) == ["broken.v", "build.log"]
    assert not list(tmp_path.glob(".tmp-*"))
    # an interrupted build (a temporary directory of a dead process, or a build directory
    # without its marker) is never taken for a build, and both are cleared by the next build
    key = failed.name.split("-")[1].removesuffix(".failed")
    crashed = tmp_path / f".tmp-broken-{key}-999999999"
    incomplete = tmp_path / f"broken-{key}"
    for directory in (crashed, incomplete):
        directory.mkdir()
        (directory / "broken").write_text("not a simulator")
    with pytest.raises(SimulationError, match=r"Verilator build of broken failed"):
        build(broken, "broken", build_root=tmp_path)
    assert not incomplete.exists() and not crashed.exists()


# --- with the shared build ----------------------------------------------------------------

@pytest.mark.parametrize("method", ["hooks", "vpi"])
def test_sum_block(shared_sim, method, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    params = sum_params(np.random.default_rng(1), internal_clock=False, method=method)
    check_sum(params, run_demo(shared_sim, "sum_block", params))
    assert list(tmp_path.iterdir()) == []  # the run's own directory is gone after success


def test_concurrent_runs(shared_sim, tmp_path):
    rng = np.random.default_rng(2)
    params = [sum_params(rng, internal_clock=False, method="auto", count=count)
              for count in (300, 900)]
    dirs = [tmp_path / "a", tmp_path / "b"]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda p, d: run_demo(shared_sim, "sum_block", p, test_dir=d),
                                params, dirs))
    for p, r, d in zip(params, results, dirs, strict=True):
        check_sum(p, r)
        assert (d / "sim.log").is_file()  # a given test_dir is kept


def test_failing_test_raises(shared_sim, tmp_path):
    params = {"left": 1, "right": 2, "message": "left and right differ"}
    with pytest.raises(SimulationError) as info:
        run_demo(shared_sim, "fails", params, test_dir=tmp_path)
    message = str(info.value)
    assert "cocotb test demo_tb.fails failed: AssertionError: left and right differ" in message
    assert "demo_tb.py:" in message and "sim.log" in message
    assert "Traceback" not in message


def test_missing_results_raise(shared_sim, tmp_path):
    with pytest.raises(SimulationError, match=r"passed but saved no results"):
        run_demo(shared_sim, "no_results", {}, test_dir=tmp_path)


def test_crash_raises(shared_sim, tmp_path):
    with pytest.raises(SimulationError, match=r"the simulator was killed by SIGABRT"):
        run_demo(shared_sim, "crashes", {}, test_dir=tmp_path)


def test_unknown_testcase_raises(shared_sim, tmp_path):
    with pytest.raises(SimulationError, match=r"ran no test.*no test named 'no_such_test'"):
        run_demo(shared_sim, "no_such_test", {}, test_dir=tmp_path)


def test_unknown_module_raises(shared_sim):
    with pytest.raises(SimulationError, match=r"'no_such_tb' not found"):
        shared_sim.run("no_such_tb", {}, timeout=TIMEOUT)


def test_timeout_raises(shared_sim, tmp_path):
    params = sum_params(np.random.default_rng(3), internal_clock=False, method="vpi")
    start = time.monotonic()
    with pytest.raises(SimulationError, match=r"timed out after 3 s"):
        run_demo(shared_sim, "hangs", params, timeout=3, test_dir=tmp_path)
    assert time.monotonic() - start < 10


# --- a private build: caching, locking, internal clock --------------------------------------

def test_build_cache_and_lock(tmp_path):
    verilog = _verilog()
    calls = []
    barrier = threading.Barrier(2)

    def make_verilog():
        calls.append(1)
        return verilog

    def one_build(_):
        barrier.wait()
        return build(make_verilog, TOPLEVEL, build_root=tmp_path, clock="clk", key="demo-1")

    with ThreadPoolExecutor(2) as pool:
        first = list(pool.map(one_build, range(2)))
    # one thread built (calling make_verilog), the other waited on the lock and reused it
    assert sorted(b.cached for b in first) == [False, True] and calls == [1]
    assert first[0].path == first[1].path
    assert first[0].path.name == f"{TOPLEVEL}-{first[0].key}"
    fresh = next(b for b in first if not b.cached)

    again = build(make_verilog, TOPLEVEL, build_root=tmp_path, clock="clk", key="demo-1")
    assert again.cached and again.path == fresh.path and calls == [1]
    assert again.seconds < min(1, fresh.seconds)
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == [
        fresh.path.name]

    # internal clock, no hooks: "auto" falls back to VPI
    params = sum_params(np.random.default_rng(4), internal_clock=True, method="auto")
    check_sum(params, run_demo(again, "sum_block", params))


def test_top_visibility(shared_sim, tmp_path):
    """``visibility="top"`` hides the inner signals but keeps the ports and the memories."""
    assert run_demo(shared_sim, "visible", {}) == {"top_port": True, "memory": True,
                                                   "inner_port": True}
    sim = build(_verilog(), TOPLEVEL, build_root=tmp_path, memories=["gmem.mem"], clock="clk",
                visibility="top")
    assert run_demo(sim, "visible", {}) == {"top_port": True, "memory": True,
                                            "inner_port": False}
    for method in ("hooks", "vpi"):
        params = sum_params(np.random.default_rng(5), internal_clock=True, method=method)
        check_sum(params, run_demo(sim, "sum_block", params))
    with pytest.raises(ValueError, match=r"visibility must be one of 'all', 'top', not 'some'"):
        build(_verilog(), TOPLEVEL, build_root=tmp_path, visibility="some")
    with pytest.raises(SimulationError, match=r"memory 'gmem.other'.*found 0"):
        prepare_verilog(_verilog(), TOPLEVEL, memories=["gmem.other"], visibility="top")
