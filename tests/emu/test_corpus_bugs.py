"""What the user-style kernel corpus (``tests/kernels/corpus/``, cases in
``examples/suite/cases_corpus.py``) found, reduced to one small kernel each.

* The regression the corpus was started for: clang folds the -1 of ``in[(y-1)*w + x-1]`` on a
  ``uchar`` image into the buffer resource's base (a V# base of -1) and relies on the 48-bit
  address wrap; the emulator used to fault at 0x1000000....
* Differences from PoCL that are not the emulator's: libclc 19 (linked into every tahiti
  kernel) gets some built-ins wrong, and the emulator runs its code as the hardware would.
  Each test runs the reduced kernel on the emulator and on PoCL and pins both values, so that
  nobody "fixes" the emulator to agree with PoCL, and so that a libclc which fixes them shows
  up here. The expected values come from the OpenCL specification and from reading libclc's
  code (its LLVM IR), never from the emulator.
* A runtime bug (``gpgpu_hdl/runtime/kernargs.py``, not the emulator's): a struct passed by
  value is placed at the next power of two of its size instead of its alignment; kept as a
  strict expected failure until the runtime is fixed.

See ``docs/corpus.md`` for the list.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from gpgpu_hdl.errors import GpgpuError
from gpgpu_hdl.fuzz.pocl import context as pocl_context
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.toolchain import assemble_kernel, compile_cl
from tests._suite import load_suite
from tests.asm_kernels import ARG0_BUFFER

suite = load_suite()


def _build(tmp_path, source: str):
    """(device program, PoCL program) of one OpenCL source."""
    import pyopencl as cl

    cl_file = tmp_path / "k.cl"
    cl_file.write_text(source)
    binary = compile_cl(cl_file, tmp_path / "k.bin")
    ctx = pocl_context()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        pocl = cl.Program(ctx, suite.POCL_PREAMBLE + source).build(
            options=list(suite.POCL_OPTIONS))
    return Device("emu").load(str(binary)), pocl


def _run_both(tmp_path, source: str, inputs: list[np.ndarray], out: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Run kernel ``k(inputs..., out)`` over ``len(out)`` work-items on the emulator and on
    PoCL; return (emulator output, PoCL output)."""
    import pyopencl as cl

    prog, pocl = _build(tmp_path, source)
    dev = prog.device
    bufs = [dev.array(a) for a in inputs] + [dev.array(out)]
    prog.k(*bufs, global_size=(64,), local_size=(64,))
    ctx, queue = pocl_context()
    mf = cl.mem_flags
    cbufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
             for a in [*inputs, out]]
    pocl.k(queue, (64,), (64,), *cbufs)
    host = np.empty_like(out)
    cl.enqueue_copy(queue, host, cbufs[-1])
    queue.finish()
    return bufs[-1].numpy(), host


def _lanes(values: list, dtype) -> np.ndarray:
    """64 lanes: the values, then the last one repeated."""
    return np.array(values + [values[-1]] * (64 - len(values)), dtype)


# --- the corpus itself ---------------------------------------------------------------------------

def test_every_corpus_kernel_has_a_case():
    """Every kernel in tests/kernels/corpus/*.cl is launched by a suite case (the suite's own
    coverage test only looks at tests/kernels/*.cl)."""
    import re

    corpus = suite.TEST_KERNELS / "corpus"
    files = sorted(corpus.glob("*.cl"))
    assert len(files) >= 12
    kernels = {(f.name, k) for f in files
               for k in re.findall(r"__kernel\s+void\s+(\w+)\s*\(", f.read_text())}
    covered = {(c.source.name, k) for c in suite.CASES if c.source.parent == corpus
               for k in c.kernels}
    assert kernels - covered == set()
    for f in files:                 # each file says what it covers
        assert f.read_text().startswith(f"/*\n * {f.name} -- ")


# --- the 48-bit wrap regression ----------------------------------------------------------------

def test_sobel_reads_through_a_buffer_base_of_minus_one():
    """corpus_sobel_uchar still exercises the wrap: the kernel builds a V# whose base is -1
    (s_mov_b64 s[..], -1) and its outputs match the numpy model."""
    case = suite.CASES_BY_NAME["corpus_sobel_uchar"]
    code = CodeObject.load(suite.code_object(case)).kernel("sobel_uchar").code
    assert any(i.info.mnemonic == "s_mov_b64" and "-1" in str(i.operands[1])
               for i in decode(code))
    got, _ = suite.run_device(case, Device("emu"))
    ok, detail = suite.compare(case, suite.run_model(case), got)
    assert ok, detail


# --- the commit trace (found running the corpus on the RTL) ------------------------------------

def _traced(body: str, *args: np.ndarray) -> tuple[list[dict], list[np.ndarray]]:
    dev = Device("emu")
    prog = dev.load_bytes(assemble_kernel(body, "k", kernarg_segment_byte_size=8 * len(args)))
    bufs = [dev.array(a) for a in args]
    res = prog.k(*bufs, global_size=64, local_size=64, trace=True)
    return res.trace.records, [b.numpy() for b in bufs]


