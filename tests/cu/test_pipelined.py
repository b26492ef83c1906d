"""The pipelined compute unit against the golden model: commit traces of whole launches, run
under Amaranth's simulator (:mod:`tests.cu.unit_sim`), on what the unit runs so far (scalar
ALU, control, scalar loads, the fast vector operations, buffer loads and stores;
:data:`~gpgpu_hdl.cu.pipelined.PIPELINED_UNITS`)."""

# amaranth: UnusedElaboratable=no

import random
from dataclasses import replace

import numpy as np
import pytest

from gpgpu_hdl.config import ConfigError, CuConfig
from gpgpu_hdl.cu.core import TrapCause
from gpgpu_hdl.cu.fast_alu import FAST_OPS
from gpgpu_hdl.cu.pipelined import PipelinedComputeUnit
from gpgpu_hdl.cu.salu import SALU_ALU_OPS
from gpgpu_hdl.emu.trace import per_wave
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode, decode_one
from gpgpu_hdl.isa.disasm import format_instruction
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.runtime import Device, RtlTrap
from gpgpu_hdl.sim.lockstep import random_stream
from gpgpu_hdl.sim.trace import compare_traces
from gpgpu_hdl.toolchain import assemble_kernel

from tests._suite import load_suite
from tests.asm_kernels import ARG0_BUFFER, FAR, check_far_trap, run_asm
from tests.cu.unit_sim import run_launch, simulated_device

suite = load_suite()

#: a kernel of scalar loads, scalar and vector integer work, EXEC masking, branches, a call
#: (s_swappc/s_setpc) and MODE written and read (s_setreg/s_getreg)
PROGRAM = """
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_mov_b32 v1, s4
    v_add_i32 v2, vcc, v0, v1
    v_lshlrev_b32 v3, 2, v0
    v_cmp_gt_u32 vcc, 10, v0
    s_and_saveexec_b64 s[6:7], vcc
    v_mul_lo_u32 v4, v3, v2
    s_mov_b64 exec, s[6:7]
    s_add_u32 s8, s4, 7
    s_cmp_eq_u32 s8, 0
    s_cbranch_scc1 .Lend
    v_lshl_b64 v[6:7], v[2:3], 5
    v_cmp_lt_u64 s[10:11], v[2:3], v[6:7]
    v_cndmask_b32 v8, v1, v2, s[10:11]
    v_ashr_i64 v[10:11], v[6:7], 33
    s_getpc_b64 s[12:13]
    s_add_u32 s12, s12, 16
    s_addc_u32 s13, s13, 0
    s_swappc_b64 s[14:15], s[12:13]
    s_branch .Lback
    v_mov_b32 v9, 7
    s_setpc_b64 s[14:15]
.Lback:
    s_movk_i32 s16, 0x2d
    s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s16
    s_getreg_b32 s17, hwreg(HW_REG_MODE, 0, 10)
    s_setreg_imm32_b32 hwreg(HW_REG_MODE, 5, 2), 0xf6
    s_getreg_b32 s18, hwreg(HW_REG_MODE, 2, 8)
    s_barrier
    v_mad_u32_u24 v12, v0, v3, v2
    s_cbranch_vccz .Lend
    v_addc_u32 v13, vcc, v12, v0, vcc
.Lend:
    s_endpgm
"""


def _unit(config):
    return PipelinedComputeUnit(config, trace=True)


@pytest.mark.parametrize("lanes, latency", [(4, (2, 2)),
                                            pytest.param(16, (1, 9), marks=pytest.mark.slow)])
def test_program_matches_golden_model(lanes, latency):
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), PROGRAM,
                     np.arange(64, dtype=np.uint32), global_size=384, local_size=128,
                     latency=latency, seed=lanes)
    assert run.trap.cause == TrapCause.NONE
    assert len(run.records) == len(run.emu_records) > 0
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    assert run.counters.instructions == len(run.records)
    # the vector unit computes 64 / lanes operations per pass of each vector instruction
    assert run.counters.valu_busy > 0


#: a wave that waits for its load (s_waitcnt), then for each instruction of a dependent chain
STALL_PROGRAM = ARG0_BUFFER + """
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    buffer_load_dword v2, v1, s[4:7], 0 offen
    s_waitcnt vmcnt(0)
    v_add_i32 v3, vcc, v2, v0
    v_add_i32 v4, vcc, v3, v2
    v_add_i32 v5, vcc, v4, v3
    v_mul_lo_u32 v6, v5, v4
    s_endpgm
"""


