"""Board support: the host link (:mod:`boards.protocol`, :mod:`boards.link`) and the reference
model of the board-side bridge (:mod:`boards.bridge_model`). Board tops, builds and flashing
come next (issue "Boards", docs/hostlink.md)."""
