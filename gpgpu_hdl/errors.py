"""User-facing errors.

Every mistake a user can make (a bad file, a bad option, an unknown kernel) raises a subclass of
:class:`GpgpuError`. The command-line tools print its message on one line and exit non-zero; they
never show a traceback for these.
"""


class GpgpuError(Exception):
    """Base class of all errors caused by user input or the environment, not by a bug."""


class CodeObjectError(GpgpuError):
    """The file is not a usable Southern Islands code object (not ELF, truncated, wrong GPU...)."""


class DecodeError(GpgpuError):
    """An instruction stream cannot be decoded (unknown opcode, truncated instruction...)."""


class ToolchainError(GpgpuError):
    """An external tool (clang-19, llvm-mc-19) is missing or failed."""


class EmulatorError(GpgpuError):
    """A kernel did something the emulator cannot execute (the message names the workgroup,
    wave, PC and instruction)."""


class SimulationError(GpgpuError):
    """An RTL simulation could not be built or run, or its testbench failed (the message holds
    the useful part of the simulator's log)."""
