"""Emulator core: scalar ALU, control flow, EXEC, memory instructions, barriers, dispatch
and the commit trace, on kernels assembled by llvm-mc-19 and compiled by clang-19 and run
through the host runtime (whose own API is tested in ``tests/runtime``).

Expected values come from independent Python models written here (integer arithmetic on
Python ints, a dict model of LDS / memory), never from the emulator itself.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpgpu_hdl.dispatch import Dispatch, dispatch_packet
from gpgpu_hdl.emu import (CommitTrace, Emulator, EmulatorError, MemoryFault, Program,
                           UnsupportedInstruction, per_wave, read_trace)
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.toolchain import assemble_kernel, compile_cl
from tests.asm_kernels import ARG0_BUFFER, FAR, WRAP_48, run_asm, wrap_48_expected
from tests.bits import M32, sext


# -- scalar ALU ----------------------------------------------------------------------------

A_VALUES = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678, 0xFFFF0000]
B_VALUES = [0, 1, 31, 32, 33, 0x80000000, 0xFFFFFFFF, 0x00050004]


def _scalar_model(op: str, a: int, b: int, scc: int):
    """(result, scc) per the SI manual / si_isa.md 6.1; None = not written/unchanged."""
    if op == "s_add_u32":
        return (a + b) & M32, int(a + b > M32)
    if op == "s_sub_u32":
        return (a - b) & M32, int(b > a)
    if op == "s_addc_u32":
        return (a + b + scc) & M32, int(a + b + scc > M32)
    if op == "s_subb_u32":
        return (a - b - scc) & M32, int(b + scc > a)
    if op == "s_add_i32":
        r = sext(a) + sext(b)
        return r & M32, int(r != sext(r & M32))
    if op == "s_sub_i32":
        r = sext(a) - sext(b)
        return r & M32, int(r != sext(r & M32))
    if op == "s_min_i32":
        return (a if sext(a) < sext(b) else b), int(sext(a) < sext(b))
    if op == "s_max_u32":
        return (a if a > b else b), int(a > b)
    if op == "s_lshl_b32":
        r = (a << (b % 32)) & M32
        return r, int(r != 0)
    if op == "s_ashr_i32":
        r = (sext(a) >> (b % 32)) & M32
        return r, int(r != 0)
    if op == "s_bfe_u32":
        off, width = b & 31, (b >> 16) & 0x7F
        r = (a >> off) & ((1 << width) - 1)
        return r, int(r != 0)
    if op == "s_bfe_i32":
        off, width = b & 31, (b >> 16) & 0x7F
        r = (a >> off) & ((1 << width) - 1)
        if width and r >> (width - 1):
            r -= 1 << width
        r &= M32
        return r, int(r != 0)
    if op == "s_andn2_b32":
        r = a & ~b & M32
        return r, int(r != 0)
    if op == "s_mul_i32":
        return (sext(a) * sext(b)) & M32, None
    if op == "s_cselect_b32":
        return (a if scc else b), None
    raise KeyError(op)


SOP2 = ["s_add_u32", "s_sub_u32", "s_addc_u32", "s_subb_u32", "s_add_i32", "s_sub_i32",
        "s_min_i32", "s_max_u32", "s_lshl_b32", "s_ashr_i32", "s_bfe_u32", "s_bfe_i32",
        "s_andn2_b32", "s_mul_i32", "s_cselect_b32"]


def test_scalar_alu_against_model():
    lines, cases = [], []
    for op in SOP2:
        for a in A_VALUES:
            for b in B_VALUES:
                for scc in (0, 1):
                    lines += [f"s_mov_b32 s10, {a:#x}", f"s_mov_b32 s11, {b:#x}",
                              f"s_cmp_eq_u32 0, {1 - scc}", f"{op} s12, s10, s11"]
                    cases.append((op, a, b, scc))
    res, _ = run_asm("\n".join(lines) + "\ns_endpgm", trace=True)
    recs = [r for r in res.trace.records if r["op"].split()[0] in SOP2]
    assert len(recs) == len(cases)
    for rec, (op, a, b, scc) in zip(recs, cases, strict=True):
        want, want_scc = _scalar_model(op, a, b, scc)
        assert rec["sgpr"]["s12"] == want, (op, hex(a), hex(b), scc)
        if want_scc is not None:
            assert rec["scc"] == want_scc, (op, hex(a), hex(b), scc)


def test_scalar_64bit_and_bit_ops():
    body = """
    s_mov_b64 s[10:11], 0x80000001
    s_mov_b32 s11, 0x00000100
    s_ff1_i32_b64 s12, s[10:11]
    s_flbit_i32_b64 s13, s[10:11]
    s_bcnt1_i32_b64 s14, s[10:11]
    s_lshl_b64 s[16:17], s[10:11], 36
    s_ashr_i64 s[18:19], s[16:17], 4
    s_brev_b32 s20, 1
    s_mov_b32 s21, 0
    s_ff1_i32_b32 s22, s21
    s_not_b64 s[24:25], s[10:11]
    s_endpgm"""
    res, _ = run_asm(body, trace=True)
    last = {}
    for r in res.trace.records:
        last.update(r.get("sgpr", {}))
    x = 0x00000100_80000001
    assert last["s12"] == 0
    assert last["s13"] == 64 - x.bit_length()
    assert last["s14"] == bin(x).count("1")
    shl = (x << 36) & (2**64 - 1)
    assert (last["s16"], last["s17"]) == (shl & M32, shl >> 32)
    ashr = (sext(shl, 64) >> 4) & (2**64 - 1)
    assert (last["s18"], last["s19"]) == (ashr & M32, ashr >> 32)
    assert last["s20"] == 0x80000000
    assert last["s22"] == M32
    assert (last["s24"], last["s25"]) == (~x & M32, (~x >> 32) & M32)


#: (S0, S1) of the bit-field mask tests: widths and offsets 0, 31, 32, 63, a field running
#: past the top, and operands with bits above [4:0] / [5:0] set (ignored)
BFM_CASES = [(0, 0), (0, 17), (1, 0), (5, 3), (31, 1), (32, 0), (32, 31), (33, 2), (63, 0),
             (63, 1), (1, 63), (40, 30), (0x45, 0x47), (0x7A, 0x3E), (0xFFFFFFFF, 0xFFFFFFFF),
             (0x80000003, 0xC0), (0xFFFFFFC0, 5)]


def _bfm_model(a: int, b: int, bits: int) -> int:
    """S_BFM_B32 / S_BFM_B64: ``((1 << S0[w]) - 1) << S1[w]`` with ``w`` = [4:0] or [5:0],
    built bit by bit; ones pushed past bit ``bits - 1`` are lost."""
    width, offset = a & (bits - 1), b & (bits - 1)
    return sum(1 << i for i in range(offset, min(offset + width, bits)))


@pytest.mark.parametrize("op, bits", [("s_bfm_b32", 32), ("s_bfm_b64", 64)])
def test_scalar_bfm(op, bits):
    dst = "s12" if bits == 32 else "s[12:13]"
    lines, cases = [], []
    for a, b in BFM_CASES:
        for scc in (0, 1):
            lines += [f"s_mov_b32 s10, {a:#x}", f"s_mov_b32 s11, {b:#x}",
                      f"s_cmp_eq_u32 0, {1 - scc}", f"{op} {dst}, s10, s11",
                      "s_cselect_b32 s14, 1, 0"]
            cases.append((a, b, scc))
    res, _ = run_asm("\n".join(lines) + "\ns_endpgm", trace=True)
    recs = res.trace.records
    bfms = [i for i, r in enumerate(recs) if r["op"].split()[0] == op]
    assert len(bfms) == len(cases)
    for i, (a, b, scc) in zip(bfms, cases, strict=True):
        rec, want = recs[i], _bfm_model(a, b, bits)
        got = rec["sgpr"]["s12"] | rec["sgpr"].get("s13", 0) << 32
        assert got == want, (op, hex(a), hex(b))
        assert set(rec["sgpr"]) == ({"s12"} if bits == 32 else {"s12", "s13"})
        assert "scc" not in rec                                 # SCC is neither written ...
        assert recs[i + 1]["sgpr"]["s14"] == scc, (op, hex(a), hex(b), scc)  # ... nor changed
    assert _bfm_model(63, 1, 64) == 0xFFFF_FFFF_FFFF_FFFE       # the widest mask: 63 ones
    assert _bfm_model(1, 63, 64) == 1 << 63


# -- EXEC, compares, branches --------------------------------------------------------------

def test_divergence_saveexec_and_branches():
    # lanes < 20 take "then" (write 1), others "else" (write 2); lanes >= 40 additionally add
    # 10 through a second nested mask; an execz branch skips a block nobody runs.
    body = f"""
    {ARG0_BUFFER}
    v_mov_b32 v1, 0
    v_cmp_gt_u32 vcc, 20, v0
    s_and_saveexec_b64 s[8:9], vcc
    s_xor_b64 s[8:9], exec, s[8:9]
    s_cbranch_execz .Lelse
    v_mov_b32 v1, 1
