"""A generated program as data: C types, expressions and statements, the kernel's buffers and
launch, their rendering to OpenCL C 1.2, and the rule that fills the input buffers.

The generator (:mod:`.generate`) builds a :class:`Program`; the reducer (:mod:`.reduce`)
rewrites one. Every node renders to well-defined OpenCL C by construction, so that any
rewrite that keeps the types keeps the program free of undefined behaviour:

* signed ``+ - *`` and negation are done in unsigned arithmetic (``wrap``) or through the
  csmith-style checked helpers of :func:`prelude` (``checked``: the operation when it cannot
  overflow, the left operand otherwise); ``/`` and ``%`` go through helpers that return the
  dividend for a zero divisor and for ``MIN / -1``;
* shift amounts are masked to the promoted width; left shifts happen in unsigned arithmetic;
* every buffer and array index is reduced modulo the buffer's length (``(uint)(i) % n``);
* float values are integers (or 0, infinities, NaN) by construction, and only operations
  whose result IEEE 754 / OpenCL specifies exactly are used (see :data:`FLOAT_OPS`), so no
  denormal ever appears and floats are compared with 0 ulp; ``fmin``/``fmax``-like results get
  ``+ 0.0f`` (the sign of a zero result is unspecified) and the NaN-sensitive observers
  (``signbit``, ``copysign``'s sign operand, ``as_int``) are guarded with ``isnan``;
* float-to-integer conversions are the saturating ``convert_*_sat*`` ones, of a number in
  the target's range (NaN made 0, the rest clamped: see :func:`prelude`).

The one implementation-defined behaviour relied on is C99's: a narrowing conversion to a
signed type keeps the low bits (what clang does on every target), and ``>>`` of a negative
value is arithmetic.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "CType", "INT_TYPES", "FLOAT", "INT", "UINT", "TYPES", "Expr", "Const", "Var", "Call", "Load",
    "Stmt", "Assign", "If", "Loop", "Switch", "SwitchCase", "Jump", "Store", "Atomic",
    "LocalPhase", "Buffer", "Program", "render", "prelude", "soft_division", "make_inputs",
    "fill_buffers", "walk_exprs",
    "INPUT_RULE",
]


# --- types -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CType:
    """An OpenCL C scalar type."""

    name: str
    bits: int
    signed: bool
    is_float: bool = False

    def __str__(self) -> str:
        return self.name

    @property
    def dtype(self) -> np.dtype:
        if self.is_float:
            return np.dtype(np.float32)
        return np.dtype(f"{'i' if self.signed else 'u'}{self.bits // 8}")

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def unsigned(self) -> CType:
        return TYPES["u" + self.name] if self.signed else self

    @property
    def as_signed(self) -> CType:
        return self if self.signed else TYPES[self.name[1:]]

    @property
    def wide(self) -> CType:
        """The unsigned type ``+ - * <<`` are done in: ``uint`` up to 32 bits, else ``ulong``."""
        return TYPES["ulong"] if self.bits == 64 else TYPES["uint"]

    @property
    def shift_mask(self) -> int:
        """Shift amounts are masked to the width after integer promotion."""
        return 63 if self.bits == 64 else 31

    def wrap(self, value: int) -> int:
        """``value`` reduced to this (integer) type, two's complement."""
        value &= (1 << self.bits) - 1
        return value - (1 << self.bits) if self.signed and value > self.hi else value


INT_TYPES = tuple(CType(n, b, s) for b, base in ((8, "char"), (16, "short"), (32, "int"),
                                                  (64, "long"))
                  for n, s in ((base, True), ("u" + base, False)))
FLOAT = CType("float", 32, True, True)
TYPES = {t.name: t for t in (*INT_TYPES, FLOAT)}
INT, UINT = TYPES["int"], TYPES["uint"]


# --- expressions -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Expr:
    """An expression of exactly ``type`` (the rendering casts where C would promote)."""

    type: CType


@dataclass(frozen=True)
class Const(Expr):
    value: int | float = 0


@dataclass(frozen=True)
class Var(Expr):
    """A variable, one of the kernel's ids (``gid``, ``lid``, ``grp``) or a loop counter."""

    name: str = ""


