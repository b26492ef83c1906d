"""Up/down counts whose increment and decrement come late in the cycle (a take or a pop at the
end of a handshake's logic): the next count, and whether it is below a limit, chosen by them
among values worked out from the count register alone, so that they select rather than feed
an adder and a compare. For the pipelined compute unit's memory units."""

from amaranth.hdl import Mux

__all__ = ["count_next", "below_next"]


def count_next(count, up, down):
    """``count + up - down`` (modulo its width, as the adder's), with ``up`` and ``down``
    choosing among ``count - 1``, ``count`` and ``count + 1``."""
    return Mux(up, Mux(down, count, count + 1), Mux(down, count - 1, count))


def below_next(count, up, down, limit: int):
    """Whether :func:`count_next` is below ``limit``, from compares of ``count`` with constants
    (``down`` only when ``count`` is not 0)."""
    return Mux(up, Mux(down, count < limit, count < limit - 1),
               Mux(down, count <= limit, count < limit))
