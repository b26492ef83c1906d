"""Host runtime: a pyopencl-shaped API over the project's executors.

>>> from gpgpu_hdl.runtime import Device, LocalMemory
>>> dev = Device("emu")                                   # doctest: +SKIP
>>> prog = dev.load("examples/kernels/vecadd.bin")        # doctest: +SKIP
"""

from .device import (BACKENDS, ArgumentError, BackendError, Buffer, Device, Kernel,
                     KernelResult, LoadedProgram, LocalMemory, NDRangeError,
                     UnknownKernelError)

__all__ = ["Device", "Buffer", "LocalMemory", "LoadedProgram", "Kernel", "KernelResult",
           "ArgumentError", "NDRangeError", "UnknownKernelError", "BackendError", "BACKENDS"]
