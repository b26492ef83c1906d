# amaranth: UnusedElaboratable=no
"""The shared long-latency vector unit (:mod:`gpgpu_hdl.cu.slow_unit`) with a VGPR file, against
the golden model: random instructions of SLOW_OPS, a sample of FP32 (add, mul, mad/mac/madmk/
madak, fma, compares, class, cvt, rcp, sqrt, the division helpers), FAST_OPS in their VOP3
form with abs/neg modifiers, and the three lane accesses, encoded by the ISA's random
instruction generator, with random VGPRs, SGPRs, EXEC, VCC and MODE, random back-pressure on
``write`` and random refusals of the VGPR file's read port. The expected values are the
emulator's own: each instruction is decoded and run by ``gpgpu_hdl.emu`` on a wave holding the
same registers; the VGPRs the unit's writes leave, its flag mask (what the emulator writes to
VCC or the SGPR pair) and the lane reads' scalar result must be the emulator's.
"""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from amaranth.hdl import Module, Mux
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.cu.decode import DecodedLayout, control
from gpgpu_hdl.cu.fast_alu import FAST_OPS, SLOW_OPS
from gpgpu_hdl.cu.slow_alu import LATENCY
from gpgpu_hdl.cu.slow_unit import SlowVectorUnit
from gpgpu_hdl.cu.vgpr_file import VgprFile
from gpgpu_hdl.emu.operands import scalar_reader
from gpgpu_hdl.emu.program import compile_instruction
from gpgpu_hdl.emu.wave import Wave
from gpgpu_hdl.isa.decoder import OpKind, decode_one
from gpgpu_hdl.isa.formats import ENCODING_OF, Format
from gpgpu_hdl.isa.randgen import RegisterBudget, random_instruction
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, M64
from tests.simulation import simulate

SLOTS, VGPRS = 4, 16
BUDGET = RegisterBudget(sgprs=16, vgprs=VGPRS, ttmp=False)
#: The FP32 instructions of the test (the unit is built with these only, to keep it small)
FP_SAMPLE = ("v_add_f32", "v_sub_f32", "v_mul_f32", "v_mad_f32", "v_mac_f32", "v_madmk_f32",
             "v_madak_f32", "v_fma_f32", "v_cmp_lt_f32", "v_cmpx_ge_f32", "v_cmp_class_f32",
             "v_max_f32", "v_cvt_f32_i32", "v_cvt_u32_f32", "v_rcp_f32", "v_sqrt_f32",
             "v_div_scale_f32", "v_div_fmas_f32", "v_div_fixup_f32", "v_floor_f32")
LANE_OPS = ("v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32")
#: FAST_OPS with a VOP3 form (the modifiers are VOP3 fields)
MOD_OPS = tuple(n for n in FAST_OPS if TABLE.by_mnemonic(n).vop3_opcode is not None)
MODES = (0x3C0, 0x3F0, 0x3D0, 0x3E0, 0x2C0, 0x1F0, 0x0C0)
INFO = {e.mnemonic: e for e in TABLE}


class Bench(wiring.Component):
    """The unit and a VGPR file; ``fill`` preloads the file (the unit's writes wait),
    ``write_stall`` refuses the unit's writes, ``read_stall`` the file's read port (another
    unit using it)."""

    def __init__(self, *, lanes: int, width: int, fp_ops=FP_SAMPLE, int_ops=None):
        self.unit = SlowVectorUnit(lanes=lanes, slots=SLOTS, vgprs=VGPRS, width=width,
                                   fp_ops=fp_ops, int_ops=int_ops)
        self.file = VgprFile(lanes=lanes, slots=SLOTS, vgprs=VGPRS, sources=self.unit.sources)
        members = self.unit.signature.members
        super().__init__({
            "issue": members["issue"], "done": members["done"],
            "fill": In(stream.Signature(self.file.write_layout)),
            "write_stall": In(1), "read_stall": In(1), "busy": Out(1),
        })

    def elaborate(self, platform):  # noqa: ARG002
        m = Module()
        m.submodules.unit = unit = self.unit
        m.submodules.file = file = self.file
        wiring.connect(m, wiring.flipped(self.issue), unit.issue)
        wiring.connect(m, unit.done, wiring.flipped(self.done))
        wiring.connect(m, file.operands, unit.operands)
        m.d.comb += [
            file.read[0].payload.eq(unit.read.payload),
            file.read[0].valid.eq(unit.read.valid & ~self.read_stall),
            unit.read.ready.eq(file.read[0].ready & ~self.read_stall),
            unit.write.ready.eq(~self.write_stall & ~self.fill.valid),
            self.fill.ready.eq(1),
            file.write.valid.eq(self.fill.valid | (unit.write.valid & ~self.write_stall)),
            file.write.payload.eq(Mux(self.fill.valid, self.fill.payload, unit.write.payload)),
            self.busy.eq(unit.busy),
        ]
        return m