def test_trace_of_cmpswap_lists_only_the_returned_dword():
    """buffer_atomic_cmpswap v[5:6] ... glc returns the old value in v5 only (v6 holds the
    compare value and is not written); the trace listed v6 too, so the RTL's trace of
    corpus_atomics_global (the atomic_cmpxchg retry loop) "did not write v6"."""
    body = f"""
    {ARG0_BUFFER}
    v_lshlrev_b32 v2, 2, v0
    v_add_i32 v5, vcc, 100, v0
    v_mov_b32 v6, 7
    s_waitcnt lgkmcnt(0)
    buffer_atomic_cmpswap v[5:6], v2, s[4:7], 0 offen glc
    s_endpgm"""
    mem = np.where(np.arange(64) % 2 == 0, 7, 9).astype(np.uint32)
    records, (out,) = _traced(body, mem)
    rec = next(r for r in records if r["op"].startswith("buffer_atomic_cmpswap"))
    assert set(rec["vgpr"]) == {"v5"}
    assert rec["vgpr"]["v5"] == mem.tolist()                      # the old values
    lanes = np.arange(64)
    assert out.tolist() == np.where(lanes % 2 == 0, 100 + lanes, 9).tolist()


def test_trace_of_movreld_names_the_register_written():
    """v_movreld_b32 v2, v0 with M0 = 3 writes v5; the trace named v2 (with v2's unchanged
    value), the RTL names v5 (corpus_moving_max: "RTL did not write v0"). s_movreld likewise."""
    body = f"""
    {ARG0_BUFFER}
    s_mov_b32 m0, 3
    v_mov_b32 v2, 11
    v_mov_b32 v5, 22
    v_movreld_b32 v2, v0
    v_movrelsd_b32 v3, v0
    s_mov_b32 s20, 33
    s_movreld_b32 s20, 44
    s_waitcnt lgkmcnt(0)
    s_endpgm"""
    records, _ = _traced(body, np.zeros(1, np.uint32))
    lanes = list(range(64))
    by_op = {r["op"].split()[0].removesuffix("_e32"): r for r in records}
    assert by_op["v_movreld_b32"]["vgpr"] == {"v5": lanes}
    assert by_op["v_movrelsd_b32"]["vgpr"] == {"v6": [0] * 64}     # v6 = v[0 + 3] = v3: 0
    assert by_op["s_movreld_b32"]["sgpr"] == {"s23": 44}


# --- libclc 19: the emulator runs libclc's code, PoCL follows the specification ----------------

@pytest.mark.parametrize("bits", [32, 64])
def test_libclc_sub_sat_zero_minus_min(tmp_path, bits):
    """libclc's sub_sat for int and long: ``if (overflow) r = x > 0 ? MAX : MIN`` -- for x = 0
    the overflow of 0 - MIN is upward, the saturated result MAX. (char and short are computed
    in int and are right.)"""
    ctype, dtype = ("int", np.int32) if bits == 32 else ("long", np.int64)
    lmin = -(1 << (bits - 1))
    src = (f"__kernel void k(__global const {ctype} *a, __global const {ctype} *b, "
           f"__global {ctype} *o) {{ int i = get_global_id(0); o[i] = sub_sat(a[i], b[i]); }}")
    a, b = _lanes([0, 5, -5, 0], dtype), _lanes([lmin, lmin, 7, 1], dtype)
    emu, pocl = _run_both(tmp_path, src, [a, b], np.zeros(64, dtype))
    assert emu[:4].tolist() == [lmin, -lmin - 1, -12, -1]            # libclc's code
    assert pocl[:4].tolist() == [-lmin - 1, -lmin - 1, -12, -1]      # the specification


def test_libclc_mad_sat_long(tmp_path):
    """libclc's mad_sat(long) takes "signs differ" for "the product is negative" (so a zero
    product with a negative operand saturates) and misses an overflow of the addition."""
    lmin, lmax = -(1 << 63), (1 << 63) - 1
    src = ("__kernel void k(__global const long *a, __global const long *b, "
           "__global const long *c, __global long *o)"
           "{ int i = get_global_id(0); o[i] = mad_sat(a[i], b[i], c[i]); }")
    a = _lanes([-1, lmax, 3], np.int64)
    b = _lanes([0, -1, 4], np.int64)
    c = _lanes([-1, -(1 << 62), 5], np.int64)
    emu, pocl = _run_both(tmp_path, src, [a, b, c], np.zeros(64, np.int64))
    spec = [-1, lmin, 17]
    assert pocl[:3].tolist() == spec
    assert emu[0] == lmin                          # -1 * 0 + -1 saturated
    assert emu[1] == (-lmax - (1 << 62)) + (1 << 64)   # -LMAX - 2^62 wrapped, not saturated
    assert emu[2] == 17


