"""Backends by name: what ``Device("emu")``, ``Device("verilator")``, ``Device("board")`` or
``Device("board-sim")`` opens.

The runtime sits below the executors that simulate hardware (:mod:`gpgpu_hdl.sim` runs the RTL
under Verilator) and below the board support, so it imports none of them: each backend is named
here by the module and factory that open it, and that module is imported only when a device
asks for the backend. A factory takes the device's options as keywords and returns an object
with a ``memory`` (:class:`~gpgpu_hdl.emu.memory.Memory`) and a ``launch(kernel, dispatch,
trace)`` method returning a :class:`~gpgpu_hdl.runtime.result.KernelResult`; it may also have
``scratch_units`` (how many scratch areas a launch needs, one per compute unit).
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import BackendError

__all__ = ["BACKENDS", "open_backend"]

#: name -> (module, factory) of each backend; None for one that is planned but not built
_FACTORIES: dict[str, tuple[str, str] | None] = {
    "emu": ("gpgpu_hdl.runtime.backend_emu", "open_emu"),
    "verilator": ("gpgpu_hdl.sim.backend", "open_verilator"),
    "board": ("boards.device", "open_board"),
    "board-sim": ("boards.sim", "open_board_sim"),
}

#: the backend names a device accepts
BACKENDS = tuple(_FACTORIES)


def open_backend(name: str, **options: Any) -> Any:
    """Open backend ``name`` with ``options`` (the device's keyword arguments that were given).

    Raises :class:`BackendError` for an unknown name or one not available in this version.
    """
    if name not in _FACTORIES:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    where = _FACTORIES[name]
    available = [n for n, f in _FACTORIES.items() if f is not None]
    if where is None:
        raise BackendError(f"backend {name!r} is not available in this version; use "
                           f"{' or '.join(map(repr, available))}")
    module, factory = where
    return getattr(importlib.import_module(module), factory)(**options)
