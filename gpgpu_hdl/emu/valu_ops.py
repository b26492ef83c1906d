"""Semantics of the vector ALU instructions (units ``valu``, ``fpu``, ``fpu64``).

:data:`VALU_OPS` maps every VOP1/VOP2/VOP3/VOPC mnemonic of the instruction table (except
the moves and lane operations the emulator core handles itself: ``v_nop``, ``v_clrexcp``,
``v_mov_b32``, ``v_readlane_b32``, ``v_writelane_b32``, ``v_readfirstlane_b32``,
``v_movrels_b32``, ``v_movreld_b32``, ``v_movrelsd_b32``) to a function computing all 64 lanes
at once.

Calling convention: ``fn(ctx, *srcs, *extra)``.

* ``ctx`` is a :class:`~gpgpu_hdl.emu.context.LaneContext`.
* ``srcs``: one ``(64,)`` array per source slot the table gives a type (src0, src1, src2):
  ``uint32`` for ``b32``/``f32``/``f16`` (f16 in the low half), ``uint64`` for
  ``b64``/``f64``; raw bits with the VOP3 abs/neg modifiers already applied. Inputs are
  never modified. ``v_madmk_f32``/``v_madak_f32`` get ``(s0, s1, k)`` with ``k`` the literal
  broadcast; the accumulating ``v_mac_f32``/``v_mac_legacy_f32`` and
  ``v_cvt_pkaccum_u8_f32`` (which reads its destination too) get the old destination value as
  third source. The SGPR-pair source of ``v_cndmask_b32``/``v_addc_u32``/``v_subb_u32``/
  ``v_subbrev_u32`` (table src2, ``b64``: VCC in e32, an SGPR pair in e64) is not passed as a
  source; its per-lane bit arrives as the extra argument.
* ``extra``: ``bool`` arrays: ``cin`` for the ``carry_in`` ops, ``sel`` for
  ``v_cndmask_b32``, ``vcc`` for ``v_div_fmas_f32/f64``.
* Result: a fresh ``uint32`` (32-bit destination) or ``uint64`` (64-bit destination) array;
  a ``bool`` array for VOPC (the core writes it to VCC/SDST/EXEC); ``(d, flag)`` for the
  ``vop3b`` ops (carry/borrow out, or the ``v_div_scale`` VCC flag). Output modifiers and
  EXEC masking are the core's job.

The floating-point contract (denormals, NaN, rounding, transcendental models) is in
:mod:`gpgpu_hdl.emu.fp`. Where a definition had to be chosen, the function says so; sources
are CLRX ``doc/GcnInstrs*.md``, LLVM's AMDGPU constant folding and AMD's later ISA guides.

The functions live in one module a topic, each registering into :data:`VALU_OPS`
(:mod:`.valu_common`, with the dtype aliases and constants they share): :mod:`.valu_int`
(integer and bit operations), :mod:`.valu_float` (f32/f64 arithmetic, transcendentals),
:mod:`.valu_convert` (conversions), :mod:`.valu_divide` (``v_div_scale``/``v_div_fmas``/
``v_div_fixup`` with their case list, ``v_trig_preop_f64``) and :mod:`.valu_compare` (VOPC
compares and class). This module imports them all.
"""

from __future__ import annotations

# imported for their registrations into VALU_OPS
from . import valu_compare, valu_convert, valu_divide, valu_float, valu_int  # noqa: F401
from .valu_common import VALU_OPS

__all__ = ["VALU_OPS"]