@dataclass(frozen=True)
class Call(Expr):
    """An operator or built-in (``op`` keys :data:`INT_OPS` / :data:`FLOAT_OPS`); ``attr`` is
    a fixed parameter of the operation (a rounding scale, a conversion mode)."""

    op: str = ""
    args: tuple[Expr, ...] = ()
    attr: str = ""


@dataclass(frozen=True)
class Load(Expr):
    """``buffer[(uint)(index) % length]``; ``per_item`` adds the work-item's own region
    (``gid * length``) for the per-item scratch buffer."""

    buffer: str = ""
    length: int = 1
    index: Expr | None = None
    per_item: bool = False


def _lit(t: CType, v: int | float) -> str:
    if t.is_float:
        v = float(v)
        if v != v:
            return "NAN"
        if v in (float("inf"), float("-inf")):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        text = f"{v:.1f}f" if v == int(v) and abs(v) < 1 << 24 else f"{v.hex()}f"
        return f"({text})" if text.startswith("-") else text
    v = int(v)
    if t.name == "int":
        return "(-2147483647 - 1)" if v == t.lo else f"({v})" if v < 0 else str(v)
    if t.name == "uint":
        return f"{v}u"
    if t.name == "long":
        return "(-9223372036854775807L - 1L)" if v == t.lo else f"({v}L)" if v < 0 else f"{v}L"
    if t.name == "ulong":
        return f"{v}UL"
    return f"(({t}){v})"


def _mode(attr: str) -> str:
    return f"_{attr}" if attr else ""


def _in_range(t: CType, a: str, c: Call) -> str:
    """A float operand of a saturating conversion to ``t``, made a number that converts
    without overflow (:func:`prelude`'s ``fz_fin_<t>``: NaN becomes 0, the rest is clamped
    to the floats that fit ``t``). libclc-19 converts before it saturates, so a NaN or
    out-of-range value that clang can see becomes poison and the kernel undefined."""
    return f"fz_fin_{t}({a})" if c.args[0].type.is_float else a


# Each entry renders a Call: f(type, rendered args, call) -> text of exactly that type.
def _wrap(sym: str):
    return lambda t, a, c: f"(({t})(({t.wide})({a[0]}) {sym} ({t.wide})({a[1]})))"


def _checked(name: str):
    return lambda t, a, c: f"fz_{name}_{t}({a[0]}, {a[1]})"


def _bin(sym: str):
    return lambda t, a, c: f"(({t})(({a[0]}) {sym} ({a[1]})))"


def _cmp(sym: str):
    return lambda t, a, c: f"(({t})(({a[0]}) {sym} ({a[1]})))"


def _builtin(name: str):
    return lambda t, a, c: f"(({t}){name}({', '.join(a)}))"


def _mul24(t: CType, a: list[str], c: Call) -> str:
    if t.signed:
        x, y = f"clamp({a[0]}, -8388608, 8388607)", f"clamp({a[1]}, -128, 127)"
        if c.op == "mad24":
            return f"mad24({x}, {y}, clamp({a[2]}, -32768, 32767))"
        return f"mul24({x}, {y})"
    x, y = f"(({a[0]}) & 0xFFFFFFu)", f"(({a[1]}) & 0xFFFFFFu)"
    return f"mad24({x}, {y}, {a[2]})" if c.op == "mad24" else f"mul24({x}, {y})"


def _select(t: CType, a: list[str], _: Call) -> str:
    # select(a, b, c) for scalars is c ? b : a, with c of the signed type of a's width
    ct = INT if t.is_float else t.as_signed
    return f"select({a[0]}, {a[1]}, ({ct})({a[2]}))"


