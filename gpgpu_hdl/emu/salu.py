"""Scalar ALU semantics (SOP1, SOP2, SOPC, SOPK) on Python integers.

Each entry of :data:`SALU_OPS` maps a table mnemonic to ``fn(a, b, scc, bits) -> (d, scc)``:
``a``/``b`` are the source values (unsigned, already masked to their width; ``b`` is the
SIMM16 for SOPK), ``scc`` the current SCC, ``bits`` the width of the operation (32 or 64).
The function returns the destination value (``None`` for compares, which only set SCC) and
the new SCC (``None`` when the instruction leaves SCC alone). SCC rules follow
``shared/reference/si_isa.md`` section 6.1.

Control-flow and state instructions (``s_getpc``, ``s_setpc``, the ``*_saveexec`` family,
``s_movrel*``, ``s_getreg``/``s_setreg``, SOPP) are executed by the program compiler, which
uses :data:`SAVEEXEC_OPS` for the saveexec logic.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SALU_OPS", "SAVEEXEC_OPS", "sext"]

SaluFn = Callable[[int, int, int, int], tuple[int | None, int | None]]
SALU_OPS: dict[str, SaluFn] = {}

M32 = 0xFFFFFFFF


def sext(value: int, bits: int) -> int:
    """Two's-complement value of the low ``bits`` of ``value``."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _op(*names: str):
    def register(fn: SaluFn) -> SaluFn:
        for name in names:
            SALU_OPS[name] = fn
        return fn
    return register


def _nz(d: int) -> tuple[int, int]:
    return d, int(d != 0)


# -- SOP2 arithmetic -----------------------------------------------------------------------

@_op("s_add_u32")
def _add_u32(a, b, scc, bits):
    r = a + b
    return r & M32, r >> 32


@_op("s_addc_u32")
def _addc_u32(a, b, scc, bits):
    r = a + b + scc
    return r & M32, r >> 32


@_op("s_sub_u32")
def _sub_u32(a, b, scc, bits):
    return (a - b) & M32, int(b > a)


@_op("s_subb_u32")
def _subb_u32(a, b, scc, bits):
    return (a - b - scc) & M32, int(b + scc > a)


def _overflow(exact: int) -> int:
    return int(not -(1 << 31) <= exact < 1 << 31)


@_op("s_add_i32", "s_addk_i32")
def _add_i32(a, b, scc, bits):
    exact = sext(a, 32) + sext(b, 32)
    return exact & M32, _overflow(exact)


@_op("s_sub_i32")
def _sub_i32(a, b, scc, bits):
    exact = sext(a, 32) - sext(b, 32)
    return exact & M32, _overflow(exact)


@_op("s_min_i32")
def _min_i32(a, b, scc, bits):
    lt = sext(a, 32) < sext(b, 32)
    return (a if lt else b), int(lt)


@_op("s_max_i32")
def _max_i32(a, b, scc, bits):
    gt = sext(a, 32) > sext(b, 32)
    return (a if gt else b), int(gt)


@_op("s_min_u32")
def _min_u32(a, b, scc, bits):
    return (a if a < b else b), int(a < b)


@_op("s_max_u32")
def _max_u32(a, b, scc, bits):
    return (a if a > b else b), int(a > b)


@_op("s_cselect_b32", "s_cselect_b64")
def _cselect(a, b, scc, bits):
    return (a if scc else b), None


@_op("s_and_b32", "s_and_b64")
def _and(a, b, scc, bits):
    return _nz(a & b)


@_op("s_or_b32", "s_or_b64")
def _or(a, b, scc, bits):
    return _nz(a | b)


@_op("s_xor_b32", "s_xor_b64")
def _xor(a, b, scc, bits):
    return _nz(a ^ b)


@_op("s_andn2_b32", "s_andn2_b64")
def _andn2(a, b, scc, bits):
    return _nz(a & ~b & ((1 << bits) - 1))


@_op("s_orn2_b32", "s_orn2_b64")
def _orn2(a, b, scc, bits):
    return _nz((a | ~b) & ((1 << bits) - 1))


