"""Architectural state of one wavefront.

Scalar state lives in one list of Python ints indexed by the scalar operand code, so an
operand code *is* its register: ``s[0..103]`` the SGPRs, ``s[106]``/``s[107]`` VCC,
``s[124]`` M0, ``s[126]``/``s[127]`` EXEC (``shared/reference/si_isa.md`` section 4). SCC,
MODE and the PC are separate fields. The VGPR file is a ``(256, 64)`` ``uint32`` array.
"""

from __future__ import annotations

import numpy as np

from ..isa.decoder import SCALAR_NAMES, ScalarCode
from .context import FpMode, LaneContext
from .memory import Lds, Memory

__all__ = ["Wave", "mask_to_bool", "bool_to_mask", "VCC", "EXEC", "M0", "SCALAR_NAMES"]

VCC, M0, EXEC = int(ScalarCode.VCC_LO), int(ScalarCode.M0), int(ScalarCode.EXEC_LO)
_U8 = np.uint8



def mask_to_bool(mask: int) -> np.ndarray:
    """64-bit lane mask -> bool array of 64 lanes."""
    raw = np.frombuffer(mask.to_bytes(8, "little"), dtype=_U8)
    return np.unpackbits(raw, bitorder="little").view(bool)


def bool_to_mask(lanes: np.ndarray) -> int:
    """bool array of 64 lanes -> 64-bit lane mask."""
    return int.from_bytes(np.packbits(lanes, bitorder="little").tobytes(), "little")


class Wave:
    """One wavefront: registers, PC, and where it is in its workgroup.

    Attributes
    ----------
    s : list of int
        Scalar state by operand code (128 entries, each a 32-bit value).
    v : numpy.ndarray
        VGPRs, ``(256, 64)`` uint32.
    scc : int
    pc : int
        Byte offset of the next instruction from the start of the kernel's code.
    mode : FpMode
    ctx : LaneContext
        Context handed to vector semantic functions (follows ``mode``).
    mem : Memory
        Device global memory.
    lds : Lds
        The workgroup's LDS.
    group : tuple of 3 ints
        Workgroup id; ``index`` is the wave's number within the workgroup.
    done, at_barrier : bool
    mem_log : list or None
        When tracing, the memory writes of the current instruction: ``(space, address,
        bytes)`` with space ``"global"`` or ``"lds"``.
    """

    __slots__ = ("s", "v", "scc", "pc", "mode", "ctx", "lds", "group", "index", "done",
                 "at_barrier", "_exec_key", "_exec_lanes", "mem", "mem_log")

    def __init__(self, mem: Memory, lds: Lds, group: tuple[int, int, int], index: int) -> None:
        self.mem = mem
        self.s = [0] * 128
        self.v = np.zeros((256, 64), dtype=np.uint32)
        self.scc = 0
        self.pc = 0
        self.set_mode(FpMode().bits)
        self.lds = lds
        self.group = group
        self.index = index
        self.done = False
        self.at_barrier = False
        self._exec_key = -1
        self._exec_lanes = mask_to_bool(0)
        self.mem_log: list | None = None

    def set_mode(self, bits: int) -> None:
        self.mode = FpMode(bits & 0xFFFFFFFF)
        self.ctx = LaneContext(self.mode)

    # -- EXEC / VCC ----------------------------------------------------------------------------

    @property
    def exec(self) -> int:
        return self.s[126] | self.s[127] << 32

    @exec.setter
    def exec(self, mask: int) -> None:
        self.s[126] = mask & 0xFFFFFFFF
        self.s[127] = mask >> 32

    def exec_lanes(self) -> np.ndarray:
        """EXEC as a bool array (cached until EXEC changes)."""
        mask = self.s[126] | self.s[127] << 32
        if mask != self._exec_key:
            self._exec_key = mask
            self._exec_lanes = mask_to_bool(mask)
        return self._exec_lanes

    def read64(self, code: int) -> int:
        return self.s[code] | self.s[code + 1] << 32

    def write64(self, code: int, value: int) -> None:
        self.s[code] = value & 0xFFFFFFFF
        self.s[code + 1] = (value >> 32) & 0xFFFFFFFF
