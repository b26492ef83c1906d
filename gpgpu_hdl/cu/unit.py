"""The compute unit a configuration describes: the multi-cycle :class:`~.core.ComputeUnit`, or
with ``CuConfig(pipeline=True)`` the :class:`~.pipelined.PipelinedComputeUnit`.

Both have the same members (:func:`~.core.unit_members`), so everything that wraps a unit (the
simulation harness, the SoC, the trimmer, the synthesis bench) builds it here and connects it
the same way.
"""

from __future__ import annotations

from ..config import CuConfig
from .core import ComputeUnit
from .pipelined import PipelinedComputeUnit

__all__ = ["compute_unit"]


def compute_unit(config: CuConfig, *, trace: bool = False, shared_grid: bool = False,
                 style: str = "generic"):
    """The unit of ``config``, not elaborated.

    ``trace`` and ``shared_grid`` as :class:`~.core.ComputeUnit`'s. ``style`` is how the
    pipelined unit builds its multipliers and block RAMs (:data:`~.dsp.DSP_STYLES`:
    ``"ecp5"`` instantiates the primitives); the multi-cycle unit leaves that to synthesis
    and ignores it.
    """
    if config.pipeline:
        return PipelinedComputeUnit(config, trace=trace, shared_grid=shared_grid,
                                    dsp=style, ram=style)
    return ComputeUnit(config, trace=trace, shared_grid=shared_grid)
