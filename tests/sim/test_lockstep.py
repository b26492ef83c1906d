"""Constrained-random instruction streams: the RTL in lockstep with the emulator.

The generator, the reproducer and the minimizer are checked without a simulator; the streams
themselves run on ``Device("verilator")`` (12 seeds in the default run, 40 longer ones with
``-m slow``). A failure prints the shrunk stream and the command that replays it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from gpgpu_hdl.cu.decode import SUPPORTED_MNEMONICS
from gpgpu_hdl.errors import GpgpuError
from gpgpu_hdl.isa.decoder import OpKind, decode_one
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.sim import lockstep
from gpgpu_hdl.sim.lockstep import BUDGET, Outcome, candidates, random_stream

#: (first seed, streams, body length): the default run, and the opt-in exhaustive one
QUICK = (1, 12, 300)       # about 30 s of one worker (the model runs at -O1)
MANY = (1000, 40, 400)


def _registers(inst) -> list[tuple[OpKind, int, int]]:
    return [(op.kind, int(op.value), op.count) for _, op in inst.operands
            if op.kind in (OpKind.SGPR, OpKind.VGPR)]


def test_streams_are_reproducible_and_stay_in_budget():
    a, b = random_stream(7, 120), random_stream(7, 120)
    assert a == b and a.body == b.body and a.keep == tuple(range(120))
    assert random_stream(8, 120).body != a.body
    forms = {(info.mnemonic, e64) for info, e64 in candidates(SUPPORTED_MNEMONICS)}
    for raw in a.body:
        inst = decode_one(raw)
        assert inst.info.mnemonic in SUPPORTED_MNEMONICS
        assert (inst.info.mnemonic, inst.encoding.name == "VOP3" and
                inst.info.format.name != "VOP3") in forms
        for kind, index, count in _registers(inst):
            limit = BUDGET.sgprs if kind is OpKind.SGPR else BUDGET.vgprs
            assert index + count <= limit, f"{inst}: {kind} {index} outside the budget"


def test_candidates_cover_the_alu_and_leave_out_control_flow():
    names = {info.mnemonic for info, _ in candidates(SUPPORTED_MNEMONICS)}
    for needed in ("s_add_u32", "s_and_saveexec_b64", "v_mul_hi_u32", "v_lshl_b64",
                   "v_cmpx_lt_i32", "v_readlane_b32", "v_cndmask_b32", "s_bfe_i64"):
        assert needed in names
    for left_out in ("s_branch", "s_setpc_b64", "s_endpgm", "s_barrier", "v_movrels_b32",
                     "s_setreg_b32", "buffer_load_dword", "ds_read_b32", "s_load_dword",
                     "v_writelane_b32"):             # not in the RTL: it would trap
        assert left_out not in names


def test_stream_runs_on_the_emulator_and_dumps_its_registers():
    stream = random_stream(3, 60)
    out, res = lockstep._run(Device("emu"), stream, stream.code_object())
    assert out.shape == (lockstep._SLOTS, lockstep._GLOBAL)
    # SCC is dumped as 0/1, EXEC as the body left it; every wave ran the whole kernel
    assert set(np.unique(out[-1])) <= {0, 1}
    assert res.instructions == 2 * (len(stream.assembly().splitlines()))


def test_minimize_keeps_what_the_failure_needs():
    stream = random_stream(5, 40)
    body = stream.body
    needed = {body[5], body[20], body[39]}

    def fails(s):
        return Outcome(["differs"] if needed <= set(s.body) else [])
    small = lockstep.minimize(stream, fails, budget=400)
    assert small.keep == (5, 20, 39)
    assert set(small.body) == needed and small.body[-1] == body[39]
    limited = lockstep.minimize(stream, fails, budget=6)
    assert needed <= set(limited.body) and len(limited.body) < len(body)


def test_reproducer_names_the_seed_and_the_body():
    stream = random_stream(11, 5)
    text = lockstep.reproducer(stream, Outcome(["v3 lane 0 differs"]))
    assert "seed 11" in text and "v3 lane 0 differs" in text
    assert text.endswith("--seed 11 --length 5")
    for line in stream.body_text():
        assert line in text
    part = stream.with_keep([1, 3])
    text = lockstep.reproducer(part, Outcome(["x"]))
    assert text.endswith("--seed 11 --length 5 --keep 1,3")
    assert part.body == (stream.body[1], stream.body[3])
    # the command line gives the same stream back
    assert lockstep.main(["--seed", "11", "--length", "5", "--keep", "1,3", "--asm"]) == 0
    with pytest.raises(GpgpuError, match="no body instruction 9"):
        stream.with_keep([9])


@pytest.fixture(scope="module")
def rtl():
    Device("verilator").backend.build()
    # a stream of a few hundred instructions takes well under 200k cycles: a hang fails fast
    return lambda: Device("verilator", max_cycles=1_000_000)


def _run_seeds(first: int, count: int, length: int, rtl) -> None:
    failures = []
    for seed in range(first, first + count):
        stream = random_stream(seed, length)
        outcome = lockstep.check(stream, rtl)
        if not outcome.ok:
            small = lockstep.minimize(stream, lambda s: lockstep.check(s, rtl), budget=12)
            failures.append(lockstep.reproducer(small, lockstep.check(small, rtl)))
    assert not failures, "\n\n".join(failures)


def test_random_streams_in_lockstep(rtl):
    _run_seeds(*QUICK, rtl)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_many_random_streams_in_lockstep(rtl, block):
    first, count, length = MANY
    per = count // 4
    _run_seeds(first + block * per, per, length, rtl)


def test_generator_is_independent_of_the_global_random_state():
    random.seed(1)
    a = random_stream(2, 30)
    random.seed(2)
    assert random_stream(2, 30) == a