def test_idle_cycles_have_their_causes():
    """One wave: its idle cycles are spent waiting for the load (memory) and for each
    instruction in flight (busy), never on a barrier or a full queue; the causes add up to
    no more than the idle cycles (the rest have no wave: code load, start, end)."""
    run = run_launch(_unit, CuConfig(lanes=4, pipeline=True), STALL_PROGRAM,
                     np.arange(64, dtype=np.uint32), latency=(20, 20))
    assert run.trap.cause == TrapCause.NONE
    assert not compare_traces(run.emu_records, run.records)
    c = run.counters
    causes = [c.stall_unit, c.stall_memory, c.stall_busy, c.stall_barrier, c.stall_fetch]
    # (the load is in flight while it sends its 64 requests, a lane a cycle: busy; then the
    # wave waits for the last answers, 20 cycles away: memory)
    assert c.stall_memory > 0
    assert c.stall_busy >= 64
    assert c.stall_barrier == c.stall_unit == 0
    assert sum(causes) <= c.idle < c.cycles
    assert c.instructions == len(run.records)


#: buffer atomics: lanes colliding on four dwords, with and without glc, a cmpswap, and a
#: scalar load between them (the memory port stays with a locked read until its write)
ATOMIC_PROGRAM = ARG0_BUFFER + """
    s_waitcnt lgkmcnt(0)
    v_and_b32 v1, 3, v0
    v_lshlrev_b32 v1, 2, v1
    v_add_i32 v2, vcc, 1, v0
    buffer_atomic_add v2, v1, s[4:7], 0 offen glc
    s_load_dword s8, s[4:5], 0x0
    buffer_atomic_umax v0, v1, s[4:7], 16 offen
    v_mov_b32 v4, 5
    v_mov_b32 v5, 17
    buffer_atomic_cmpswap v[4:5], v1, s[4:7], 32 offen glc
    s_waitcnt vmcnt(0) lgkmcnt(0)
    v_add_i32 v6, vcc, s8, v2
    v_add_i32 v7, vcc, v4, v6
    s_endpgm
"""


@pytest.mark.parametrize("lanes", [4, pytest.param(16, marks=pytest.mark.slow)])
def test_buffer_atomics_match_golden_model(lanes):
    memory = np.zeros(16, np.uint32)
    memory[8:12] = [17, 3, 17, 9]            # the cmpswap's dwords: two of them compare equal
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), ATOMIC_PROGRAM, memory,
                     latency=(1, 6), seed=lanes)
    assert run.trap.cause == TrapCause.NONE
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    assert np.array_equal(run.memory[0], run.emu_memory[0])


def _with_modifiers(stream, seed: int):
    """``stream`` with random VOP3 input modifiers (abs, neg) on its VOP3-form
    :data:`~gpgpu_hdl.cu.fast_alu.FAST_OPS` instructions (the VOP3b form has no abs: those
    bits are its scalar destination), for the fast lanes to apply."""
    rng = random.Random(seed)
    words, modified = [], 0
    for word in stream.generated:
        inst = decode_one(word + bytes(8 - len(word)))
        if inst.encoding is Format.VOP3 and inst.info.mnemonic in FAST_OPS:
            raw = int.from_bytes(word[:8], "little")
            if "vop3b" not in inst.info.flags:
                raw = raw & ~(7 << 8) | rng.getrandbits(3) << 8
            raw = raw & ~(7 << 61) | rng.getrandbits(3) << 61
            modified += raw != int.from_bytes(word[:8], "little")
            word = raw.to_bytes(8, "little") + word[8:]
        words.append(word)
    assert modified >= 5, "the stream has too few VOP3 fast instructions to modify"
    return replace(stream, generated=tuple(words))


#: what the random streams draw from: what the pipelined unit runs
_SUPPORTED = frozenset(SALU_ALU_OPS) | frozenset(FAST_OPS) | {"v_mov_b32", "s_nop"}


@pytest.mark.parametrize("seed, lanes, modifiers",
                         [(1, 4, True), pytest.param(2, 8, False, marks=pytest.mark.slow)])
def test_random_stream_matches_golden_model(seed, lanes, modifiers):
    """A lockstep stream (prologue, 60 random instructions the unit runs, the epilogue's
    buffer stores of every register) on two waves, with VOP3 input modifiers on its fast
    vector instructions or not: traces and stored registers equal the golden model's."""
    stream = random_stream(seed, length=60, supported=_SUPPORTED)
    if modifiers:
        stream = _with_modifiers(stream, seed)
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), stream.code_object(),
                     np.zeros((100, 128), np.uint32), kernel="stream", global_size=128,
                     local_size=128, latency=(1, 6), seed=seed)
    assert run.trap.cause == TrapCause.NONE
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    assert np.array_equal(run.memory[0], run.emu_memory[0])


