"""The ``"verilator"`` backend as the runtime opens it (:mod:`gpgpu_hdl.runtime.backends`):
the bare compute unit (:mod:`gpgpu_hdl.sim.cu_backend`), or the whole SoC
(:mod:`gpgpu_hdl.sim.soc_backend`) when the device is given ``cus``, ``clocks`` or
``prefetch``."""

from __future__ import annotations

from typing import Any

from ..config import CuConfig
from .cu_backend import VerilatorBackend
from .soc_backend import SocBackend

__all__ = ["open_verilator"]


def open_verilator(*, config: CuConfig | None = None, memory_limit: int | None = None,
                   max_cycles: int | None = None, mem_latency: int | None = None,
                   max_instructions: int | None = None, **soc: Any) -> VerilatorBackend:
    """The backend of ``Device("verilator", ...)``: the bare compute unit, or the SoC when
    any of ``cus``, ``clocks`` or ``prefetch`` is given. ``max_instructions`` is the
    emulator's limit and means nothing here (``max_cycles`` bounds a launch)."""
    del max_instructions
    common = {"memory_limit": memory_limit or 1 << 21, "max_cycles": max_cycles or 20_000_000}
    if soc:
        return SocBackend(config, **soc, **common,
                          mem_latency=10 if mem_latency is None else mem_latency)
    return VerilatorBackend(config, **common, mem_latency=2 if mem_latency is None else mem_latency)