INT_OPS: dict[str, Any] = {
    "add": _wrap("+"), "sub": _wrap("-"), "mul": _wrap("*"),
    "addc": _checked("add"), "subc": _checked("sub"), "mulc": _checked("mul"),
    "div": _checked("div"), "mod": _checked("mod"),
    "and": _bin("&"), "or": _bin("|"), "xor": _bin("^"),
    "shl": lambda t, a, c: (f"(({t})(({t.wide})({a[0]}) << (({a[1]}) & {t.shift_mask})))"),
    "shr": lambda t, a, c: f"(({t})(({a[0]}) >> (({a[1]}) & {t.shift_mask})))",
    "neg": lambda t, a, c: f"(({t})(-({t.wide})({a[0]})))",
    "not": lambda t, a, c: f"(({t})(~({a[0]})))",
    "lnot": lambda t, a, c: f"(({t})(!({a[0]})))",
    "land": _cmp("&&"), "lor": _cmp("||"),
    "lt": _cmp("<"), "le": _cmp("<="), "gt": _cmp(">"), "ge": _cmp(">="), "eq": _cmp("=="),
    "ne": _cmp("!="),
    "tern": lambda t, a, c: f"(({t})(({a[0]}) ? ({a[1]}) : ({a[2]})))",
    "cast": lambda t, a, c: f"(({t})({a[0]}))",
    "sat": lambda t, a, c: f"convert_{t}_sat{_mode(c.attr)}({_in_range(t, a[0], c)})",
    "abs": _builtin("abs"), "abs_diff": _builtin("abs_diff"),
    "add_sat": _builtin("add_sat"), "sub_sat": _builtin("sub_sat"),
    "hadd": _builtin("hadd"), "rhadd": _builtin("rhadd"), "mul_hi": _builtin("mul_hi"),
    "min": _builtin("min"), "max": _builtin("max"), "rotate": _builtin("rotate"),
    "clz": _builtin("clz"), "popcount": _builtin("popcount"),
    "mad_sat": _builtin("mad_sat"), "bitselect": _builtin("bitselect"),
    "upsample": _builtin("upsample"),
    "clamp": lambda t, a, c: (f"clamp({a[0]}, min({a[1]}, {a[2]}), max({a[1]}, {a[2]}))"),
    "mul24": _mul24, "mad24": _mul24, "select": _select,
    # float observers with an integer result
    "flt": _cmp("<"), "fle": _cmp("<="), "feq": _cmp("=="), "fne": _cmp("!="),
    "isnan": _builtin("isnan"), "isinf": _builtin("isinf"), "isfinite": _builtin("isfinite"),
    "signbit": lambda t, a, c: f"(({t})(isnan({a[0]}) ? 0 : signbit({a[0]})))",
    "as_int": lambda t, a, c: f"(({t})(isnan({a[0]}) ? 0x7FC00000 : as_int({a[0]})))",
}

#: Float operations, all exactly specified on integer-valued operands: ``+ - *`` and ``fma``
#: round once (correctly); the rounding functions see ``x * 2**-k`` (exact, at least 2**-3
#: when not 0) and return integers; conversions from integers round as their mode says;
#: ``fmin``-like results get ``+ 0.0f`` to make the sign of a zero result specified.
FLOAT_OPS: dict[str, Any] = {
    "fadd": _bin("+"), "fsub": _bin("-"), "fmul": _bin("*"),
    "fneg": lambda t, a, c: f"(-({a[0]}))",
    "fma": lambda t, a, c: f"fma({a[0]}, {a[1]}, {a[2]})",
    "fabs": lambda t, a, c: f"fabs({a[0]})",
    "fmod": lambda t, a, c: f"fmod({a[0]}, {a[1]})",
    "fdim": lambda t, a, c: f"fdim({a[0]}, {a[1]})",
    "fmin": lambda t, a, c: f"(fmin({a[0]}, {a[1]}) + 0.0f)",
    "fmax": lambda t, a, c: f"(fmax({a[0]}, {a[1]}) + 0.0f)",
    "maxmag": lambda t, a, c: f"(maxmag({a[0]}, {a[1]}) + 0.0f)",
    "minmag": lambda t, a, c: f"(minmag({a[0]}, {a[1]}) + 0.0f)",
    "copysign": lambda t, a, c: f"copysign({a[0]}, (isnan({a[1]}) ? 1.0f : ({a[1]})))",
    "ldexp": lambda t, a, c: f"ldexp({a[0]}, (int)(({a[1]}) & 15))",
    "round": lambda t, a, c: f"{c.attr.split(':')[0]}(({a[0]}) * {c.attr.split(':')[1]}f)",
    "cvt": lambda t, a, c: f"convert_float{_mode(c.attr)}({a[0]})",
    "ftern": lambda t, a, c: f"(({a[0]}) ? ({a[1]}) : ({a[2]}))",
    "fselect": _select,
}


