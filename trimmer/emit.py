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

from gpgpu_hdl.config import CuConfig, Resources
from gpgpu_hdl.cu.unit import compute_unit

__all__ = ["TOP", "STYLE", "unit_name", "unit_title", "unit_resources", "build_unit",
           "emit_verilog"]

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


#: ECP5 ``DP16KD`` shapes as a pseudo dual-port RAM (one write port, one read port): (width,
#: depth).
_DP16KD = ((36, 512), (18, 1024), (9, 2048), (4, 4096), (2, 8192), (1, 16384))


def _ebrs(width: int, depth: int, copies: int = 1) -> int:
    """EBRs for ``copies`` RAMs of ``width`` bits by ``depth`` words, each in its cheapest
    ``DP16KD`` shape."""
    if not width or not depth:
        return 0
    return copies * min(-(-width // w) * -(-depth // d) for w, d in _DP16KD)


def unit_resources(config: CuConfig) -> Resources:
    """Block RAM estimate (ECP5 EBRs) of the unit ``config`` builds: the multi-cycle unit's is
    :meth:`CuConfig.resources`; the pipelined unit's follows its own memories (the VGPR file's
    4 banks of ``32 * lanes`` bits, the SGPR file's 3 read copies of 64 bits, 64 rows per wave
    slot, the LDS unit's banks of 32 bits, the 2 instruction-memory banks of 32 bits). The
    queues (LUT RAM) are not counted."""
    if not config.pipeline:
        return config.resources()
    from gpgpu_hdl.cu.lds import LdsUnit
    from gpgpu_hdl.cu.sgpr_file import ROWS_PER_SLOT
    from gpgpu_hdl.cu.vgpr_file import BANKS

    lanes, slots = config.lanes, config.wave_slots
    lds_banks = (LdsUnit(lanes=lanes, slots=slots, vgprs=config.vgprs,
                         lds_bytes=config.lds_bytes).banks if config.lds_bytes else 1)
    return Resources(
        vgpr_ebr=_ebrs(32 * lanes, slots * config.vgprs // BANKS * (64 // lanes), BANKS),
        sgpr_ebr=_ebrs(64, slots * ROWS_PER_SLOT, 3),
        lds_ebr=_ebrs(32, config.lds_bytes // 4 // lds_banks, lds_banks),
        imem_ebr=_ebrs(32, config.imem_bytes // 8, 2))


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
