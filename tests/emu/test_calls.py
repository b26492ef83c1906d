"""Kernels that call functions: clang's -O0 code calls every helper (``s_swappc_b64``), and a
``noinline`` function is called at any level; the callee may sit after the kernel or before it
in ``.text``. Results are checked against numpy."""

from __future__ import annotations

import numpy as np

from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.runtime import Device
from gpgpu_hdl.toolchain import compile_cl

HELPER = """
static uint div_or_keep(uint a, uint b) { return (b == 0) ? a : a / b; }
__kernel void k(__global uint *out) {
    uint i = get_global_id(0);
    out[i] = div_or_keep(1000u + i, i & 7u);
}
"""

BEFORE = """
__kernel void first(__global uint *out) { out[get_global_id(0)] = 7u; }
__attribute__((noinline)) uint mix(uint x, uint y) { return (x * 2654435761u) ^ (y >> 3); }
__kernel void second(__global uint *out) {
    uint i = get_global_id(0);
    out[i] = mix(i, out[i]) + mix(i + 1u, 5u);
}
"""


def _build(tmp_path, source: str, *flags: str) -> CodeObject:
    cl = tmp_path / "calls.cl"
    cl.write_text(source)
    return compile_cl(cl, tmp_path / "calls.bin", extra_flags=flags)


def test_o0_helper_calls_run(tmp_path):
    path = _build(tmp_path, HELPER, "-O0")
    co = CodeObject.load(path)
    assert [f.name for f in co.functions] == ["div_or_keep"]
    assert co.functions[0].offset > co.kernel("k").code_offset      # after the kernel
    assert "s_swappc_b64" in {i.info.mnemonic for i in decode(co.kernel("k").code)}
    device = Device("emu")
    out = device.array(np.zeros(64, np.uint32))
    device.load(path).k(out, global_size=(64,), local_size=(64,))
    i = np.arange(64)
    assert (out.numpy() == np.where(i & 7, (1000 + i) // np.maximum(i & 7, 1), 1000 + i)).all()


def test_a_callee_placed_before_the_kernel(tmp_path):
    path = _build(tmp_path, BEFORE)
    co = CodeObject.load(path)
    (mix,) = co.functions
    assert mix.offset < co.kernel("second").code_offset
    device = Device("emu")
    x = np.arange(64, dtype=np.uint32) * 977
    out = device.array(x.copy())
    device.load(path).second(out, global_size=(64,), local_size=(64,))
    i, x64 = np.arange(64, dtype=np.uint64), x.astype(np.uint64)

    def model(a, b):
        return ((a * 2654435761) & 0xFFFFFFFF) ^ (b >> 3)
    assert (out.numpy() == (model(i, x64) + model(i + 1, np.uint64(5))) & 0xFFFFFFFF).all()