def test_libclc_vstore_half_rtp_below_the_smallest_denormal(tmp_path):
    """vstore_half_rtp of 0 < x < 2^-24 must give the smallest half denormal (0x0001); libclc
    rounds the float up to 2^-25 in integer code and converts with v_cvt_f16_f32 (to nearest
    even), which gives 0."""
    src = ("__kernel void k(__global const float *f, __global half *h)"
           "{ int i = get_global_id(0); vstore_half_rtp(f[i], i, h); }")
    x = _lanes([2.0 ** -25, 1.9e-8, 2.0 ** -24, 3 * 2.0 ** -25], np.float32)
    emu, pocl = _run_both(tmp_path, src, [x], np.zeros(64, np.uint16))
    assert pocl[:4].tolist() == [1, 1, 1, 2]
    assert emu[:4].tolist() == [0, 0, 1, 2]


def test_libclc_convert_float_rtz_at_the_top_of_the_range(tmp_path):
    """convert_float_rtz(uint) converts to nearest, converts back and steps down if that
    overshot; for x >= 2^32 - 128 the float is 2^32 and the conversion back is out of range
    (poison in LLVM). v_cvt_u32_f32 saturates to 0xFFFFFFFF, which is still above every x but
    UINT_MAX itself, so only UINT_MAX keeps 2^32. (The 64-bit forms go wrong for every value
    within 2^39 of the top: docs/corpus.md.)"""
    src = ("__kernel void k(__global const uint *a, __global float *o)"
           "{ int i = get_global_id(0); o[i] = convert_float_rtz(a[i]); }")
    a = _lanes([0xFFFFFFFF, 0xFFFFFF80, 0xFFFFFF7F, 0x12345678], np.uint32)   # 0x...78: -24
    emu, pocl = _run_both(tmp_path, src, [a], np.zeros(64, np.float32))
    assert pocl[:4].tolist() == [4294967040.0, 4294967040.0, 4294967040.0, 305419872.0]
    assert emu[:4].tolist() == [4294967296.0, 4294967040.0, 4294967040.0, 305419872.0]


def test_libclc_clamp_passes_nan_through(tmp_path):
    """OpenCL defines clamp(x, lo, hi) as fmin(fmax(x, lo), hi), which is lo for a NaN x (what
    PoCL returns); libclc's clamp is x > hi ? hi : x < lo ? lo : x, which keeps the NaN."""
    src = ("__kernel void k(__global const float *a, __global float *o)"
           "{ int i = get_global_id(0); o[i] = clamp(a[i], -2.0f, 3.0f); }")
    a = _lanes([np.nan, 5.0, -7.0, 1.5], np.float32)
    emu, pocl = _run_both(tmp_path, src, [a], np.zeros(64, np.float32))
    assert pocl[:4].tolist() == [-2.0, 3.0, -2.0, 1.5]
    assert np.isnan(emu[0]) and emu[1:4].tolist() == [3.0, -2.0, 1.5]


def test_libclc_has_no_mad_hi(tmp_path):
    """mad_hi compiles but libclc 19 does not define it: loading the code object fails with
    the undefined symbol named (PoCL builds it)."""
    src = ("__kernel void k(__global const int *a, __global int *o)"
           "{ int i = get_global_id(0); o[i] = mad_hi(a[i], a[i], 1); }")
    cl_file = tmp_path / "k.cl"
    cl_file.write_text(src)
    binary = compile_cl(cl_file, tmp_path / "k.bin")
    with pytest.raises(GpgpuError, match="_Z6mad_hiiii"):
        Device("emu").load(str(binary))


# --- the runtime: structs by value --------------------------------------------------------------

_STRUCT_SRC = """
typedef struct { int n; float scale; float bias; int shift;
                 uint mask; float lo; float hi; int stride; } Params;        /* 32 bytes */
typedef struct { int a; float b; int c; } Three;                             /* 12 bytes */
__kernel void k(__global const int *in, __global int *out, Params p, Three t, int extra)
{
    int i = get_global_id(0);
    out[i] = in[i] * p.stride + p.n + t.a + t.c + extra;
}
"""


def test_struct_by_value_after_pointers(tmp_path):
    """Structs by value sit at their largest member's alignment (Params at 16 after two
    pointers, not at the power of two above its 32 bytes) and a 3-field struct is 12 bytes,
    not a 3-vector's 16 (the runtime had both wrong)."""
    params = np.dtype([("n", np.int32), ("scale", np.float32), ("bias", np.float32),
                       ("shift", np.int32), ("mask", np.uint32), ("lo", np.float32),
                       ("hi", np.float32), ("stride", np.int32)], align=True)
    three = np.dtype([("a", np.int32), ("b", np.float32), ("c", np.int32)], align=True)
    p = np.zeros((), params)
    p["n"], p["stride"] = 1000, 3
    t = np.zeros((), three)
    t["a"], t["c"] = 20, 300
    cl_file = tmp_path / "k.cl"
    cl_file.write_text(_STRUCT_SRC)
    dev = Device("emu")
    prog = dev.load(str(compile_cl(cl_file, tmp_path / "k.bin")))
    x = np.arange(64, dtype=np.int32)
    out = dev.array(np.zeros(64, np.int32))
    prog.k(dev.array(x), out, p[()], t[()], np.int32(4000),
           global_size=(64,), local_size=(64,))
    assert out.numpy().tolist() == (x * 3 + 5320).tolist()