@_op("s_nand_b32", "s_nand_b64")
def _nand(a, b, scc, bits):
    return _nz(~(a & b) & ((1 << bits) - 1))


@_op("s_nor_b32", "s_nor_b64")
def _nor(a, b, scc, bits):
    return _nz(~(a | b) & ((1 << bits) - 1))


@_op("s_xnor_b32", "s_xnor_b64")
def _xnor(a, b, scc, bits):
    return _nz(~(a ^ b) & ((1 << bits) - 1))


@_op("s_lshl_b32", "s_lshl_b64")
def _lshl(a, b, scc, bits):
    return _nz((a << (b & (bits - 1))) & ((1 << bits) - 1))


@_op("s_lshr_b32", "s_lshr_b64")
def _lshr(a, b, scc, bits):
    return _nz(a >> (b & (bits - 1)))


@_op("s_ashr_i32", "s_ashr_i64")
def _ashr(a, b, scc, bits):
    return _nz((sext(a, bits) >> (b & (bits - 1))) & ((1 << bits) - 1))


@_op("s_bfm_b32", "s_bfm_b64")
def _bfm(a, b, scc, bits):
    # ((1 << S0[4:0]) - 1) << S1[4:0], or with [5:0] for s_bfm_b64 (so at most 63 ones);
    # the bits shifted past the top are lost
    return (((1 << (a & (bits - 1))) - 1) << (b & (bits - 1))) & ((1 << bits) - 1), None


@_op("s_mul_i32", "s_mulk_i32")
def _mul(a, b, scc, bits):
    return (sext(a, 32) * sext(b, 32)) & M32, None


def _bfe(a: int, b: int, bits: int, signed: bool) -> tuple[int, int]:
    offset = b & (bits - 1)
    width = (b >> 16) & 0x7F
    if width == 0:
        return 0, 0
    field = (a >> offset) & ((1 << width) - 1)
    if signed and width < bits:
        field = sext(field, width) & ((1 << bits) - 1)
    return _nz(field & ((1 << bits) - 1))


@_op("s_bfe_u32", "s_bfe_u64")
def _bfe_u(a, b, scc, bits):
    return _bfe(a, b, bits, False)


@_op("s_bfe_i32", "s_bfe_i64")
def _bfe_i(a, b, scc, bits):
    return _bfe(a, b, bits, True)


@_op("s_absdiff_i32")
def _absdiff(a, b, scc, bits):
    return _nz(abs(sext(a, 32) - sext(b, 32)) & M32)


# -- SOP1 ---------------------------------------------------------------------------------

@_op("s_mov_b32", "s_mov_b64")
def _mov(a, b, scc, bits):
    return a, None


@_op("s_cmov_b32", "s_cmov_b64")
def _cmov(a, b, scc, bits):
    return (a if scc else None), None


@_op("s_not_b32", "s_not_b64")
def _not(a, b, scc, bits):
    return _nz(~a & ((1 << bits) - 1))


@_op("s_wqm_b32", "s_wqm_b64")
def _wqm(a, b, scc, bits):
    d = 0
    for q in range(0, bits, 4):
        if (a >> q) & 0xF:
            d |= 0xF << q
    return _nz(d)


@_op("s_brev_b32", "s_brev_b64")
def _brev(a, b, scc, bits):
    return int(f"{a:0{bits}b}"[::-1], 2), None


@_op("s_bcnt0_i32_b32", "s_bcnt0_i32_b64")
def _bcnt0(a, b, scc, bits):
    return _nz(bits - bin(a).count("1"))


@_op("s_bcnt1_i32_b32", "s_bcnt1_i32_b64")
def _bcnt1(a, b, scc, bits):
    return _nz(bin(a).count("1"))


@_op("s_ff0_i32_b32", "s_ff0_i32_b64")
def _ff0(a, b, scc, bits):
    inv = ~a & ((1 << bits) - 1)
    return ((inv & -inv).bit_length() - 1) & M32 if inv else M32, None