# --- instructions and the golden model ------------------------------------------------------

def random_program(rng: random.Random, count: int, kinds) -> list[dict]:
    return [instruction(rng, rng.choice(kinds)) for _ in range(count)]


def instruction(rng: random.Random, kind: str, name: str | None = None) -> dict:
    """A random instruction of ``kind`` ("slow", "fp", "mod", "lane"): its encoding, with
    random VOP3 abs/neg bits on every source position (and clamp/omod from the generator)."""
    pick = {"slow": SLOW_OPS, "fp": FP_SAMPLE, "mod": MOD_OPS, "lane": LANE_OPS}[kind]
    name = name or rng.choice(pick)
    info = INFO[name]
    native = info.format is Format.VOP3
    e64 = native or (kind == "mod") or (info.has_e64 and rng.random() < 0.5)
    words = bytearray(random_instruction(info, rng, e64=e64 and not native, budget=BUDGET))
    if e64:
        word = int.from_bytes(words[:8], "little")
        if "vop3b" not in info.flags:
            word = word & ~(7 << 8) | rng.getrandbits(3) << 8          # abs
        neg = rng.getrandbits(3) | (1 if kind == "mod" else 0)
        word = word & ~(7 << 61) | neg << 61
        words[:8] = word.to_bytes(8, "little")
    raw = int.from_bytes(bytes(words).ljust(8, b"\0"), "little")
    return {"name": name, "bytes": bytes(words), "inst": raw, "e64": e64 and not native,
            "slot": rng.randrange(SLOTS),
            "exec": rng.choice((M64, rng.getrandbits(64), M32 << 32, 0x8000_0000_0000_0001,
                                rng.getrandbits(64) & rng.getrandbits(64), 0)),
            "mode": rng.choice(MODES),
            "sgprs": [rng.getrandbits(32) for _ in range(16)],
            "vcc": rng.getrandbits(64), "m0": rng.getrandbits(32), "scc": rng.getrandbits(1),
            "junk": [rng.getrandbits(32) << 32 for _ in range(3)]}


def wave(ins: dict, regs: np.ndarray) -> Wave:
    w = Wave(None, None, (0, 0, 0), 0)
    w.v[:VGPRS] = regs
    w.s[:16] = ins["sgprs"]
    w.s[106], w.s[107] = ins["vcc"] & M32, ins["vcc"] >> 32
    w.s[124] = ins["m0"]
    w.exec = ins["exec"]
    w.scc = ins["scc"]
    w.set_mode(ins["mode"])
    return w


def issue_payload(ins: dict, regs: np.ndarray) -> dict:
    """The issue fields, as the unit top resolves them from the instruction and the wave."""
    info = INFO[ins["name"]]
    inst = decode_one(ins["bytes"])
    w = wave(ins, regs)
    flags = info.flags
    srcs = []
    types = list(info.sources)
    roles = ["src0", "src1", "src2"]
    if info.mnemonic in ("v_madmk_f32", "v_madak_f32"):
        roles[2], types[2] = "k", info.src0
    for k in range(3):
        op = inst.operand(roles[k]) if types[k] is not None else None
        if k == 2 and "acc" in flags:
            op = inst.operand("vdst")
        if k == 2 and flags & {"carry_in", "sel"}:
            op = None                          # the mask: ``cin``
        if op is None:
            srcs.append({"vgpr": 0, "reg": 0, "value": ins["junk"][k]})
        elif op.kind is OpKind.VGPR:
            srcs.append({"vgpr": 1, "reg": op.value, "value": ins["junk"][k]})
        else:
            t = types[k] if types[k] is not None else info.dst
            value = scalar_reader(op, t)(w)
            if t.bits != 64:
                value |= ins["junk"][k]        # the unit must not look above a 32-bit one
            srcs.append({"vgpr": 0, "reg": 0, "value": value})
    cin = ins["vcc"]
    if flags & {"carry_in", "sel"} and inst.encoding is Format.VOP3:
        cin = scalar_reader(inst.operand("src2"), info.src2)(w)
    ctl = control(info, e64=ins["e64"]) or {}
    vdst = inst.operand("vdst")
    return {"slot": ins["slot"], "control": DecodedLayout.const(ctl), "inst": ins["inst"],
            "srcs": srcs, "dst": vdst.value if vdst is not None else 0,
            "exec": ins["exec"], "cin": cin, "mode": ins["mode"]}


