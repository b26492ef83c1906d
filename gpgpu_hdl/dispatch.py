"""The compute dispatch: what a launch is, and the register state each wave starts with.

This is the contract between the host runtime and every executor (the emulator now, the RTL's
hardware dispatcher later): a :class:`Dispatch` names the code, the kernarg segment, the HSA
dispatch packet, the grid and the workgroup size; :func:`workgroups` walks the grid and
:func:`wave_start` gives the SGPRs, VGPRs and EXEC of one wave exactly as the kernel's
``amd_kernel_code_t`` asks (``shared/reference/si_isa.md`` sections 5 and 7).

Grids need not be multiples of the workgroup size: the last workgroup of a dimension is then
partial (HSA semantics), and its work-items are packed by the partial size.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .isa.codeobj import SYSTEM_SGPR_SLOTS, USER_SGPR_SLOTS, KernelCodeHeader

__all__ = ["Dispatch", "Workgroup", "WaveStart", "workgroups", "wave_start", "dispatch_packet",
           "scratch_descriptor", "dispatch_fields", "WAVE_SIZE"]

WAVE_SIZE = 64


@dataclass(frozen=True)
class Dispatch:
    """One kernel launch, as the hardware sees it.

    Attributes
    ----------
    header : KernelCodeHeader
        The kernel's ``amd_kernel_code_t``.
    code_address : int
        Device address of the first instruction (header address + 256).
    kernarg_address, packet_address : int
        Device addresses of the kernarg segment and of the 64-byte dispatch packet.
    grid : tuple of 3 ints
        Global size in work-items per dimension (unused dimensions are 1).
    local : tuple of 3 ints
        Workgroup size per dimension.
    lds_bytes : int
        LDS per workgroup: the static size from the header plus any dynamic ``__local`` size.
    scratch_address : int
        Base of the private (scratch) segment, 0 if the kernel has none. Wave ``w`` of a
        workgroup owns ``scratch_wave_bytes`` bytes at ``scratch_address + w *
        scratch_wave_bytes``; workgroups run one at a time per slot, so the area is reused.
    """

    header: KernelCodeHeader
    code_address: int
    kernarg_address: int
    packet_address: int
    grid: tuple[int, int, int]
    local: tuple[int, int, int]
    lds_bytes: int = 0
    scratch_address: int = 0

    def __post_init__(self) -> None:
        for what, dims in (("grid", self.grid), ("workgroup", self.local)):
            if len(dims) != 3 or any(int(d) < 1 for d in dims):
                raise ValueError(f"{what} size must be three positive integers, not {dims}")
        if int(np.prod(self.local)) > 1024:
            raise ValueError(f"workgroup of {int(np.prod(self.local))} work-items exceeds 1024")

    @property
    def group_counts(self) -> tuple[int, int, int]:
        """Workgroups per dimension (the last may be partial)."""
        return tuple(-(-g // n) for g, n in zip(self.grid, self.local, strict=True))

    @property
    def waves_per_group(self) -> int:
        return -(-int(np.prod(self.local)) // WAVE_SIZE)

    @property
    def scratch_wave_bytes(self) -> int:
        """Scratch bytes per wave: 64 lanes times the private segment size, dword aligned."""
        return WAVE_SIZE * (-(-self.header.workitem_private_segment_byte_size // 4) * 4)

    @property
    def scratch_bytes(self) -> int:
        """Scratch a launch needs (one workgroup's waves at a time)."""
        return self.waves_per_group * self.scratch_wave_bytes


@dataclass(frozen=True)
class Workgroup:
    """One workgroup of a dispatch: its id and its actual (possibly partial) size."""

    id: tuple[int, int, int]
    size: tuple[int, int, int]

    @property
    def items(self) -> int:
        return self.size[0] * self.size[1] * self.size[2]

    @property
    def waves(self) -> int:
        return -(-self.items // WAVE_SIZE)


def workgroups(d: Dispatch) -> Iterator[Workgroup]:
    """The workgroups of ``d`` in launch order (x fastest)."""
    nx, ny, nz = d.group_counts
    for z, y, x in itertools.product(range(nz), range(ny), range(nx)):
        wid = (x, y, z)
        size = tuple(min(n, g - i * n) for i, n, g in zip(wid, d.local, d.grid, strict=True))
        yield Workgroup(wid, size)


@dataclass(frozen=True)
class WaveStart:
    """Initial state of one wave: ``sgprs[i]`` goes to s[i]; ``vgprs[r]`` (64 lanes) to v[r]."""

    sgprs: tuple[int, ...]
    vgprs: tuple[np.ndarray, ...]
    exec_mask: int
    mode: int


def scratch_descriptor(address: int, header: KernelCodeHeader) -> tuple[int, int, int, int]:
    """The swizzled private-segment V# radeonsi builds for ``amd_kernel_code_t`` kernels."""
    element = header.private_element_size
    dw1 = ((address >> 32) & 0xFFFF) | (1 << 31)                 # SWIZZLE_ENABLE
    dw3 = (1 << 15) | (element << 19) | (3 << 21) | (1 << 23)    # DATA_FORMAT, ELEMENT_SIZE,
    return (address & 0xFFFFFFFF, dw1, 0xFFFFFFFF, dw3)          # INDEX_STRIDE=64, ADD_TID


def wave_start(d: Dispatch, wg: Workgroup, wave: int) -> WaveStart:
    """The SGPRs, VGPRs, EXEC and MODE of wave ``wave`` of workgroup ``wg``."""
    h = d.header
    values: dict[str, list[int]] = {
        "dispatch_ptr": [d.packet_address & 0xFFFFFFFF, d.packet_address >> 32],
        "queue_ptr": [0, 0],
        "kernarg_segment_ptr": [d.kernarg_address & 0xFFFFFFFF, d.kernarg_address >> 32],
        "dispatch_id": [0, 0],
        "flat_scratch_init": [0, 0],
        "private_segment_size": [h.workitem_private_segment_byte_size],
        "grid_workgroup_count_x": [d.group_counts[0]],
        "grid_workgroup_count_y": [d.group_counts[1]],
        "grid_workgroup_count_z": [d.group_counts[2]],
        "workgroup_id_x": [wg.id[0]],
        "workgroup_id_y": [wg.id[1]],
        "workgroup_id_z": [wg.id[2]],
        # SI workgroup_info: number of waves in the group in [5:0]
        "workgroup_info": [wg.waves],
        "private_segment_wave_byte_offset": [wave * d.scratch_wave_bytes],
    }
    scratch = h.workitem_private_segment_byte_size > 0 and d.scratch_address
    values["private_segment_buffer"] = list(
        scratch_descriptor(d.scratch_address, h) if scratch else (0, 0, 0, 0))
    layout = h.sgpr_layout()
    sgprs = [0] * (max((r.first + r.count for r in layout), default=0))
    for r in layout:
        sgprs[r.first:r.first + r.count] = values[r.name][:r.count]

    flat = np.arange(wave * WAVE_SIZE, (wave + 1) * WAVE_SIZE, dtype=np.int64)
    valid = flat < wg.items
    sx, sy, _ = wg.size
    ids = (flat % sx, (flat // sx) % sy, flat // (sx * sy))
    nv = min(h.enable_vgpr_workitem_id, 2) + 1
    vgprs = tuple(np.where(valid, ids[i], 0).astype(np.uint32) for i in range(nv))
    exec_mask = int(np.packbits(valid, bitorder="little").view("<u8")[0])
    mode = (h.float_mode & 0xFF) | (h.dx10_clamp << 8) | (h.ieee_mode << 9)
    return WaveStart(tuple(sgprs), vgprs, exec_mask, mode)


def dispatch_packet(d: Dispatch, kernel_object: int = 0) -> bytes:
    """The 64-byte HSA kernel dispatch packet for ``d`` (the fields radeonsi fills)."""
    dims = 3 if d.grid[2] > 1 or d.local[2] > 1 else (2 if d.grid[1] > 1 or d.local[1] > 1
                                                        else 1)
    return struct.pack("<HHHHHHIIIIIQQQQ", 0, dims, *d.local, 0, *d.grid,
                       d.header.workitem_private_segment_byte_size, d.lds_bytes,
                       kernel_object, d.kernarg_address, 0, 0)


def dispatch_fields(d, code_dwords: int, group_limit: int) -> dict:
    """The values of the compute unit's dispatch fields (:data:`gpgpu_hdl.cu.core.DispatchLayout`)
    for a launch: the host-side packing of ``d`` for the hardware dispatcher, whose
    ``code_dwords`` words of code are loaded and which runs at most ``group_limit`` workgroups
    at once."""
    h = d.header
    return {
        "code_address": d.code_address, "code_dwords": code_dwords,
        "kernarg_address": d.kernarg_address, "packet_address": d.packet_address,
        "scratch_address": d.scratch_address if h.workitem_private_segment_byte_size else 0,
        "scratch_wave_bytes": d.scratch_wave_bytes,
        "grid": list(d.grid), "local": list(d.local), "group_counts": list(d.group_counts),
        "lds_bytes": d.lds_bytes, "group_limit": group_limit,
        "mode": (h.float_mode & 0xFF) | (h.dx10_clamp << 8) | (h.ieee_mode << 9),
        "user_sgpr_count": h.user_sgpr_count,
        "user_enables": sum(getattr(h, f"enable_sgpr_{n}") << i
                            for i, (n, _) in enumerate(USER_SGPR_SLOTS)),
        "system_enables": sum(getattr(h, bit) << i
                              for i, (_, bit) in enumerate(SYSTEM_SGPR_SLOTS)),
        "vgpr_ids": h.enable_vgpr_workitem_id,
        "private_segment_size": h.workitem_private_segment_byte_size,
        "private_element_size": h.private_element_size,
    }
