"""The import graph of the project's packages: every import points down the layers, and no
module imports itself back through others.

The layers, bottom first (a module may import its own layer and the ones below):

====  ================================================================================
0     ``gpgpu_hdl`` itself (its version) and ``errors``
1     ``isa`` (the instruction table, decoder, disassembler, code objects), ``toolchain``
      (LLVM, locks, atomic writes) and ``synth`` (Yosys and nextpnr)
2     ``dispatch``: the launch ABI every executor shares
3     ``emu`` (the golden model) and ``config`` (the one typed configuration)
4     ``cu``: the compute unit's gateware
5     ``soc``: the SoC shell around compute units
6     ``runtime``: the host API, the emulator backend and the backend registry
7     ``sim``: Verilator, the simulation harness, the RTL backends, traces, lockstep
8     ``gpgpu_hdl.cli`` and ``cliutil``: the ``gpgpu`` command; ``fuzz``: generated kernels
      run on PoCL, the emulator and the RTL, compared and reduced
9     ``trimmer``: the tool built on the generator (never imported by it)
10    ``boards``: the host link, board tops, builds and flashing
11    ``cocotb_tests``: testbenches that run inside the simulator
====  ================================================================================

The runtime opens the RTL backends by name (:mod:`gpgpu_hdl.runtime.backends`), not by
import, and so does the configuration the pipelined unit's block-RAM estimate
(:mod:`gpgpu_hdl.cu.block_rams`, when it checks a pipelined configuration). Imports inside
functions count like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gpgpu_hdl", "trimmer", "boards", "cocotb_tests")

#: module name prefix -> layer; the longest matching prefix wins
LAYERS = {
    "gpgpu_hdl": 0, "gpgpu_hdl.errors": 0,
    "gpgpu_hdl.isa": 1, "gpgpu_hdl.toolchain": 1, "gpgpu_hdl.synth": 1,
    "gpgpu_hdl.dispatch": 2,
    "gpgpu_hdl.emu": 3, "gpgpu_hdl.config": 3,
    "gpgpu_hdl.cu": 4,
    "gpgpu_hdl.soc": 5,
    "gpgpu_hdl.runtime": 6,
    "gpgpu_hdl.sim": 7,
    "gpgpu_hdl.cli": 8, "gpgpu_hdl.cliutil": 8, "gpgpu_hdl.__main__": 8,
    "gpgpu_hdl.fuzz": 8,
    "trimmer": 9,
    "boards": 10,
    "cocotb_tests": 11,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob(
        "*.py"))}


def layer(name: str) -> int:
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise KeyError(f"{name} is in no layer: add it to LAYERS and to this module's docstring")


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports (``from P import m`` counts as ``P.m`` when that
    is a module, else as ``P``), at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in known else origin
                       for a in node.names]
        else:
            continue
        found |= {t for t in targets if t.split(".")[0] in PACKAGES}
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


def test_every_import_points_down_the_layers():
    upward = [f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
              for a, targets in graph().items() for b in sorted(targets) if layer(b) > layer(a)]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    edges = graph()
    state: dict[str, int] = {}           # 1: on the current path, 2: done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, "\n".join(cycles)


def test_every_module_has_a_layer():
    for name in modules():
        layer(name)


@pytest.mark.parametrize("source, bad", [
    ("from ..sim.trace import compare_traces\n", "gpgpu_hdl.sim.trace"),
    ("def f():\n    from trimmer.policy import trim\n", "trimmer.policy"),
])
def test_the_walk_sees_upward_imports(tmp_path, source, bad):
    """The checker itself: an import of a higher layer, also inside a function, is found."""
    path = tmp_path / "device.py"
    path.write_text(source)
    known = set(modules())
    found = imports("gpgpu_hdl.runtime.device", path, known)
    assert bad in found and layer(bad) > layer("gpgpu_hdl.runtime.device")