def golden(ins: dict, regs: np.ndarray) -> tuple[np.ndarray, int | None, int | None]:
    """The emulator's VGPRs after the instruction, its lane mask (VCC or SDST of a VOPC or
    VOP3b instruction) and the lane reads' SGPR value."""
    info = INFO[ins["name"]]
    inst = decode_one(ins["bytes"])
    w = wave(ins, regs)
    with np.errstate(all="ignore"):
        compile_instruction(inst, 0)(w)
    mask = sresult = None
    if info.format is Format.VOPC or "vop3b" in info.flags:
        op = inst.operand("sdst") if inst.encoding is Format.VOP3 else inst.operand("vcc")
        mask = w.s[op.value] | w.s[op.value + 1] << 32
    if ins["name"] in ("v_readlane_b32", "v_readfirstlane_b32"):
        sresult = w.s[inst.operand("sdst").value]
    return w.v[:VGPRS].copy(), mask, sresult


# --- the run --------------------------------------------------------------------------------

def unbuilt(ins: dict, regs: np.ndarray) -> tuple[np.ndarray, int | None, None]:
    """What an instruction the unit is not built for leaves: 0 in the destination's lanes in
    EXEC, flags 0."""
    info = INFO[ins["name"]]
    want = regs.copy()
    if info.format is not Format.VOPC:
        lanes = [i for i in range(64) if ins["exec"] >> i & 1]
        want[decode_one(ins["bytes"]).operand("vdst").value, lanes] = 0
    vopc = info.format is Format.VOPC or "vop3b" in info.flags
    return want, 0 if vopc else None, None


def run(program: list[dict], *, lanes: int, width: int, seed: int, stall: float = 0.3,
        fp_ops=FP_SAMPLE, int_ops=None) -> dict:
    """Issue ``program`` as fast as the unit takes it; check every instruction against the
    golden model (or, for one the unit is not built for, :func:`unbuilt`). Returns the cycles
    of each instruction (taken to done) and totals."""
    rng = random.Random(seed)
    dut = Bench(lanes=lanes, width=width, fp_ops=fp_ops, int_ops=int_ops)
    built = dut.unit.int_ops | dut.unit.fp_ops | set(LANE_OPS)
    regs = np.array([[[rng.getrandbits(32) for _ in range(64)] for _ in range(VGPRS)]
                     for _ in range(SLOTS)], dtype=np.uint32)
    hw = regs.copy()                     # what the unit's writes leave
    unit = dut.unit
    out = {"cycles": [], "writes": 0, "reads": 0}

    async def bench(ctx):
        passes = 64 // lanes
        for slot in range(SLOTS):                # preload the VGPR file
            for reg in range(VGPRS):
                for p in range(passes):
                    ctx.set(dut.fill.payload, {
                        "slot": slot, "pass_": p, "reg": reg, "mask": (1 << lanes) - 1,
                        "data": [int(x) for x in regs[slot, reg, p * lanes:(p + 1) * lanes]]})
                    ctx.set(dut.fill.valid, 1)
                    await ctx.tick()
        ctx.set(dut.fill.valid, 0)
        for ins in program:
            model = golden if ins["name"] in built else unbuilt
            want_regs, want_mask, want_s = model(ins, regs[ins["slot"]])
            ctx.set(dut.issue.payload, issue_payload(ins, regs[ins["slot"]]))
            ctx.set(dut.issue.valid, 1)
            cycles, taken = 0, False
            while True:
                ctx.set(dut.write_stall, rng.random() < stall)
                ctx.set(dut.read_stall, rng.random() < stall)
                (_, _, ready, w_valid, w_ready, w, r_valid, r_ready, d_valid,
                 d) = await ctx.tick().sample(
                    dut.issue.ready, unit.write.valid, unit.write.ready, unit.write.payload,
                    unit.read.valid, unit.read.ready, dut.done.valid, dut.done.payload)
                if taken:
                    cycles += 1
                if ready and not taken:
                    taken = True
                    ctx.set(dut.issue.valid, 0)
                if w_valid and w_ready:
                    assert w.slot == ins["slot"], ins["name"]
                    for i in range(lanes):
                        if w.mask >> i & 1:
                            hw[w.slot, w.reg, w.pass_ * lanes + i] = w.data[i]
                    out["writes"] += 1
                out["reads"] += r_valid and r_ready
                if d_valid:
                    assert taken
                    break
                assert cycles < 20_000, f"{ins['name']} never done"
            slot = ins["slot"]
            what = f"{ins['name']} {ins['bytes'].hex()} exec={ins['exec']:#x}"
            assert d.slot == slot, what
            bad = np.argwhere(hw[slot] != want_regs)
            assert not len(bad), f"{what}: VGPR, lane wrong: {bad[:4].tolist()}, " \
                f"got {[hex(hw[slot][tuple(b)]) for b in bad[:4]]} " \
                f"want {[hex(want_regs[tuple(b)]) for b in bad[:4]]}"
            if want_mask is not None:
                assert d.flags == want_mask, f"{what}: flags {d.flags:#x} != {want_mask:#x}"
            if want_s is not None:
                assert d.sresult == want_s, f"{what}: sresult {d.sresult:#x} != {want_s:#x}"
            regs[slot] = want_regs
            out["cycles"].append((ins["name"], cycles))

    simulate(dut, bench, clock=1e-8)
    return out


