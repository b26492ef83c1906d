# amaranth: UnusedElaboratable=no
"""Verilog of a compute unit, as the trimmer writes it.

The unit is the multi-cycle :class:`~gpgpu_hdl.cu.core.ComputeUnit`, or the
:class:`~gpgpu_hdl.cu.pipelined.PipelinedComputeUnit` when the configuration says
``pipeline=True``. The pipelined unit is built in the ``"generic"`` style (multipliers and
register-file RAMs inferred, :data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`): the Verilog is for the
user's own flow, on any FPGA, and its memories stay ``reg`` arrays that :mod:`trimmer.audit`
can size (the ``"ecp5"`` style instantiates ``DP16KD``/``MULT18X18D`` primitives, for the
repository's ECP5 benches only).

The text is what :func:`amaranth.back.verilog.convert` emits with no source locations
(``emit_src=False``) and no Amaranth-internal attributes (``strip_internal_attrs=True``): no
absolute paths, and the same configuration gives the same bytes in every process (the
profile is a ``frozenset``, but the unit iterates it in instruction-table order).
"""

from __future__ import annotations

from amaranth.back import verilog

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.unit import compute_unit

__all__ = ["TOP", "STYLE", "unit_name", "unit_title", "build_unit", "emit_verilog"]

#: Name of the top module of the emitted Verilog.
TOP = "compute_unit"
#: How the pipelined unit's multipliers and RAMs are built in the Verilog ``trim`` writes.
STYLE = "generic"


def unit_name(config: CuConfig) -> str:
    """The class of the unit ``config`` builds: ``"ComputeUnit"`` or
    ``"PipelinedComputeUnit"``."""
    return "PipelinedComputeUnit" if config.pipeline else "ComputeUnit"


def unit_title(config: CuConfig) -> str:
    """What the reports call the unit: ``"the pipelined compute unit (PipelinedComputeUnit,
    4 lanes, generic style)"``."""
    lanes = f"{config.lanes} lane{'s' if config.lanes > 1 else ''}"
    if config.pipeline:
        return (f"the pipelined compute unit ({unit_name(config)}, {lanes}, {STYLE} "
                "multipliers and RAMs)")
    return f"the multi-cycle compute unit ({unit_name(config)}, {lanes})"


def build_unit(config: CuConfig):
    """The unit ``config`` describes, not elaborated."""
    return compute_unit(config, style=STYLE)


def emit_verilog(config: CuConfig, name: str = TOP) -> str:
    """The Verilog of the unit of ``config`` (:func:`build_unit`) with top module ``name``.

    Submodules are named after their path in the unit (``\\compute_unit.valu0.mul``,
    ``\\compute_unit.vgprs.bank0``), memories after their submodule (``lds``, ``vgpr0``;
    ``mem`` in the pipelined unit's RAMs): :mod:`trimmer.audit` reads that hierarchy back.
    Converting the default 8-lane multi-cycle unit takes about 20 s, the 4-lane pipelined unit
    about 20-30 s.
    """
    return verilog.convert(build_unit(config), name=name, emit_src=False,
                           strip_internal_attrs=True)
