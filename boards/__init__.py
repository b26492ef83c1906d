"""Board support: the host link (:mod:`boards.protocol`, :mod:`boards.link`) and the reference
model of the board-side bridge (:mod:`boards.bridge_model`), the board's gateware
(:mod:`boards.top`, :mod:`boards.board_top`, :mod:`boards.pll`), the supported boards
(:mod:`boards.platforms`), bitstream builds and flashing (:mod:`boards.build`,
:mod:`boards.flash`), the ``gpgpu board`` commands (:mod:`boards.cli`), the ``"board"`` backend
of ``Device`` (:mod:`boards.device`) and a board simulated under Verilator (:mod:`boards.sim`).
See docs/boards.md and docs/hostlink.md."""
