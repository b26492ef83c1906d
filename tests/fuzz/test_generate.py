"""The program generator: one program per seed, always the same, compiling with clang-19 for
tahiti, and free of undefined behaviour by what can be checked on its tree and text."""

from __future__ import annotations

import re

import pytest

from gpgpu_hdl.fuzz.differential import batch_source
from gpgpu_hdl.fuzz.generate import Limits, generate
from gpgpu_hdl.fuzz.program import (FLOAT, INT_TYPES, Atomic, Call, If, Load, LocalPhase, Loop,
                                    Switch, make_inputs, prelude, render, walk_exprs)
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.toolchain import compile_cl

SEEDS = range(0, 40)


def _stmts(stmts, uniform=True, trips=1):
    """(statement, in uniform control flow, trips of its loop nest), depth first."""
    for s in stmts:
        yield s, uniform, trips
        if isinstance(s, If):
            yield from _stmts(s.then + s.orelse, False, trips)
        elif isinstance(s, Switch):
            for c in s.cases:
                yield from _stmts(c.body, False, trips)
            yield from _stmts(s.default, False, trips)
        elif isinstance(s, Loop):
            yield from _stmts(s.body, uniform and s.bound is None, trips * s.limit)


def _exprs(p):
    for _, _, init in p.variables:
        yield from walk_exprs(init)
    for _, _, values in p.arrays:
        for v in values:
            yield from walk_exprs(v)
    for s, _, _ in _stmts(p.body):
        for name in ("value", "cond", "bound", "index"):
            e = getattr(s, name, None)
            if e is not None and not isinstance(e, tuple):
                yield from walk_exprs(e)


def _kernel(p) -> str:
    return render(p, with_prelude=False)


def _operand(text: str, start: int) -> str:
    """The parenthesised operand that starts at ``text[start]`` (after spaces)."""
    i = start
    while text[i] == " ":
        i += 1
    assert text[i] == "(", text[start:start + 40]
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j + 1]
    raise AssertionError("unbalanced")


def test_a_seed_gives_always_the_same_program():
    for seed in (0, 7, 123456):
        assert generate(seed) == generate(seed)
        assert render(generate(seed)) == render(generate(seed))
        inputs, again = make_inputs(generate(seed)), make_inputs(generate(seed))
        assert all((inputs[k].view("u1") == again[k].view("u1")).all() for k in inputs)


def test_seeds_give_different_programs():
    texts = {_kernel(generate(s, name="k")) for s in SEEDS}
    assert len(texts) == len(SEEDS)


def test_limits_bound_the_program():
    limits = Limits(statements=6, nesting=1, expr_depth=2, trips=4, work_items=64)
    for seed in SEEDS:
        p = generate(seed, limits=limits)
        stmts = list(_stmts(p.body))
        assert len(stmts) <= 6
        assert all(trips <= 4 for _, _, trips in stmts)
        assert p.work_items <= 64
    with pytest.raises(ValueError, match="statements must be at least 1, not 0"):
        Limits(statements=0)


def test_generated_programs_compile_for_tahiti(tmp_path):
    programs = [generate(s) for s in SEEDS]
    source = tmp_path / "batch.cl"
    source.write_text(batch_source(programs))
    binary = compile_cl(source, tmp_path / "batch.bin", extra_flags=("-w",))
    names = {k.name for k in CodeObject.load(binary).kernels}
    assert names == {p.name for p in programs}


def test_shifts_are_masked_and_divisions_guarded():
    for seed in SEEDS:
        text = _kernel(generate(seed))
        for m in re.finditer(r"<<|>>(?!=)", text):
            operand = _operand(text, m.end())
            assert re.search(r"\) & (31|63)\)$", operand), operand
        # every / and % of the kernel is a constant modulus (division goes through the
        # guarded helpers of the prelude)
        assert "/" not in text
        for m in re.finditer(r"%", text):
            assert re.match(r" \d+u?[\])]", text[m.end():]), text[m.start() - 20:m.end() + 10]