.Lelse:
    s_andn2_saveexec_b64 s[8:9], s[8:9]
    s_cbranch_execz .Lend
    v_mov_b32 v1, 2
.Lend:
    s_or_b64 exec, exec, s[8:9]
    v_cmpx_le_u32 vcc, 40, v0
    v_mov_b32 v2, 10
    v_add_i32 v1, vcc, v1, v2
    s_mov_b64 exec, 0
    s_cbranch_execz .Lskip
    s_mov_b32 s20, 99
.Lskip:
    s_mov_b64 exec, -1
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v3, 2, v0
    buffer_store_dword v1, v3, s[4:7], 0 offen
    s_endpgm"""
    res, (out,) = run_asm(body, np.zeros(64, np.uint32), trace=True)
    lanes = np.arange(64)
    want = np.where(lanes < 20, 1, 2) + np.where(lanes >= 40, 10, 0)
    assert (out == want).all()
    assert not any("s20" in r.get("sgpr", {}) for r in res.trace.records)
    cmpx = next(r for r in res.trace.records if r["op"].startswith("v_cmpx"))
    mask = sum(1 << i for i in range(40, 64))
    assert cmpx["sgpr"]["exec_lo"] | cmpx["sgpr"]["exec_hi"] << 32 == mask
    assert cmpx["sgpr"]["vcc_lo"] | cmpx["sgpr"]["vcc_hi"] << 32 == mask


def test_readlane_readfirstlane_and_movrel():
    body = f"""
    {ARG0_BUFFER}
    v_mul_u32_u24 v1, 3, v0
    v_readlane_b32 s10, v1, 17
    s_mov_b64 exec, 0xff00
    v_readfirstlane_b32 s11, v1
    s_mov_b64 exec, -1
    s_mov_b32 m0, 2
    v_mov_b32 v5, 7
    v_mov_b32 v6, 8
    v_movrels_b32 v2, v4
    v_movreld_b32 v2, v0
    v_mov_b32 v3, s10
    v_mov_b32 v7, s11
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v8, 5, v0
    buffer_store_dwordx4 v[2:5], v8, s[4:7], 0 offen
    buffer_store_dword v7, v8, s[4:7], 0 offen offset:16
    s_endpgm"""
    _, (out,) = run_asm(body, np.zeros((64, 8), np.uint32))
    lanes = np.arange(64)
    assert (out[:, 0] == 8).all()            # v2 = v[4 + m0] = v6
    assert (out[:, 1] == 3 * 17).all()       # readlane lane 17
    assert (out[:, 2] == lanes).all()        # movreld wrote v[2 + m0] = v4
    assert (out[:, 3] == 7).all()            # v5 untouched
    assert (out[:, 4] == 3 * 8).all()        # first active lane of 0xff00 is 8


def test_writelane_writes_one_lane_whatever_exec():
    """v_writelane_b32 vD, src0, lane: VDST[lane & 63] = src0 (an SGPR, M0 or a constant, the
    same for every lane), with the lane select an SGPR, M0 or an inline constant; EXEC is
    ignored (lanes outside it, and EXEC = 0, are written) and no other lane changes."""
    body = f"""
    {ARG0_BUFFER}
    v_add_i32 v1, vcc, 1, v0
    v_add_i32 v2, vcc, 2, v0
    v_add_i32 v3, vcc, 3, v0
    v_add_i32 v4, vcc, 4, v0
    v_add_i32 v5, vcc, 5, v0
    s_mov_b32 s10, 0xdeadbeef
    s_movk_i32 s11, 0xd1
    s_mov_b32 s12, 0x76543210
    s_movk_i32 m0, 0x64
    s_mov_b64 exec, 0xffff
    v_writelane_b32 v1, -7, s11
    v_writelane_b32 v2, s10, m0
    v_writelane_b32 v3, s10, 5
    v_writelane_b32 v3, s12, 64
    v_writelane_b32 v3, 1.0, -1
    s_mov_b64 exec, 0
    v_writelane_b32 v4, s10, 40
    v_writelane_b32 v5, 0x12345678, 9
    v_writelane_b32 v5, m0, 3
    s_mov_b64 exec, -1
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v8, 5, v0
    buffer_store_dwordx4 v[2:5], v8, s[4:7], 0 offen
    buffer_store_dword v1, v8, s[4:7], 0 offen offset:16
    s_endpgm"""
    res, (out,) = run_asm(body, np.zeros((64, 8), np.uint32), trace=True)
    want = {k: np.arange(64, dtype=np.uint32) + k for k in range(1, 6)}
    want[1][0xD1 % 64] = -7 & M32                   # lane 17 from s11, outside EXEC
    want[2][0x64 % 64] = 0xDEADBEEF                 # lane 36 from M0, outside EXEC
    want[3][5] = 0xDEADBEEF                         # inside EXEC
    want[3][64 % 64] = 0x76543210
    want[3][-1 % 64] = np.float32(1.0).view(np.uint32)
    want[4][40] = 0xDEADBEEF                        # EXEC = 0
    want[5][9], want[5][3] = 0x12345678, 0x64       # a literal; M0 as the data
    for k in range(2, 6):
        assert (out[:, k - 2] == want[k]).all(), f"v{k}"
    assert (out[:, 4] == want[1]).all(), "v1"
    # the trace lists the destination VGPR (all 64 lanes, after), with EXEC before
    rec = next(r for r in res.trace.records if r["op"] == "v_writelane_b32 v1, -7, s11")
    assert rec["exec"] == 0xFFFF and list(rec["vgpr"]) == ["v1"]
    assert rec["vgpr"]["v1"] == want[1].tolist()
    assert "sgpr" not in rec


def test_o0_build_spills_sgprs_to_vgpr_lanes(tmp_path):
    """clang's -O0 code keeps scalars (EXEC masks, loop state) in VGPR lanes across blocks with
    v_writelane_b32 / v_readlane_b32; the -O0 build runs and agrees with a Python model."""
    src = tmp_path / "spill.cl"
    src.write_text("""
