"""Memory instructions: scalar loads (SMRD), LDS (DS) and buffer memory (MUBUF).

Every access completes when the instruction executes, so ``s_waitcnt`` has nothing to wait
for. Addressing follows ``shared/reference/si_isa.md`` sections 6.7-6.9: SMRD immediate
offsets in dwords and SGPR offsets in bytes; DS addresses relative to the workgroup's LDS with
the M0 / allocation limit (out-of-range reads return 0, writes are dropped); buffer addresses
from the V# (addr64, offen, idxen, ADD_TID, swizzle, raw-buffer range check). Scalar and buffer
addresses wrap modulo 2**48, the width of the hardware's virtual addresses. Atomics are
applied lane by lane in ascending lane order, which fixes the values returned when lanes
collide.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from ..errors import EmulatorError
from ..isa.decoder import Instruction, OpKind
from .operands import scalar_reader
from .salu import sext
from .wave import M0, Wave

__all__ = ["compile_smrd", "compile_ds", "compile_mubuf", "ATOMIC_OPS", "VA_MASK"]

M32 = 0xFFFFFFFF
#: Scalar and buffer addresses are 48-bit virtual addresses: sums wrap modulo 2**48.
VA_MASK = (1 << 48) - 1
_U32, _U64, _I64 = np.uint32, np.uint64, np.int64
_VA_MASK64 = _U64(VA_MASK)
StepFn = Callable[[Wave], object]


# ----------------------------------------------------------------------------------------------
# atomic read-modify-write, on Python ints: fn(old, data, data2, bits) -> new

def _f(bits: int, value: int) -> float:
    return struct.unpack("<d" if bits == 64 else "<f",
                         value.to_bytes(bits // 8, "little"))[0]


def _fmin(old, data, data2, bits):
    a, b = _f(bits, old), _f(bits, data)
    return data if b < a or a != a else old


def _fmax(old, data, data2, bits):
    a, b = _f(bits, old), _f(bits, data)
    return data if b > a or a != a else old


def _fcmpswap(old, data, cmp, bits):
    return data if _f(bits, old) == _f(bits, cmp) else old


ATOMIC_OPS: dict[str, Callable[[int, int, int, int], int]] = {
    "add": lambda o, d, d2, b: (o + d) & ((1 << b) - 1),
    "sub": lambda o, d, d2, b: (o - d) & ((1 << b) - 1),
    "rsub": lambda o, d, d2, b: (d - o) & ((1 << b) - 1),
    "inc": lambda o, d, d2, b: 0 if o >= d else o + 1,
    "dec": lambda o, d, d2, b: d if o == 0 or o > d else o - 1,
    "min_i": lambda o, d, d2, b: d if sext(d, b) < sext(o, b) else o,
    "max_i": lambda o, d, d2, b: d if sext(d, b) > sext(o, b) else o,
    "min_u": lambda o, d, d2, b: min(o, d),
    "max_u": lambda o, d, d2, b: max(o, d),
    "and": lambda o, d, d2, b: o & d,
    "or": lambda o, d, d2, b: o | d,
    "xor": lambda o, d, d2, b: o ^ d,
    "mskor": lambda o, d, d2, b: (o & ~d & ((1 << b) - 1)) | d2,
    "swap": lambda o, d, d2, b: d,
    # DS compare-store: DATA0 is the compare value, DATA1 the new value
    "cmpst": lambda o, d, d2, b: d2 if o == d else o,
    "cmpst_f": lambda o, d, d2, b: d2 if _f(b, o) == _f(b, d) else o,
    # buffer compare-swap: VDATA[0] is the new value, VDATA[1] the compare value
    "cmpswap": lambda o, d, d2, b: d if o == d2 else o,
    "fcmpswap": _fcmpswap,
    "fmin": _fmin,
    "fmax": _fmax,
}

_DS_ATOMIC = {"add": "add", "sub": "sub", "rsub": "rsub", "inc": "inc", "dec": "dec",
              "and": "and", "or": "or", "xor": "xor", "mskor": "mskor", "wrxchg": "swap",
              "cmpst": "cmpst"}
_BUF_ATOMIC = {"swap": "swap", "cmpswap": "cmpswap", "add": "add", "sub": "sub",
               "smin": "min_i", "umin": "min_u", "smax": "max_i", "umax": "max_u",
               "and": "and", "or": "or", "xor": "xor", "inc": "inc", "dec": "dec",
               "fcmpswap": "fcmpswap", "fmin": "fmin", "fmax": "fmax"}


def _ds_atomic_kind(op: str, typ: str) -> str:
    if op in ("min", "max"):
        return {"i": f"{op}_i", "u": f"{op}_u", "f": f"f{op}"}[typ[0]]
    if op == "cmpst" and typ[0] == "f":
        return "cmpst_f"
    return _DS_ATOMIC[op]


# ----------------------------------------------------------------------------------------------
# helpers

def _log(w: Wave, space: str, addrs: np.ndarray, data: np.ndarray, size: int) -> None:
    """Record stored bytes for the commit trace (only called when tracing)."""
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(len(addrs), -1)[:, :size]
    for a, row in zip(addrs.tolist(), raw, strict=True):
        w.mem_log.append((space, int(a), row.tobytes().hex()))


def _write_rows(w: Wave, first: int, count: int, lanes: np.ndarray, values: np.ndarray) -> None:
    """values: (active lanes, count) uint32 -> v[first..first+count-1] of the active lanes."""
    w.v[first:first + count, lanes] = values.T


def _extend(values: np.ndarray, size: int, signed: bool) -> np.ndarray:
    if not signed:
        return values
    shift = _U32(32 - 8 * size)
    return ((values << shift).view(np.int32) >> np.int32(32 - 8 * size)).view(_U32)


_SUBDWORD = {"u8": (1, False), "i8": (1, True), "u16": (2, False), "i16": (2, True),
             "ubyte": (1, False), "sbyte": (1, True), "ushort": (2, False),
             "sshort": (2, True), "byte": (1, False), "short": (2, False), "b8": (1, False),
             "b16": (2, False)}
_WIDTH = {"b32": 4, "b64": 8, "dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16}


def _width(suffix: str) -> tuple[int, bool]:
    if suffix in _SUBDWORD:
        return _SUBDWORD[suffix]
    return _WIDTH[suffix], False


# ----------------------------------------------------------------------------------------------
# SMRD

def compile_smrd(inst: Instruction) -> StepFn | None:
    info, m = inst.info, inst.info.mnemonic
    if m == "s_dcache_inv":
        return lambda w: None
    if m == "s_memtime":
        return None
    n = info.dst.dwords
    dst = inst.operand("sdst").value
    base = inst.operand("sbase").value
    off = inst.operand("offset")
    offset_of = (scalar_reader(off, None) if off.kind is not OpKind.IMM
                 else (lambda w, k=4 * off.value: k))

    if m.startswith("s_buffer_load"):
        def buffer_load(w: Wave) -> None:
            s = w.s
            addr = s[base] | (s[base + 1] & 0xFFFF) << 32
            stride, records = (s[base + 1] >> 16) & 0x3FFF, s[base + 2]
            boff = offset_of(w) & ~3
            values = w.mem.read_u32((addr + boff) & VA_MASK, n) \
                if stride or boff + 4 * n <= records else [
                    w.mem.read_u32((addr + boff + 4 * i) & VA_MASK)[0]
                    if boff + 4 * i < records else 0 for i in range(n)]
            s[dst:dst + n] = values
        return buffer_load

    def load(w: Wave) -> None:
        s = w.s
        addr = ((s[base] | s[base + 1] << 32) + offset_of(w)) & VA_MASK & ~3
        s[dst:dst + n] = w.mem.read_u32(addr, n)
    return load


# ----------------------------------------------------------------------------------------------
# DS

def compile_ds(inst: Instruction) -> StepFn | None:
    info, f = inst.info, inst.fields
    if f.get("gds"):
        return None
    name = info.mnemonic[3:]
    addr_reg = inst.operand("addr").value if inst.operand("addr") is not None else None
    d0 = inst.operand("data0")
    d1 = inst.operand("data1")
    vdst = inst.operand("vdst")
    offset = f["offset0"] | f["offset1"] << 8
    parts = name.split("_")
    op = parts[0]
    if op == "swizzle":
        return _ds_swizzle(addr_reg, offset, vdst.value)
    if op in ("append", "consume"):
        return _ds_append(offset, vdst.value, op == "append")
    if "src2" in parts or op in ("nop", "gws"):
        return None
    if op in ("write", "read", "write2", "read2", "write2st64", "read2st64"):
        size, signed = _width(parts[-1])
        dwords = max(1, size // 4)
        if op.endswith("2") or op.endswith("st64"):
            stride = size * (64 if op.endswith("st64") else 1)
            offsets = (f["offset0"] * stride, f["offset1"] * stride)
        else:
            offsets = (offset,)
        if op.startswith("read"):
            return _ds_read(addr_reg, offsets, size, signed, dwords, vdst.value)
        return _ds_write(addr_reg, offsets, size, dwords, (d0, d1))
    # atomics: <op>[_rtn]_<type>, wrxchg2[st64]_rtn_<type>
    typ = parts[-1]
    bits = 64 if typ.endswith("64") else 32
    rtn = "rtn" in parts
    if op in ("wrxchg2", "wrxchg2st64"):
        stride = (bits // 8) * (64 if op.endswith("st64") else 1)
        return _ds_atomic(addr_reg, (f["offset0"] * stride, f["offset1"] * stride), "swap",
                          bits, d0, d1, vdst, two=True)
    kind = _ds_atomic_kind(op, typ)
    return _ds_atomic(addr_reg, (offset,), kind, bits, d0, d1, vdst if rtn else None)


def _ds_read(addr_reg, offsets, size, signed, dwords, dst) -> StepFn:
    nwords = dwords * len(offsets)

    def ds_read(w: Wave) -> None:
        lanes = w.exec_lanes()
        base = w.v[addr_reg, lanes].astype(_I64)
        out = np.zeros((len(base), nwords), dtype=_U32)
        for k, off in enumerate(offsets):
            addrs = base + off
            ok = w.lds.in_range(addrs, size, w.s[M0])
            if size < 4:
                out[ok, 0] = _extend(w.lds.load(addrs[ok], size), size, signed)
            else:
                out[ok, k * dwords:(k + 1) * dwords] = w.lds.load(addrs[ok], size)
        _write_rows(w, dst, nwords, lanes, out)
    return ds_read


def _ds_write(addr_reg, offsets, size, dwords, data) -> StepFn:
    regs = [d.value for d in data if d is not None]

    def ds_write(w: Wave) -> None:
        lanes = w.exec_lanes()
        base = w.v[addr_reg, lanes].astype(_I64)
        for k, off in enumerate(offsets):
            addrs = base + off
            ok = w.lds.in_range(addrs, size, w.s[M0])
            values = w.v[regs[k]:regs[k] + dwords, lanes].T[ok]
            if size < 4:
                values = values[:, 0]
            w.lds.store(addrs[ok], values, size)
            if w.mem_log is not None:
                _log(w, "lds", addrs[ok], values, size)
    return ds_write


def _ds_swizzle(src: int, offset: int, dst: int) -> StepFn:
    """ds_swizzle_b32: lane permutation, no LDS access. offset[15] = 1: quad mode (lane
    4q + k reads lane 4q + offset[2k+1:2k]); else bit mode within each half-wave of 32:
    lane j reads ((j & and) | or) ^ xor with masks offset[4:0], [9:5], [14:10]."""
    lane = np.arange(64)
    if offset & 0x8000:
        sel = np.array([(offset >> (2 * k)) & 3 for k in range(4)])
        source = (lane & ~3) | sel[lane & 3]
    else:
        and_m, or_m, xor_m = offset & 31, (offset >> 5) & 31, (offset >> 10) & 31
        source = (lane & 32) | ((((lane & 31) & and_m) | or_m) ^ xor_m)

    def ds_swizzle(w: Wave) -> None:
        np.copyto(w.v[dst], w.v[src][source], where=w.exec_lanes())
    return ds_swizzle


def _ds_append(offset: int, dst: int, append: bool) -> StepFn:
    """ds_append / ds_consume: the dword counter at LDS address M0[15:0] + offset grows
    (shrinks) by the number of active lanes; every active lane receives the old value."""
    def ds_append(w: Wave) -> None:
        lanes = w.exec_lanes()
        a = (w.s[M0] & 0xFFFF) + offset
        if a + 4 > w.lds.size:
            old = 0
        else:
            old = int(w.lds.data[a:a + 4].view("<u4")[0])
            n = int(lanes.sum())
            new = (old + n if append else old - n) & M32
            w.lds.data[a:a + 4] = np.frombuffer(new.to_bytes(4, "little"), np.uint8)
            if w.mem_log is not None:
                w.mem_log.append(("lds", a, new.to_bytes(4, "little").hex()))
        np.copyto(w.v[dst], _U32(old), where=lanes)
    return ds_append


def _pair(w: Wave, reg: int | None, lane: int, bits: int) -> int:
    if reg is None:
        return 0
    value = int(w.v[reg, lane])
    return value | int(w.v[reg + 1, lane]) << 32 if bits == 64 else value


def _ds_atomic(addr_reg, offsets, kind, bits, d0, d1, vdst, two=False) -> StepFn:
    apply = ATOMIC_OPS[kind]
    size = bits // 8
    r0 = d0.value if d0 is not None else None
    r1 = d1.value if d1 is not None else None
    dst = vdst.value if vdst is not None else None
    dwords = bits // 32
    dtype = np.dtype("<u8") if bits == 64 else np.dtype("<u4")

    def ds_atomic(w: Wave) -> None:
        lanes = np.flatnonzero(w.exec_lanes())
        lds = w.lds
        limit = min(lds.size, w.s[M0])
        returned = np.zeros((len(offsets), len(lanes)), dtype=np.uint64)
        for j, lane in enumerate(lanes.tolist()):
            base = int(w.v[addr_reg, lane])
            for k, off in enumerate(offsets):
                a = base + off
                if a + size > limit:
                    continue
                old = int(lds.data[a:a + size].view(dtype)[0])
                data = _pair(w, r0 if not two or k == 0 else r1, lane, bits)
                new = apply(old, data, _pair(w, r1, lane, bits) if not two else 0, bits)
                lds.data[a:a + size] = np.frombuffer(new.to_bytes(size, "little"), np.uint8)
                returned[k, j] = old
                if w.mem_log is not None:
                    w.mem_log.append(("lds", a, new.to_bytes(size, "little").hex()))
        if dst is not None:
            rows = [returned[k] for k in range(len(offsets))]
            out = np.stack([(r >> np.uint64(32 * i)) & np.uint64(M32)
                            for r in rows for i in range(dwords)]).astype(_U32)
            w.v[dst:dst + len(out), lanes] = out
    return ds_atomic


# ----------------------------------------------------------------------------------------------
# MUBUF

def _buffer_addresses(inst: Instruction) -> Callable[[Wave, np.ndarray], tuple]:
    """-> fn(w, lanes, size) giving (uint64 addresses, in-range mask) of the active lanes.

    The address is the V# base plus the offsets, modulo 2**48 (:data:`VA_MASK`), as the
    hardware's 48-bit virtual address: clang folds a negative element offset into the base
    (``in[i - 1]`` can become base ``0xffffffffffff`` with ``vaddr`` pointing at ``in[i]``).

    Raw buffers (stride 0) are range-checked per access: an access not wholly below
    NUM_RECORDS - SOFFSET is out of range (loads read 0, stores and atomics do nothing).
    Structured buffers check the index against NUM_RECORDS; addr64 is never checked."""
    f = inst.fields
    offen, idxen, addr64, inst_offset = f["offen"], f["idxen"], f["addr64"], f["offset"]
    vaddr = inst.operand("vaddr").value if inst.operand("vaddr") is not None else None
    rsrc = inst.operand("srsrc").value
    read_soffset = scalar_reader(inst.operand("soffset"), None)

    def addresses(w: Wave, lanes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray | None]:
        s = w.s
        dw0, dw1, dw2, dw3 = s[rsrc], s[rsrc + 1], s[rsrc + 2], s[rsrc + 3]
        base = dw0 | (dw1 & 0xFFFF) << 32
        soffset = read_soffset(w)
        if addr64:
            v = w.v[vaddr, lanes].astype(_U64) | (w.v[vaddr + 1, lanes].astype(_U64) << _U64(32))
            return (v + _U64(base + inst_offset + soffset)) & _VA_MASK64, None
        n = int(lanes.sum()) if lanes.dtype == bool else len(lanes)
        stride = (dw1 >> 16) & 0x3FFF
        index = np.zeros(n, dtype=_I64)
        if idxen:
            index += w.v[vaddr, lanes]
        if dw3 >> 23 & 1:                                   # ADD_TID_ENABLE
            index += np.flatnonzero(lanes) if lanes.dtype == bool else lanes
        off = np.full(n, inst_offset, dtype=_I64)
        if offen:
            off += w.v[vaddr + idxen, lanes]
        if dw1 >> 31:                                       # SWIZZLE_ENABLE
            elem, istride = 2 << ((dw3 >> 19) & 3), 8 << ((dw3 >> 21) & 3)
            boff = (off % elem + elem * (index % istride)
                    + istride * ((index // istride) * stride + (off // elem) * elem))
        else:
            boff = index * stride + off
        ok = boff + size <= dw2 - soffset if stride == 0 else index < dw2
        return (boff + base + soffset).astype(_U64) & _VA_MASK64, ok
    return addresses


def compile_mubuf(inst: Instruction) -> StepFn | None:
    info = inst.info
    m = info.mnemonic
    if m in ("buffer_wbinvl1", "buffer_wbinvl1_sc"):
        return lambda w: None
    if inst.fields.get("lds") or inst.fields.get("tfe"):
        return None
    addresses = _buffer_addresses(inst)
    vdata = inst.operand("vdata").value
    if "format" in info.flags:
        return _buffer_format(inst, addresses, vdata)
    kind, _, suffix = m[len("buffer_"):].partition("_")
    if kind == "atomic":
        op, _, x2 = suffix.partition("_")
        return _buffer_atomic(addresses, _BUF_ATOMIC[op], 64 if x2 else 32, vdata,
                              inst.operand("vdata").count, bool(inst.fields["glc"]))
    size, signed = _width(suffix)
    dwords = max(1, size // 4)

    if kind == "load":
        def buffer_load(w: Wave) -> None:
            lanes = w.exec_lanes()
            addrs, ok = addresses(w, lanes, size)
            out = np.zeros((len(addrs), dwords), dtype=_U32)
            idx = np.flatnonzero(lanes)
            if ok is None:
                got = w.mem.load(addrs, size, idx)
                if size < 4:
                    out[:, 0] = _extend(got, size, signed)
                else:
                    out[:] = got
            else:
                got = w.mem.load(addrs[ok], size, idx[ok])
                if size < 4:
                    out[ok, 0] = _extend(got, size, signed)
                else:
                    out[ok] = got
            _write_rows(w, vdata, dwords, lanes, out)
        return buffer_load

    def buffer_store(w: Wave) -> None:
        lanes = w.exec_lanes()
        addrs, ok = addresses(w, lanes, size)
        values = w.v[vdata:vdata + dwords, lanes].T
        idx = np.flatnonzero(lanes)
        if ok is not None:
            addrs, values, idx = addrs[ok], values[ok], idx[ok]
        if size < 4:
            values = values[:, 0]
        w.mem.store(addrs, values, size, idx)
        if w.mem_log is not None:
            _log(w, "global", addrs, values, size)
    return buffer_store


def _buffer_atomic(addresses, kind, bits, vdata, count, glc) -> StepFn:
    apply = ATOMIC_OPS[kind]
    size = bits // 8
    dwords = bits // 32
    dtype = "<u8" if bits == 64 else "<u4"
    has_cmp = count == 2 * dwords

    def buffer_atomic(w: Wave) -> None:
        lanes = w.exec_lanes()
        idx = np.flatnonzero(lanes)
        addrs, ok = addresses(w, lanes, size)
        old_values = np.zeros(len(idx), dtype=np.uint64)
        mem = w.mem
        mem.check(addrs if ok is None else addrs[ok], size, "atomic",
                  idx if ok is None else idx[ok])
        for j, lane in enumerate(idx.tolist()):
            if ok is not None and not ok[j]:
                continue
            a = int(addrs[j])
            old = int(np.frombuffer(mem.read(a, size), dtype=dtype)[0])
            data = _pair(w, vdata, lane, bits)
            cmp = _pair(w, vdata + dwords, lane, bits) if has_cmp else 0
            new = apply(old, data, cmp, bits)
            mem.write(a, new.to_bytes(size, "little"))
            old_values[j] = old
            if w.mem_log is not None:
                w.mem_log.append(("global", a, new.to_bytes(size, "little").hex()))
        if glc:
            out = np.stack([(old_values >> np.uint64(32 * i)) & np.uint64(M32)
                            for i in range(dwords)]).astype(_U32)
            w.v[vdata:vdata + dwords, idx] = out
    return buffer_atomic


# ----------------------------------------------------------------------------------------------
# typed (format) buffer access: MTBUF takes DFMT/NFMT from the instruction, MUBUF
# buffer_*_format_* from the V# (word 3: NUM_FORMAT [14:12], DATA_FORMAT [18:15])

#: DATA_FORMAT -> (bits per component, components). The packed formats 10_11_11, 11_11_10,
#: 10_10_10_2 and 2_10_10_10 (6-9) are not implemented.
DATA_FORMATS = {1: (8, 1), 2: (16, 1), 3: (8, 2), 4: (32, 1), 5: (16, 2), 10: (8, 4),
                11: (32, 2), 12: (16, 4), 13: (32, 3), 14: (32, 4)}
_NFMT = {0: "unorm", 1: "snorm", 2: "uscaled", 3: "sscaled", 4: "uint", 5: "sint", 7: "float"}
_UINTS = {8: np.uint8, 16: np.uint16, 32: np.uint32}


class FormatError(EmulatorError):
    """A typed buffer access with a data/number format the emulator does not implement."""


def _format_of(dfmt: int, nfmt: int) -> tuple[int, int, str]:
    if dfmt not in DATA_FORMATS or nfmt not in _NFMT or (nfmt == 7 and dfmt in (1, 3, 10)):
        raise FormatError(f"buffer data format {dfmt} / number format {nfmt} is not "
                          f"supported by the emulator")
    bits, count = DATA_FORMATS[dfmt]
    return bits, count, _NFMT[nfmt]


def decode_components(raw: np.ndarray, bits: int, nfmt: str) -> np.ndarray:
    """Memory components (lanes, n) of ``bits`` each -> 32-bit register values."""
    c = raw.astype(np.int64)
    signed = np.where(c >= 1 << (bits - 1), c - (1 << bits), c) if bits < 64 else c
    if nfmt == "uint":
        return c.astype(_U32)
    if nfmt == "sint":
        return (signed & M32).astype(_U32)
    if nfmt == "float":
        if bits == 16:
            return raw.astype(np.uint16).view(np.float16).astype(np.float32).view(_U32)
        return raw.astype(_U32)
    if nfmt == "unorm":
        f = c / float((1 << bits) - 1)
    elif nfmt == "snorm":
        f = np.maximum(signed / float((1 << (bits - 1)) - 1), -1.0)
    elif nfmt == "uscaled":
        f = c.astype(np.float64)
    else:
        f = signed.astype(np.float64)
    return f.astype(np.float32).view(_U32)


def encode_components(values: np.ndarray, bits: int, nfmt: str) -> np.ndarray:
    """32-bit register values (lanes, n) -> memory components of ``bits`` each."""
    mask = (1 << bits) - 1
    if nfmt in ("uint", "sint"):
        return (values.astype(np.int64) & mask).astype(_UINTS[bits])
    f = values.astype(_U32).view(np.float32).astype(np.float64)
    if nfmt == "float":
        return f.astype(np.float16).view(np.uint16) if bits == 16 else values.astype(_U32)
    f = np.nan_to_num(f, nan=0.0)
    if nfmt == "unorm":
        c = np.rint(np.clip(f, 0.0, 1.0) * mask)
    elif nfmt == "snorm":
        c = np.rint(np.clip(f, -1.0, 1.0) * ((1 << (bits - 1)) - 1))
    elif nfmt == "uscaled":
        c = np.trunc(np.clip(f, 0, mask))
    else:
        c = np.trunc(np.clip(f, -(1 << (bits - 1)), (1 << (bits - 1)) - 1))
    return (c.astype(np.int64) & mask).astype(_UINTS[bits])


def _buffer_format(inst: Instruction, addresses, vdata: int) -> StepFn:
    info, f = inst.info, inst.fields
    wanted = (info.dst or info.src1).dwords
    load = "load" in info.flags
    rsrc = inst.operand("srsrc").value
    fixed = (f["dfmt"], f["nfmt"]) if "dfmt" in f else None

    def buffer_format(w: Wave) -> None:
        dfmt, nfmt = fixed or ((w.s[rsrc + 3] >> 15) & 0xF, (w.s[rsrc + 3] >> 12) & 7)
        bits, count, kind = _format_of(dfmt, nfmt)
        size = bits * count // 8
        n = min(wanted, count)
        lanes = w.exec_lanes()
        addrs, ok = addresses(w, lanes, size)
        if ok is None:
            ok = np.ones(len(addrs), dtype=bool)
        if load:
            out = np.zeros((len(addrs), wanted), dtype=_U32)
            if wanted == 4 and count < 4:                 # missing W reads as 1
                out[:, 3] = 0x3F800000 if kind in ("float", "unorm", "snorm", "uscaled",
                                                   "sscaled") else 1
            idx = np.flatnonzero(lanes)
            raw = w.mem.load(addrs[ok], size, idx[ok]) if ok.any() else np.zeros((0, 1), _U32)
            comps = np.ascontiguousarray(raw).view(np.uint8).reshape(-1, size).view(
                _UINTS[bits])
            out[ok, :n] = decode_components(comps[:, :n], bits, kind)
            _write_rows(w, vdata, wanted, lanes, out)
            return
        values = w.v[vdata:vdata + n, lanes].T[ok]
        comps = encode_components(values, bits, kind)
        nbytes = n * bits // 8
        data = np.ascontiguousarray(comps).view(np.uint8).reshape(len(values), nbytes)
        padded = np.zeros((len(values), -(-nbytes // 4) * 4), dtype=np.uint8)
        padded[:, :nbytes] = data
        targets, idx = addrs[ok], np.flatnonzero(lanes)[ok]
        if nbytes % 4 == 0:
            w.mem.store(targets, padded.view(_U32), nbytes, idx)
        else:
            w.mem.check(targets, nbytes, "store", idx)
            for k in range(nbytes):                       # 1-, 2- or 6-byte element
                w.mem.store(targets + _U64(k), padded[:, k].astype(_U32), 1, idx)
        if w.mem_log is not None:
            _log(w, "global", targets, padded, nbytes)
    return buffer_format
