"""Text surgery on Amaranth's Verilog before Verilator compiles it.

:func:`sim_verilog` converts an Amaranth design to the Verilog a simulation wants: its RTLIL
goes to Yosys without the all-zero memory inits (:func:`strip_zero_meminit`). The harness's
2 MiB memory alone was 16.7 million init bits, 25 MB of RTLIL that YoWASP's Yosys took about
100 s to read and write back (the multi-cycle unit's conversion took 154 s; 51 s without them).

:func:`.verilator.build` passes the Verilog through :func:`prepare_verilog`, which applies the
transformations below in order; the build's options choose them. The text is Amaranth's as
written by Yosys (``amaranth.back.verilog.convert(top, name=toplevel, emit_src=False,
strip_internal_attrs=True)``); the patterns rely on its layout. Any problem raises
:class:`~gpgpu_hdl.errors.SimulationError` (a bad ``visibility``: ``ValueError``).

What :func:`.verilator.build` does to the Verilog
-------------------------------------------------
* Amaranth initialises every ``lib.memory.Memory``, and Yosys writes that as one assignment per
  word: 6.4 MB of Verilog for 2**18 words, which took the demo's build from 8.6 s to 21 s.
  All-zero initial blocks are removed (:func:`strip_zero_memory_init`); Verilator starts every
  variable at zero anyway (unless the run asks for ``+verilator+rand+reset+...``).
* A constant that Yosys writes as an ``always @*`` block reading nothing becomes an
  ``initial`` block (:func:`constant_blocks_at_start`): Verilator never runs such a block, so
  the constant was 0 in the model (the pipelined unit's 64-bit carry mask lost its high half).
* ``memories=[...]`` adds bulk-access hooks for those memories to the top module
  (:func:`add_memory_hooks`), used by :func:`.cocotb_io.write_words`/``read_words``.
* ``clock="clk"`` turns that top-level input into a free-running clock inside the design
  (:func:`add_internal_clock`, built with ``--timing``): the testbench must not drive it but can
  still wait on its edges. It is about 4 times faster than cocotb's ``Clock``.
* ``visibility="top"`` keeps only the top module's signals (its ports and the hooks) and the
  hooked memories visible to cocotb (:func:`mark_memories_public` and a Verilator control file,
  :func:`control_file`), instead of every signal (cocotb's ``--public-flat-rw``). Verilator can
  then inline and optimise the rest: the compute unit simulated 5-6 times faster at the same
  -O0, and -O1, which had taken 25 minutes to compile, now compiles in under a minute (19-31
  times faster than before in all, vecadd and matadd_float).

The arguments every build gets, and the measurements on the demo design, are in
:mod:`gpgpu_hdl.sim.verilator`.

Traps
-----
* An internal clock and cocotbext-axi do not mix: its bus models sample ``valid``/``ready`` in
  ``RisingEdge`` callbacks, which then see the values from after the edge, so handshakes are
  miscounted (the SoC lost one AXI response in 34). Drive such designs with cocotb's
  ``Clock`` (``cocotb_tests/soc_tb.py`` does).
* A top-level port named like a member of Verilator's C++ model (``trace``, ``eval``, ``final``,
  ``name``...) breaks the C++ compilation; :func:`prepare_verilog` (so :func:`.verilator.build`)
  rejects such names up front.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import SimulationError
from .cocotb_io import hook_names

__all__ = [
    "VISIBILITY", "RESERVED_PORT_NAMES", "check_visibility", "control_file", "prepare_verilog",
    "sim_verilog", "strip_zero_meminit", "strip_zero_memory_init", "constant_blocks_at_start",
    "add_memory_hooks", "mark_memories_public", "add_internal_clock",
]

#: What a build lets cocotb see: ``"all"`` signals (cocotb's default ``--public-flat-rw``), or
#: the ``"top"`` module's signals and the hooked memories only (faster to compile and simulate).
VISIBILITY = ("all", "top")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_ZERO_INIT = re.compile(
    r"^  initial begin\n"
    r"(?:    (?:\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)\[\d+\] = \d+'[bdh]0+;\n)+"
    r"  end\n",
    re.MULTILINE)


#: an RTLIL ``$meminit_v2`` cell whose data bits are all zero (Amaranth writes one for every
#: memory, initialised or not)
_ZERO_MEMINIT = re.compile(
    r"^  cell \$meminit_v2 \S+\n"
    r"(?:    (?!connect \\DATA )[^\n]*\n)*"
    r"    connect \\DATA \d+'0+\n"
    r"(?:    [^\n]*\n)*"
    r"  end\n",
    re.MULTILINE)


def strip_zero_meminit(rtlil: str) -> str:
    """Remove the RTLIL memory inits that set every word to zero.

    The RTLIL counterpart of :func:`strip_zero_memory_init`, applied before Yosys so that it
    neither reads nor writes them. Inits with any non-zero bit are kept whole.
    """
    return _ZERO_MEMINIT.sub("", rtlil)


def sim_verilog(top, name: str) -> str:
    """The Verilog of Amaranth design ``top`` (module ``name``) for simulation: what
    ``amaranth.back.verilog.convert(top, name=name, emit_src=False, strip_internal_attrs=True)``
    writes, without the all-zero memory inits (:func:`strip_zero_meminit`)."""
    from amaranth.back import rtlil, verilog

    text = strip_zero_meminit(rtlil.convert(top, name=name, emit_src=False))
    # Amaranth's own RTLIL -> Verilog step (Yosys's proc, memory_collect, attribute removal and
    # write_verilog, with the Yosys it finds), private in 0.5: the project pins amaranth < 0.6
    return verilog._convert_rtlil_text(text, strip_internal_attrs=True)


def strip_zero_memory_init(verilog: str) -> str:
    """Remove the initial blocks that only set memory words to zero.

    Yosys writes one line per word for the (always present) init of an Amaranth memory; Verilator
    compiles that into a huge function. Verilator starts all variables at zero, so dropping the
    block changes nothing (unless a run randomises the initial state with
    ``+verilator+rand+reset+2``). Initial blocks with any non-zero word are kept whole.
    """
    return _ZERO_INIT.sub("", verilog)


#: a combinational block that reads nothing: one constant into part of a variable
_CONSTANT_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)always @\*\n(?P<body>[ \t]+[^\n;]+ = \d+'[bdho][0-9a-fA-F_]+;)$",
    re.MULTILINE)


def constant_blocks_at_start(verilog: str) -> str:
    """Turn each ``always @*`` block that assigns a constant (and reads nothing) into an
    ``initial`` block.

    Yosys writes a constant driven into part of a signal that a process also drives (an
    Amaranth struct with a field set to a constant and the others under an ``If``) as
    ``always @* x[0] = 1'h1;``. Verilator never runs such a block (warning ``ALWNEVER``: it
    waits for a change of what the block reads, and it reads nothing), so ``x[0]`` stays 0;
    Amaranth's simulator and synthesis give 1. As an ``initial`` block the constant is there
    from the start, and nothing else drives those bits.
    """
    return _CONSTANT_BLOCK.sub(r"\g<indent>initial\n\g<body>", verilog)


def check_visibility(visibility: str) -> str:
    """``visibility`` if it is one of :data:`VISIBILITY`; ``ValueError`` otherwise."""
    if visibility not in VISIBILITY:
        raise ValueError(f"visibility must be one of {', '.join(map(repr, VISIBILITY))}, "
                         f"not {visibility!r}")
    return visibility


def control_file(toplevel: str) -> str:
    """Verilator control file of a ``visibility="top"`` build: the top module stays visible."""
    return f'`verilator_config\npublic_flat_rw -module "{toplevel}" -var "*"\n'


def _top_module(verilog: str, toplevel: str) -> tuple[re.Match, int]:
    """The header match of module ``toplevel`` and the index of its ``endmodule``."""
    if not _IDENT.fullmatch(toplevel):
        raise SimulationError(f"toplevel must be a plain Verilog identifier, not {toplevel!r}")
    header = re.search(rf"^module {toplevel}\((?P<ports>[^;]*)\);\n", verilog, re.MULTILINE)
    if header is None:
        raise SimulationError(f"the Verilog has no module {toplevel!r} (the `name` given to "
                              "amaranth.back.verilog.convert)")
    end = re.compile(r"^endmodule\b", re.MULTILINE).search(verilog, header.end())
    if end is None:
        raise SimulationError(f"module {toplevel!r} has no endmodule")
    return header, end.start()


def add_memory_hooks(verilog: str, toplevel: str, memories: Iterable[str]) -> str:
    """Add bulk-access hooks to module ``toplevel`` for each memory path in ``memories``.

    A path names the memory array relative to the top, with dots: ``"mem"`` for a memory
    added as ``m.submodules.mem`` to the top, ``"gmem.mem"`` for one added as ``mem`` inside
    the top's submodule ``gmem``. The hooks (names from :func:`.cocotb_io.hook_names`) let
    :func:`.cocotb_io.write_words`/``read_words`` move blocks with ``$readmemh``/``$writememh``
    (hierarchical references, so the memory may sit anywhere below the top). A wrong path fails
    the Verilator build.
    """
    _, end = _top_module(verilog, toplevel)
    blocks = []
    for memory in memories:
        if not all(_IDENT.fullmatch(part) for part in memory.split(".")):
            raise SimulationError(f"memory path must be dotted Verilog identifiers, "
                                  f"not {memory!r}")
        h = hook_names(memory)
        blocks.append(
            f"  // gpgpu_hdl.sim: bulk access to {memory} for cocotb (write_words/read_words)\n"
            f"  reg {h.load} /*verilator public_flat_rw*/ = 1'b0;\n"
            f"  reg {h.dump} /*verilator public_flat_rw*/ = 1'b0;\n"
            f"  reg [31:0] {h.first} /*verilator public_flat_rw*/ = 32'd0;\n"
            f"  reg [31:0] {h.last} /*verilator public_flat_rw*/ = 32'd0;\n"
            f"  always @(posedge {h.load} or negedge {h.load})\n"
            f"    $readmemh(\"{h.load_file}\", {memory});\n"
            f"  always @(posedge {h.dump} or negedge {h.dump})\n"
            f"    $writememh(\"{h.dump_file}\", {memory}, {h.first}, {h.last});\n")
    return verilog[:end] + "".join(blocks) + verilog[end:]


def mark_memories_public(verilog: str, toplevel: str, memories: Iterable[str]) -> str:
    """Mark the declarations of ``memories`` (paths as for :func:`add_memory_hooks`) public.

    With ``visibility="top"`` the build hides every signal below the top module from cocotb;
    :func:`.cocotb_io.write_words`/``read_words`` still need the memory's handle (to check the
    range and find the hooks), so its declaration gets Verilator's ``public_flat_rw``
    metacomment. A memory of the top module itself is already visible. Amaranth names the
    module of submodule ``a.b`` of top ``t`` ``\\t.a.b``.
    """
    for memory in memories:
        *scope, name = memory.split(".")
        if not scope:
            continue
        module = re.escape("\\" + ".".join([toplevel, *scope]) + " ")
        header = re.search(rf"^module {module}\(", verilog, re.MULTILINE)
        if header is None:
            raise SimulationError(f"memory {memory!r}: the Verilog has no module for "
                                  f"{'.'.join([toplevel, *scope])!r}")
        end = re.compile(r"^endmodule\b", re.MULTILINE).search(verilog, header.end())
        body = verilog[header.end():end.start() if end else len(verilog)]
        decls = list(re.finditer(rf"^  reg (?:\[[^\]]+\] )?{re.escape(name)} \[[^\]]+\]",
                                 body, re.MULTILINE))
        if len(decls) != 1:
            raise SimulationError(f"memory {memory!r}: expected one array named {name!r} in "
                                  f"its module, found {len(decls)}")
        at = header.end() + decls[0].end()
        verilog = verilog[:at] + " /*verilator public_flat_rw*/" + verilog[at:]
    return verilog


def add_internal_clock(verilog: str, toplevel: str, clock: str = "clk", *,
                       period_ns: float = 10) -> str:
    """Turn the 1-bit input ``clock`` of module ``toplevel`` into a free-running clock.

    The clock starts low and rises first at ``period_ns / 2``. It needs Verilator's
    ``--timing`` (:data:`.verilator.TIMING_ARGS`). The testbench must not drive the clock, but
    may await its edges; Python then runs only when it awaits something.
    """
    header, end = _top_module(verilog, toplevel)
    ports = [port.strip() for port in header["ports"].split(",")]
    if clock not in ports:
        raise SimulationError(f"module {toplevel!r} has no port {clock!r}")
    if period_ns <= 0:
        raise SimulationError(f"clock period must be positive, not {period_ns}")
    body = verilog[header.end():end]
    decl = re.compile(rf"^  input {re.escape(clock)};\n((?:.*\n)*?)  wire {re.escape(clock)};\n",
                      re.MULTILINE)
    match = decl.search(body)
    if match is None:
        raise SimulationError(f"port {clock!r} of {toplevel!r} is not a 1-bit input")
    half = f"{period_ns / 2:g}"
    body = (body[:match.start()]
            + f"  reg {clock} /*verilator public_flat_rw*/ = 1'b0;\n"
            + f"  always #{half} {clock} = ~{clock};\n"
            + match[1] + body[match.end():])
    new_header = f"module {toplevel}({', '.join(p for p in ports if p != clock)});\n"
    return verilog[:header.start()] + new_header + body + verilog[end:]


#: Names of members of the C++ class Verilator generates for the top module (``Vtop``): a
#: top-level port with one of these names breaks the C++ compilation with an obscure error
#: (a port ``trace`` did: "'void Vtop::trace(...)' conflicts with a previous declaration").
RESERVED_PORT_NAMES = frozenset({
    "atClone", "contextp", "eval", "eval_end_step", "eval_step", "eventsPending", "final",
    "hierName", "modelName", "name", "nextTimeSlot", "prepareClone", "rootp", "threads",
    "trace", "traceBaseModel", "traceCapable", "traceConfig", "vlSymsp",
})


def prepare_verilog(verilog: str, toplevel: str, *, memories: Iterable[str] = (),
                    clock: str | None = None, clock_period_ns: float = 10,
                    visibility: str = "all") -> str:
    """The Verilog text :func:`.verilator.build` compiles (the transformations above, in order).

    Also rejects top-level ports named like members of Verilator's model class
    (:data:`RESERVED_PORT_NAMES`).
    """
    verilog = constant_blocks_at_start(strip_zero_memory_init(verilog))
    header, _ = _top_module(verilog, toplevel)
    clashes = sorted({port.strip() for port in header["ports"].split(",")}
                     & RESERVED_PORT_NAMES)
    if clashes:
        raise SimulationError(
            f"top-level port(s) {', '.join(clashes)} of {toplevel!r} clash with members of the "
            "C++ model class Verilator generates; rename them")
    memories = list(memories)
    if memories:
        verilog = add_memory_hooks(verilog, toplevel, memories)
    if check_visibility(visibility) == "top":
        verilog = mark_memories_public(verilog, toplevel, memories)
    if clock is not None:
        verilog = add_internal_clock(verilog, toplevel, clock, period_ns=clock_period_ns)
    return verilog