__kernel void k(__global int *out, __global const int *in, int n, int m) {
    int gid = get_global_id(0);
    int acc = 0;
    for (int i = 0; i < n; i++) {
        if ((in[gid] + i) & 1)
            acc += i * m;
        else
            acc -= in[gid] ^ i;
    }
    out[gid] = acc;
}""")
    binary = compile_cl(src, tmp_path / "spill.bin", extra_flags=("-O0",))
    code = CodeObject.load(binary).kernel("k").code
    assert "v_writelane_b32" in {i.info.mnemonic for i in decode(code)}
    values = np.random.default_rng(1).integers(-1000, 1000, 128).astype(np.int32)
    n, m = 37, 5
    want = []
    for x in values.tolist():
        acc = 0
        for i in range(n):
            acc += i * m if (x + i) & 1 else -(x ^ i)
        want.append(acc)
    dev = Device("emu")
    out, inp = dev.array(np.zeros(128, np.int32)), dev.array(values)
    dev.load(binary).k(out, inp, np.int32(n), np.int32(m), global_size=(128,), local_size=(64,))
    assert out.numpy().tolist() == want


# -- memory --------------------------------------------------------------------------------

def test_smrd_offsets_and_buffer_addressing():
    words = np.arange(64, dtype=np.uint32) * 0x01010101 + 0x80
    body = """
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_load_dword s10, s[4:5], 0x3
    s_movk_i32 s11, 0x14
    s_load_dword s12, s[4:5], s11
    s_mov_b32 s8, s6
    s_mov_b32 s9, s7
    s_mov_b32 s6, -1
    s_mov_b32 s7, 0xf000
    s_waitcnt lgkmcnt(0)
    v_mov_b32 v1, s10
    v_mov_b32 v2, s12
    buffer_load_sbyte v3, v0, s[4:7], 0 offen offset:3
    buffer_load_ushort v4, v0, s[4:7], 0 offen offset:2
    buffer_load_sshort v5, v0, s[4:7], 0 offen offset:2
    buffer_load_ubyte v6, v0, s[4:7], 0 offen
    s_mov_b32 s14, 0x40000
    s_mov_b32 s15, 0xf000
    s_mov_b32 s13, s5
    s_mov_b32 s12, s4
    s_or_b32 s13, s13, 0x40000
    buffer_load_dword v7, v0, s[12:15], 0 idxen
    s_mov_b32 s6, 0x100
    buffer_load_dword v8, v0, s[4:7], 0 offen offset:0xfc
    v_mov_b32 v9, s8
    v_mov_b32 v10, s9
    v_lshlrev_b32 v11, 5, v0
    v_mov_b32 v12, 0
    v_add_i32 v9, vcc, v9, v11
    v_addc_u32 v10, vcc, v10, v12, vcc
    s_mov_b64 s[4:5], 0
    s_mov_b32 s6, 0
    buffer_store_dwordx4 v[1:4], v[9:10], s[4:7], 0 addr64
    buffer_store_dwordx4 v[5:8], v[9:10], s[4:7], 0 addr64 offset:16
    s_endpgm"""
    res, (src, out) = run_asm(body, words, np.zeros((64, 8), np.uint32))
    raw = words.tobytes()
    lanes = np.arange(64)
    assert (out[:, 0] == words[3]).all() and (out[:, 1] == words[5]).all()
    for lane in lanes:
        # v0 (byte offset = lane) into the raw bytes
        assert out[lane, 2] == sext(raw[lane + 3], 8) & M32
        u16 = int.from_bytes(raw[lane + 2:lane + 4], "little")
        assert out[lane, 3] == u16 and out[lane, 4] == sext(u16, 16) & M32
        assert out[lane, 5] == raw[lane]
        # idxen with stride 4: element lane
        assert out[lane, 6] == words[lane]
        # raw buffer of 0x100 bytes: only lane 0's dword at 0xfc lies wholly inside
        want = int.from_bytes(raw[lane + 0xFC:lane + 0x100], "little") if lane == 0 else 0
        assert out[lane, 7] == want


def test_addresses_wrap_at_48_bits():
    """Buffer and scalar addresses are 48-bit virtual addresses: base plus offsets wraps
    modulo 2**48, as clang relies on when it folds ``in[i - 1]`` into a V# base of -4."""
    words = np.arange(100, 164, dtype=np.uint32)
    _, (_, out) = run_asm(WRAP_48, words, np.zeros((64, 4), np.uint32))
    assert (out == wrap_48_expected(words)).all()


