"""The register description language (:mod:`gpgpu_hdl.soc.registers`): the validation of
descriptions and the bit helpers. The placed map's behaviour on the bus is tested in
``test_axil_registers.py``."""

from __future__ import annotations

import pytest

from gpgpu_hdl.soc.registers import (
    Block, Field, Register, RegisterMap, RegMapError, Rom, Window, bit_mask, bit_range,
    pow2_ceil,
)


def _map(*items, windows=(), **kw):
    return RegisterMap([Block("A", 0, list(items))], windows=windows, **kw)


@pytest.mark.parametrize("make, message", [
    (lambda: Field("X", 1, "rw"), "field name must be lower case"),
    (lambda: Register("a", [Field("x", 1, "rw")]), "register name must be upper case"),
    (lambda: Field("x", 1, "wo"), "access must be one of"),
    (lambda: Field("x", 33, "pulse"), "width must be an integer from 1 to 32"),
    (lambda: Field("x", 65, "ro"), "width must be an integer from 1 to 64"),
    (lambda: Field("x", 4, "rw", reset=16), "does not fit 4 bits"),
    (lambda: Field("x", 4, "ro", reset=1), "only rw and const fields have a reset"),
    (lambda: Register("R", []), "has no fields"),
    (lambda: Register("R", [Field("x", 20, "rw"), Field("y", 20, "rw")]),
     "beyond the 32 bits"),
    (lambda: Register("R", [Field("x", 8, "rw"), Field("y", 8, "rw", lsb=4)]),
     r"field y \[11:4\] overlaps field x \[7:0\]"),
    (lambda: Register("R", [Field("x", 1, "rw"), Field("x", 1, "ro")]), "duplicate field name"),
    (lambda: Register("R", [Field("x", 40, "ro"), Field("y", 1, "ro")]), "must be alone"),
    (lambda: _map(Register.single("R"), Register.single("R")), "duplicate name R"),
    (lambda: _map(Register.single("C", 64), Register.single("C_LO")), "duplicate name C_LO"),
    (lambda: RegisterMap([Block("A", 0, [Register.single("R"), Register.single("S")]),
                          Block("B", 4, [Register.single("T")])]),
     r"block A \[0x0, 0x8\) overlaps block B \[0x4, 0x8\)"),
    (lambda: RegisterMap([Block("A", 0, [Register.single("R")]),
                          Block("A", 8, [Register.single("S")])]), "duplicate block name A"),
    (lambda: _map(*[Register.single(f"R{i}") for i in range(10)],
                  windows=[Window("w", 0x20, 0x20)]), "overlaps window w"),
    (lambda: Window("w", 0x10, 0x20), "offset must be a multiple of 0x20"),
    (lambda: Window("w", 0x0, 6), "size must be a positive multiple of 4"),
    (lambda: _map(Register.single("R"), addr_width=1), "addr_width must be at least 2"),
    (lambda: _map(Register("R", [Field("x", 1, "irq")])), "has no irq sources"),
    (lambda: _map(Register("R", [Field("x", 1, "ro"), Field("e", 1, "rw")]),
                  irq=[("R.x", "R.e")]), "must be a w1c field"),
    (lambda: _map(Register("R", [Field("x", 1, "w1c")]), irq=[("R.x", "R.nope")]),
     "no field nope"),
    (lambda: _map(Register("A_B", [Field("c", 1, "rw")]), Register("A", [Field("b_c", 1, "rw")])),
     "port name a_b_c"),
    (lambda: _map(Register.single("BUS")), "port name bus"),
    (lambda: Rom("T", [1 << 32]), "not a 32-bit value"),
])
def test_validation_errors(make, message):
    with pytest.raises(RegMapError, match=message):
        make()


def test_bit_helpers():
    assert [bit_mask(w) for w in (1, 4, 32)] == [1, 0xF, 0xFFFF_FFFF]
    assert [pow2_ceil(n) for n in (0, 1, 2, 3, 4, 5, 0x1_0001)] == [1, 1, 2, 4, 4, 8, 0x2_0000]
    assert bit_range(3, 1) == "[3]" and bit_range(4, 8) == "[11:4]"
