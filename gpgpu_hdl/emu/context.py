"""What a vector-ALU semantic function sees besides its operands.

Semantic functions (see :mod:`gpgpu_hdl.emu.valu_ops`) are pure functions over whole waves:
they receive their source operands as 64-element numpy arrays and return the result arrays.
Everything that is not an operand but changes the result (the MODE register, the lane index)
comes in one :class:`LaneContext`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["WAVE_SIZE", "LANES", "FpMode", "LaneContext"]

WAVE_SIZE = 64
#: Lane numbers 0..63 (read-only).
LANES = np.arange(WAVE_SIZE, dtype=np.uint32)
LANES.setflags(write=False)


@dataclass(frozen=True, slots=True)
class FpMode:
    """The MODE hardware register (SI layout, CLRX ``GcnState.md``).

    ``[3:0]`` FP_ROUND (``[1:0]`` f32, ``[3:2]`` f64/f16; 0 = nearest even),
    ``[7:4]`` FP_DENORM (``[5:4]`` f32, ``[7:6]`` f64/f16; 0 = flush inputs and outputs,
    1 = flush outputs, 2 = flush inputs, 3 = preserve), ``[8]`` DX10_CLAMP, ``[9]`` IEEE.
    LLVM 19 tahiti kernels start with FLOAT_MODE 0xC0, DX10_CLAMP and IEEE set:
    ``FpMode(0x3C0)``.
    """

    bits: int = 0x3C0
    round_f32: int = field(init=False)
    round_f64: int = field(init=False)
    flush_in_f32: bool = field(init=False)
    flush_out_f32: bool = field(init=False)
    flush_in_f64: bool = field(init=False)
    flush_out_f64: bool = field(init=False)
    dx10_clamp: bool = field(init=False)
    ieee: bool = field(init=False)

    def __post_init__(self) -> None:
        b = self.bits
        d32, d64 = (b >> 4) & 3, (b >> 6) & 3
        for name, value in (("round_f32", b & 3), ("round_f64", (b >> 2) & 3),
                            ("flush_in_f32", d32 in (0, 2)), ("flush_out_f32", d32 in (0, 1)),
                            ("flush_in_f64", d64 in (0, 2)), ("flush_out_f64", d64 in (0, 1)),
                            ("dx10_clamp", bool(b >> 8 & 1)), ("ieee", bool(b >> 9 & 1))):
            object.__setattr__(self, name, value)


@dataclass(frozen=True, slots=True)
class LaneContext:
    """Per-instruction context of a vector semantic function.

    Attributes
    ----------
    mode : FpMode
        The wave's MODE register when the instruction executes.
    lane : numpy.ndarray
        ``uint32`` lane numbers 0..63 (for ``v_mbcnt_*``).
    """

    mode: FpMode = FpMode()
    lane: np.ndarray = field(default_factory=lambda: LANES)