#: fast vector instructions back to back, each reading what the one before it writes: a VGPR
#: (32- and 64-bit: v5 as a 64-bit source's high word, v7 as a 64-bit result's, each after a
#: producer alone in flight), VCC and an SGPR pair as a carry-in or select mask (the vector
#: unit's flags) or as a source (s12: written at retirement), EXEC (v_cmpx: v12's lanes
#: outside it keep their value, read when EXEC is back), or nothing of it; and a carry-in and a
#: select mask written by the instruction before the one before (v21's carries, s[10:11])
CHAIN_PROGRAM = """
    v_mov_b32 v12, 5
    s_mov_b64 s[14:15], exec
    v_add_i32 v1, vcc, v0, v0
    v_addc_u32 v2, vcc, v1, v0, vcc
    v_lshlrev_b32 v3, 2, v2
    v_mul_lo_u32 v4, v3, v0
    s_mov_b32 s16, 0
    v_xor_b32 v5, 7, v0
    v_lshl_b64 v[6:7], v[4:5], 3
    v_mov_b32 v16, v7
    v_add_i32 v8, vcc, v7, v6
    v_cmp_gt_u32_e64 s[10:11], v8, v0
    v_cndmask_b32_e64 v9, v8, v0, s[10:11]
    v_cmp_lt_u32_e64 s[12:13], v0, 20
    v_add_i32 v10, vcc, s12, v9
    v_sub_i32 v11, vcc, v10, v5
    v_cmpx_gt_u32 vcc, 40, v0
    v_mov_b32 v12, v11
    v_add_i32 v13, vcc, 1, v12
    v_cndmask_b32 v14, v13, v0, vcc
    s_mov_b64 exec, s[14:15]
    v_add_i32 v15, vcc, v12, v0
    v_add_i32 v21, vcc, -1, v0
    v_mov_b32 v17, v21
    v_addc_u32 v18, vcc, 0, v17, vcc
    v_cmp_gt_u32_e64 s[10:11], 32, v0
    v_xor_b32 v19, 3, v0
    v_cndmask_b32_e64 v20, v19, v0, s[10:11]
    s_endpgm
"""


@pytest.mark.parametrize("lanes, waves", [(8, 1), (8, 8), (16, 2)])
def test_fast_instructions_in_flight_together_match_golden_model(lanes, waves):
    """A wave issues a fast vector instruction while its last one is still in flight unless
    it reads that one's lane mask as a source or that one writes EXEC (then it waits for that
    one to retire); one that reads that one's VGPR result or takes its lane mask as a carry-in
    waits for that one's ``wake`` and the vector unit holds it until that one's writes.
    Traces (and each record's instruction words) equal the golden model's, with one wave and
    with several sharing the unit. (At 4 lanes a pass's VGPR read comes after the last
    instruction's write of it anyway; at 8 and 16 it would not.)"""
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), CHAIN_PROGRAM,
                     np.zeros(1, np.uint32), global_size=64 * waves, local_size=64,
                     latency=(1, 3))
    assert run.trap.cause == TrapCause.NONE
    assert len(run.records) == len(run.emu_records) == 29 * waves
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    # each record's instruction words are its own (the wave's last issued may be the next)
    emu, rtl = per_wave(run.emu_records), per_wave(run.records)
    assert all([r["words"][0] for r in rtl[k]] == [r["words"][0] for r in emu[k]] for k in emu)