def render_expr(e: Expr) -> str:
    if isinstance(e, Const):
        return _lit(e.type, e.value)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Load):
        idx = f"(uint)({render_expr(e.index)}) % {e.length}u"
        if e.per_item:
            idx = f"gid * {e.length}u + {idx}"
        return f"{e.buffer}[{idx}]"
    if isinstance(e, Call):
        table = FLOAT_OPS if e.op in FLOAT_OPS else INT_OPS
        return table[e.op](e.type, [render_expr(a) for a in e.args], e)
    raise TypeError(f"not an expression: {e!r}")


# --- statements ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stmt:
    """A statement."""


@dataclass(frozen=True)
class Assign(Stmt):
    """``var = value;`` (``index``: an element of the private array ``var``)."""

    var: str
    value: Expr
    index: Expr | None = None
    length: int = 0


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class Loop(Stmt):
    """A bounded loop over the counter ``var`` (``uint``, from 0): at most ``limit`` trips.

    ``bound`` None: exactly ``limit`` trips (uniform when no break/continue leaves it early);
    else ``min((uint)(bound), limit)`` evaluated before each trip. ``kind``: ``for``, ``while``
    (the counter counts before the body) or ``do``."""

    var: str
    limit: int
    body: tuple[Stmt, ...]
    bound: Expr | None = None
    kind: str = "for"


@dataclass(frozen=True)
class SwitchCase:
    labels: tuple[int, ...]
    body: tuple[Stmt, ...]
    brk: bool = True


@dataclass(frozen=True)
class Switch(Stmt):
    """``switch ((int)(value) % modulus)``; ``cases`` may fall through (``brk`` False)."""

    value: Expr
    modulus: int
    cases: tuple[SwitchCase, ...]
    default: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class Jump(Stmt):
    """``if (cond) break;`` or ``continue;`` (``what``)."""

    what: str
    cond: Expr


@dataclass(frozen=True)
class Store(Stmt):
    """``scr[gid * length + (uint)(index) % length] = value;`` (the work-item's own slots)."""

    buffer: str
    length: int
    index: Expr
    value: Expr


@dataclass(frozen=True)
class Atomic(Stmt):
    """``atomic_<op>(&counter[slot], value)`` on the global (``gcnt``) or local (``lcnt``)
    counters; the returned value is not used, so the final counts do not depend on order."""

    op: str
    space: str
    slot: int
    value: Expr | None = None


@dataclass(frozen=True)
class LocalPhase(Stmt):
    """Race-free exchange through the local array ``lm``: every work-item writes its own slot,
    a barrier, then ``var`` combines with one slot (``kind``: ``neighbour`` ``lm[(lid + k) %
    L]``, ``mirror`` ``lm[L - 1 - lid]``, ``index`` ``lm[(uint)(index) % L]``) or, for
    ``reduce``, with the whole array folded by a barrier-separated tree; a barrier ends it.
    Only in uniform control flow (at the top of the kernel or in uniform loops)."""

    kind: str
    var: str
    value: Expr
    op: str
    offset: int = 1
    index: Expr | None = None


# --- the program -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Buffer:
    """A kernel buffer argument: ``role`` ``in`` (read only, random contents), ``out``
    (results, a fixed pattern first), ``scratch`` (per-item slots, random), ``counter`` (the
    global atomic counters, random)."""

    name: str
    type: CType
    length: int
    role: str


