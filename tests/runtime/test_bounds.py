"""The bounds-checked launch (``Device("emu", check_bounds=True)``): an access outside every
allocation, or past the end of the buffer it belongs to, stops the launch with one line naming
the kernel, PC, instruction, lane, address and the buffer; without the option the same launch
runs as on the hardware. Kernels are compiled from OpenCL C here; the expected addresses come
from the buffers' addresses and the index arithmetic written in the test."""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode
from gpgpu_hdl.isa.disasm import format_instruction
from gpgpu_hdl.runtime import BackendError, BoundsError, Device, MemoryFault
from gpgpu_hdl.toolchain import compile_cl
from tests._suite import load_suite

SOURCE = """
__kernel void write_past(__global int *out, int n) {
    int i = get_global_id(0);
    if (i <= n) out[i] = i;              /* <= n: one element past the end */
}
__kernel void read_far(__global const int *in, __global int *out, int skip) {
    int i = get_global_id(0);
    out[i] = in[i + skip];
}
__kernel void count_past(__global int *counts, int n) {
    atomic_add(&counts[get_global_id(0) % (n + 1)], 1);
}
__kernel void odd_lanes(__global int *out, int n) {
    int i = get_global_id(0);
    if (i & 1) out[i + n / 2] = i;       /* lane 33, out[65], is the first past the end */
}
"""


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bounds")
    (folder / "bounds.cl").write_text(SOURCE)
    return compile_cl(folder / "bounds.cl", folder / "bounds.bin")


def _store_pc(binary, kernel: str, kind: str) -> tuple[int, str]:
    """Offset and text of the kernel's first buffer instruction of ``kind``."""
    code = CodeObject.load(binary).kernel(kernel).code
    inst = next(i for i in decode(code) if i.info.mnemonic.startswith(f"buffer_{kind}"))
    return inst.offset, format_instruction(inst)


def test_a_write_one_past_the_end_is_caught(binary):
    dev = Device("emu", check_bounds=True)
    prog = dev.load(binary)
    out = dev.array(np.zeros(64, np.int32))
    neighbour = dev.array(np.full(64, 7, np.int32))
    with pytest.raises(BoundsError) as info:
        prog.write_past(out, np.int32(64), global_size=128, local_size=64)
    message = str(info.value)
    pc, text = _store_pc(binary, "write_past", "store")
    # work-item 64 is lane 0 of the second workgroup's wave; it writes out[64]
    assert len(message.splitlines()) == 1
    assert message.startswith("bounds.bin:write_past: workgroup (1, 0, 0) wave 0 ")
    assert f"at {pc:#x} ({text})" in message
    assert (f"store of 4 bytes at {out.address + 4 * 64:#x} (lane 0) is 0 bytes past the end "
            f"of argument 0 of write_past (a buffer of int32[64]) (256 bytes at "
            f"{out.address:#x})") in message
    assert (neighbour.numpy() == 7).all()


def test_without_the_check_the_launch_runs_as_on_the_hardware(binary):
    dev = Device("emu")
    prog = dev.load(binary)
    out = dev.array(np.zeros(64, np.int32))
    prog.write_past(out, np.int32(64), global_size=128, local_size=64)
    assert (out.numpy() == np.arange(64)).all()
    assert dev.memory.read(out.address + 256, 4) == (64).to_bytes(4, "little")


def test_reads_atomics_and_lanes_with_exec_gaps(binary):
    dev = Device("emu", check_bounds=True)
    prog = dev.load(binary)
    src = dev.array(np.arange(64, dtype=np.int32))
    out = dev.array(np.zeros(64, np.int32))
    # lane 63 reads in[64]
    with pytest.raises(BoundsError, match=rf"load of 4 bytes at {src.address + 256:#x} "
                                          r"\(lane 63\) is 0 bytes past the end of argument 0"):
        prog.read_far(src, out, np.int32(1), global_size=64, local_size=64)
    # far beyond every allocation: unmapped, with or without the check
    with pytest.raises(MemoryFault, match="unmapped address"):
        prog.read_far(src, out, np.int32(1 << 24), global_size=64, local_size=64)
    # counts[8] of 8: lanes 8, 17, ... ; the first is lane 8
    counts = dev.array(np.zeros(8, np.int32))
    with pytest.raises(BoundsError, match=r"atomic of 4 bytes .* \(lane 8\) is 0 bytes past "
                                          r"the end of argument 0 of count_past"):
        prog.count_past(counts, np.int32(8), global_size=64, local_size=64)
    # only odd lanes store: the message names the lane, not its rank among the active ones
    with pytest.raises(BoundsError, match=rf"store of 4 bytes at {out.address + 4 * 65:#x} "
                                          r"\(lane 33\) is 4 bytes past the end"):
        prog.odd_lanes(out, np.int32(64), global_size=64, local_size=64)


def test_check_bounds_is_the_emulators():
    with pytest.raises(BackendError, match="check_bounds= checks accesses on the emulator"):
        Device("verilator", check_bounds=True)


def test_every_suite_case_is_in_bounds():
    """No false alarm: every reference case runs under the check with the results it has
    without it (and the suite's kernels stay inside their buffers)."""
    suite = load_suite()
    plain, checked = Device("emu"), Device("emu", check_bounds=True)
    for case in suite.CASES:
        inputs = case.inputs()
        want, _ = suite.run_device(case, plain, inputs)
        got, _ = suite.run_device(case, checked, inputs)
        for name, ref in want.items():
            assert np.array_equal(np.asarray(got[name]).view(np.uint8),
                                  np.asarray(ref).view(np.uint8)), f"{case.name}: {name}"
