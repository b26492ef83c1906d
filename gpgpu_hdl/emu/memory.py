"""Flat byte-addressed memories: device global memory and a workgroup's LDS.

Both are one numpy ``uint8`` array. Wave-wide accesses take a vector of 64 byte addresses and
a lane mask and gather/scatter with numpy; dword-aligned accesses take a fast path through a
``uint32`` view. Global memory refuses accesses outside what has been allocated (a
:class:`MemoryFault` naming the address); LDS follows the hardware rule instead (an access at or
beyond the limit reads 0 and writes nothing).

With ``check_bounds`` global memory works like a sanitizer: every allocation is followed by an
unmapped red zone of :data:`REDZONE` bytes, and each access must lie wholly inside one
allocation. An access that does not raises :class:`BoundsError`, which names the allocation it
ran past (its label: a buffer, a kernel argument, the code) and by how many bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import EmulatorError

__all__ = ["MemoryFault", "BoundsError", "Allocation", "Memory", "Lds", "GLOBAL_BASE",
           "REDZONE"]

#: Lowest device address handed out; 0..GLOBAL_BASE-1 is never mapped, so a null or small
#: pointer faults instead of reading data.
GLOBAL_BASE = 0x10000

#: Unmapped bytes after each allocation when bounds are checked: an access that runs up to this
#: far past the end of a buffer lands in no allocation and is reported against that buffer.
REDZONE = 1024

_U8 = np.uint8
_U32 = np.uint32
_U64 = np.uint64
_BYTE_OFFSETS = {n: np.arange(n, dtype=np.int64) for n in (1, 2, 4, 8, 12, 16)}
_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class MemoryFault(EmulatorError):
    """A kernel touched device memory that was never allocated."""


class BoundsError(MemoryFault):
    """With bounds checking: an access not wholly inside one allocation."""


@dataclass
class Allocation:
    """``nbytes`` of device memory at ``address``; ``label`` says what they hold."""

    address: int
    nbytes: int
    label: str

    @property
    def end(self) -> int:
        return self.address + self.nbytes


class _ByteArray:
    """Shared gather/scatter over ``self.data`` (uint8), addresses relative to ``self.base``."""

    data: np.ndarray
    base: int

    def _index(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        """(lanes, nbytes) int64 byte indices into ``data``."""
        return (addrs.astype(np.int64) - self.base)[:, None] + _BYTE_OFFSETS[nbytes]

    def _gather(self, offs: np.ndarray, nbytes: int) -> np.ndarray:
        """Read ``nbytes`` (1, 2, 4 or a multiple of 4) at each offset -> uint32 (lanes, dwords)
        or, for 1/2 bytes, uint32 (lanes,) zero-extended."""
        if nbytes >= 4:
            if not (offs & 3).any():
                view = self.data.view(_U32)
                idx = (offs >> 2)[:, None] + np.arange(nbytes // 4, dtype=np.int64)
                return view[idx]
            raw = self.data[offs[:, None] + _BYTE_OFFSETS[nbytes]]
            return raw.view(_U32).reshape(len(offs), nbytes // 4)
        raw = self.data[offs[:, None] + _BYTE_OFFSETS[nbytes]]
        return raw.view(_UNSIGNED[nbytes]).reshape(len(offs)).astype(_U32)

    def _scatter(self, offs: np.ndarray, values: np.ndarray, nbytes: int) -> None:
        """Write ``values`` (uint32 (lanes, dwords), or (lanes,) for 1/2 bytes) in lane order,
        so that the highest lane wins when addresses collide."""
        if nbytes >= 4:
            vals = np.ascontiguousarray(values, dtype=_U32).reshape(len(offs), nbytes // 4)
            if not (offs & 3).any():
                view = self.data.view(_U32)
                idx = (offs >> 2)[:, None] + np.arange(nbytes // 4, dtype=np.int64)
                view[idx] = vals
                return
            self.data[offs[:, None] + _BYTE_OFFSETS[nbytes]] = vals.view(_U8).reshape(
                len(offs), nbytes)
            return
        small = values.astype(_UNSIGNED[nbytes])
        self.data[offs[:, None] + _BYTE_OFFSETS[nbytes]] = small.view(_U8).reshape(
            len(offs), nbytes)


class Memory(_ByteArray):
    """Device global memory: a bump allocator over one growable byte array.

    Addresses start at :data:`GLOBAL_BASE`. Allocations are never freed individually;
    :meth:`reset` drops everything.

    Parameters
    ----------
    limit : int
        Most bytes that may be allocated (default 1 GiB); beyond it :meth:`alloc` raises
        :class:`MemoryFault`.
    check_bounds : bool
        Leave a :data:`REDZONE` after each allocation and check every kernel access against
        the allocations (:class:`BoundsError`); off, an access anywhere below the top of
        memory is allowed, as on the hardware.
    """

    def __init__(self, limit: int = 1 << 30, *, check_bounds: bool = False) -> None:
        self.base = GLOBAL_BASE
        self.limit = limit
        self.check_bounds = check_bounds
        self.data = np.zeros(1 << 16, dtype=_U8)
        self.top = GLOBAL_BASE
        self.allocations: list[Allocation] = []
        self._starts = np.zeros(0, dtype=np.int64)
        self._ends = np.zeros(0, dtype=np.int64)

    def reset(self) -> None:
        self.data = np.zeros(1 << 16, dtype=_U8)
        self.top = GLOBAL_BASE
        self.allocations = []
        self._starts = np.zeros(0, dtype=np.int64)
        self._ends = np.zeros(0, dtype=np.int64)

    @property
    def end(self) -> int:
        """One past the highest allocated address."""
        return self.top

    def alloc(self, nbytes: int, align: int = 256, label: str = "") -> int:
        """Reserve ``nbytes`` (zero-filled) and return their device address; ``label`` names
        what they hold in bounds reports."""
        if nbytes < 0 or align <= 0 or align & (align - 1):
            raise ValueError(f"bad allocation: {nbytes} bytes aligned to {align}")
        addr = -(-self.top // align) * align
        top = addr + max(nbytes, 1) + (REDZONE if self.check_bounds else 0)
        if top - GLOBAL_BASE > self.limit:
            raise MemoryFault(f"out of device memory: {nbytes} more bytes would exceed the "
                              f"{self.limit}-byte limit")
        need = -(-(top - GLOBAL_BASE) // 8) * 8
        if need > len(self.data):
            size = len(self.data)
            while size < need:
                size *= 2
            grown = np.zeros(size, dtype=_U8)
            grown[:len(self.data)] = self.data
            self.data = grown
        self.top = top
        self.allocations.append(Allocation(addr, nbytes, label or f"{nbytes} bytes"))
        self._starts = np.append(self._starts, addr)
        self._ends = np.append(self._ends, addr + nbytes)
        return addr

    def label(self, address: int, text: str) -> None:
        """Rename the allocation at ``address`` (the runtime names kernel arguments)."""
        i = int(np.searchsorted(self._starts, address))
        if i < len(self.allocations) and self._starts[i] == address:
            self.allocations[i].label = text

    def _outside(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        """Lanes whose ``nbytes`` at ``addrs`` are not wholly inside one allocation."""
        a = addrs.astype(np.int64)
        i = np.searchsorted(self._starts, a, side="right") - 1
        inside = (i >= 0) & (a + nbytes <= self._ends[np.maximum(i, 0)])
        return ~inside

    def _bounds_error(self, addr: int, nbytes: int, what: str, lane: int | None) -> BoundsError:
        i = int(np.searchsorted(self._starts, addr, side="right")) - 1
        where = f" (lane {lane})" if lane is not None else ""
        access = f"{what} of {nbytes} bytes at {addr:#x}{where}"
        if i < 0:
            return BoundsError(f"{access} is below every allocation")
        a = self.allocations[i]
        if addr < a.end:
            return BoundsError(f"{access} runs {addr + nbytes - a.end} bytes past the end of "
                               f"{a.label} ({a.nbytes} bytes at {a.address:#x})")
        return BoundsError(f"{access} is {addr - a.end} bytes past the end of {a.label} "
                           f"({a.nbytes} bytes at {a.address:#x})")

    # -- host access -------------------------------------------------------------------------

    def _check_range(self, addr: int, nbytes: int, what: str = "host access") -> int:
        if addr < GLOBAL_BASE or addr + nbytes > self.top:
            raise MemoryFault(f"{what} to unmapped device memory "
                              f"{addr:#x}..{addr + nbytes:#x}")
        if self.check_bounds and what != "host access" and self._outside(
                np.array([addr], dtype=np.int64), nbytes)[0]:
            raise self._bounds_error(addr, nbytes, what, None)
        return addr - GLOBAL_BASE

    def write(self, addr: int, data: bytes | np.ndarray) -> None:
        raw = np.frombuffer(bytes(data), dtype=_U8) if not isinstance(data, np.ndarray) \
            else np.ascontiguousarray(data).reshape(-1).view(_U8)
        off = self._check_range(addr, len(raw))
        self.data[off:off + len(raw)] = raw

    def read(self, addr: int, nbytes: int) -> bytes:
        off = self._check_range(addr, nbytes)
        return self.data[off:off + nbytes].tobytes()

    def read_u32(self, addr: int, count: int = 1) -> list[int]:
        """Scalar-unit read: ``count`` dwords as Python ints."""
        off = self._check_range(addr, 4 * count, "scalar load")
        return self.data[off:off + 4 * count].view(_U32).tolist() if off % 4 == 0 else \
            np.frombuffer(self.data[off:off + 4 * count].tobytes(), dtype=_U32).tolist()

    # -- wave access -------------------------------------------------------------------------

    def _offsets(self, addrs: np.ndarray, nbytes: int, what: str,
                 lanes: np.ndarray | None) -> np.ndarray:
        offs = addrs.astype(np.int64) - GLOBAL_BASE
        bad = (offs < 0) | (offs + nbytes > self.top - GLOBAL_BASE) | (addrs >= 1 << 48)
        if bad.any():
            i = int(np.argmax(bad))
            lane = int(lanes[i]) if lanes is not None else i
            raise MemoryFault(f"{what} of {nbytes} bytes at unmapped address "
                              f"{int(addrs[i]):#x} (lane {lane})")
        self.check(addrs, nbytes, what, lanes)
        return offs

    def check(self, addrs: np.ndarray, nbytes: int, what: str,
              lanes: np.ndarray | None = None) -> None:
        """With bounds checking, raise :class:`BoundsError` for the first of ``addrs`` whose
        ``nbytes`` are not wholly inside one allocation (``lanes``: their lane numbers, for
        the message). Without, nothing."""
        if not self.check_bounds or not len(addrs):
            return
        bad = self._outside(addrs, nbytes)
        if bad.any():
            i = int(np.argmax(bad))
            raise self._bounds_error(int(addrs[i]), nbytes, what,
                                     int(lanes[i]) if lanes is not None else i)

    def load(self, addrs: np.ndarray, nbytes: int, lanes: np.ndarray | None = None
             ) -> np.ndarray:
        """Read at the given uint64 addresses (active lanes only; ``lanes`` are their lane
        numbers, for error messages)."""
        return self._gather(self._offsets(addrs, nbytes, "load", lanes), nbytes)

    def store(self, addrs: np.ndarray, values: np.ndarray, nbytes: int,
              lanes: np.ndarray | None = None) -> None:
        self._scatter(self._offsets(addrs, nbytes, "store", lanes), values, nbytes)


class Lds(_ByteArray):
    """A workgroup's local data share (``size`` bytes, zero-filled at workgroup start)."""

    def __init__(self, size: int) -> None:
        self.base = 0
        self.size = size
        self.data = np.zeros(-(-max(size, 4) // 8) * 8, dtype=_U8)

    def in_range(self, addrs: np.ndarray, nbytes: int, m0: int) -> np.ndarray:
        """Lanes whose access lies below both the allocation and the M0 limit."""
        limit = min(self.size, m0)
        return addrs.astype(np.int64) + nbytes <= limit

    def load(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        return self._gather(addrs.astype(np.int64), nbytes)

    def store(self, addrs: np.ndarray, values: np.ndarray, nbytes: int) -> None:
        self._scatter(addrs.astype(np.int64), values, nbytes)