@dataclass(frozen=True)
class Program:
    """One generated kernel with its buffers and launch; ``render`` gives its source."""

    seed: int
    name: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    buffers: tuple[Buffer, ...]
    #: (name, type, initial value) of the private variables, declared first
    variables: tuple[tuple[str, CType, Expr], ...]
    #: (name, type, initial values) of the private arrays
    arrays: tuple[tuple[str, CType, tuple[Expr, ...]], ...]
    body: tuple[Stmt, ...]
    #: (slot, what): the values written to ``out`` (integers) or ``fout`` (floats) at the end:
    #: a variable, ``arr[i]`` of a private array, or ``lcnt[i]``
    outputs: tuple[tuple[int, str], ...]
    int_slots: int
    float_slots: int
    #: type of the local array ``lm`` (None: no local phases)
    local_type: CType | None = None
    #: type and initial values of the local atomic counters ``lcnt``
    local_counters: tuple[CType, tuple[int, ...]] | None = None
    note: str = field(default="", compare=False)

    @property
    def work_items(self) -> int:
        return int(np.prod(self.global_size))

    @property
    def group_items(self) -> int:
        return int(np.prod(self.local_size))

    def buffer(self, name: str) -> Buffer:
        return next(b for b in self.buffers if b.name == name)

    def replace(self, **changes: Any) -> Program:
        return dataclasses.replace(self, **changes)

    def types(self) -> dict[str, CType]:
        """Every name an expression may use, with its type."""
        out = {"gid": UINT, "lid": UINT, "grp": UINT}
        out.update({n: t for n, t, _ in self.variables})
        out.update({n: t for n, t, _ in self.arrays})
        return out


def walk_exprs(e: Expr):
    """``e`` and every sub-expression, parents first."""
    yield e
    if isinstance(e, Call):
        for a in e.args:
            yield from walk_exprs(a)
    elif isinstance(e, Load) and e.index is not None:
        yield from walk_exprs(e.index)


# --- rendering -------------------------------------------------------------------------------

_SAFE_TEMPLATES = {
    "add": "((b > 0 && a > {MAX} - b) || (b < 0 && a < {MIN} - b)) ? a : ({T})(a + b)",
    "sub": "((b > 0 && a < {MIN} + b) || (b < 0 && a > {MAX} + b)) ? a : ({T})(a - b)",
    "mul": ("((a > 0 && b > 0 && a > {MAX} / b) || (a > 0 && b <= 0 && b < {MIN} / a) || "
            "(a <= 0 && b > 0 && a < {MIN} / b) || "
            "(a <= 0 && b <= 0 && a != 0 && b < {MAX} / a)) ? a : ({T})(a * b)"),
    "div": "(b == 0 || (a == {MIN} && b == -1)) ? a : ({T})(a / b)",
    "mod": "(b == 0 || (a == {MIN} && b == -1)) ? a : ({T})(a % b)",
}
_USAFE_TEMPLATES = {"div": "(b == 0) ? a : ({T})(a / b)", "mod": "(b == 0) ? a : ({T})(a % b)"}


def prelude(kernel: str | None = None) -> str:
    """The helper functions programs may call (csmith's safe math): checked signed ``+ - *``
    and guarded ``/ %`` for every integer type, and the float operand of a saturating
    conversion kept in range (``fz_fin_<type>``); with ``kernel``, only those its text
    calls."""
    lines = ["#pragma OPENCL FP_CONTRACT OFF", ""]
    for t in INT_TYPES:
        templates = _SAFE_TEMPLATES if t.signed else _USAFE_TEMPLATES
        for op, body in templates.items():
            name = f"fz_{op}_{t}" if t.signed or op in ("div", "mod") else None
            if name is None:
                continue
            text = body.format(T=t, MIN=_lit(t, t.lo), MAX=_lit(t, t.hi))
            if kernel is None or f"{name}(" in kernel:
                lines.append(f"static {t} {name}({t} a, {t} b) {{ return {text}; }}")
        if t.bits < 64 and (kernel is None or f"fz_fin_{t}(" in kernel):
            hi = float(np.nextafter(np.float32(t.hi + 1), np.float32(0)))
            lines.append(f"static float fz_fin_{t}(float x) {{ return isnan(x) ? 0.0f : "
                         f"fmax(fmin(x, {_lit(FLOAT, min(hi, t.hi))}), "
                         f"{_lit(FLOAT, t.lo)}); }}")
    return "\n".join(lines) + "\n"


