"""The vector ALU semantics as a whole (:data:`gpgpu_hdl.emu.valu_ops.VALU_OPS`) against the
instruction table (:data:`gpgpu_hdl.isa.table.TABLE`).

- Every VALU/FPU/FPU64 row of the table, but the moves and lane operations the core handles
  itself, has a semantic function, and every semantic function has a row.
- In each FP mode (flushing, denormals, non-IEEE), every function called with random operands
  as the core calls it (see the ``valu_ops`` module docstring) leaves its inputs untouched and
  returns fresh 64-lane arrays of the destination's width: ``bool`` for VOPC, a
  ``(d, flag)`` pair for the ``vop3b`` ops.

Each op's values are checked against independent models in ``test_valu_int``,
``test_valu_float``, ``test_valu_convert``, ``test_valu_divide`` and ``test_valu_compare``.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.table import TABLE, Unit
from tests.emu.valu_models import CTX, DENORM, NON_IEEE, RNG, rand_u32, zipped

CORE_HANDLED = {"v_nop", "v_clrexcp", "v_readlane_b32", "v_writelane_b32", "v_readfirstlane_b32",
                "v_movrels_b32", "v_movreld_b32", "v_movrelsd_b32", "v_mov_b32"}


pytestmark = pytest.mark.usefixtures("valu_environment")


def _vector_alu_rows():
    return [e for e in TABLE if e.unit in (Unit.VALU, Unit.FPU, Unit.FPU64)]


def test_registry_covers_the_table_exactly():
    names = {e.mnemonic for e in _vector_alu_rows()} - CORE_HANDLED
    assert names - set(VALU_OPS) == set(), "table rows without semantics"
    assert set(VALU_OPS) - names == set(), "semantics without a table row"


def _args_for(e):
    """The arguments the core passes (see the valu_ops module docstring)."""
    types = [t for t in e.sources if t is not None]
    if "carry_in" in e.flags or "sel" in e.flags:
        types = types[:2]                    # the lane mask arrives as a bool array instead
    if e.mnemonic in ("v_madmk_f32", "v_madak_f32", "v_cvt_pkaccum_u8_f32") or "acc" in e.flags:
        types = types[:2] + [e.dst]          # literal K, or the old destination
    args = [RNG.integers(0, 1 << 64, 64, dtype=np.uint64) if t.bits == 64 else rand_u32()
            for t in types]
    if "vcc" in e.reads:
        args.append(RNG.integers(0, 2, 64).astype(bool))
    return args


@pytest.mark.parametrize("ctx", [CTX, DENORM, NON_IEEE], ids=["ftz", "denorm", "non_ieee"])
def test_calling_convention(ctx):
    for e in _vector_alu_rows():
        if e.mnemonic in CORE_HANDLED:
            continue
        args = _args_for(e)
        saved = [a.copy() for a in args]
        out = VALU_OPS[e.mnemonic](ctx, *args)
        for a, s in zipped(args, saved):
            assert np.array_equal(a, s), f"{e.mnemonic} modified an input"
        want = np.uint64 if e.dst is not None and e.dst.bits == 64 else np.uint32
        if e.format is Format.VOPC:
            assert out.dtype == np.bool_ and out.shape == (64,), e.mnemonic
            results = [out]
        elif "vop3b" in e.flags:
            d, flag = out
            assert d.dtype == want and d.shape == (64,), e.mnemonic
            assert flag.dtype == np.bool_ and flag.shape == (64,), e.mnemonic
            results = [d, flag]
        else:
            assert out.dtype == want and out.shape == (64,), (e.mnemonic, out.dtype)
            results = [out]
        for r in results:
            assert not any(np.shares_memory(r, a) for a in args), f"{e.mnemonic} returns a view"