#: scalar instructions right after fast vector ones, issued while those are in flight: a
#: scalar ALU instruction reading none of their lane masks, one reading VCC as they write it
#: (it waits), one reading the first of two pairs written (s[10:11], then VCC: it waits
#: too), one writing the pair they write (s[6:7]: the scalar result is the last), EXEC
#: written by s_and_saveexec after them, a VCCZ branch (waits), a taken SCC branch and a
#: not-taken one, s_waitcnt for a load, a barrier and s_endpgm, each right after a vector
#: instruction; scalar instructions right after a buffer load and a buffer store; and fast
#: vector instructions right after scalar ALU ones: one reading none of its registers, one
#: reading the SGPR it writes (waits), VCC as a carry-in as it writes it, SCC and VCCZ as
#: sources (wait), after EXEC written (waits), each scalar one issued alone (after s_nop);
#: and a scalar one after those two, reading the first's SGPR (waits for it); buffer loads
#: and stores right after one another; a vector instruction after a scalar one that followed
#: a load (the scalar one retires before it, once the load has)
FOLLOW_PROGRAM = """
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_mov_b32 s7, 0xf000
    s_mov_b32 s6, -1
    s_mov_b64 s[10:11], 0
    s_mov_b32 s16, 3
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    v_add_i32 v2, vcc, v0, v0
    s_add_u32 s16, s16, 5
    v_cmp_gt_u32 vcc, 40, v0
    s_and_b64 s[2:3], vcc, exec
    v_cmp_lt_u32_e64 s[10:11], 20, v0
    v_add_i32 v3, vcc, -30, v0
    s_mov_b64 s[12:13], s[10:11]
    v_cmp_gt_u32_e64 s[6:7], 50, v0
    s_mov_b64 s[6:7], exec
    s_mov_b32 s7, 0xf000
    s_mov_b32 s6, -1
    buffer_load_dword v4, v1, s[4:7], 0 offen
    s_add_u32 s17, s16, 1
    v_xor_b32 v5, 9, v0
    s_waitcnt vmcnt(0)
    v_add_i32 v6, vcc, v4, v5
    buffer_store_dword v6, v1, s[4:7], 0 offen
    s_mov_b32 s18, s17
    buffer_load_dword v22, v1, s[4:7], 0 offen
    s_waitcnt vmcnt(0)
    v_cmp_gt_u32 vcc, 16, v0
    s_and_saveexec_b64 s[14:15], vcc
    v_add_i32 v7, vcc, 1, v0
    s_mov_b64 exec, s[14:15]
    v_cmp_gt_u32 vcc, 70, v0
    s_cbranch_vccz .Lskip
    v_mov_b32 v8, 11
.Lskip:
    s_cmp_eq_u32 s16, 8
    v_add_i32 v9, vcc, v0, v6
    s_cbranch_scc1 .Ltaken
    v_mov_b32 v10, 12
.Ltaken:
    v_add_i32 v11, vcc, v9, v0
    s_cbranch_scc0 .Ltaken
    v_add_i32 v12, vcc, 2, v11
    s_nop 0
    s_add_u32 s20, s16, 1
    v_add_i32 v14, vcc, s20, v0
    s_nop 0
    s_mov_b32 s21, 5
    v_add_i32 v15, vcc, 3, v0
    s_nop 0
    s_mov_b64 vcc, exec
    v_addc_u32 v16, vcc, 0, v0, vcc
    s_nop 0
    s_cmp_gt_u32 s21, 9
    v_mov_b32 v17, src_scc
    s_nop 0
    s_cmp_lt_u32 s21, 9
    v_add_i32 v18, vcc, src_scc, v0
    s_nop 0
    s_mov_b64 vcc, exec
    v_mov_b32 v19, src_vccz
    s_nop 0
    s_lshl_b32 s22, s21, 2
    v_mul_lo_u32 v20, s22, v0
    s_nop 0
    v_cmp_gt_u32 vcc, 24, v0
    s_nop 0
    s_and_saveexec_b64 s[24:25], vcc
    v_add_i32 v21, vcc, 7, v0
    s_nop 0
    s_mov_b64 exec, s[24:25]
    v_add_i32 v23, vcc, 5, v21
    s_nop 0
    s_mov_b32 s26, 9
    v_add_i32 v24, vcc, 1, v0
    s_add_u32 s27, s26, 1
    v_add_i32 v25, vcc, s27, v24
    v_add_i32 v26, vcc, v25, v0
    v_lshlrev_b32 v27, 1, v26
    s_add_u32 s28, s27, 2
    buffer_load_dword v28, v1, s[4:7], 0 offen
    buffer_load_dword v29, v1, s[4:7], 0 offen
    s_add_u32 s29, s28, 1
    s_waitcnt vmcnt(0)
    v_add_i32 v30, vcc, v28, v29
    buffer_store_dword v30, v1, s[4:7], 0 offen
    buffer_load_dword v31, v1, s[4:7], 0 offen
    s_waitcnt vmcnt(0)
    v_add_i32 v32, vcc, v31, v0
    buffer_load_dword v33, v1, s[4:7], 0 offen
    s_add_u32 s30, s29, 1
    v_add_i32 v34, vcc, 2, v0
    s_waitcnt vmcnt(0)
    s_barrier
    v_sub_i32 v13, vcc, v12, v0
    s_endpgm
"""


def _check_follow_run(run, *, buffer):
    """No trap, the golden model's commit trace (each record's words too, wave by wave) and
    buffer ``buffer``'s contents."""
    assert run.trap.cause == TrapCause.NONE
    assert len(run.records) == len(run.emu_records)
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    emu, rtl = per_wave(run.emu_records), per_wave(run.records)
    assert all([r["words"][0] for r in rtl[k]] == [r["words"][0] for r in emu[k]] for k in emu)
    assert np.array_equal(run.memory[buffer], run.emu_memory[buffer])


@pytest.mark.parametrize("lanes, waves", [(16, 1), (8, 2),
                                           pytest.param(4, 3, marks=pytest.mark.slow)])
def test_scalar_instructions_after_fast_ones_in_flight_match_golden_model(lanes, waves):
    """A scalar ALU instruction or a control operation issues while its wave's fast vector
    instructions are in flight unless it reads a lane mask they write (or they write two
    pairs), or while a buffer instruction alone is; it retires after them. Traces (each
    record's words too) and memory equal the golden model's; the wave's next instruction
    after a branch is the branch's."""
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), FOLLOW_PROGRAM,
                     np.arange(64 * waves, dtype=np.uint32) * 3, global_size=64 * waves,
                     local_size=64 * waves, latency=(1, 5), seed=lanes, max_cycles=20_000)
    _check_follow_run(run, buffer=0)


