"""The FP32 vector instructions and their sub-units, derived from the instruction table.

:data:`FP_OPS` lists, in table order, every single-precision vector instruction (table unit
``fpu``). :class:`FpOp` is generated from it the way :class:`~gpgpu_hdl.cu.valu.ValuOp` is from
the integer list: member ``ADD_F32`` is ``v_add_f32``, its value the index in :data:`FP_OPS`.

Each instruction belongs to exactly one hardware sub-unit (:data:`SUBUNIT_OF`), named after the
table's ``subunit`` column:

=========  ==========================================================================
``add``    adder: ``v_add/sub/subrev_f32``
``mul``    multiplier: ``v_mul_f32``, ``v_mul_legacy_f32``, ``v_mullit_f32``, cube ops
``mad``    unfused multiply-add: not a unit of its own, the multiplier followed by the
           adder (so a ``mad`` keeps both)
``fma``    fused multiply-add: ``v_fma_f32``, ``v_div_fmas_f32``
``cmp``    compares, ``v_cmp_class``, min/max/min3/max3/med3
``cvt``    conversions, rounding to integral, ``ldexp``/``frexp``, packing
``trans``  reciprocal, square root and their reciprocal, exp/log/sin/cos, the division
           helpers ``v_div_scale``/``v_div_fixup``
=========  ==========================================================================
"""

import types

from amaranth.hdl import unsigned
from amaranth.lib import enum

from ...isa.table import TABLE, Unit

__all__ = ["FP_OPS", "FpOp", "SUBUNITS", "SUBUNIT_OF", "fp_member"]

#: Mnemonics of the FP32 vector instructions, in instruction-table order.
FP_OPS: tuple[str, ...] = tuple(e.mnemonic for e in TABLE if e.unit is Unit.FPU)

#: Sub-unit of each instruction (the table's ``subunit`` column).
SUBUNIT_OF: dict[str, str] = {e.mnemonic: e.subunit for e in TABLE if e.unit is Unit.FPU}

#: Hardware sub-units, in report order (``mad`` is the multiplier and the adder chained).
SUBUNITS = ("add", "mul", "mad", "fma", "cmp", "cvt", "trans")

if set(SUBUNIT_OF.values()) - set(SUBUNITS):      # the table changed under this module
    raise RuntimeError(f"unknown FP sub-units in the instruction table: "
                       f"{sorted(set(SUBUNIT_OF.values()) - set(SUBUNITS))}")


def _member_name(mnemonic: str) -> str:
    return mnemonic.removeprefix("v_").upper()


def _make_fp_op() -> type:
    def body(namespace):
        namespace["__module__"] = __name__
        namespace["__qualname__"] = "FpOp"
        namespace["__doc__"] = ("Operation selector of the FP32 sub-units: one member per "
                                ":data:`FP_OPS` entry (``v_add_f32`` is ``FpOp.ADD_F32``), "
                                "valued by its index there.")
        for index, mnemonic in enumerate(FP_OPS):
            namespace[_member_name(mnemonic)] = index
        namespace["mnemonic"] = property(lambda self: "v_" + self.name.lower(),
                                         doc="The instruction's mnemonic.")

    shape = unsigned(max(1, (len(FP_OPS) - 1).bit_length()))
    return types.new_class("FpOp", (enum.Enum,), {"shape": shape}, body)


FpOp = _make_fp_op()


def fp_member(mnemonic: str):
    """The :class:`FpOp` member of ``mnemonic`` (``KeyError`` if it is not an FP32 op)."""
    return FpOp[_member_name(mnemonic)]
