"""The golden model: a wave64 Southern Islands emulator (the oracle for the RTL).

- :class:`Emulator` runs a :class:`~gpgpu_hdl.dispatch.Dispatch` of a :class:`Program`
  against a device :class:`Memory`, optionally recording a :class:`CommitTrace`.
- Semantics: :mod:`.salu` (scalar), :mod:`.valu_ops` and :mod:`.fp` (vector integer and
  floating point; ``valu_ops`` gathers the topic modules :mod:`.valu_int`, :mod:`.valu_float`,
  :mod:`.valu_convert`, :mod:`.valu_divide` and :mod:`.valu_compare`, which register through
  :mod:`.valu_common`), :mod:`.lsu` (memory). ``SUPPORTED_MNEMONICS`` lists the table entries
  it executes.

Most users go through :mod:`gpgpu_hdl.runtime` (``Device("emu")``) instead.
"""

from __future__ import annotations

from .machine import Emulator, LaunchStats
from .memory import GLOBAL_BASE, BoundsError, Lds, Memory, MemoryFault
from .program import EmulatorError, Program, UnsupportedInstruction
from .trace import CommitTrace, per_wave, read_trace

__all__ = ["Emulator", "LaunchStats", "Memory", "Lds", "MemoryFault", "BoundsError",
           "GLOBAL_BASE", "Program", "EmulatorError", "UnsupportedInstruction", "CommitTrace",
           "per_wave", "read_trace", "SUPPORTED_MNEMONICS"]

_supported: frozenset[str] | None = None


def __getattr__(name: str):
    # computed on first use: compiles one encoding of every table entry
    global _supported
    if name == "SUPPORTED_MNEMONICS":
        if _supported is None:
            from .program import supported_mnemonics
            _supported = supported_mnemonics()
        return _supported
    raise AttributeError(name)
