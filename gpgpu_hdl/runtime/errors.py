"""The errors a host program can meet: bad arguments and launches, unknown kernels and
backends, and a launch that an executor stopped."""

from __future__ import annotations

from ..errors import GpgpuError

__all__ = ["ArgumentError", "NDRangeError", "UnknownKernelError", "BackendError", "RtlTrap",
           "IllegalInstruction"]


class ArgumentError(GpgpuError, TypeError):
    """Wrong number or kind of kernel arguments."""


class NDRangeError(GpgpuError, ValueError):
    """A global/local size that is not valid for the launch."""


class UnknownKernelError(GpgpuError, AttributeError):
    """The code object has no kernel of that name."""


class BackendError(GpgpuError, ValueError):
    """An unknown or unavailable backend."""


class RtlTrap(GpgpuError):
    """The compute unit stopped a launch: a trap, a memory error or a timeout. ``pc`` is the
    byte offset of the trapping instruction in the kernel's code, when there is one."""

    def __init__(self, message: str, *, pc: int | None = None,
                 trace: list[dict] | None = None) -> None:
        super().__init__(message)
        self.pc = pc
        #: the commit records retired before the stop, when the launch was traced
        self.trace = trace


class IllegalInstruction(RtlTrap):
    """The kernel executed an instruction the compute unit was not built for."""
