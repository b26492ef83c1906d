"""Workload characterisation of commit traces (:mod:`gpgpu_hdl.emu.workload`), against
expectations worked out by hand for small hand-assembled kernels: instruction counts, lane
weighting, VGPR bank conflicts, constant-bus use, datapath groups and the issue model's cycle
count for short streams."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from gpgpu_hdl.emu.workload import (
    SLOW_CANDIDATES, IssueParams, LaunchTrace, OperandStats, bank_extra, characterise,
    datapath_group, op_info, simulate,
)
from gpgpu_hdl.isa.table import TABLE
from tests.asm_kernels import ARG0_BUFFER, run_asm


def trace_of(body: str, *args: np.ndarray, **launch) -> LaunchTrace:
    res, _ = run_asm(body + "\n    s_endpgm", *args, trace=True, **launch)
    return LaunchTrace.from_records(res.trace.records)


# --- VGPR banks and operands ------------------------------------------------------------------

#: (instruction, VGPR source operands, extra cycles with 1 and 2 read ports, scalar reads),
#: banks = register mod 4. Worked out by hand:
OPERANDS = [
    # v4, v8, v12 all in bank 0: 3 reads -> 3 cycles with 1 port, 2 with 2
    ("v_mad_u32_u24 v1, v4, v8, v12", 3, 2, 1, set()),
    # banks 2 and 3
    ("v_add_i32 v1, vcc, v2, v3", 2, 0, 0, set()),
    # the same register twice is one read
    ("v_add_i32 v1, vcc, v2, v2", 2, 0, 0, set()),
    # v6, v7, v8: banks 2, 3, 0
    ("v_lshl_b64 v[4:5], v[6:7], v8", 2, 0, 0, set()),
    # v2, v3, v6, v7: banks 2, 3, 2, 3 -> two reads in banks 2 and 3
    ("v_add_f64 v[0:1], v[2:3], v[6:7]", 2, 1, 0, set()),
    # v2/v6/v10 in bank 2, v3/v7/v11 in bank 3: three reads each
    ("v_fma_f64 v[0:1], v[2:3], v[6:7], v[10:11]", 3, 2, 1, set()),
    # v_mac reads its destination: v1, v5, v9 all in bank 1
    ("v_mac_f32 v1, v5, v9", 3, 2, 1, set()),
    # an SGPR source: v8 and v12 in bank 0
    ("v_mad_u32_u24 v1, s4, v8, v12", 2, 1, 0, {"sgpr", "constant bus"}),
    ("v_madak_f32 v1, v2, v3, 0x41000000", 2, 0, 0, {"literal", "constant bus"}),
    ("v_cndmask_b32 v1, v2, v3, vcc", 2, 0, 0, {"sgpr", "constant bus", "implicit vcc"}),
    # VCC named as the carry-in of the VOP3 form: a scalar source, not an implicit one
    ("v_addc_u32_e64 v1, s[6:7], v2, v1, vcc", 2, 0, 0, {"sgpr", "constant bus"}),
    ("v_mov_b32 v1, 1", 0, 0, 0, {"inline"}),
]


@pytest.mark.parametrize("regs, ports, extra", [
    ([], 1, 0), ([5], 1, 0), ([0, 1, 2, 3], 1, 0), ([0, 4], 1, 1), ([0, 4], 2, 0),
    ([0, 4, 8], 2, 1), ([0, 4, 8, 12, 16], 2, 2), ([1, 5, 2, 6], 1, 1),
])
def test_bank_extra(regs, ports, extra):
    assert bank_extra(regs, ports) == extra


def test_operand_reads_and_bank_conflicts():
    w = characterise(trace_of("\n".join(f"    {asm}" for asm, *_ in OPERANDS)))
    o = w.operands
    assert o.instructions == len(OPERANDS)
    assert o.sources == Counter(n for _, n, *_ in OPERANDS)
    assert o.extra[1] == Counter(e1 for _, _, e1, _, _ in OPERANDS)
    assert o.extra[2] == Counter(e2 for _, _, _, e2, _ in OPERANDS)
    assert o.scalar == Counter(k for *_, keys in OPERANDS for k in keys)
    three = sum(n == 3 for _, n, *_ in OPERANDS)
    assert o.share_sources(3) == three / len(OPERANDS)
    assert o.conflict_share(1) == sum(e > 0 for _, _, e, _, _ in OPERANDS) / len(OPERANDS)


def test_two_scalar_accesses():
    """llvm-mc refuses an SGPR beside the carry-in VCC (the constant bus carries one), so the
    VOP3 encoding is patched: src0 (bits 40:32) from v2 to s4."""
    res, _ = run_asm("    v_addc_u32_e64 v1, s[6:7], v2, v1, vcc\n    s_endpgm", trace=True)
    words = res.trace.records[0]["words"]
    assert words[1] & 0x1FF == 256 + 2
    op = op_info((words[0], words[1] & ~0x1FF | 4))
    assert (op.scalar_accesses, op.vgpr_reads, op.sgpr) == (2, (1,), True)
    o = OperandStats()
    o.add(op)
    assert o.scalar["2+ scalar"] == 1


# --- instruction mix --------------------------------------------------------------------------

def test_mix_counts_and_lanes():
    """96 work-items in one workgroup: wave 0 has 64 lanes, wave 1 has 32; after the EXEC
    write both run the last VALU instruction on 4 lanes."""
    body = """
    s_mov_b32 s2, 0
    v_add_i32 v1, vcc, v0, v0
    v_mul_lo_u32 v2, v1, v1
    v_add_f32 v3, v1, v2
    s_waitcnt lgkmcnt(0)
    s_mov_b32 exec_lo, 15
    s_mov_b32 exec_hi, 0
    v_lshl_b64 v[4:5], v[2:3], 2"""
    m = characterise(trace_of(body, global_size=96, local_size=96)).mix
    assert m.groups == Counter({"salu": 6, "valu-int": 6, "valu-fp32": 2, "s_waitcnt": 2,
                                "s_endpgm": 2})
    assert m.groups_lanes["valu-int"] == 2 * 96 + 2 * 4
    assert m.groups_lanes["valu-fp32"] == 96
    assert m.mnemonics["v_mul_lo_u32"] == 2
    assert m.mnemonics_lanes["v_lshl_b64"] == 8
    assert m.categories["valu-int/shift/shift+64"] == 2
    assert m.categories["valu-int/mul/mul"] == 2
    assert m.instructions == 18


def test_memory_and_control_groups():
    body = ARG0_BUFFER + """
    s_waitcnt lgkmcnt(0)
    buffer_load_dword v1, v0, s[4:7], 0 offen
    s_waitcnt vmcnt(0)
    buffer_store_dword v1, v0, s[4:7], 0 offen
    s_cmp_eq_u32 s6, 0
    s_cbranch_scc1 .Lskip
    s_branch .Lskip
    s_nop 0