@_op("s_ff1_i32_b32", "s_ff1_i32_b64")
def _ff1(a, b, scc, bits):
    return ((a & -a).bit_length() - 1) & M32 if a else M32, None


@_op("s_flbit_i32_b32", "s_flbit_i32_b64")
def _flbit(a, b, scc, bits):
    return (bits - a.bit_length()) if a else M32, None


@_op("s_flbit_i32", "s_flbit_i32_i64")
def _flbit_signed(a, b, scc, bits):
    v = a ^ ((1 << bits) - 1) if a >> (bits - 1) else a
    return (bits - v.bit_length()) if v else M32, None


@_op("s_sext_i32_i8")
def _sext8(a, b, scc, bits):
    return sext(a, 8) & M32, None


@_op("s_sext_i32_i16")
def _sext16(a, b, scc, bits):
    return sext(a, 16) & M32, None


@_op("s_quadmask_b32", "s_quadmask_b64")
def _quadmask(a, b, scc, bits):
    d = 0
    for q in range(bits // 4):
        if (a >> (4 * q)) & 0xF:
            d |= 1 << q
    return _nz(d)


@_op("s_abs_i32")
def _abs(a, b, scc, bits):
    return _nz(abs(sext(a, 32)) & M32)


# bitset: D.bit[S0[4:0] or [5:0]] = 0/1 (the destination is also read)
@_op("s_bitset0_b32", "s_bitset0_b64")
def _bitset0(a, b, scc, bits):
    return b & ~(1 << (a & (bits - 1))) & ((1 << bits) - 1), None


@_op("s_bitset1_b32", "s_bitset1_b64")
def _bitset1(a, b, scc, bits):
    return b | (1 << (a & (bits - 1))), None


# -- SOPC / SOPK compares ------------------------------------------------------------------

def _cmp(pred: Callable[[int, int], bool], signed: bool) -> SaluFn:
    def fn(a, b, scc, bits):
        if signed:
            a, b = sext(a, 32), sext(b, 32)
        return None, int(pred(a, b))
    return fn


_PREDICATES = {"eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "gt": lambda a, b: a > b,
               "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}
for _cond, _pred in _PREDICATES.items():
    for _t in ("i32", "u32"):
        SALU_OPS[f"s_cmp_{_cond}_{_t}"] = _cmp(_pred, _t == "i32")
        SALU_OPS[f"s_cmpk_{_cond}_{_t}"] = _cmp(_pred, _t == "i32")


@_op("s_bitcmp0_b32", "s_bitcmp0_b64")
def _bitcmp0(a, b, scc, bits):
    return None, int(not (a >> (b & (bits - 1))) & 1)


@_op("s_bitcmp1_b32", "s_bitcmp1_b64")
def _bitcmp1(a, b, scc, bits):
    return None, (a >> (b & (bits - 1))) & 1


@_op("s_movk_i32")
def _movk(a, b, scc, bits):
    return sext(b, 16) & M32, None


@_op("s_cmovk_i32")
def _cmovk(a, b, scc, bits):
    return (sext(b, 16) & M32 if scc else None), None


# -- saveexec -------------------------------------------------------------------------------

M64 = (1 << 64) - 1
#: new EXEC from (S0, EXEC) for each ``s_*_saveexec_b64``.
SAVEEXEC_OPS: dict[str, Callable[[int, int], int]] = {
    "s_and_saveexec_b64": lambda s, e: s & e,
    "s_or_saveexec_b64": lambda s, e: s | e,
    "s_xor_saveexec_b64": lambda s, e: s ^ e,
    "s_andn2_saveexec_b64": lambda s, e: s & ~e & M64,
    "s_orn2_saveexec_b64": lambda s, e: (s | ~e) & M64,
    "s_nand_saveexec_b64": lambda s, e: ~(s & e) & M64,
    "s_nor_saveexec_b64": lambda s, e: ~(s | e) & M64,
    "s_xnor_saveexec_b64": lambda s, e: ~(s ^ e) & M64,
}
