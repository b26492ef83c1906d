"""Host runtime: a pyopencl-shaped API over the project's executors.

>>> from gpgpu_hdl.runtime import Device, LocalMemory
>>> dev = Device("emu")                                   # doctest: +SKIP
>>> prog = dev.load("examples/kernels/vecadd.bin")        # doctest: +SKIP
"""

from ..emu.memory import BoundsError, MemoryFault
from .backends import BACKENDS
from .device import Buffer, Device, Kernel, LoadedProgram, LocalMemory
from .errors import (ArgumentError, BackendError, IllegalInstruction, NDRangeError, RtlTrap,
                     UnknownKernelError)
from .result import KernelResult

__all__ = ["Device", "Buffer", "LocalMemory", "LoadedProgram", "Kernel", "KernelResult",
           "ArgumentError", "NDRangeError", "UnknownKernelError", "BackendError", "RtlTrap",
           "IllegalInstruction", "MemoryFault", "BoundsError", "BACKENDS"]
