"""The reducer: shrink a program while the same difference persists.

Candidates are rewrites of the :class:`~.program.Program` that keep it well-defined (they keep
every type, never move a barrier into divergent code, never leave a ``break``/``continue``
without its loop): a smaller launch, statements dropped (large chunks first), ``if``/``switch``
replaced by one of their blocks, loops shrunk to one trip or replaced by their body,
expressions replaced by a constant or by an operand of the same type, outputs, variables,
arrays and buffers nobody uses dropped. The first candidate that keeps the difference is taken
and the search starts again, until no candidate does (or the test budget is spent).

Candidates are tested several at a time in one batch (one clang and one PoCL build), and the
one taken is tested again alone; a candidate already tried (same kernel text, launch and
buffers) is not tried again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any

from .differential import Difference, run_batch
from .program import (FLOAT, Assign, Atomic, Buffer, Call, Const, CType, Expr, If, Jump, Load,
                      LocalPhase, Loop, Program, Stmt, Store, Switch, SwitchCase, UINT, Var,
                      render)

__all__ = ["reduce_program", "difference_oracle", "same_difference", "Reduction"]

Path = tuple[Any, ...]


# --- generic access to the program tree -------------------------------------------------------

def _get(obj: Any, path: Path) -> Any:
    for key in path:
        obj = obj[key] if isinstance(obj, tuple) else getattr(obj, key)
    return obj


def _set(obj: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(obj, tuple):
        return obj[:key] + (_set(obj[key], rest, value),) + obj[key + 1:]
    return dataclasses.replace(obj, **{key: _set(getattr(obj, key), rest, value)})


_TREE = (Stmt, SwitchCase, Expr)


def _children(obj: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(obj, tuple):
        yield from enumerate(obj)
    elif isinstance(obj, (*_TREE, Program)):
        for f in dataclasses.fields(obj):
            if f.name in ("type", "note", "buffers", "local_type", "local_counters"):
                continue
            yield f.name, getattr(obj, f.name)


def _walk(obj: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every node under ``obj`` with its path, parents first."""
    yield path, obj
    if isinstance(obj, (tuple, *_TREE, Program)):
        for key, child in _children(obj):
            if isinstance(child, (tuple, *_TREE)):
                yield from _walk(child, (*path, key))


def _blocks(p: Program) -> list[Path]:
    """Paths of every statement list, outermost first."""
    return [path for path, node in _walk(p) if isinstance(node, tuple) and path
            and path[-1] in ("body", "then", "orelse", "default")]


def _exprs(p: Program) -> list[Path]:
    return [path for path, node in _walk(p) if isinstance(node, Expr)]


def _names(p: Program) -> set[str]:
    """Names read anywhere (variables, arrays, buffers), outputs included."""
    used = set()
    for _, node in _walk(p):
        if isinstance(node, Var):
            used.add(node.name)
        elif isinstance(node, Load):
            used.add(node.buffer)
        elif isinstance(node, Assign | LocalPhase):
            used.add(node.var)
        elif isinstance(node, Store):
            used.add(node.buffer)
        elif isinstance(node, Atomic) and node.space == "global":
            used.add("gcnt")
    used.update(what.split("[")[0] for _, what in p.outputs)
    return used


def _jumps_to(stmts: tuple[Stmt, ...], what: tuple[str, ...]) -> bool:
    """Whether a ``break``/``continue`` in ``stmts`` targets the construct holding them."""
    for s in stmts:
        if isinstance(s, Jump) and s.what in what:
            return True
        if isinstance(s, If) and _jumps_to(s.then + s.orelse, what):
            return True
        if isinstance(s, Switch) and "continue" in what and any(
                _jumps_to(c.body, ("continue",)) for c in s.cases):
            return True
        if isinstance(s, Switch) and "continue" in what and _jumps_to(s.default, ("continue",)):
            return True
    return False


def _subst(obj: Any, name: str, value: Expr) -> Any:
    """``obj`` with every ``Var(name)`` replaced by ``value``."""
    for path, node in reversed(list(_walk(obj))):
        if isinstance(node, Var) and node.name == name:
            obj = _set(obj, path, value)
    return obj


# --- candidates --------------------------------------------------------------------------------

def _zero(t: CType) -> Const:
    return Const(t, 0.0 if t.is_float else 0)