def _long_division(t: CType) -> str:
    """``fz_ldiv_<t>(a, b, rem)``: a / b (or a % b) by shift-and-subtract, bit by bit, with
    the guarded helpers' answer (``a``) for a zero divisor."""
    top = t.bits - 1
    return (f"static {t} fz_ldiv_{t}({t} a, {t} b, int rem) {{ if (b == 0) return a; "
            f"{t} q = 0, r = 0; for (int i = {top}; i >= 0; --i) {{ "
            f"{t} carry = ({t})(r >> {top}); r = ({t})((r << 1) | ((a >> i) & 1)); "
            f"if (carry || r >= b) {{ r = ({t})(r - b); q = ({t})(q | (({t})1 << i)); }} }} "
            f"return rem ? r : q; }}")


def soft_division(source: str) -> str:
    """``source`` (helpers from :func:`prelude`) with its unsigned ``/`` and ``%`` helpers
    computed by long division instead of the operators: the same values without the
    compiler's division lowering, to tell a division miscompile from anything else."""
    lines = source.split("\n")
    for t in INT_TYPES:
        if t.signed:
            continue
        heads = {f"static {t} fz_{op}_{t}({t} a, {t} b) {{": op for op in ("div", "mod")}
        hits = [i for i, line in enumerate(lines) if line.startswith(tuple(heads))]
        for i in hits:
            head = next(h for h in heads if lines[i].startswith(h))
            lines[i] = f"{head} return fz_ldiv_{t}(a, b, {int(heads[head] == 'mod')}); }}"
        if hits:
            lines.insert(hits[0], _long_division(t))
    return "\n".join(lines)


