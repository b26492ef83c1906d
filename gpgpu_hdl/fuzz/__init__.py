"""Differential testing with generated kernels: random well-defined OpenCL C programs
(:mod:`.generate`, over the program model of :mod:`.program`), run on PoCL, the golden-model
emulator and the RTL and compared (:mod:`.differential`, with :mod:`.pocl` and
:mod:`.compare`), failing programs shrunk to small reproducers (:mod:`.reduce`) and kept as
regression cases (:mod:`.regression`). See ``docs/fuzz.md``.

The package imports nothing at load time, so that :mod:`.pocl` and :mod:`.compare` stay cheap
to use on their own (the example suite does).
"""
