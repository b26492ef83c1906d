"""The Verilator environment of the cocotb runner (:mod:`gpgpu_hdl.sim.runner`).

The runner's error handling (failed, crashed, timed-out runs, no results) is exercised through
:meth:`~gpgpu_hdl.sim.verilator.VerilatorBuild.run` on the demo build in ``test_verilator.py``.
"""

from pathlib import Path

from gpgpu_hdl.sim.runner import verilator_env


def test_verilator_env():
    env = verilator_env()
    root = Path(env["VERILATOR_ROOT"])
    assert (root / "bin" / "verilator").is_file()
    assert env["PATH"].split(":")[0] == str(root / "bin")
