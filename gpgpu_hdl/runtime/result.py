"""What a kernel call returns: the same record from every backend."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["KernelResult"]


@dataclass
class KernelResult:
    """What a kernel call did.

    ``instructions`` counts wave-instructions; ``counts`` splits them by SCRATCH class and
    ``by_unit`` by functional unit. ``cycles`` is None on the emulator (it has no timing).
    ``trace`` holds the commit trace when the call asked for one.
    """

    kernel: str
    instructions: int
    counts: dict[str, int]
    by_unit: dict[str, int]
    by_mnemonic: dict[str, int]
    workgroups: int
    waves: int
    seconds: float
    cycles: int | None = None
    trace: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def lane_instructions(self) -> int:
        return 64 * self.instructions
