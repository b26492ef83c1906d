"""Verilog of a compute unit, as the trimmer writes it.

The text is what :func:`amaranth.back.verilog.convert` emits with no source locations
(``emit_src=False``) and no Amaranth-internal attributes (``strip_internal_attrs=True``): no
absolute paths, and the same configuration gives the same bytes in every process (the
profile is a ``frozenset``, but the unit iterates it in instruction-table order).
"""

from __future__ import annotations

from amaranth.back import verilog

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import ComputeUnit

__all__ = ["TOP", "emit_verilog"]

#: Name of the top module of the emitted Verilog.
TOP = "compute_unit"


def emit_verilog(config: CuConfig, name: str = TOP) -> str:
    """The Verilog of ``ComputeUnit(config)`` with top module ``name``.

    Submodules are named after their path in the unit (``\\compute_unit.valu0.mul``), memories
    after their submodule (``lds``, ``vgpr0``): :mod:`trimmer.audit` reads that hierarchy back.
    Converting the default 8-lane unit takes about 20 s.
    """
    return verilog.convert(ComputeUnit(config), name=name, emit_src=False,
                           strip_internal_attrs=True)
