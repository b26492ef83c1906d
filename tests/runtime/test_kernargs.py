"""Kernel argument layout (:mod:`gpgpu_hdl.runtime.kernargs`): scalars, OpenCL vectors and
structs by value placed as OpenCL C places them (sizes and alignments written here from the C
rules), and a packed numpy struct refused."""

from __future__ import annotations

import numpy as np
import pyopencl.cltypes as cltypes
import pytest

from gpgpu_hdl.runtime import ArgumentError
from gpgpu_hdl.runtime.kernargs import layout_args, scalar_size_align


@pytest.mark.parametrize("value, size, align", [
    (np.int8(1), 1, 1), (np.int16(1), 2, 2), (np.float32(1), 4, 4), (np.uint64(1), 8, 8),
    (np.zeros((), cltypes.int2)[()], 8, 8),
    (np.zeros((), cltypes.float3)[()], 16, 16),          # a 3-vector takes 4 elements
    (np.zeros((), cltypes.uchar4)[()], 4, 4),
    (np.zeros((), cltypes.float16)[()], 64, 64),
    # struct { int a; float b; int c; }: 12 bytes at 4, not a 3-vector
    (np.zeros((), np.dtype([("a", "<i4"), ("b", "<f4"), ("c", "<i4")], align=True))[()],
     12, 4),
    # struct { char c; double d; short s; }: 24 bytes at 8
    (np.zeros((), np.dtype([("c", "i1"), ("d", "<f8"), ("s", "<i2")], align=True))[()],
     24, 8),
    # struct { float4 v; int n; }: 32 bytes at 16 (the vector member's alignment)
    (np.zeros((), np.dtype({"names": ["v", "n"], "formats": [cltypes.float4, "<i4"],
                            "offsets": [0, 16], "itemsize": 32}))[()], 32, 16),
    # struct { int x[3]; short s; }: 16 bytes at 4
    (np.zeros((), np.dtype([("x", "<i4", 3), ("s", "<i2")], align=True))[()], 16, 4),
])
def test_size_and_alignment_follow_opencl_c(value, size, align):
    assert scalar_size_align(value) == (size, align)


def test_a_struct_after_pointers_sits_at_its_alignment():
    params = np.zeros((), np.dtype([(f"f{i}", "<i4") for i in range(8)], align=True))[()]
    layout = layout_args([("global", 8, 8), ("global", 8, 8), ("value", 4, 4),
                          ("value", *scalar_size_align(params))])
    assert [s.offset for s in layout.slots] == [0, 8, 16, 20]
    assert layout.explicit_bytes == 52


def test_a_struct_numpy_lays_out_otherwise_is_refused():
    packed = np.zeros((), np.dtype([("c", "i1"), ("n", "<i4")]))[()]     # no align=True
    with pytest.raises(ArgumentError, match=r"field 'n' is at byte 1, OpenCL C puts it at 4 "
                                            r".*align=True"):
        scalar_size_align(packed)
    # numpy aligns a cltypes vector member to 1: the struct is 20 bytes, OpenCL C's 32
    short = np.zeros((), np.dtype([("v", cltypes.float4), ("n", "<i4")], align=True))[()]
    with pytest.raises(ArgumentError, match="it is 20 bytes, OpenCL C makes it 32"):
        scalar_size_align(short)