class _Writer:
    def __init__(self, program: Program) -> None:
        self.p = program
        self.lines: list[str] = []
        self.level = 1

    def line(self, text: str) -> None:
        self.lines.append("    " * self.level + text)

    def block(self, stmts: tuple[Stmt, ...]) -> None:
        self.level += 1
        for s in stmts:
            self.stmt(s)
        self.level -= 1

    def stmt(self, s: Stmt) -> None:
        p = self.p
        r = render_expr
        if isinstance(s, Assign):
            t = p.types()[s.var]
            if s.index is not None:
                self.line(f"{s.var}[(uint)({r(s.index)}) % {s.length}u] = ({t})({r(s.value)});")
            else:
                self.line(f"{s.var} = {r(s.value)};")
        elif isinstance(s, If):
            self.line(f"if ({r(s.cond)}) {{")
            self.block(s.then)
            if s.orelse:
                self.line("} else {")
                self.block(s.orelse)
            self.line("}")
        elif isinstance(s, Loop):
            limit = f"{s.limit}u"
            bound = limit if s.bound is None else f"min((uint)({r(s.bound)}), {limit})"
            v = s.var
            if s.kind == "for":
                self.line(f"for (uint {v} = 0; {v} < {bound}; {v}++) {{")
                self.block(s.body)
                self.line("}")
            elif s.kind == "while":
                self.line(f"{{ uint {v} = 0; while ({v} < {bound}) {{ {v}++;")
                self.block(s.body)
                self.line("} }")
            else:
                self.line(f"{{ uint {v} = 0; do {{")
                self.block(s.body)
                self.line(f"}} while (++{v} < {bound}); }}")
        elif isinstance(s, Switch):
            self.line(f"switch ((int)({r(s.value)}) % {s.modulus}) {{")
            for c in s.cases:
                self.line(" ".join(f"case {v}:" for v in c.labels) + " {")
                self.block(c.body)
                if c.brk:
                    self.line("    break;")
                self.line("}")
            self.line("default: {")
            self.block(s.default)
            self.line("}")
            self.line("}")
        elif isinstance(s, Jump):
            self.line(f"if ({r(s.cond)}) {s.what};")
        elif isinstance(s, Store):
            t = p.buffer(s.buffer).type
            self.line(f"{s.buffer}[gid * {s.length}u + (uint)({r(s.index)}) % {s.length}u] = "
                      f"({t})({r(s.value)});")
        elif isinstance(s, Atomic):
            target = f"&{'gcnt' if s.space == 'global' else 'lcnt'}[{s.slot}]"
            if s.value is None:
                self.line(f"atomic_{s.op}({target});")
            else:
                self.line(f"atomic_{s.op}({target}, {r(s.value)});")
        elif isinstance(s, LocalPhase):
            self.phase(s)
        else:
            raise TypeError(f"not a statement: {s!r}")

    def phase(self, s: LocalPhase) -> None:
        p = self.p
        t = p.local_type
        n = p.group_items
        bar = "barrier(CLK_LOCAL_MEM_FENCE);"
        self.line(f"lm[lid] = ({t})({render_expr(s.value)});")
        self.line(bar)
        if s.kind == "reduce":
            step = 1 << (n - 1).bit_length() - 1 if n > 1 else 0
            combine = _combine(t, s.op, "lm[lid]", "lm[lid + s]")
            self.line(f"for (uint s = {step}u; s > 0; s >>= 1) {{")
            self.line(f"    if (lid < s && lid + s < {n}u) lm[lid] = {combine};")
            self.line(f"    {bar}")
            self.line("}")
            other = "lm[0]"
        elif s.kind == "neighbour":
            other = f"lm[(lid + {s.offset}u) % {n}u]"
        elif s.kind == "mirror":
            other = f"lm[{n - 1}u - lid]"
        else:
            other = f"lm[(uint)({render_expr(s.index)}) % {n}u]"
        vt = p.types()[s.var]
        self.line(f"{s.var} = ({vt})({_combine(t, s.op, f'({t})({s.var})', other)});")
        self.line(bar)

    def kernel(self) -> str:
        p = self.p
        args = []
        for b in p.buffers:
            const = "const " if b.role == "in" else ""
            args.append(f"__global {const}{b.type} *{b.name}")
        head = f"__kernel void {p.name}({', '.join(args)}) {{"
        self.lines = [head]
        if len(p.global_size) == 1:
            self.line("const uint gid = (uint)get_global_id(0);")
            self.line("const uint lid = (uint)get_local_id(0);")
            self.line("const uint grp = (uint)get_group_id(0);")
        else:
            self.line("const uint gid = (uint)(get_global_id(1) * get_global_size(0) + "
                      "get_global_id(0));")
            self.line("const uint lid = (uint)(get_local_id(1) * get_local_size(0) + "
                      "get_local_id(0));")
            self.line("const uint grp = (uint)(get_group_id(1) * get_num_groups(0) + "
                      "get_group_id(0));")
        if p.local_type is not None:
            self.line(f"__local {p.local_type} lm[{p.group_items}];")
        if p.local_counters is not None:
            t, init = p.local_counters
            self.line(f"__local {t} lcnt[{len(init)}];")
            self.line("if (lid == 0) {")
            for i, v in enumerate(init):
                self.line(f"    lcnt[{i}] = {_lit(t, v)};")
            self.line("}")
            self.line("barrier(CLK_LOCAL_MEM_FENCE);")
        for name, t, init in p.variables:
            self.line(f"{t} {name} = {render_expr(init)};")
        for name, t, init in p.arrays:
            values = ", ".join(f"({t})({render_expr(v)})" for v in init)
            self.line(f"{t} {name}[{len(init)}] = {{{values}}};")
        for s in p.body:
            self.stmt(s)
        if p.local_counters is not None:
            self.line("barrier(CLK_LOCAL_MEM_FENCE);")
        types = p.types()
        for slot, what in p.outputs:
            base = what.split("[")[0]
            t = p.local_counters[0] if base == "lcnt" else types[base]
            if t.is_float:
                self.line(f"fout[gid * {p.float_slots}u + {slot}u] = {what};")
            else:
                self.line(f"out[gid * {p.int_slots}u + {slot}u] = (ulong)({what});")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


def _combine(t: CType, op: str, a: str, b: str) -> str:
    """An order-independent combination of two values of type ``t``."""
    if t.is_float:
        return {"min": f"(fmin({a}, {b}) + 0.0f)", "max": f"(fmax({a}, {b}) + 0.0f)",
                "add": f"(({a}) + ({b}))"}[op]
    if op in ("min", "max"):
        return f"{op}({a}, {b})"
    if op == "add":
        return f"({t})(({t.wide})({a}) + ({t.wide})({b}))"
    return f"({t})(({a}) {_BITWISE[op]} ({b}))"