@pytest.mark.parametrize("mnemonic", sorted(FAR))
def test_addresses_past_4_gib_are_unmapped(mnemonic):
    words = np.arange(64, dtype=np.uint32)
    with pytest.raises(MemoryFault, match=rf"\({mnemonic} .*unmapped .*0x1000"):
        run_asm(FAR[mnemonic], words, np.zeros(64, np.uint32))


def test_lds_widths_read2_atomics_and_m0_limit():
    body = f"""
    {ARG0_BUFFER}
    s_mov_b32 m0, -1
    v_lshlrev_b32 v1, 2, v0
    v_mul_u32_u24 v2, 0x01010101, v0
    v_xor_b32 v2, 0x80808080, v2
    ds_write_b32 v1, v2
    v_mov_b32 v3, 0
    ds_write_b32 v3, v3 offset:1020
    v_mov_b32 v4, 1
    s_waitcnt lgkmcnt(0)
    ds_read_i8 v5, v1 offset:1
    ds_read_u16 v6, v1 offset:2
    ds_read2_b32 v[7:8], v1 offset1:1
    ds_add_rtn_u32 v9, v3, v4 offset:1020
    ds_read2st64_b32 v[10:11], v3 offset1:1
    s_mov_b32 m0, 0x80
    ds_read_b32 v12, v1
    s_mov_b32 m0, -1
    s_waitcnt lgkmcnt(0)
    ds_read_b32 v13, v3 offset:1020
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v14, 6, v0
    buffer_store_dwordx4 v[5:8], v14, s[4:7], 0 offen
    buffer_store_dwordx4 v[9:12], v14, s[4:7], 0 offen offset:16
    buffer_store_dword v13, v14, s[4:7], 0 offen offset:32
    s_endpgm"""
    res, (out,) = run_asm(body, np.zeros((64, 16), np.uint32), local_size=64,
                          workgroup_group_segment_byte_size=1024,
                          granulated_lds_size=4)
    lanes = np.arange(64)
    word = ((lanes * 0x010101) ^ 0x80808080).astype(np.uint32)    # u24 multiply
    mem = word.copy()
    raw = mem.tobytes()
    for lane in lanes:
        assert out[lane, 0] == sext(raw[4 * lane + 1], 8) & M32
        assert out[lane, 1] == int.from_bytes(raw[4 * lane + 2:4 * lane + 4], "little")
        assert out[lane, 2] == word[lane]
        want_next = word[lane + 1] if lane < 63 else 0      # 1020 holds 0 before the adds
        assert out[lane, 3] == want_next
        assert out[lane, 4] == lane                        # adds applied in lane order
        assert out[lane, 5] == word[0] and out[lane, 6] == 0   # byte 256: never written
        assert out[lane, 7] == (word[lane] if 4 * lane + 4 <= 0x80 else 0)
    assert (out[:, 8] == 64).all()