#: buffer loads and stores after a fast vector instruction in flight: one that follows it
#: (and a load after that one), and each dependence that must wait for it to retire (an
#: address, a store's data, a load's destination that it writes or reads, an addr64 pair's
#: high dword, SOFFSET in the pair a compare writes its lane mask to); the values are read
#: back after the loads land, so that a late or early write shows in the trace (the loads
#: read one buffer, the stores write another: no wave reads what another writes); first, a
#: store of one lane (one request) after a vector instruction that waits behind the other
#: waves' vector work: the store's requests may leave first, and it retires second
BUF_AFTER_VECTOR_PROGRAM = """
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_load_dwordx2 s[8:9], s[0:1], 0x2
    s_mov_b32 s7, 0xf000
    s_mov_b32 s6, -1
    s_mov_b32 s11, 0xf000
    s_mov_b32 s10, -1
    s_mov_b32 s16, 4
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    v_add_i32 v60, vcc, 1, v0
    v_add_i32 v61, vcc, 2, v0
    v_add_i32 v62, vcc, 3, v0
    v_add_i32 v63, vcc, 4, v0
    s_mov_b64 exec, 1
    v_add_i32 v61, vcc, 5, v0
    buffer_store_dword v60, v1, s[8:11], 0 offen offset:1024
    s_mov_b64 exec, -1
    v_mov_b32 v48, 77
    v_add_i32 v40, vcc, 1, v0
    buffer_load_dword v41, v1, s[4:7], 0 offen
    buffer_load_dword v42, v1, s[4:7], 0 offen offset:4
    v_xor_b32 v43, 4, v1
    buffer_load_dword v44, v43, s[4:7], 0 offen
    s_waitcnt vmcnt(0)
    v_add_i32 v45, vcc, v41, v44
    buffer_store_dword v45, v1, s[8:11], 0 offen
    v_add_i32 v46, vcc, 5, v0
    buffer_load_dword v46, v1, s[8:11], 0 offen
    v_add_i32 v47, vcc, v48, v0
    buffer_load_dword v48, v1, s[4:7], 0 offen offset:8
    v_add_i32 v50, vcc, 2, v0
    buffer_load_dwordx2 v[49:50], v1, s[4:7], 0 offen
    v_mov_b32 v51, v1
    v_mov_b32 v52, 0
    buffer_load_dword v53, v[51:52], s[4:7], 0 addr64
    v_cmp_f_u32_e64 s[16:17], v0, v0
    buffer_load_dword v54, v1, s[4:7], s16 offen
    s_waitcnt vmcnt(0)
    v_add_i32 v55, vcc, v46, v47
    v_add_i32 v56, vcc, v48, v49
    v_add_i32 v57, vcc, v50, v53
    v_add_i32 v58, vcc, v54, v42
    buffer_store_dword v55, v1, s[8:11], 0 offen
    v_xor_b32 v59, v56, v57
    buffer_store_dword v59, v1, s[8:11], 0 offen offset:2048
    s_endpgm
"""


@pytest.mark.parametrize("lanes, waves", [(16, 3), pytest.param(4, 3, marks=pytest.mark.slow)])
def test_buffer_instructions_after_a_fast_one_in_flight_match_golden_model(lanes, waves):
    """A buffer load or store issues while its wave's fast vector instruction is in flight
    unless it touches that one's destination or reads the pair it writes its lane mask to (a
    load once that one has read its sources); it retires after that one. Traces (each
    record's words too) and memory equal the golden model's."""
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), BUF_AFTER_VECTOR_PROGRAM,
                     np.arange(64 * waves + 4, dtype=np.uint32) * 7 + 1,
                     np.zeros(64 * waves + 512, dtype=np.uint32),
                     global_size=64 * waves, local_size=64 * waves, latency=(1, 5), seed=lanes,
                     max_cycles=20_000)
    _check_follow_run(run, buffer=1)


@pytest.mark.slow
@pytest.mark.parametrize("latency", [(1, 1), (3, 3)])
def test_matmul_int_with_followers_matches_golden_model(latency):
    """matmul_int's loop (two loads back to back, a scalar instruction after them, a vector
    one after that) on 8 waves at 16 lanes, with memory answering after 1 and 3 cycles: it
    finishes, with the golden model's trace and results. (With the scalar completion's wait
    keyed to its wave having one instruction in flight, a vector instruction that followed
    it kept it waiting for ever: both latencies hung.)"""
    case = suite.CASES_BY_NAME["matmul_int"]
    inputs = case.inputs()
    want, emu = suite.run_device(case, Device("emu"), inputs, trace=True)
    device = simulated_device(_unit, CuConfig(lanes=16, pipeline=True), latency=latency,
                              max_cycles=30_000)
    got, run = suite.run_device(case, device, inputs, trace=True)
    problems = compare_traces(emu.results[0].trace.records, run.results[0].trace)
    assert not problems, "\n".join(map(str, problems))
    assert np.array_equal(got["c"], want["c"])


