"""The host runtime API (:mod:`gpgpu_hdl.runtime`): devices, buffers, kernel launches and the
errors that name what is wrong with a launch (argument marshalling, NDRange, backend, kernel
name). Kernels that the runtime runs to test the emulator are in ``tests/emu``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpgpu_hdl.runtime import (ArgumentError, BackendError, Device, LocalMemory, NDRangeError,
                               UnknownKernelError)

KERNELS = Path(__file__).resolve().parents[2] / "examples" / "kernels"


def test_runtime_argument_and_ndrange_errors():
    dev = Device("emu")
    prog = dev.load(KERNELS / "vecadd.bin")
    a = dev.array(np.zeros(64, np.int32))
    with pytest.raises(ArgumentError, match="argument segment"):
        prog.vecadd(a, a, np.int32(64), global_size=64, local_size=64)
    with pytest.raises(ArgumentError, match="argument 3 .*numpy scalars"):
        prog.vecadd(a, a, a, 64, global_size=64, local_size=64)
    with pytest.raises(NDRangeError, match="does not divide"):
        prog.vecadd(a, a, a, np.int32(64), global_size=100, local_size=64)
    with pytest.raises(NDRangeError, match="exceeds"):
        prog.vecadd(a, a, a, np.int32(64), global_size=2048, local_size=2048)
    with pytest.raises(UnknownKernelError, match="vecadd"):
        prog.vecmul(a, a, a, np.int32(64), global_size=64)
    with pytest.raises(BackendError, match="emu"):
        Device("gpu")
    with pytest.raises(ArgumentError):
        LocalMemory(0)


@pytest.mark.parametrize("backend", ["emu", "verilator"])
def test_every_backend_closes_alike(backend):
    """``close()`` and ``with`` are the same on every backend (a board's release its serial
    port, tests/boards/test_device.py): twice is harmless, a closed device refuses new work in
    one line and keeps its buffers readable."""
    with Device(backend) as dev:
        prog = dev.load(KERNELS / "vecadd.bin")
        a = dev.array(np.arange(64, dtype=np.int32))
    assert dev.closed and repr(dev) == f"<Device {backend} (closed)>"
    dev.close()
    assert np.array_equal(a.numpy(), np.arange(64, dtype=np.int32))
    for attempt, what in [(lambda: dev.array(np.zeros(4)), "make a buffer"),
                          (lambda: dev.empty(4), "make a buffer"),
                          (lambda: dev.load(KERNELS / "vecadd.bin"), "load a program"),
                          (lambda: prog.vecadd(a, a, a, np.int32(64), global_size=64),
                           "launch vecadd")]:
        with pytest.raises(BackendError) as exc:
            attempt()
        assert str(exc.value) == (f"the {backend!r} device is closed: cannot {what} (open a "
                                  f"new Device)")