# (8 lanes, width 2 only with -m slow: the default run has the narrowest and widest of both,
# 4 lanes one at a time (the width the pipelined unit builds) and 16 lanes four at a time)
@pytest.mark.parametrize(("lanes", "width", "seed"),
                         [(16, 4, 1), (4, 1, 2), pytest.param(8, 2, 3, marks=pytest.mark.slow)])
def test_random_instructions_match_the_golden_model(lanes, width, seed):
    rng = random.Random(seed)
    program = random_program(rng, 40, ("slow", "slow", "mod", "fp", "lane"))
    # every lane access, a VOPC with a 64-bit compare, a 64-bit result
    program += [instruction(rng, "lane", n) for n in LANE_OPS]
    program += [instruction(rng, "mod", "v_cmp_lt_i64"), instruction(rng, "mod", "v_lshr_b64"),
                instruction(rng, "slow", "v_mqsad_pk_u16_u8"),
                instruction(rng, "mod", "v_addc_u32"), instruction(rng, "fp", "v_div_scale_f32")]
    rng.shuffle(program)
    out = run(program, lanes=lanes, width=width, seed=seed)
    assert len(out["cycles"]) == len(program)
    assert out["writes"] > 0 and out["reads"] > 0


def encode(name: str, **fields) -> bytes:
    info = INFO[name]
    enc = ENCODING_OF[info.format]
    return enc.pack(op=info.opcode, **fields).to_bytes(enc.size, "little")


def timed(name: str, words: bytes, exec_mask: int = M64) -> dict:
    ins = instruction(random.Random(0), "slow", name)
    return {**ins, "bytes": words, "inst": int.from_bytes(words.ljust(8, b"\0"), "little"),
            "e64": False, "exec": exec_mask, "slot": 1, "mode": 0x3C0}


#: v_bfi_b32 v4, v1, v2, v3 (SLOW_OPS, three VGPR sources in three banks),
#: v_add_f32 v4, v1, v2 and v_mqsad_pk_u16_u8 v[4:5], v[0:1], v2, v[6:7] (a 64-bit result)
BFI = ("v_bfi_b32", encode("v_bfi_b32", vdst=4, src0=257, src1=258, src2=259))
ADD_F32 = ("v_add_f32", encode("v_add_f32", vdst=4, src0=257, vsrc1=2))
MQSAD = ("v_mqsad_pk_u16_u8", encode("v_mqsad_pk_u16_u8", vdst=4, src0=256, src1=258,
                                     src2=262))