def _launches(p: Program) -> Iterator[Program]:
    if p.global_size != p.local_size:
        yield p.replace(global_size=p.local_size)
    for d, n in enumerate(p.local_size):
        for smaller in (1, n // 2):
            if 1 <= smaller < n:
                local = p.local_size[:d] + (smaller,) + p.local_size[d + 1:]
                scale = p.global_size[d] // n
                size = p.global_size[:d] + (smaller * scale,) + p.global_size[d + 1:]
                yield p.replace(local_size=local, global_size=size)


def _deletions(p: Program) -> Iterator[Program]:
    for path in _blocks(p):
        stmts = _get(p, path)
        size = len(stmts)
        while size >= 1:
            for start in range(0, len(stmts), size):
                yield _set(p, path, stmts[:start] + stmts[start + size:])
            size //= 2


def _flattenings(p: Program) -> Iterator[Program]:
    for path in _blocks(p):
        stmts = _get(p, path)
        for i, s in enumerate(stmts):
            bodies: list[tuple[Stmt, ...]] = []
            if isinstance(s, If):
                bodies = [s.then, s.orelse]
            elif isinstance(s, Switch):
                bodies = [c.body for c in s.cases if not _jumps_to(c.body, ("break",))]
                if not _jumps_to(s.default, ("break",)):
                    bodies.append(s.default)
            elif isinstance(s, Loop):
                if s.limit > 1:
                    yield _set(p, (*path, i), dataclasses.replace(s, limit=1))
                if s.bound is not None:
                    yield _set(p, (*path, i), dataclasses.replace(s, bound=None))
                if s.kind != "for":
                    yield _set(p, (*path, i), dataclasses.replace(s, kind="for"))
                if not _jumps_to(s.body, ("break", "continue")):
                    first = Const(UINT, 1 if s.kind == "while" else 0)
                    bodies = [_subst(s.body, s.var, first)]
            elif isinstance(s, LocalPhase) and s.kind != "neighbour":
                yield _set(p, (*path, i), dataclasses.replace(s, kind="neighbour", index=None))
            for body in bodies:
                yield _set(p, path, stmts[:i] + body + stmts[i + 1:])


def _simplifications(p: Program) -> Iterator[Program]:
    for path in _exprs(p):
        e = _get(p, path)
        if isinstance(e, Const):
            if e.value not in (0, 1):
                yield _set(p, path, _zero(e.type))
            continue
        yield _set(p, path, _zero(e.type))
        if e.type != FLOAT:
            yield _set(p, path, Const(e.type, 1))
        children = e.args if isinstance(e, Call) else ()
        for c in children:
            if c.type == e.type:
                yield _set(p, path, c)


def _cleanups(p: Program) -> Iterator[Program]:
    # outputs, one at a time (the layout stays: an unwritten slot keeps its pattern)
    for i in range(len(p.outputs)):
        yield p.replace(outputs=p.outputs[:i] + p.outputs[i + 1:])
    used = _names(p)
    for i, (name, _, _) in enumerate(p.variables):
        if name not in used:
            yield p.replace(variables=p.variables[:i] + p.variables[i + 1:])
    for i, (name, _, _) in enumerate(p.arrays):
        if name not in used:
            yield p.replace(arrays=p.arrays[:i] + p.arrays[i + 1:])
    for i, b in enumerate(p.buffers):
        if b.role != "out" and b.name not in used:
            yield p.replace(buffers=p.buffers[:i] + p.buffers[i + 1:])
    if p.local_type is not None and not any(isinstance(n, LocalPhase) for _, n in _walk(p)):
        yield p.replace(local_type=None)
    if p.local_counters is not None and not any(
            isinstance(n, Atomic) and n.space == "local" for _, n in _walk(p)) and not any(
            w.startswith("lcnt") for _, w in p.outputs):
        yield p.replace(local_counters=None)
    yield from _compactions(p)


def _compactions(p: Program) -> Iterator[Program]:
    """Output slots renumbered from 0 (smaller output buffers)."""
    types = p.types()
    kinds = {what: (types.get(what.split("[")[0]) or UINT).is_float for _, what in p.outputs}
    ints = [w for _, w in p.outputs if not kinds[w]]
    floats = [w for _, w in p.outputs if kinds[w]]
    if len(ints) == p.int_slots and len(floats) == p.float_slots:
        return
    buffers = []
    for b in p.buffers:
        if b.name == "out":
            b = Buffer("out", b.type, max(len(ints), 1), "out")
        elif b.name == "fout":
            if not floats:
                continue
            b = Buffer("fout", b.type, len(floats), "out")
        buffers.append(b)
    yield p.replace(outputs=tuple(enumerate(ints)) + tuple(enumerate(floats)),
                    int_slots=max(len(ints), 1), float_slots=len(floats),
                    buffers=tuple(buffers))


_PASSES: tuple[Callable[[Program], Iterator[Program]], ...] = (
    _launches, _deletions, _flattenings, _cleanups, _simplifications)


def _candidates(p: Program) -> Iterator[Program]:
    for make in _PASSES:
        yield from make(p)


# --- the search --------------------------------------------------------------------------------

def same_difference(diff: Difference) -> Callable[[list[Difference]], bool]:
    """A test that a run still shows ``diff``: the same kind between the same implementations
    (and, for a mismatch, in the same buffer)."""
    def test(found: list[Difference]) -> bool:
        return any(d.signature == diff.signature and d.buffer == diff.buffer for d in found)
    return test


@dataclasses.dataclass
class Reduction:
    """The reduced program and how the search went."""

    program: Program
    difference: Difference | None
    tests: int
    accepted: int
    seconds: float
    source: str


def _statements(p: Program) -> int:
    return sum(1 for _, n in _walk(p) if isinstance(n, Stmt))


Oracle = Callable[[list[Program]], list[Difference | None]]


def difference_oracle(difference: Difference, *, rtl: bool | None = None) -> Oracle:
    """The usual oracle: run candidates (a batch at a time) on PoCL and the emulator, and on
    the RTL when ``rtl`` (default: when ``difference`` involves it); a candidate is kept when
    it shows :func:`same_difference`."""
    if rtl is None:
        rtl = "rtl" in difference.impls
    keep = same_difference(difference)

    def oracle(cands: list[Program]) -> list[Difference | None]:
        renamed = [c.replace(name=f"{c.name}_r{i}") for i, c in enumerate(cands)]
        outs = run_batch(renamed, rtl=(lambda _: True) if rtl else None, opinions=False)
        result = []
        for c, o in zip(cands, outs, strict=True):
            found = [dataclasses.replace(d, kernel=c.name) for d in o.differences]
            result.append(next((d for d in found if keep([d])), None))
        return result
    return oracle


def reduce_program(program: Program, difference: Difference, *,
                   oracle: Oracle | None = None, max_tests: int = 3000, batch: int = 6,
                   log: Callable[[str], None] | None = None) -> Reduction:
    """Shrink ``program`` while ``oracle`` says the difference persists (default:
    :func:`difference_oracle` of ``difference``). At most ``max_tests`` candidates are
    tried, ``batch`` at a time."""
    oracle = oracle or difference_oracle(difference)
    start = time.perf_counter()
    seen = {_key(program)}
    tests = accepted = 0
    current = program
    last: Difference | None = difference
    progress = True
    while progress and tests < max_tests:
        progress = False
        pending: list[Program] = []
        for cand in _candidates(current):
            key = _key(cand)
            if key in seen:
                continue
            seen.add(key)
            pending.append(cand)
            if len(pending) < batch:
                continue
            hit = _try(oracle, pending)
            tests += len(pending)
            pending = []
            if hit is not None or tests >= max_tests:
                break
        else:
            hit = _try(oracle, pending) if pending else None
            tests += len(pending)
        if hit is not None:
            current, last = hit
            accepted += 1
            progress = True
            if log:
                log(f"{tests} tests, {_statements(current)} statements")
    return Reduction(current, last, tests, accepted, time.perf_counter() - start,
                     render(current))


def _key(p: Program) -> tuple:
    """What makes a candidate different: its kernel text, launch and buffers."""
    return render(p, with_prelude=False), p.global_size, p.local_size, p.buffers


def _try(oracle: Oracle, pending: list[Program]) -> tuple[Program, Difference] | None:
    """The first candidate of ``pending`` that keeps the difference, confirmed alone when it
    was tested with others (a kernel's code can depend on the others in its file: clang
    optimises the shared helpers over all their callers)."""
    for cand, diff in zip(pending, oracle(pending), strict=True):
        if diff is not None and len(pending) > 1:
            diff = oracle([cand])[0]
        if diff is not None:
            return cand, diff
    return None