def test_helpers_guard_overflow_and_division():
    text = prelude()
    for t in INT_TYPES:
        if t.signed:
            assert f"fz_div_{t}({t} a, {t} b) {{ return (b == 0 || (a == " in text
            assert f"fz_add_{t}(" in text and f"fz_mul_{t}(" in text
        else:
            assert f"fz_div_{t}({t} a, {t} b) {{ return (b == 0) ? a" in text


def test_signed_arithmetic_and_indices_are_well_defined():
    for seed in SEEDS:
        p = generate(seed)
        lengths = {b.name: b.length for b in p.buffers}
        lengths.update({name: len(init) for name, _, init in p.arrays})
        for e in _exprs(p):
            if isinstance(e, Load):
                assert e.length == lengths[e.buffer]
                assert f"% {e.length}u]" in render(p)
            if isinstance(e, Call):
                if e.op in ("add", "sub", "mul", "neg", "shl"):
                    # computed in uint/ulong whatever the type
                    assert f"({e.type.wide})" in render_call(e)
                if e.op in ("cast", "sat") and not e.type.is_float:
                    assert not (e.op == "cast" and e.args[0].type.is_float)
                if e.type == FLOAT:
                    assert e.op in FLOAT_OPS, e.op


def render_call(e):
    from gpgpu_hdl.fuzz.program import render_expr
    return render_expr(e)


FLOAT_OPS = {"fadd", "fsub", "fmul", "fneg", "fma", "fabs", "fmod", "fdim", "fmin", "fmax",
             "maxmag", "minmag", "copysign", "ldexp", "round", "cvt", "ftern", "fselect"}


def test_barriers_are_in_uniform_control_flow_and_atomics_commute():
    saw_phase = saw_atomic = 0
    for seed in range(200):
        p = generate(seed)
        families: dict[tuple[str, int], set[str]] = {}
        for s, uniform, _ in _stmts(p.body):
            if isinstance(s, LocalPhase):
                saw_phase += 1
                assert uniform, f"seed {seed}: barrier in divergent code"
            if isinstance(s, Atomic):
                saw_atomic += 1
                families.setdefault((s.space, s.slot), set()).add(s.op)
        for ops in families.values():
            assert ops <= {"add", "sub", "inc", "dec"} or len(ops) == 1, ops
    assert saw_phase > 20 and saw_atomic > 20


def test_loops_are_bounded_and_every_value_is_an_output():
    for seed in SEEDS:
        p = generate(seed)
        for s, _, trips in _stmts(p.body):
            if isinstance(s, Loop):
                assert 1 <= s.limit <= 8 and trips <= Limits().trips
        written = {what.split("[")[0] for _, what in p.outputs}
        assert {name for name, _, _ in p.variables} <= written
        assert {name for name, _, _ in p.arrays} <= written
        text = _kernel(p)
        for name, t, _ in p.variables:
            assert re.search(rf"\b{t} {name} = ", text)        # declared with a value


def test_the_generator_covers_what_it_claims():
    ops, stmts, types = set(), set(), set()
    for seed in range(300):
        p = generate(seed)
        ops |= {e.op for e in _exprs(p) if isinstance(e, Call)}
        stmts |= {type(s).__name__ for s, _, _ in _stmts(p.body)}
        types |= {t.name for _, t, _ in p.variables}
    assert {"add", "addc", "div", "mod", "shl", "shr", "rotate", "clz", "popcount", "mul_hi",
            "add_sat", "hadd", "mad24", "clamp", "abs", "tern", "fma", "round", "cvt",
            "sat", "fmod", "select", "upsample"} <= ops
    assert {"Assign", "If", "Loop", "Switch", "Jump", "Store", "Atomic", "LocalPhase"} <= stmts
    assert {t.name for t in INT_TYPES} | {"float"} <= types