@pytest.mark.parametrize("width", [1, 4])
def test_cycles_of_a_full_wave(width, capsys):
    """Cycles from issue to done of a full-wave integer slow op, FP add and a 64-bit integer
    op (16-lane VGPR file, no back-pressure), printed; the integer one is ``passes x (groups +
    overhead + LATENCY)`` (the integer lanes' pipeline drains each pass), the 64-bit one
    computes each pass twice."""
    program = [timed(*BFI), timed(*BFI), timed(*ADD_F32), timed(*ADD_F32),
               timed(*BFI, exec_mask=0xFFFF), timed(*ADD_F32, exec_mask=1 << 63),
               timed(*MQSAD)]
    start = time.monotonic()
    out = run(program, lanes=16, width=width, seed=5, stall=0, fp_ops=("v_add_f32",))
    cycles = [c for _, c in out["cycles"]]
    groups = 16 // width
    assert cycles[0] == cycles[1] and cycles[2] == cycles[3]
    # per pass: the EXEC check, the request, the VGPR file (5 cycles), the first group into
    # the input registers, a group a cycle, the lanes' LATENCY, the write; and the done cycle
    assert cycles[0] == 4 * (groups + 10 + LATENCY) + 1
    # passes with no lane in EXEC are skipped (a cycle each)
    assert cycles[4] == (groups + 10 + LATENCY) + 3 + 1
    assert cycles[5] < cycles[2] // 4
    # 64-bit sources and result: a second request (and answer) a pass, and the pass's groups
    # computed again for the high words (the high words' write instead of the low ones')
    assert cycles[6] == 4 * (2 * (groups + LATENCY) + 14) + 1
    with capsys.disabled():
        print(f"\nslow unit, 16-lane VGPR file, width {width}: v_bfi_b32 {cycles[0]} cycles "
              f"(next issue 1 cycle later), v_add_f32 {cycles[2]} cycles; EXEC one pass: "
              f"{cycles[4]}, one lane: {cycles[5]}; v_mqsad_pk_u16_u8 {cycles[6]} "
              f"({time.monotonic() - start:.1f} s)")


def test_lane_accesses_corners():
    """v_readfirstlane with EXEC 0 (lane 0), v_readlane of a scalar (the scalar itself) and
    of every pass's lanes, v_writelane of a constant into the last lane."""
    rng = random.Random(7)
    program = []
    for lane_code in (128, 128 + 17, 128 + 63, 124):      # inline 0, 17, 63; M0
        program.append(timed("v_readlane_b32",
                             encode("v_readlane_b32", vdst=3, src0=256 + 5, vsrc1=lane_code),
                             exec_mask=rng.getrandbits(64)))
    program += [
        timed("v_readlane_b32", encode("v_readlane_b32", vdst=3, src0=6, vsrc1=130)),
        timed("v_readfirstlane_b32", encode("v_readfirstlane_b32", vdst=9, src0=256 + 2),
              exec_mask=0),
        timed("v_readfirstlane_b32", encode("v_readfirstlane_b32", vdst=9, src0=256 + 2),
              exec_mask=1 << 50),
        timed("v_writelane_b32", encode("v_writelane_b32", vdst=7, src0=193, vsrc1=128 + 63),
              exec_mask=0),
        timed("v_writelane_b32", encode("v_writelane_b32", vdst=7, src0=4, vsrc1=124)),
    ]
    out = run(program, lanes=8, width=2, seed=7, stall=0.5)
    assert out["writes"] == 2 and out["reads"] == 6


def test_trimmed_unit():
    """Built with only some instructions: those run, the others write 0 without waiting."""
    rng = random.Random(8)
    program = [instruction(rng, "fp", n) for n in ("v_add_f32", "v_mul_f32", "v_cmp_lt_f32")]
    program += [instruction(rng, "slow", n) for n in ("v_bfi_b32", "v_sad_u32")]
    out = run(program, lanes=4, width=4, seed=8, fp_ops=("v_add_f32",),
              int_ops=("v_bfi_b32",))
    assert len(out["cycles"]) == len(program)
    fp_none = SlowVectorUnit(lanes=4, fp_ops=(), int_ops=())
    assert fp_none.fp_ops == fp_none.int_ops == frozenset()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"lanes": 2}, "lanes must be one of 4, 8, 16, not 2"),
    ({"width": 8}, "width must be one of 1, 2, 4, not 8"),
    ({"int_ops": "v_bfi_b32"}, "int_ops must be an iterable of mnemonics"),
    ({"fp_ops": ["v_add_f64"]}, "fp_ops must be FP_BUILT_OPS mnemonics, not v_add_f64"),
    ({"int_ops": ["v_add_f32"]}, "int_ops must be VALU_INT_OPS mnemonics, not v_add_f32"),
])
def test_refuses_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SlowVectorUnit(**kwargs)