#: FP32, slow integer operations, VOP3 modifiers and lane reads: the slow vector unit
SLOW_PROGRAM = """
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_cvt_f32_u32 v1, v0
    v_mul_f32 v2, 0.5, v1
    v_mac_f32 v2, v1, v1
    v_cmp_gt_f32 vcc, 10.0, v2
    v_cndmask_b32 v3, v1, v2, vcc
    v_bcnt_u32_b32_e64 v4, v0, 3
    v_mul_f32 v5, -v1, |v2|
    v_readfirstlane_b32 s8, v3
    v_readlane_b32 s9, v2, 37
    v_add_f32 v6, s8, v2
    v_rcp_f32 v7, v6
    v_med3_i32 v8, v0, v4, 7
    s_endpgm
"""


@pytest.mark.parametrize("lanes", [4])
def test_slow_vector_unit_program_matches_golden_model(lanes):
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), SLOW_PROGRAM,
                     np.arange(64, dtype=np.uint32), global_size=128, local_size=128,
                     latency=(1, 4), seed=lanes)
    assert run.trap.cause == TrapCause.NONE
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    assert len(run.records) == len(run.emu_records)


#: the LDS: writes, a barrier, reads of other waves' data, read2, a returning atomic
LDS_PROGRAM = """
    v_lshlrev_b32 v1, 2, v0
    s_mov_b32 m0, -1
    ds_write_b32 v1, v0
    s_waitcnt lgkmcnt(0)
    s_barrier
    v_xor_b32 v2, 0x104, v1
    ds_read_b32 v3, v2
    ds_read2_b32 v[4:5], v1 offset0:1 offset1:3
    s_waitcnt lgkmcnt(0)
    s_barrier
    ds_add_rtn_u32 v6, v1, v0
    s_waitcnt lgkmcnt(0)
    ds_read_u8 v7, v1 offset:1
    s_waitcnt lgkmcnt(0)
    s_barrier
    ds_write_b16 v2, v6 offset:2
    s_waitcnt lgkmcnt(0)
    s_barrier
    ds_read_b64 v[8:9], v1
    s_endpgm
"""


@pytest.mark.parametrize("lanes, lds_width",
                         [(8, 2), pytest.param(16, 4, marks=pytest.mark.slow)])
def test_lds_program_matches_golden_model(lanes, lds_width):
    """The LDS program (the default LDS width, 4, runs it in the one-side test below and in
    the suite's LDS cases on Verilator)."""
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True, lds_width=lds_width),
                     LDS_PROGRAM,
                     np.zeros(1, np.uint32), global_size=256, local_size=128,
                     latency=(1, 4), seed=lanes, workgroup_group_segment_byte_size=512)
    assert run.trap.cause == TrapCause.NONE
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    assert len(run.records) == len(run.emu_records)


@pytest.mark.parametrize("case", ["buffer", "slow", "lds"])
def test_one_vgpr_side_matches_golden_model(case):
    """``vgpr_sides=1``: the buffer, slow and LDS units read through the vector unit's
    collector and write through its port in the cycles its write-back leaves (buffer loads,
    stores and atomics; the slow unit's operands and results; the LDS's): traces, and the
    memory, equal to the golden model's."""
    config = CuConfig(lanes=4 if case != "lds" else 8, pipeline=True, vgpr_sides=1)
    if case == "buffer":
        memory = np.zeros(16, np.uint32)
        memory[8:12] = [17, 3, 17, 9]
        run = run_launch(_unit, config, ATOMIC_PROGRAM, memory, latency=(1, 6), seed=3)
    elif case == "slow":
        run = run_launch(_unit, config, SLOW_PROGRAM, np.arange(64, dtype=np.uint32),
                         global_size=128, local_size=128, latency=(1, 4), seed=4)
    else:
        run = run_launch(_unit, config, LDS_PROGRAM, np.zeros(1, np.uint32), global_size=256,
                         local_size=128, latency=(1, 4), seed=8,
                         workgroup_group_segment_byte_size=512)
    assert run.trap.cause == TrapCause.NONE
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    assert len(run.records) == len(run.emu_records)
    assert np.array_equal(run.memory[0], run.emu_memory[0])


#: M0-relative moves, scalar and vector, 32 and 64 bits, with M0 changing between them
MOVREL_PROGRAM = """
    v_add_i32 v1, vcc, 100, v0
    v_lshlrev_b32 v2, 1, v0
    v_mov_b32 v3, 7
    s_mov_b32 s10, 11
    s_mov_b32 s11, 12
    s_mov_b32 s12, 13
    s_mov_b32 m0, 1
    s_movrels_b32 s20, s10
    s_movreld_b32 s24, s12
    s_mov_b32 m0, 2
    s_movrels_b64 s[22:23], s[10:11]
    s_movreld_b64 s[26:27], s[10:11]
    s_mov_b32 m0, 1
    v_movrels_b32 v4, v1
    v_movreld_b32 v5, v2
    v_movreld_b32 v8, 42
    s_mov_b32 m0, 2
    v_movrelsd_b32 v10, v1
    s_add_u32 s30, s20, s25
    v_add_i32 v12, vcc, v4, v6
    s_endpgm
"""


