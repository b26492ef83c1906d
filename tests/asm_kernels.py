"""Hand-assembled kernels run through the runtime on any device, and the addressing kernels
that the emulator's and the RTL's tests share: 48-bit address wrap, and addresses beyond the
4 GiB of physical memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.isa.disasm import format_instruction
from gpgpu_hdl.runtime import Device, MemoryFault, RtlTrap
from gpgpu_hdl.toolchain import assemble_kernel

__all__ = ["run_asm", "ARG0_BUFFER", "WRAP_48", "wrap_48_expected", "FAR", "check_far_trap"]

#: The V# of the first kernel argument's buffer in s[4:7] (base from the kernarg, no size limit).
ARG0_BUFFER = """s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_mov_b32 s6, -1
    s_mov_b32 s7, 0xf000"""


def run_asm(body: str, *args: np.ndarray, device: Any = None, global_size: int = 64,
            local_size: int = 64, trace: bool = False, **code_t: Any):
    """Assemble ``body`` as kernel ``k`` taking one buffer per array in ``args``, run it on
    ``device`` (default a new ``Device("emu")``); return the result and the buffers' final
    contents."""
    dev = device if device is not None else Device("emu")
    code_t.setdefault("kernarg_segment_byte_size", 8 * len(args))
    prog = dev.load_bytes(assemble_kernel(body, "k", **code_t))
    bufs = [dev.array(a) for a in args]
    res = prog.k(*bufs, global_size=global_size, local_size=local_size, trace=trace)
    return res, [b.numpy() for b in bufs]


#: Arguments ``in`` (64 words) and ``out`` (64 x 4 words). Lane i stores a buffer load with V#
#: base -4 at ``in + 4 (i + 1)`` (in[i]), an ``s_load`` at ``in + 8 + 2**48`` (in[2]) and an
#: ``s_buffer_load`` with base -4 at offset ``in + 8`` (in[1]): every sum wraps at 2**48.
WRAP_48 = """
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    v_add_i32 v1, vcc, 4, v1
    v_add_i32 v2, vcc, s4, v1
    v_mov_b32 v3, s5
    v_addc_u32 v3, vcc, 0, v3, vcc
    s_mov_b32 s8, 0xfffffffc
    s_mov_b32 s9, 0xffff
    s_mov_b32 s10, 0
    s_mov_b32 s11, 0xf000
    buffer_load_dword v4, v[2:3], s[8:11], 0 addr64
    s_add_u32 s12, s4, 8
    s_addc_u32 s13, s5, 0x10000
    s_load_dword s14, s[12:13], 0x0
    s_add_u32 s20, s4, 8
    s_mov_b32 s18, -1
    s_mov_b32 s19, 0xf000
    s_mov_b32 s16, 0xfffffffc
    s_mov_b32 s17, 0xffff
    s_buffer_load_dword s15, s[16:19], s20
    s_waitcnt vmcnt(0) lgkmcnt(0)
    v_mov_b32 v5, s14
    v_mov_b32 v6, s15
    v_lshlrev_b32 v7, 4, v0
    v_add_i32 v7, vcc, s6, v7
    v_mov_b32 v8, s7
    v_addc_u32 v8, vcc, 0, v8, vcc
    s_mov_b64 s[8:9], 0
    buffer_store_dwordx3 v[4:6], v[7:8], s[8:11], 0 addr64
    s_endpgm"""


def wrap_48_expected(words: np.ndarray) -> np.ndarray:
    """What :data:`WRAP_48` leaves in ``out`` for ``in`` = ``words``."""
    out = np.zeros((64, 4), np.uint32)
    out[:, 0], out[:, 1], out[:, 2] = words, words[2], words[1]
    return out


_STORE = """
    v_mov_b32 v9, s{reg}
    v_lshlrev_b32 v7, 2, v0
    v_add_i32 v7, vcc, s6, v7
    v_mov_b32 v8, s7
    v_addc_u32 v8, vcc, 0, v8, vcc
    s_mov_b64 s[8:9], 0
    s_mov_b32 s10, 0
    s_mov_b32 s11, 0xf000
    buffer_store_dword v{vreg}, v[7:8], s[8:11], 0 addr64
    s_endpgm"""

#: Kernels (arguments ``in``, ``out``) whose one access is ``in`` plus 2**32: below 2**48, so no
#: wrap, but beyond a 4 GiB physical memory (a 32-bit sum would alias it to ``in``). By the
#: faulting instruction's mnemonic.
FAR = {
    "buffer_load_dword": """
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    v_add_i32 v2, vcc, s4, v1
    v_mov_b32 v3, s5
    v_addc_u32 v3, vcc, 0, v3, vcc
    s_mov_b32 s8, 0
    s_mov_b32 s9, 1
    s_mov_b32 s10, 0
    s_mov_b32 s11, 0xf000
    buffer_load_dword v9, v[2:3], s[8:11], 0 addr64
    s_waitcnt vmcnt(0)""" + _STORE.format(reg=0, vreg=9),
    "buffer_store_dword": """
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    s_mov_b32 s8, s4
    s_add_u32 s9, s5, 1
    s_mov_b32 s10, 0x100
    s_mov_b32 s11, 0xf000
    buffer_store_dword v1, v1, s[8:11], 0 offen
    s_endpgm""",
    "s_load_dword": """
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_add_u32 s5, s5, 1
    s_load_dword s12, s[4:5], 0x0
    s_waitcnt lgkmcnt(0)""" + _STORE.format(reg=12, vreg=9),
}


def check_far_trap(mnemonic: str, device: Any) -> None:
    """Run ``FAR[mnemonic]`` on the golden model (which faults) and on ``device``, whose
    trap must name the same instruction: an address beyond the 4 GiB physical memory at its
    PC, with its disassembly."""
    words = np.arange(64, dtype=np.uint32)
    with pytest.raises(MemoryFault):
        run_asm(FAR[mnemonic], words, np.zeros(64, np.uint32))
    code = assemble_kernel(FAR[mnemonic], "k")
    inst = next(i for i in decode(CodeObject.from_bytes(code).kernel("k").code)
                if i.info.mnemonic == mnemonic)
    with pytest.raises(RtlTrap) as info:
        run_asm(FAR[mnemonic], words, np.full(64, 7, np.uint32), device=device)
    message = str(info.value)
    assert f"an address beyond the 4 GiB physical memory at pc {inst.offset:#x}" in message
    assert format_instruction(inst) in message
