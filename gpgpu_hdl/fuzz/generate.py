"""The random program generator: ``generate(seed)`` builds one well-defined OpenCL C 1.2 kernel
(a :class:`~.program.Program`) in the spirit of CLsmith; the seed alone reproduces it.

What a program has (each part drawn at random, bounded by :class:`Limits`):

* a 1- or 2-dimensional launch of 16 to 512 work-items in groups of 16 to 256 (not
  necessarily a multiple of the wave size);
* 1 to 3 input buffers of any integer type or float, read at computed indices (reduced modulo
  the buffer's length), private variables of every integer type (``char`` to ``ulong``) and
  float, private arrays indexed by computed values, optionally a per-work-item scratch buffer
  in global memory stored to and loaded from at computed indices;
* integer expressions with every C operator and the OpenCL integer built-ins (``abs``,
  ``abs_diff``, ``add_sat``, ``sub_sat``, ``hadd``, ``rhadd``, ``mul_hi``, ``mad_sat``,
  ``min``, ``max``, ``clamp``, ``rotate``, ``clz``, ``popcount``,
  ``bitselect``, ``select``, ``upsample``, ``mul24``, ``mad24``, saturating conversions);
* float expressions restricted to exactly specified operations on integer-valued floats (see
  :data:`~.program.FLOAT_OPS`), and the integer observers of floats (comparisons,
  ``isnan``, ``isinf``, ``isfinite``, ``signbit``, ``as_int``, ``convert_*_sat_<mode>``);
* control flow that diverges across lanes (``if``/``else`` and ternaries on lane-dependent
  data, ``switch`` with fall-through), bounded loops (``for``, ``while``, ``do``) with constant
  or data-dependent trip counts, ``break`` and ``continue``;
* ``__local`` memory exchanged race-free between barriers (neighbour, mirror, computed-index
  reads and tree reductions), in uniform control flow only;
* atomics (``add``, ``sub``, ``inc``, ``dec``, ``min``, ``max``, ``and``, ``or``, ``xor``) on
  global or local counters, whose returned values are never used, so that the final counts
  do not depend on the order.

Every private value (variables, array elements, local counters) is written to the output
buffers at the end, one slot each per work-item; the scratch buffer and the global counters
are outputs too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .program import (FLOAT, INT, INT_TYPES, TYPES, UINT, Assign, Atomic, Buffer, Call, Const,
                      CType, Expr, If, Jump, Load, LocalPhase, Loop, Program, Stmt, Store, Switch,
                      SwitchCase, Var)

__all__ = ["Limits", "generate"]


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Bounds of a generated program."""

    #: statements in the whole body (each statement of a nested block counts)
    statements: int = 36
    #: nesting of if/loop/switch
    nesting: int = 3
    #: depth of an expression tree
    expr_depth: int = 4
    #: trips of a loop nest (product of the loop limits along it)
    trips: int = 64
    #: work-items of a launch
    work_items: int = 512

    def __post_init__(self) -> None:
        for name in ("statements", "nesting", "expr_depth", "trips", "work_items"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")


_ROUNDING = ("floor", "ceil", "trunc", "rint", "round")
_SCALES = ("1.0", "0.5", "0.25", "0.125")
_MODES = ("", "rte", "rtz", "rtn", "rtp")
#: Atomic operations that commute with each other (each counter uses one family).
_ATOMIC_FAMILIES = (("add", "add", "sub", "inc", "dec"), ("min",), ("max",), ("and",), ("or",),
                    ("xor",))


@dataclass
class _Scope:
    """Where a statement is generated."""

    depth: int = 0
    trips: int = 1
    uniform: bool = True
    #: innermost first: "loop" (jumps allowed), "uniform" (a uniform loop) or "switch"
    breakable: tuple[str, ...] = ()
    counters: tuple[str, ...] = ()

    def inner(self, **changes) -> _Scope:
        d = dict(self.__dict__)
        d.update(changes, depth=self.depth + 1)
        return _Scope(**d)


class _Generator:
    def __init__(self, seed: int, limits: Limits) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.limits = limits
        self.names = 0
        self.left = 0
        self.vars: list[tuple[str, CType]] = []
        self.arrays: list[tuple[str, CType, int]] = []
        self.inputs: list[Buffer] = []
        self.scratch: Buffer | None = None
        self.counters: Buffer | None = None
        self.local_type: CType | None = None
        self.local_counters: tuple[CType, tuple[int, ...]] | None = None
        self.floats = False
        self.families: dict[tuple[str, int], tuple[str, ...]] = {}

    # -- helpers ------------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def weighted(self, options: dict) -> str:
        keys = [k for k, w in options.items() if w > 0]
        return self.rng.choices(keys, [options[k] for k in keys])[0]

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def int_type(self) -> CType:
        return self.pick(INT_TYPES)

    # -- constants and leaves -----------------------------------------------------------------

    def const(self, t: CType) -> Const:
        r = self.rng
        if t.is_float:
            kind = r.randrange(6)
            if kind == 0:
                v = float(self.pick((0.0, 1.0, -1.0, 2.0, 3.0, 16777216.0, -0.0)))
            elif kind == 1:
                v = float(r.choice((1, -1)) * 2.0 ** r.randrange(0, 100))
            else:
                v = float(r.randint(-100, 100))
            return Const(t, v)
        kind = r.randrange(5)
        if kind == 0:
            v = self.pick((0, 1, -1, 2, t.lo, t.hi, t.lo + 1, t.hi - 1))
        elif kind == 1:
            v = (1 << r.randrange(t.bits)) * self.pick((1, -1)) + self.pick((0, 0, 1, -1))
        elif kind == 2:
            v = r.randrange(1 << t.bits)
        else:
            v = r.randint(-20, 40)
        return Const(t, t.wrap(v))

    def convert(self, e: Expr, t: CType) -> Expr:
        """``e`` as type ``t`` (a cast between integer types, a saturating conversion from
        float, a rounding conversion to float)."""
        if e.type == t:
            return e
        if t.is_float:
            return Call(FLOAT, "cvt", (e,), self.pick(_MODES if e.type.bits <= 16 else _MODES[:2]))
        if e.type.is_float:
            return self.from_float(e, t)
        if self.chance(0.15):
            return Call(t, "sat", (e,))
        return Call(t, "cast", (e,))

    def from_float(self, e: Expr, t: CType) -> Expr:
        """A saturating conversion of the float ``e`` to the integer type ``t`` (to 64 bits
        through 32: libclc-19 gets ``convert_(u)long_sat`` wrong at 2**63 and 2**64)."""
        if t.bits < 64:
            return Call(t, "sat", (e,), self.pick(_MODES))
        narrow = INT if t.signed else UINT
        return Call(t, "cast", (Call(narrow, "sat", (e,), self.pick(_MODES)),))

    def index(self) -> Expr:
        return self.expr(self.int_type(), self.rng.randint(0, 2))

    def leaf(self, t: CType) -> Expr:
        r = self.rng
        kinds = {"var": 8, "const": 3, "id": 3, "load": 3, "counter": 0, "array": 0,
                 "scratch": 0}
        if self.scope.counters:
            kinds["counter"] = 3
        if self.arrays:
            kinds["array"] = 2
        if self.scratch is not None:
            kinds["scratch"] = 1
        kind = self.weighted(kinds)
        if kind == "var":
            same = [n for n, vt in self.vars if vt == t]
            if same and self.chance(0.7):
                return Var(t, self.pick(same))
            if self.vars:
                n, vt = self.pick(self.vars)
                return self.convert(Var(vt, n), t)
            kind = "const"
        if kind == "id":
            return self.convert(Var(UINT, self.pick(("gid", "gid", "lid", "lid", "grp"))), t)
        if kind == "counter":
            return self.convert(Var(UINT, self.pick(self.scope.counters)), t)
        if kind == "load":
            candidates = [b for b in self.inputs if b.type == t] or self.inputs
            b = self.pick(candidates)
            if t.is_float or not b.type.is_float or r.random() < 0.5:
                return self.convert(Load(b.type, b.name, b.length, self.index()), t)
            kind = "const"
        if kind == "array":
            name, at, n = self.pick(self.arrays)
            return self.convert(Load(at, name, n, self.index()), t)
        if kind == "scratch":
            b = self.scratch
            return self.convert(Load(b.type, b.name, b.length, self.index(), per_item=True), t)
        return self.const(t)

    # -- expressions --------------------------------------------------------------------------

    def expr(self, t: CType, depth: int) -> Expr:
        if depth <= 0 or self.chance(0.2):
            return self.leaf(t)
        return self.float_op(depth) if t.is_float else self.int_op(t, depth)

    def int_op(self, t: CType, depth: int) -> Expr:
        d = depth - 1
        e = self.expr
        ops = {"add": 6, "sub": 5, "mul": 4, "addc": 2, "subc": 2, "mulc": 2, "div": 3,
               "mod": 3, "and": 3, "or": 3, "xor": 4, "shl": 3, "shr": 4, "neg": 1, "not": 1,
               "lnot": 1, "logic": 1, "cmp": 4, "tern": 3, "cast": 4, "sat": 2, "abs": 1,
               "abs_diff": 1, "add_sat": 1, "sub_sat": 1, "hadd": 1, "rhadd": 1, "mul_hi": 2,
               "min": 2, "max": 2, "rotate": 2, "clz": 1, "popcount": 1, "mad_sat": 1,
               "bitselect": 1, "clamp": 1, "upsample": 1, "mul24": 1,
               "mad24": 1, "select": 2, "fcmp": 0, "fclass": 0, "fsat": 0}
        if not t.signed:
            ops.update(addc=0, subc=0, mulc=0)
        if t.bits < 16:
            ops["upsample"] = 0
        if t.name not in ("int", "uint"):
            ops.update(mul24=0, mad24=0)
        if t.name in ("int", "long"):   # libclc-19 gets these wrong: see docs/fuzz.md
            ops.update(mad_sat=0, sub_sat=0)
        if self.floats:
            ops.update(fcmp=2, fclass=1, fsat=2)
        op = self.weighted(ops)
        if op in ("add", "sub", "mul", "addc", "subc", "mulc", "div", "mod", "and", "or", "xor",
                  "add_sat", "sub_sat", "hadd", "rhadd", "mul_hi", "min", "max", "rotate"):
            return Call(t, op, (e(t, d), e(t, d)))
        if op in ("shl", "shr"):
            return Call(t, op, (e(t, d), e(self.int_type(), d)))
        if op in ("neg", "not", "clz", "popcount"):
            return Call(t, op, (e(t, d),))
        if op == "lnot":
            return Call(t, op, (e(self.int_type(), d),))
        if op == "logic":
            return Call(t, self.pick(("land", "lor")), (self.cond(d), self.cond(d)))
        if op == "cmp":
            u = self.int_type()
            return Call(t, self.pick(("lt", "le", "gt", "ge", "eq", "ne")), (e(u, d), e(u, d)))
        if op == "tern":
            return Call(t, op, (self.cond(d), e(t, d), e(t, d)))
        if op == "cast":
            return self.convert(e(self.int_type(), d), t)
        if op == "sat":
            return Call(t, op, (e(self.int_type(), d),))
        if op in ("abs", "abs_diff"):
            u = self.pick((t.as_signed, t.unsigned))
            if op == "abs" and u.name in ("int", "long"):
                # libclc-19's abs(int/long) says INT_MIN is poison: the same through abs_diff
                return Call(t, "abs_diff", (e(u, d), Const(u, 0)))
            return Call(t, op, tuple(e(u, d) for _ in range(1 if op == "abs" else 2)))
        if op in ("mad_sat", "bitselect", "clamp", "mad24"):
            return Call(t, op, (e(t, d), e(t, d), e(t, d)))
        if op == "mul24":
            return Call(t, op, (e(t, d), e(t, d)))
        if op == "upsample":
            half = next(x for x in INT_TYPES if x.bits == t.bits // 2 and x.signed == t.signed)
            return Call(t, op, (e(half, d), e(half.unsigned, d)))
        if op == "select":
            return Call(t, op, (e(t, d), e(t, d), self.cond(d)))
        if op == "fcmp":
            return Call(t, self.pick(("flt", "fle", "feq", "fne")), (e(FLOAT, d), e(FLOAT, d)))
        if op == "fclass":
            which = self.pick(("isnan", "isinf", "isfinite", "signbit", "as_int"))
            return Call(t, which, (e(FLOAT, d),))
        return self.from_float(e(FLOAT, d), t)

    def float_op(self, depth: int) -> Expr:
        d = depth - 1
        e = self.expr
        f = FLOAT
        # no maxmag/minmag: LLVM 19 selects v_min_legacy_f32 of a negated operand for them
        # (tests/fuzz/regressions/clang19-maxmag-min-legacy-sign)
        op = self.weighted({"fadd": 6, "fsub": 5, "fmul": 5, "fneg": 1, "fma": 3, "fabs": 2,
                            "fmod": 2, "fdim": 1, "fmin": 2, "fmax": 2, "copysign": 1,
                            "ldexp": 1, "round": 4, "cvt": 4, "ftern": 2, "fselect": 1})
        if op in ("fadd", "fsub", "fmul", "fmod", "fdim", "fmin", "fmax", "copysign"):
            return Call(f, op, (e(f, d), e(f, d)))
        if op in ("fneg", "fabs"):
            return Call(f, op, (e(f, d),))
        if op == "fma":
            return Call(f, op, (e(f, d), e(f, d), e(f, d)))
        if op == "ldexp":
            return Call(f, op, (e(f, d), e(self.int_type(), d)))
        if op == "round":
            return Call(f, op, (e(f, d),), f"{self.pick(_ROUNDING)}:{self.pick(_SCALES)}")
        if op == "cvt":
            return self.convert(e(self.int_type(), d), f)
        if op == "ftern":
            return Call(f, op, (self.cond(d), e(f, d), e(f, d)))
        return Call(f, op, (e(f, d), e(f, d), self.cond(d)))

    def cond(self, depth: int) -> Expr:
        """An int condition, often lane-dependent."""
        if self.chance(0.4):
            lane = Var(UINT, self.pick(("lid", "gid", "lid")))
            kind = self.rng.randrange(3)
            if kind == 0:
                masked = Call(UINT, "and", (lane, Const(UINT, self.rng.choice((1, 3, 7, 15)))))
                return Call(INT, self.pick(("eq", "ne", "lt")),
                            (masked, Const(UINT, self.rng.randrange(4))))
            if kind == 1:
                return Call(INT, self.pick(("lt", "gt", "le")),
                            (lane, self.expr(UINT, min(depth, 1))))
            t = self.int_type()
            return Call(INT, self.pick(("lt", "ne")), (self.convert(lane, t), self.expr(t, depth)))
        return self.expr(self.pick((INT, INT, self.int_type())), depth)

    # -- statements ---------------------------------------------------------------------------

    def target(self) -> tuple[str, CType]:
        """A variable to assign."""
        return self.pick(self.vars)

    def assign(self) -> Stmt:
        r = self.rng
        if self.arrays and self.chance(0.15):
            name, t, n = self.pick(self.arrays)
            return Assign(name, self.expr(t, r.randint(1, self.limits.expr_depth)),
                          self.index(), n)
        name, t = self.target()
        value = self.expr(t, r.randint(1, self.limits.expr_depth))
        if self.chance(0.3):
            op = self.pick(("fadd", "fsub", "fmul", "fmax")) if t.is_float else \
                self.pick(("add", "xor", "sub", "mul", "or", "addc"))
            if op == "addc" and not t.signed:
                op = "add"
            value = Call(t, op, (Var(t, name), value))
        return Assign(name, value)

    def block(self, scope: _Scope, longest: int) -> tuple[Stmt, ...]:
        out = []
        for _ in range(self.rng.randint(1, longest)):
            if self.left <= 0:
                break
            out.append(self.stmt(scope))
        return tuple(out)

    def stmt(self, scope: _Scope) -> Stmt:
        self.left -= 1
        prev, self.scope = self.scope, scope
        try:
            return self._stmt(scope)
        finally:
            self.scope = prev

    def _stmt(self, scope: _Scope) -> Stmt:
        r = self.rng
        nest = scope.depth < self.limits.nesting and self.left > 1
        innermost = scope.breakable[0] if scope.breakable else ""
        loop = next((k for k in scope.breakable if k != "switch"), "")
        kinds = {"assign": 40, "if": 12 * nest, "loop": 8 * nest, "switch": 4 * nest,
                 "break": 4 * (innermost == "switch" or innermost == "loop"),
                 "continue": 3 * (loop == "loop"),
                 "store": 5 * (self.scratch is not None),
                 "atomic": 6 * (self.counters is not None or self.local_counters is not None),
                 "phase": 10 * (scope.uniform and self.local_type is not None)}
        kind = self.weighted(kinds)
        if kind == "assign":
            return self.assign()
        if kind == "if":
            inner = scope.inner(uniform=False)
            then = self.block(inner, 3)
            orelse = self.block(inner, 3) if self.chance(0.5) else ()
            return If(self.cond(r.randint(1, 3)), then, orelse)
        if kind == "loop":
            most = max(1, min(8, self.limits.trips // scope.trips))
            limit = r.randint(1, most)
            var = self.fresh("i")
            uniform = scope.uniform and self.chance(0.5)
            bound = None if uniform or self.chance(0.3) else self.expr(self.int_type(), 2)
            inner = scope.inner(trips=scope.trips * limit, uniform=uniform,
                                breakable=("uniform" if uniform else "loop", *scope.breakable),
                                counters=(*scope.counters, var))
            kind = self.pick(("for", "for", "while", "do"))
            return Loop(var, limit, self.block(inner, 4), bound, kind)
        if kind == "switch":
            modulus = r.randint(2, 8)
            labels = r.sample(range(-(modulus - 1), modulus), min(2 * modulus - 1,
                                                                   r.randint(1, 4)))
            inner = scope.inner(uniform=False, breakable=("switch", *scope.breakable))
            cases = tuple(SwitchCase((v,), self.block(inner, 2), self.chance(0.8))
                          for v in labels)
            default = self.block(inner, 2) if self.chance(0.5) else ()
            return Switch(self.expr(self.int_type(), 2), modulus, cases, default)
        if kind in ("break", "continue"):
            return Jump(kind, self.cond(2))
        if kind == "store":
            b = self.scratch
            return Store(b.name, b.length, self.index(), self.expr(b.type, r.randint(1, 3)))
        if kind == "atomic":
            return self.atomic()
        return self.phase()

    def atomic(self) -> Stmt:
        spaces = [s for s, have in (("global", self.counters is not None),
                                    ("local", self.local_counters is not None)) if have]
        space = self.pick(spaces)
        if space == "global":
            t, slots = self.counters.type, self.counters.length
        else:
            t, slots = self.local_counters[0], len(self.local_counters[1])
        slot = self.rng.randrange(slots)
        # one class of commuting operations per counter, so that the order does not matter
        family = self.families.setdefault((space, slot), self.pick(_ATOMIC_FAMILIES))
        op = self.pick(family)
        value = None if op in ("inc", "dec") else self.expr(t, self.rng.randint(1, 3))
        return Atomic(op, space, slot, value)

    def phase(self) -> Stmt:
        t = self.local_type
        usable = [n for n, vt in self.vars if vt.is_float == t.is_float]
        kind = self.pick(("neighbour", "neighbour", "mirror", "index", "reduce", "reduce"))
        ops = ("add", "min", "max") if t.is_float else ("add", "xor", "or", "and", "min", "max")
        index = self.index() if kind == "index" else None
        return LocalPhase(kind, self.pick(usable), self.expr(t, self.rng.randint(1, 3)),
                          self.pick(ops), self.rng.randint(1, 70), index)

    # -- the program --------------------------------------------------------------------------

    def launch(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        r = self.rng
        most = self.limits.work_items
        if self.chance(0.2):
            lx, ly = self.pick(((8, 2), (8, 4), (16, 4), (8, 8), (4, 4), (16, 2), (32, 2)))
            if lx * ly <= most:
                gx = r.randint(1, max(1, min(2, most // (lx * ly))))
                gy = r.randint(1, max(1, min(2, most // (lx * ly * gx))))
                return (lx * gx, ly * gy), (lx, ly)
        sizes = [n for n in (16, 32, 48, 64, 64, 64, 96, 128, 128, 256) if n <= most]
        local = self.pick(sizes) if sizes else most
        groups = r.randint(1, max(1, min(4, most // local)))
        return (local * groups,), (local,)

    def program(self, kernel: str) -> Program:
        r = self.rng
        global_size, local_size = self.launch()
        self.floats = self.chance(0.6)
        buffers = []
        for i in range(r.randint(1, 3)):
            t = FLOAT if self.floats and self.chance(0.3) else self.int_type()
            buffers.append(Buffer(f"in{i}", t, self.pick((7, 16, 33, 64, 100, 256, 1000)), "in"))
        self.inputs = list(buffers)
        if self.chance(0.35):
            self.scratch = Buffer("scr", self.int_type(), self.pick((2, 3, 4, 8)), "scratch")
            buffers.append(self.scratch)
        if self.chance(0.4):
            self.counters = Buffer("gcnt", self.pick((INT, UINT)), r.randint(1, 4), "counter")
            buffers.append(self.counters)
        group = 1
        for n in local_size:
            group *= n
        if self.chance(0.45):
            self.local_type = FLOAT if self.floats and self.chance(0.25) else self.int_type()
        if self.chance(0.3):
            t = self.pick((INT, UINT))
            self.local_counters = (t, tuple(self.const(t).value for _ in range(r.randint(1, 3))))
        # variables, each initialised from what is declared before it
        self.scope = _Scope()
        variables = []
        n_int, n_float = r.randint(2, 7), (r.randint(1, 3) if self.floats else 0)
        kinds = [self.int_type() for _ in range(n_int)] + [FLOAT] * n_float
        r.shuffle(kinds)
        if self.local_type is not None and not any(
                k.is_float == self.local_type.is_float for k in kinds):
            kinds.append(self.local_type)
        for t in kinds:
            name = self.fresh("v")
            variables.append((name, t, self.expr(t, r.randint(0, 2))))
            self.vars.append((name, t))
        arrays = []
        for _ in range(r.choice((0, 0, 1, 1, 2))):
            t = FLOAT if self.floats and self.chance(0.2) else self.int_type()
            n = r.randint(2, 8)
            arrays.append((self.fresh("a"), t, tuple(self.expr(t, 1) for _ in range(n))))
        self.arrays = [(name, t, len(init)) for name, t, init in arrays]
        self.left = r.randint(4, self.limits.statements)
        body = []
        while self.left > 0:
            body.append(self.stmt(_Scope()))
        # outputs: every private value, one slot each
        int_out, float_out = [], []
        for name, t, _ in variables:
            (float_out if t.is_float else int_out).append(name)
        for name, t, init in arrays:
            (float_out if t.is_float else int_out).extend(
                f"{name}[{i}]" for i in range(len(init)))
        if self.local_counters is not None:
            int_out.extend(f"lcnt[{i}]" for i in range(len(self.local_counters[1])))
        outputs = tuple(enumerate(int_out)) + tuple(enumerate(float_out))
        buffers.append(Buffer("out", TYPES["ulong"], len(int_out), "out"))
        if float_out:
            buffers.append(Buffer("fout", FLOAT, len(float_out), "out"))
        return Program(seed=self.seed, name=kernel, global_size=global_size,
                       local_size=local_size, buffers=tuple(buffers),
                       variables=tuple(variables), arrays=tuple(arrays), body=tuple(body),
                       outputs=outputs, int_slots=len(int_out), float_slots=len(float_out),
                       local_type=self.local_type, local_counters=self.local_counters)


def generate(seed: int, *, name: str | None = None, limits: Limits | None = None) -> Program:
    """The program of ``seed`` (kernel ``name``, default ``fz<seed>``): the same seed and
    limits always give the same program."""
    if seed < 0:
        raise ValueError(f"seed must be non-negative, not {seed}")
    return _Generator(seed, limits or Limits()).program(name or f"fz{seed}")
