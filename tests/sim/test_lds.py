"""The LDS on the RTL: the two-address forms (``ds_read2*`` / ``ds_write2*``) at every stride,
32 and 64 bits, checked against the golden model's commit trace and against the addresses SI
defines (offset x 4 or 8 bytes, x 64 more for ``st64``). A 64-bit ``st64`` stride is 512
bytes, one more bit than the others need; a tree reduction over ``__local long`` found that
the unit had dropped it (tests/fuzz/regressions/rtl-lds-min-long-two-waves)."""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_hdl.runtime import Device
from gpgpu_hdl.sim.trace import compare_traces
from tests.asm_kernels import ARG0_BUFFER, run_asm

#: Lane i, with a = 8 i: 64-bit pairs written at a, a + 512 (ds_write_b64 offset:512) and
#: a + 1024 (ds_write2st64_b64 offset1:2), 32-bit words at 4 i + 2048 and 4 i + 2304
#: (ds_write2st64_b32 offset0:8 offset1:9); then read back with every two-address form into
#: out[i, 0:12].
TWO_ADDRESS = f"""
    {ARG0_BUFFER}
    s_mov_b32 m0, -1
    v_lshlrev_b32 v1, 3, v0
    v_lshlrev_b32 v20, 2, v0
    v_mov_b32 v2, v0
    v_not_b32 v3, v0
    v_add_i32 v4, vcc, 0x3e8, v0
    v_lshlrev_b32 v5, 16, v0
    v_add_i32 v6, vcc, 0x7d0, v0
    v_mul_u32_u24 v7, 0x10101, v0
    ds_write2st64_b64 v1, v[2:3], v[4:5] offset1:2
    ds_write_b64 v1, v[6:7] offset:512
    ds_write2st64_b32 v20, v5, v7 offset0:8 offset1:9
    s_waitcnt lgkmcnt(0)
    s_barrier
    ds_read2st64_b64 v[8:11], v1 offset0:1 offset1:2
    ds_read2_b64 v[12:15], v1 offset1:128
    ds_read2st64_b32 v[16:17], v20 offset0:9 offset1:8
    ds_read2_b32 v[18:19], v20 offset0:64 offset1:1
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v21, 6, v0
    buffer_store_dwordx4 v[8:11], v21, s[4:7], 0 offen
    buffer_store_dwordx4 v[12:15], v21, s[4:7], 0 offen offset:16
    buffer_store_dwordx4 v[16:19], v21, s[4:7], 0 offen offset:32
    s_endpgm"""

_LDS = dict(workgroup_group_segment_byte_size=2560, granulated_lds_size=10)


def _expected() -> np.ndarray:
    """out[i] from SI's address rules, independently of both implementations."""
    i = np.arange(64, dtype=np.uint64)
    lds = np.zeros(640, np.uint32)                       # 2,560 bytes as words
    pair = {0: (i, ~i & 0xFFFFFFFF), 1: (i + 1000, i << 16), 2: (i + 2000, i * 0x10101)}
    for base, key in ((0, 0), (1024, 1), (512, 2)):      # byte address of lane 0's pair
        w = (base + 8 * i) // 4
        lds[w.astype(int)], lds[(w + 1).astype(int)] = pair[key]
    lds[((2048 + 4 * i) // 4).astype(int)] = pair[1][1]
    lds[((2304 + 4 * i) // 4).astype(int)] = pair[2][1]

    def dword(byte_address):
        return lds[(byte_address // 4).astype(int)]

    a, b = 8 * i, 4 * i
    cols = [dword(a + 512), dword(a + 516), dword(a + 1024), dword(a + 1028),
            dword(a), dword(a + 4), dword(a + 1024), dword(a + 1028),
            dword(b + 2304), dword(b + 2048), dword(b + 256), dword(b + 4)]
    out = np.zeros((64, 16), np.uint32)
    out[:, :12] = np.stack(cols, axis=1)
    return out


def test_two_address_forms_follow_si_on_the_emulator():
    _, (out,) = run_asm(TWO_ADDRESS, np.zeros((64, 16), np.uint32), **_LDS)
    assert (out == _expected()).all()


@pytest.fixture(scope="module")
def rtl():
    Device("verilator").backend.build()
    return lambda: Device("verilator", max_cycles=2_000_000)


def test_two_address_forms_match_the_golden_model_on_the_rtl(rtl):
    emu, (want,) = run_asm(TWO_ADDRESS, np.zeros((64, 16), np.uint32), trace=True, **_LDS)
    got, (out,) = run_asm(TWO_ADDRESS, np.zeros((64, 16), np.uint32), device=rtl(),
                          trace=True, **_LDS)
    assert not compare_traces(emu.trace.records, got.trace)
    assert (out == want).all()