.Lskip:
    s_barrier"""
    t = trace_of(body, np.zeros(64, np.uint32))
    m = characterise(t).mix
    assert m.groups == Counter({"smem": 1, "salu": 3, "s_waitcnt": 2, "vmem": 2, "branch": 2,
                                "s_barrier": 1, "s_endpgm": 1})
    assert m.categories["vmem/load"] == m.categories["vmem/store"] == 1
    (stream,) = t.streams()
    taken = {e.op.mnemonic: e.taken for e in stream if e.op.group == "branch"}
    assert taken == {"s_cbranch_scc1": False, "s_branch": True}


@pytest.mark.parametrize("mnemonic, group", [
    ("v_lshl_b64", "shift64"), ("v_ashr_i64", "shift64"), ("v_lshlrev_b32", "shift32"),
    ("v_bfe_u32", "bfe/align"), ("v_alignbit_b32", "bfe/align"), ("v_mul_lo_u32", "mul32"),
    ("v_mul_hi_i32", "mul32"), ("v_mad_u32_u24", "mul24"), ("v_sad_u32", "sad/lerp"),
    ("v_lerp_u8", "sad/lerp"), ("v_bcnt_u32_b32", "bit count/scan"),
    ("v_mbcnt_lo_u32_b32", "bit count/scan"), ("v_med3_i32", "min3/max3/med3"),
    ("v_cvt_pk_u16_u32", "pack"), ("v_cmp_ne_u64", "cmp64"), ("v_addc_u32", "add/cmp/minmax"),
    ("v_cmp_gt_i32", "add/cmp/minmax"), ("v_bfi_b32", "bfi/bfm"), ("v_bfm_b32", "bfi/bfm"),
    ("v_cndmask_b32", "mov/cndmask"), ("v_readlane_b32", "lane access"), ("v_and_b32", "logic"),
    ("v_add_f32", None), ("s_add_i32", None),
])
def test_datapath_group(mnemonic, group):
    assert datapath_group(TABLE.by_mnemonic(mnemonic)) == group


def test_slow_share_counts_all_valu_work():
    """One of four VALU instructions (the 64-bit shift) is a slow-unit candidate."""
    body = """
    v_lshl_b64 v[2:3], v[0:1], 2
    v_mul_lo_u32 v4, v0, v0
    v_add_i32 v5, vcc, v0, v0
    v_add_f32 v6, v0, v0"""
    d = characterise(trace_of(body)).datapath
    assert d.valu == 4
    assert d.share(*SLOW_CANDIDATES) == 1 / 4
    assert d.share("mul32") == 1 / 4


# --- the issue model --------------------------------------------------------------------------

N = 6
VALU_STREAM = "\n".join(["    v_add_i32 v1, vcc, v2, v3"] * N)


@pytest.mark.parametrize("latency", [4, 8])
def test_one_wave_of_valu(latency):
    """VALU instruction k issues at k (P + L) (P = 4 passes at 16 lanes); s_endpgm at
    N (P + L), the slot is free the cycle after: busy N P / (N (P + L) + 1)."""
    p = IssueParams(lanes=16, valu_latency=latency)
    r = simulate(trace_of(VALU_STREAM), p, 1)
    assert (r.cycles, r.valu_busy, r.issued) == (N * (4 + latency) + 1, 4 * N, N + 1)
    assert r.busy == 4 * N / (N * (4 + latency) + 1)


@pytest.mark.parametrize("latency", [4, 8])
def test_two_waves_double_the_busy_fraction(latency):
    """With L >= P the second wave issues P cycles after the first (the VALU is taken until
    then): wave 0 at k (P + L), wave 1 at k (P + L) + P; the second s_endpgm issues at
    N (P + L) + P. Two one-wave workgroups, or one launch repeated to two waves."""
    p = IssueParams(lanes=16, valu_latency=latency)
    expected = (N * (4 + latency) + 4 + 1, 2 * 4 * N)
    two = simulate(trace_of(VALU_STREAM, global_size=128, local_size=64), p, 2)
    assert (two.cycles, two.valu_busy) == expected
    repeated = simulate(trace_of(VALU_STREAM), p, 2, min_waves=2)
    assert (repeated.cycles, repeated.valu_busy) == expected
    one = simulate(trace_of(VALU_STREAM), p, 1)
    assert two.busy == pytest.approx(2 * one.busy, rel=0.1)


def test_eight_lanes_take_eight_passes():
    p = IssueParams(lanes=8, valu_latency=2)
    r = simulate(trace_of(VALU_STREAM), p, 1)
    assert (r.cycles, r.valu_busy) == (N * (8 + 2) + 1, 8 * N)


def test_bank_conflicts_hold_the_valu():
    """v_mad_u32_u24 v1, v4, v8, v12 with 1 read port: 3 cycles a pass, 12 at 16 lanes,
    of which 4 are work."""
    p = IssueParams(lanes=16, valu_latency=4, read_ports=1)
    r = simulate(trace_of("    v_mad_u32_u24 v1, v4, v8, v12"), p, 1)
    assert (r.cycles, r.valu_busy, r.valu_stall) == (12 + 4 + 1, 4, 8)


@pytest.mark.parametrize("lsu_lanes, lsu_cycles", [(None, 4), (1, 64)])
def test_memory_latency_and_waitcnt(lsu_lanes, lsu_cycles):
    """s_load at 0 (back at M); s_mov at 1 and 1 + S = 4; s_waitcnt lgkmcnt(0) at M; the
    buffer load at M + 1, holding the buffer unit 64 / lsu_lanes cycles and back after M
    more; s_waitcnt vmcnt(0) then; v_add the cycle after, s_endpgm P + L later."""
    m, latency = 32, 4
    p = IssueParams(lanes=16, valu_latency=latency, salu_latency=3, mem_latency=m,
                    lsu_lanes=lsu_lanes)
    body = ARG0_BUFFER + """
    s_waitcnt lgkmcnt(0)
    buffer_load_dword v1, v0, s[4:7], 0 offen
    s_waitcnt vmcnt(0)
    v_add_i32 v1, vcc, v1, v1"""
    r = simulate(trace_of(body, np.zeros(64, np.uint32)), p, 1)
    back = m + 1 + lsu_cycles + m
    assert (r.cycles, r.issued) == (back + 1 + 4 + latency + 1, 8)


def test_barrier_holds_the_first_wave():
    """Two waves of one workgroup: VALU at 0 and 4; wave 0 reaches the barrier at 4 + L and
    waits for wave 1 (8 + L); both are ready at 9 + L and end at 9 + L and 10 + L."""
    latency = 4
    body = """
    v_add_i32 v1, vcc, v2, v3
    s_barrier"""
    t = trace_of(body, global_size=128, local_size=128)
    p = IssueParams(lanes=16, valu_latency=latency)
    r = simulate(t, p, 2)
    assert (r.cycles, r.raised) == (11 + latency, 0)
    narrow = simulate(t, p, 1)                  # the workgroup needs both slots
    assert (narrow.cycles, narrow.raised) == (r.cycles, 1)


def test_params_are_checked():
    with pytest.raises(ValueError, match="lanes must be one of 1, 2, 4, ..., 64, not 3"):
        IssueParams(lanes=3)
    with pytest.raises(ValueError, match="mem_latency must be 0 or more"):
        IssueParams(mem_latency=-1)
    assert IssueParams(valu_latency=5).fp_latency == 10