def test_m0_relative_moves_match_golden_model():
    run = run_launch(_unit, CuConfig(lanes=4, pipeline=True), MOVREL_PROGRAM,
                     np.zeros(1, np.uint32), latency=(1, 3))
    assert run.trap.cause == TrapCause.NONE
    assert len(run.records) == len(run.emu_records) > 0
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))


#: VCCZ and EXECZ as branch conditions and as operands, VCC written by a vector compare (at
#: retirement, read by the next instruction: a fast one may not follow it in flight), by the
#: scalar ALU a half at a time (each half zero or not) and whole; EXEC all off and back
VCCZ_PROGRAM = """
    v_cmp_gt_u32 vcc, 3, v0
    v_add_i32 v1, vcc, src_vccz, v0
    s_mov_b32 s0, src_vccz
    s_cbranch_vccz .La
    v_mov_b32 v2, 1
.La:
    s_mov_b32 vcc_lo, 0
    s_cselect_b32 s1, 1, 2
    s_mov_b32 s2, src_vccz
    s_mov_b32 vcc_hi, 0
    s_mov_b32 s3, src_vccz
    s_cbranch_vccnz .Lb
    v_mov_b32 v3, src_vccz
    s_mov_b32 vcc_hi, 0x80000000
    v_add_i32 v4, vcc, src_vccz, v0
    s_mov_b64 vcc, 0
    v_mov_b32 v5, src_vccz
    s_cbranch_vccz .Lb
    v_mov_b32 v6, 1
.Lb:
    v_cmp_gt_u32 vcc, 0, v0
    s_cbranch_vccnz .Lc
    s_mov_b64 s[4:5], exec
    s_mov_b64 exec, vcc
    s_mov_b32 s6, src_execz
    s_cbranch_execnz .Lc
    s_cbranch_execz .Ld
.Lc:
    v_mov_b32 v7, 1
.Ld:
    s_mov_b64 exec, s[4:5]
    v_mov_b32 v8, src_execz
    s_endpgm
"""


@pytest.mark.parametrize("global_size", [64, 128])
def test_vccz_and_execz_match_golden_model(global_size):
    """The SGPR file's VCCZ flags (one a slot, kept as VCC is written) and EXECZ against the
    golden model: every register write of the two waves' traces (the second wave's compare
    leaves VCC zero, the first's does not)."""
    run = run_launch(_unit, CuConfig(lanes=4, pipeline=True), VCCZ_PROGRAM,
                     np.zeros(1, np.uint32), global_size=global_size, local_size=global_size,
                     latency=(1, 3))
    assert run.trap.cause == TrapCause.NONE
    assert len(run.records) == len(run.emu_records) > 0
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("body, cause", [
    ("s_mov_b32 m0, 1\n s_movrels_b64 s[2:3], s[10:11]", "illegal"),          # an odd pair
    ("s_mov_b32 m0, 100\n s_movreld_b32 s10, s1", "SGPR index out of range"),  # past s103
    ("s_mov_b32 m0, 60\n v_movreld_b32 v10, v1", "illegal"),    # past the wave's VGPRs
    # M0 past 255 with a low byte that alone would be in range
    ("s_mov_b32 m0, 0x10001\n s_movreld_b32 s10, s1", "SGPR index out of range"),
    ("s_mov_b32 m0, 0x100\n v_movrels_b32 v1, v2", "illegal"),
    ("s_mov_b32 m0, 0x100\n v_movreld_b32 v1, v2", "illegal"),
])
def test_m0_relative_moves_out_of_range_trap(body, cause):
    """Past the registers there are (the golden model stops at s103 and v255, the unit at its
    VGPR count too), or an odd 64-bit pair: a trap at the move's PC."""
    body += "\n s_endpgm"
    code = CodeObject.from_bytes(assemble_kernel(body, "k")).kernel("k").code
    move = decode(code)[1]
    device = simulated_device(_unit, CuConfig(lanes=4, pipeline=True))
    with pytest.raises(RtlTrap) as info:
        run_asm(body, np.zeros(1, np.uint32), device=device)
    assert info.value.pc == move.offset
    assert cause.lower() in str(info.value).lower()