def test_ds_swizzle_and_append():
    body = f"""
    {ARG0_BUFFER}
    v_mul_u32_u24 v1, 7, v0
    ds_swizzle_b32 v2, v1 offset:0x801b
    ds_swizzle_b32 v3, v1 offset:0x2c1c
    s_mov_b32 m0, -1
    v_mov_b32 v9, 0
    ds_write_b32 v9, v9 offset:16
    s_mov_b32 m0, 16
    s_mov_b32 exec_lo, 0xffff
    s_mov_b32 exec_hi, 0xffff
    ds_append v6
    ds_append v6
    ds_consume v6
    s_mov_b64 exec, -1
    s_mov_b32 m0, -1
    ds_read_b32 v7, v9 offset:16
    s_waitcnt lgkmcnt(0)
    v_mov_b32 v4, v6
    v_mov_b32 v5, v7
    v_lshlrev_b32 v8, 4, v0
    buffer_store_dwordx4 v[2:5], v8, s[4:7], 0 offen
    s_endpgm"""
    _, (out,) = run_asm(body, np.zeros((64, 4), np.uint32), workgroup_group_segment_byte_size=64,
                        granulated_lds_size=1)
    for lane in range(64):
        quad = (lane & ~3) | (3 - (lane & 3))                   # 0x1b: each quad reversed
        bitmode = (lane & 32) | (((lane & 31) & 0x1C) ^ 0x0B)   # and 0x1c, or 0, xor 0xb
        assert out[lane, 0] == 7 * quad
        assert out[lane, 1] == 7 * bitmode
        active = lane < 16 or 32 <= lane < 48
        assert out[lane, 2] == (64 if active else 0)          # consume saw 32 + 32
    assert (out[:, 3] == 32).all()                           # +32 +32 -32