_BITWISE = {"xor": "^", "or": "|", "and": "&"}


def render(program: Program, *, with_prelude: bool = True) -> str:
    """The program's OpenCL C source: the helpers of :func:`prelude` it calls (none with
    ``with_prelude`` False, for batches that share one) and the kernel."""
    text = _Writer(program).kernel()
    return (prelude(text) + "\n" + text) if with_prelude else text


# --- inputs ----------------------------------------------------------------------------------

#: The name of the rule :func:`make_inputs` follows (kept in regression cases).
INPUT_RULE = "fuzz-inputs-v1"

_OUT_PATTERN = 0x5A5A5A5A5A5A5A5A
_FOUT_PATTERN = -12345.0


def _int_values(rng: np.random.Generator, t: CType, n: int) -> np.ndarray:
    """Edge values (0, +-1, the extremes and their neighbours, powers of two) and uniform
    random values, mixed."""
    edges = sorted({t.wrap(v) for v in (0, 1, -1, 2, t.lo, t.hi, t.lo + 1, t.hi - 1,
                                         *(1 << k for k in range(t.bits)),
                                         *(-(1 << k) for k in range(t.bits)))})
    raw = rng.integers(0, 1 << 64, size=n, dtype=np.uint64, endpoint=False)
    uniform = raw.view(np.int64).astype(np.int64) if t.signed else raw
    values = np.asarray(uniform).astype(t.dtype)   # wraps to the type
    small = rng.integers(-100, 100, size=n).astype(t.dtype)
    pick = rng.integers(0, 4, size=n)
    edge = np.asarray(edges, dtype=t.dtype)[rng.integers(0, len(edges), size=n)]
    return np.where(pick == 1, small, np.where(pick == 2, edge, values)).astype(t.dtype)


def _float_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Integer-valued floats: small ones, ones of any exponent from 2**0 to 2**127, and now
    and then 0, -0, infinities and NaN."""
    small = rng.integers(-64, 65, size=n).astype(np.float32)
    mant = rng.integers(1 << 23, 1 << 24, size=n).astype(np.float64)
    exp = rng.integers(-23, 104, size=n)
    big = np.ldexp(mant, exp).astype(np.float32)
    big = np.where(rng.integers(0, 2, size=n) == 1, -big, big)
    big = np.where(np.abs(big) < 1, np.float32(1), np.floor(big)).astype(np.float32)
    special = np.asarray([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 16777216.0],
                         np.float32)[rng.integers(0, 8, size=n)]
    pick = rng.integers(0, 10, size=n)
    return np.where(pick < 6, small, np.where(pick < 9, big, special)).astype(np.float32)


def make_inputs(program: Program) -> dict[str, np.ndarray]:
    """The initial contents of every buffer of ``program``: :func:`fill_buffers` of its seed,
    buffers and work-items."""
    return fill_buffers(program.seed, program.buffers, program.work_items)


def fill_buffers(seed: int, buffers: Iterable[Buffer], work_items: int
                 ) -> dict[str, np.ndarray]:
    """The initial contents of ``buffers`` (:data:`INPUT_RULE`): each a function of the seed,
    the buffer's name, type, length and role only (``out``, ``scratch``: ``length`` slots per
    work-item), so that a reduced program sees the same bytes in the buffers it keeps."""
    out = {}
    for b in buffers:
        rng = np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(b.name.encode())])
        n = b.length * (work_items if b.role in ("out", "scratch") else 1)
        if b.role == "out":
            if b.type.is_float:
                out[b.name] = np.full(n, _FOUT_PATTERN, np.float32)
            else:
                out[b.name] = np.full(n, _OUT_PATTERN, np.uint64).astype(b.type.dtype)
        elif b.type.is_float:
            out[b.name] = _float_values(rng, n)
        else:
            out[b.name] = _int_values(rng, b.type, n)
    return out
