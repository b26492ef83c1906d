"""One-hot selection: a value picked by a one-hot select as an AND-OR, and a one-hot select's
index, for the pipelined compute unit's stages (no binary index is decoded in their paths)."""

from amaranth.hdl import Const, Mux, Value

__all__ = ["onehot_mux", "onehot_index"]


def onehot_mux(sel, values):
    """The value of ``values`` (one per bit of ``sel``) that the one-hot ``sel`` names, as an
    AND-OR (0 when no bit is set)."""
    out = Const(0, Value.cast(values[0]).shape().width)
    for i in range(len(sel)):
        out = out | Mux(sel[i], Value.cast(values[i]), 0)
    return out


def onehot_index(sel):
    """The index that the one-hot ``sel`` names (0 when no bit is set)."""
    out = Const(0, range(len(sel)))
    for i in range(len(sel)):
        out = out | Mux(sel[i], i, 0)
    return out
