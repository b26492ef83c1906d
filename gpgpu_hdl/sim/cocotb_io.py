"""Simulator-side helpers for the cocotb testbenches that :meth:`.VerilatorBuild.run` starts.

This module is imported by the Python that runs *inside* the simulator, so it imports only the
standard library and numpy at load time (cocotb is imported inside the functions that need it).

Parameters and results
----------------------
:func:`load_params` returns the ``params`` dict given to :meth:`.VerilatorBuild.run`;
:func:`save_results` hands a dict back to it. Both travel as a JSON file plus, when they hold
numpy arrays, an ``.npz`` file next to it (see :func:`write_data`), whose paths are passed in the
environment variables :data:`PARAMS_ENV` and :data:`RESULTS_ENV`.

Memory access
-------------
``await write_words(dut.gmem.mem, start, words)`` and ``await read_words(dut.gmem.mem, start,
count)`` move whole blocks of words into and out of an ``amaranth.lib.memory.Memory``. When the
memory was named in ``build(..., memories=["gmem.mem"])``, the design carries bulk-access hooks
(``$readmemh``/``$writememh`` triggered from cocotb, see :func:`hook_names`) and a block moves at
2-4 million words/s in and 4-7 million words/s out (2**18 words in about 0.1 s); otherwise every
word is one VPI access (about 0.15-0.2 million words/s, mostly creating a VPI handle per word).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "PARAMS_ENV", "RESULTS_ENV", "MemoryHooks", "hook_names",
    "load_params", "save_results", "write_data", "read_data",
    "write_words", "read_words",
]

#: Environment variable holding the path of the parameters' JSON file.
PARAMS_ENV = "GPGPU_SIM_PARAMS"
#: Environment variable holding the path the results' JSON file must be written to.
RESULTS_ENV = "GPGPU_SIM_RESULTS"

_ARRAY_KEY = "__ndarray__"


# --- parameters and results ---------------------------------------------------------------

def _encode(obj: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError(f"{where}: arrays of Python objects cannot be passed, only numbers")
        name = f"a{len(arrays)}"
        arrays[name] = obj
        return {_ARRAY_KEY: name}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: dict keys must be str, not {type(key).__name__} "
                                f"({key!r})")
            if key == _ARRAY_KEY:
                raise TypeError(f"{where}: the key {_ARRAY_KEY!r} is reserved")
            out[key] = _encode(value, arrays, f"{where}[{key!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [_encode(value, arrays, f"{where}[{i}]") for i, value in enumerate(obj)]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"{where}: {type(obj).__name__} cannot be passed to or from a simulation "
                    "(use JSON types and numpy arrays)")


def _decode(obj: Any, arrays: Any) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_ARRAY_KEY}:
            return arrays[obj[_ARRAY_KEY]]
        return {key: _decode(value, arrays) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_decode(value, arrays) for value in obj]
    return obj


def write_data(data: dict, path: Path | str) -> None:
    """Write ``data`` to the JSON file ``path``, its numpy arrays to ``path`` with ``.npz``.

    ``data`` holds JSON types (dict keys are str; tuples come back as lists) and numpy arrays
    (numeric dtypes) anywhere in it. Both files are replaced atomically, the JSON file last, so
    a reader that finds the JSON file finds the matching arrays.
    """
    path = Path(path)
    if not isinstance(data, dict):
        raise TypeError(f"simulation parameters and results are dicts, not {type(data).__name__}")
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(data, arrays, "data")
    npz = path.with_suffix(".npz")
    if arrays:
        tmp = npz.with_name(npz.name + ".tmp")
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, npz)
    else:
        npz.unlink(missing_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(tree))
    os.replace(tmp, path)


def read_data(path: Path | str) -> dict:
    """Read what :func:`write_data` wrote (arrays are loaded into memory)."""
    path = Path(path)
    tree = json.loads(path.read_text())
    npz = path.with_suffix(".npz")
    if not npz.is_file():
        return _decode(tree, {})
    with np.load(npz, allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files}
    return _decode(tree, arrays)


def _env_path(name: str) -> Path:
    value = os.environ.get(name)
    if not value:
        from ..errors import SimulationError
        raise SimulationError(f"${name} is not set: this testbench must be started by "
                              "gpgpu_hdl.sim.verilator.VerilatorBuild.run")
    return Path(value)


def load_params() -> dict:
    """The ``params`` dict given to :meth:`.VerilatorBuild.run` (arrays as numpy arrays)."""
    return read_data(_env_path(PARAMS_ENV))


def save_results(results: dict) -> None:
    """Hand ``results`` back to :meth:`.VerilatorBuild.run` (JSON types and numpy arrays)."""
    write_data(results, _env_path(RESULTS_ENV))


# --- memory access ------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryHooks:
    """Names of the bulk-access hooks added to the top module for one memory.

    The hooks are 1-bit toggles (``load``, ``dump``) whose every change runs
    ``$readmemh(load_file, <memory>)`` or ``$writememh(dump_file, <memory>, first, last)``;
    ``first``/``last`` are 32-bit registers. The files are relative to the simulator's working
    directory (the run's ``test_dir``), so concurrent runs do not clash.
    """

    load: str
    dump: str
    first: str
    last: str
    load_file: str
    dump_file: str


def hook_names(memory: str) -> MemoryHooks:
    """Hook names for the memory at hierarchical path ``memory`` below the top (``gmem.mem``)."""
    mangled = memory.replace(".", "__")
    return MemoryHooks(
        load=f"gpgpu_sim_load__{mangled}",
        dump=f"gpgpu_sim_dump__{mangled}",
        first=f"gpgpu_sim_first__{mangled}",
        last=f"gpgpu_sim_last__{mangled}",
        load_file=f"gpgpu_sim__{mangled}.in.hex",
        dump_file=f"gpgpu_sim__{mangled}.out.hex",
    )


_hooks_cache: dict[str, tuple | None] = {}


def _find_hooks(handle) -> tuple | None:
    """(top, hooks) if the design carries bulk-access hooks for this memory, else None."""
    import cocotb

    path = handle._path
    if path not in _hooks_cache:
        top = cocotb.top
        prefix = top._path + "."
        found = None
        if path.startswith(prefix):
            names = hook_names(path[len(prefix):])
            try:
                signals = tuple(getattr(top, name) for name in
                                (names.load, names.dump, names.first, names.last))
            except AttributeError:
                pass
            else:
                found = (names, *signals)
        _hooks_cache[path] = found
    return _hooks_cache[path]


def _geometry(handle, start: int, count: int) -> int:
    """Check the range against the memory, return the word width."""
    try:
        rng = handle.range
    except AttributeError:
        raise TypeError(f"{handle._path} is not a memory (an unpacked array)") from None
    lo, hi = min(rng.left, rng.right), max(rng.left, rng.right)
    if count < 0 or start < lo or start + count - 1 > hi:
        raise IndexError(f"words {start}..{start + count - 1} are outside {handle._path}"
                         f"[{lo}..{hi}]")
    width = len(handle[lo])
    if width > 32:
        raise TypeError(f"{handle._path} has {width}-bit words; only up to 32 bits are supported")
    return width


def _as_words(words, width: int) -> np.ndarray:
    arr = np.asarray(words)
    if arr.ndim != 1:
        raise ValueError(f"words must be a 1-D array, not {arr.ndim}-D")
    if arr.dtype != np.uint32:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"words must be integers, not {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > 0xFFFF_FFFF):
            raise ValueError("words must lie in 0..2**32-1")
        arr = arr.astype(np.uint32)
    if width < 32 and arr.size and int(arr.max()) >> width:
        raise ValueError(f"words do not fit the memory's {width}-bit width")
    return arr


async def write_words(handle, start: int, words, *, method: str = "auto") -> None:
    """Write ``words`` (1-D, uint32 or integers that fit) to ``handle[start:start+len(words)]``.

    ``handle`` is the cocotb handle of the memory array (``dut.gmem.mem``). ``method`` is
    ``"auto"`` (the bulk hooks when the design has them, else VPI), ``"hooks"`` or ``"vpi"``.
    The words are in the memory when the coroutine returns; it lets one simulator time step
    pass (precision unit), so call it while the design does not access that memory.
    """
    from cocotb.triggers import Timer

    arr = _as_words(words, 32)
    width = _geometry(handle, start, arr.size)
    arr = _as_words(arr, width)
    if arr.size == 0:
        return
    hooks = _select(handle, method)
    if hooks is None:
        raw = handle._handle
        for index, value in enumerate(arr.tolist(), start):
            raw.get_handle_by_index(index).set_signal_val_int(0, value)
    else:
        names, load, _dump, _first, _last = hooks
        digits = (width + 3) // 4
        text = np.frombuffer(arr.astype(">u4").tobytes().hex().encode("ascii"), dtype=np.uint8)
        lines = np.empty((arr.size, digits + 1), dtype=np.uint8)
        lines[:, :digits] = text.reshape(-1, 8)[:, 8 - digits:]
        lines[:, digits] = ord("\n")
        with open(names.load_file, "wb") as f:
            f.write(b"@%x\n" % start)
            f.write(lines.tobytes())
        load.value = 1 - int(load.value)
    await Timer(1)


async def read_words(handle, start: int, count: int, *, method: str = "auto") -> np.ndarray:
    """Read ``count`` words from ``handle[start:]`` as a uint32 array (see :func:`write_words`).

    With the bulk hooks this lets one simulator time step pass; through VPI it does not wait.
    """
    from cocotb.triggers import Timer

    width = _geometry(handle, start, count)
    if count == 0:
        return np.zeros(0, dtype=np.uint32)
    hooks = _select(handle, method)
    if hooks is None:
        raw = handle._handle
        values = [raw.get_handle_by_index(i).get_signal_val_long()
                  for i in range(start, start + count)]
        return (np.array(values, dtype=np.int64) & ((1 << width) - 1)).astype(np.uint32)
    names, _load, dump, first, last = hooks
    first.value = start
    last.value = start + count - 1
    dump.value = 1 - int(dump.value)
    await Timer(1)
    return _parse_hex(Path(names.dump_file).read_bytes(), count, (width + 3) // 4)


def _select(handle, method: str):
    if method not in ("auto", "hooks", "vpi"):
        raise ValueError(f"method must be 'auto', 'hooks' or 'vpi', not {method!r}")
    if method == "vpi":
        return None
    hooks = _find_hooks(handle)
    if hooks is None and method == "hooks":
        raise LookupError(f"{handle._path} has no bulk-access hooks; name it in "
                          "build(..., memories=[...])")
    return hooks


def _parse_hex(data: bytes, count: int, digits: int) -> np.ndarray:
    if len(data) == count * (digits + 1) and digits == 8:
        hexdigits = np.frombuffer(data, dtype=np.uint8).reshape(count, 9)[:, :8].tobytes()
        return np.frombuffer(bytes.fromhex(hexdigits.decode("ascii")), dtype=">u4").astype(
            np.uint32)
    tokens = [t for t in data.decode("ascii").split()
              if not t.startswith("//") and not t.startswith("@")]
    if len(tokens) != count:
        raise RuntimeError(f"$writememh wrote {len(tokens)} words, expected {count}")
    return np.array([int(t, 16) for t in tokens], dtype=np.uint32)