@pytest.mark.parametrize("fmt, kind", [(10, "unorm8"), (10 | 5 << 4, "sint8"),
                                       (12 | 7 << 4, "float16")])
def test_typed_buffer_store_and_load(fmt, kind):
    rng = np.random.default_rng(fmt)
    if kind == "unorm8":
        src = rng.uniform(-0.25, 1.25, (64, 4)).astype(np.float32)
        src[0] = [np.nan, 0.5 / 255, 1.5 / 255, 1.0]
        exact = np.clip(np.nan_to_num(src).astype(np.float64), 0, 1) * 255
        packed = np.rint(exact).astype(np.uint8)
        back = (packed / np.float64(255)).astype(np.float32)
    elif kind == "sint8":
        src = rng.integers(-(2**31), 2**31, (64, 4)).astype(np.int32).view(np.float32)
        packed = src.view(np.int32).astype(np.uint8)
        back = packed.view(np.int8).astype(np.int32).view(np.float32)
    else:
        src = rng.normal(0, 1000, (64, 4)).astype(np.float32)
        packed = src.astype(np.float16)
        back = packed.astype(np.float32)
    row = packed.itemsize * 4
    body = f"""
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_mov_b64 s[8:9], s[6:7]
    s_mov_b32 s10, -1
    s_mov_b32 s11, 0xf000
    s_mov_b32 s6, -1
    s_mov_b32 s7, 0xf000
    v_lshlrev_b32 v5, 4, v0
    buffer_load_dwordx4 v[1:4], v5, s[4:7], 0 offen
    s_waitcnt vmcnt(0)
    v_mul_u32_u24 v6, {row}, v0
    tbuffer_store_format_xyzw v[1:4], v6, s[8:11], 0 format:{fmt} offen
    s_waitcnt expcnt(0)
    tbuffer_load_format_xyzw v[7:10], v6, s[8:11], 0 format:{fmt} offen
    s_waitcnt vmcnt(0)
    v_add_i32 v5, vcc, 0x400, v5
    buffer_store_dwordx4 v[7:10], v5, s[8:11], 0 offen
    s_endpgm"""
    _, (_, out) = run_asm(body, src, np.zeros(0x400 // 4 + 256, np.uint32))
    raw = out.view(np.uint8)
    assert raw[:64 * row].tobytes() == packed.tobytes()
    assert out[0x100:].view(np.float32).reshape(64, 4).tobytes() == back.tobytes()


def test_barrier_orders_waves_of_a_workgroup(tmp_path):
    src = tmp_path / "rot.cl"
    src.write_text("""
__kernel void rot(__global int *out) {
    __local int t[256];
    int l = get_local_id(0);
    t[l] = l * 3 + get_group_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[(l + 64) % 256];
}""")
    binary = compile_cl(src, tmp_path / "rot.bin")
    dev = Device("emu")
    out = dev.array(np.zeros(512, np.int32))
    res = dev.load(binary).rot(out, global_size=512, local_size=256)
    g = np.arange(512)
    lid = g % 256
    assert (out.numpy() == ((lid + 64) % 256) * 3 + g // 256).all()
    assert res.waves == 8 and res.workgroups == 2


def test_partial_workgroups_and_3d_grid(tmp_path):
    src = tmp_path / "ids.cl"
    src.write_text("""
__kernel void ids(__global int *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int i = (z * h + y) * w + x;
    out[4 * i + 0] = get_local_id(0) + 100 * get_local_id(1) + 10000 * get_local_id(2);
    out[4 * i + 1] = get_group_id(0) + 100 * get_group_id(1) + 10000 * get_group_id(2);
    out[4 * i + 2] = get_global_size(0) + 100 * get_global_size(1);
    out[4 * i + 3] = 1;
}""")
    binary = compile_cl(src, tmp_path / "ids.bin")
    code = CodeObject.load(binary)
    k = code.kernel("ids")
    grid, local = (13, 5, 3), (4, 2, 2)
    dev = Device("emu")
    prog = dev.load(binary)
    n = np.prod(grid)
    out = dev.array(np.zeros(4 * n, np.int32))
    # the runtime insists on dividing sizes; drive the emulator directly for partial groups
    mem = dev.memory
    kernarg = mem.alloc(64)
    mem.write(kernarg, np.array([out.address & M32, out.address >> 32, grid[0], grid[1], 3],
                                dtype=np.uint32))
    packet = mem.alloc(64)
    d = Dispatch(k.header, prog.ids.code_address, kernarg, packet, grid, local)
    mem.write(packet, dispatch_packet(d))
    start = k.code_offset
    program = Program(prog.text_image[start:start + len(k.code)], prog.ids.code_address)
    stats = Emulator(mem).run(program, d)
    assert stats.workgroups == 4 * 3 * 2
    got = out.numpy().reshape(grid[2], grid[1], grid[0], 4)
    z, y, x = np.meshgrid(*(np.arange(n) for n in grid[::-1]), indexing="ij")
    lx, ly, lz = x % 4, y % 2, z % 2
    assert (got[..., 3] == 1).all()
    assert (got[..., 0] == lx + 100 * ly + 10000 * lz).all()
    assert (got[..., 1] == x // 4 + 100 * (y // 2) + 10000 * (z // 2)).all()
    assert (got[..., 2] == 13 + 100 * 5).all()


# -- commit trace ----------------------------------------------------------------------------

def test_commit_trace_file_and_content(tmp_path):
    body = f"""
    {ARG0_BUFFER}
    v_add_i32 v1, vcc, 5, v0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v2, 2, v0
    buffer_store_dword v1, v2, s[4:7], 0 offen
    s_endpgm"""
    path = tmp_path / "t.jsonl"
    dev = Device("emu")
    prog = dev.load_bytes(assemble_kernel(body, "k", kernarg_segment_byte_size=8))
    out = dev.array(np.zeros(128, np.uint32))
    res = prog.k(out, global_size=128, local_size=64, trace=str(path))
    recs = read_trace(path)
    assert len(recs) == res.instructions == 2 * 8
    streams = per_wave(recs)
    assert sorted(streams) == [(0, 0, 0, 0), (1, 0, 0, 0)]
    for stream in streams.values():
        assert [r["pc"] for r in stream] == sorted(r["pc"] for r in stream)
        add = next(r for r in stream if r["op"].startswith("v_add_i32"))
        assert add["vgpr"]["v1"] == [5 + i for i in range(64)]
        assert "vcc_lo" in add["sgpr"]
        store = next(r for r in stream if r["op"].startswith("buffer_store"))
        addrs = [m[1] for m in store["mem"]]
        assert addrs == [out.address + 4 * i for i in range(64)]   # both groups: v0 * 4
        assert store["mem"][3][2] == (8).to_bytes(4, "little").hex()
    json.dumps(recs)                                           # plain JSON types only
    mem_trace = CommitTrace()
    assert mem_trace.records == []


def test_carry_out_to_exec_does_not_mask_the_result():
    """VOP3b with SDST = EXEC: the lanes run under the old EXEC, the carry-out is the new one."""
    body = f"""
    {ARG0_BUFFER}
    v_lshlrev_b32 v2, 2, v0
    v_mov_b32 v1, 7
    s_waitcnt lgkmcnt(0)
    v_add_i32_e64 v1, exec, v0, -1
    s_mov_b64 s[8:9], exec
    s_mov_b64 exec, -1
    v_mov_b32 v3, s8
    v_mov_b32 v4, s9
    buffer_store_dword v1, v2, s[4:7], 0 offen
    buffer_store_dword v3, v2, s[4:7], 0 offen offset:256
    buffer_store_dword v4, v2, s[4:7], 0 offen offset:512
    s_endpgm"""
    _, (out,) = run_asm(body, np.zeros(192, np.uint32))
    lanes = np.arange(64, dtype=np.uint32)
    np.testing.assert_array_equal(out[:64], lanes - np.uint32(1))       # lane 0 too
    assert int(out[64]) | int(out[128]) << 32 == (1 << 64) - 2           # carry: lanes 1..63


def test_commit_trace_lists_an_atomic_return_only_with_glc():
    """GLC=0: a buffer atomic leaves VDATA alone, and its trace record must not list it."""
    body = f"""
    {ARG0_BUFFER}
    v_mov_b32 v1, 3
    v_mov_b32 v2, 0
    s_waitcnt lgkmcnt(0)
    buffer_atomic_add v1, v2, s[4:7], 0 offen
    v_mov_b32 v3, 10
    buffer_atomic_add v3, v2, s[4:7], 0 offen glc
    s_endpgm"""
    res, (out,) = run_asm(body, np.full(1, 100, np.uint32), trace=True)
    plain, glc = (r for r in res.trace.records if r["op"].startswith("buffer_atomic"))
    assert "vgpr" not in plain or "v1" not in plain["vgpr"]
    assert sorted(glc["vgpr"]["v3"]) == list(range(100 + 3 * 64, 100 + 3 * 64 + 640, 10))
    assert out[0] == 100 + 3 * 64 + 10 * 64


# -- errors ----------------------------------------------------------------------------------

def test_errors_name_the_problem():
    with pytest.raises(UnsupportedInstruction, match=r"at 0x4 .*s_memtime"):
        run_asm("s_nop 0\ns_memtime s[2:3]\ns_endpgm")
    with pytest.raises(EmulatorError, match=r"v_writelane_b32: src0 must be a scalar .* not v2"):
        run_asm(".long 0x04030702\ns_endpgm")      # v_writelane_b32 v1, v2, 3 (llvm-mc refuses)
    with pytest.raises(EmulatorError, match="endless loop"):
        dev = Device("emu", max_instructions=1000)
        dev.load_bytes(assemble_kernel(".Lx:\ns_branch .Lx\ns_endpgm", "k")).k(global_size=64)
    with pytest.raises(MemoryFault, match="unmapped address 0x10"):
        run_asm("""
        v_mov_b32 v1, 0x10
        v_mov_b32 v2, 0
        s_mov_b64 s[4:5], 0
        s_mov_b64 s[6:7], 0
        buffer_load_dword v3, v[1:2], s[4:7], 0 addr64
        s_endpgm""")


# -- coverage --------------------------------------------------------------------------------

#: What the emulator deliberately leaves out: graphics-era control flow (fork/join, VSKIP,
#: trap return, halt-by-message), the cycle counter, and the DS ``*_src2_*`` ops (which read
#: their second operand from LDS at an address derived from the first; no compiler emits them).
NOT_EMULATED = {"s_cbranch_g_fork", "s_cbranch_i_fork", "s_cbranch_join", "s_setvskip",
                "s_rfe_b64", "s_sendmsghalt", "s_memtime"}


def test_emulator_covers_every_compute_instruction():
    from gpgpu_hdl.emu import SUPPORTED_MNEMONICS
    from gpgpu_hdl.isa.table import TABLE
    missing = {i.mnemonic for i in TABLE if i.mnemonic not in SUPPORTED_MNEMONICS}
    src2 = {i.mnemonic for i in TABLE if "_src2_" in i.mnemonic}
    assert missing == NOT_EMULATED | src2
    assert all(i.mnemonic in SUPPORTED_MNEMONICS for i in TABLE
               if str(i.unit) in ("valu", "fpu", "fpu64", "vmem"))