def test_outside_the_unit_traps_with_pc_and_instruction():
    run = run_launch(_unit, CuConfig(lanes=4, pipeline=True), """
        v_mov_b32 v1, 1.0
        v_cvt_f64_i32 v[2:3], v1
        s_endpgm
    """, np.zeros(1, np.uint32))
    assert run.trap.cause == TrapCause.ILLEGAL
    assert run.trap.pc == 4
    assert len(run.records) == 1


@pytest.mark.parametrize("mnemonic", sorted(FAR))
def test_an_address_past_4_gib_traps_with_its_pc_and_instruction(mnemonic):
    """A buffer or scalar memory access at or above 4 GiB stops the launch with MEM_RANGE at
    the instruction the golden model faults on (the unit takes its PC and words from the
    wave's state, not from the units' queues)."""
    check_far_trap(mnemonic, simulated_device(_unit, CuConfig(lanes=4, pipeline=True),
                                              latency=(1, 3)))


def test_a_buffer_access_past_4_gib_after_another_traps_with_its_pc_and_instruction():
    """A buffer load that follows another in flight and faults: the trap names it (its PC
    and words from the buffer unit's tag), not the wave's oldest instruction or its last."""
    body = FAR["buffer_load_dword"].replace(
        "    buffer_load_dword v9,", """    s_mov_b64 s[12:13], 0
    s_mov_b32 s14, 0
    s_mov_b32 s15, 0xf000
    buffer_load_dword v10, v[2:3], s[12:15], 0 addr64
    buffer_load_dword v9,""")
    code = assemble_kernel(body, "k")
    far = [i for i in decode(CodeObject.from_bytes(code).kernel("k").code)
           if i.info.mnemonic == "buffer_load_dword"][-1]
    words = np.arange(64, dtype=np.uint32)
    with pytest.raises(RtlTrap) as info:
        run_asm(body, words, np.full(64, 7, np.uint32),
                device=simulated_device(_unit, CuConfig(lanes=4, pipeline=True),
                                        latency=(1, 3)))
    message = str(info.value)
    assert f"an address beyond the 4 GiB physical memory at pc {far.offset:#x}" in message
    assert format_instruction(far) in message


def test_config_needs_4_8_or_16_lanes():
    with pytest.raises(ConfigError, match="4, 8 or 16 lanes"):
        CuConfig(lanes=2, pipeline=True)
    with pytest.raises(ConfigError, match="pipeline must be True or False"):
        CuConfig(lanes=4, pipeline="yes")


@pytest.mark.parametrize("lanes, latency", [(4, (1, 12)),
                                            pytest.param(16, (2, 2), marks=pytest.mark.slow)])
def test_vecadd_binary_matches_golden_model(lanes, latency):
    """The example vecadd as clang compiled it: buffer loads and stores, s_waitcnt vmcnt."""
    from pathlib import Path
    code = (Path(__file__).resolve().parents[2] / "examples/kernels/vecadd.bin").read_bytes()
    rng = np.random.default_rng(lanes)
    a, b = (rng.integers(0, 1 << 31, 300, dtype=np.int32) for _ in range(2))
    run = run_launch(_unit, CuConfig(lanes=lanes, pipeline=True), code, a, b,
                     np.zeros(300, np.int32), np.int32(300), kernel="vecadd", global_size=320,
                     local_size=64, latency=latency, seed=lanes)
    assert run.trap.cause == TrapCause.NONE
    problems = compare_traces(run.emu_records, run.records)
    assert not problems, "\n".join(map(str, problems))
    assert np.array_equal(run.memory[2], a + b)
    assert np.array_equal(run.memory[2], run.emu_memory[2])


def test_a_launch_that_cannot_fit_traps_after_the_code_load():
    """The launcher takes workgroups while the code loads; a launch whose workgroup needs more
    waves than the unit has slots traps ``RESOURCES`` then, and the unit says it is done only
    once every code dword has been answered (a unit that stopped with code answers in flight
    would take them into its next launch). The dispatch goes to the unit directly: the
    runtime refuses such a launch itself."""
    from gpgpu_hdl.dispatch import Dispatch, dispatch_fields
    from tests.cu.unit_sim import _simulate

    kernel = CodeObject.from_bytes(assemble_kernel("s_nop 0\n" * 63 + "s_endpgm", "k")).kernels[0]
    words = np.frombuffer(kernel.code, dtype=np.uint32)
    image = np.zeros(0x2000, dtype=np.uint32)
    image[0x1000 // 4:0x1000 // 4 + len(words)] = words
    d = Dispatch(kernel.header, 0x1000, 0x4000, 0x5000, (1024, 1, 1), (1024, 1, 1))
    fields = dispatch_fields(d, len(words), 8)
    latency = 9
    _, _, out, _ = _simulate(_unit, CuConfig(lanes=4, pipeline=True), fields, image,
                             latency=(latency, latency), max_cycles=2_000, seed=0)
    assert out["trap"].cause == TrapCause.RESOURCES
    assert out["cycles"] > len(words) + latency, out["cycles"]
