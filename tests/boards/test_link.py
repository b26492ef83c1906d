"""The host side of the link against the bridge's reference model: commands, block splitting,
errors, and the faults of a serial line (corrupted and dropped bytes, a stalled line, lost
answers), each ending in a retry with nothing lost or done twice, or in a one-line error; the
session (a new host is never taken for the last one, a board reset between requests is
noticed) and closing."""

from __future__ import annotations

import numpy as np
import pytest

from boards.bridge_model import BridgeModel, ModelTransport, Registers
from boards.link import HostLink
from boards.protocol import (END, MAX_WORDS, VERSION, Answer, BoardReset, Command, LinkError,
                             Request, Status, slip_encode)

DOORBELL = 0x10


def _bridge(**kw) -> BridgeModel:
    regs = Registers({0x0: 0x47505531, 0x4: 0, DOORBELL: 0})
    return BridgeModel(regs, 16384, memory_base=0x1000, cu_hz=50_000_000, bus_hz=25_000_000,
                       **kw)


def _link(bridge, **faults) -> HostLink:
    """A link to ``bridge`` with its session open; then the line's ``faults``."""
    transport = ModelTransport(bridge)
    link = HostLink(transport, timeout=0.02, retries=3)
    link.connect()
    for name, fault in faults.items():
        setattr(transport, name, fault)
    return link


def test_commands_reach_registers_and_memory():
    bridge = _bridge()
    link = _link(bridge)
    info = link.info()
    assert (info.version, info.memory_bytes, info.cu_hz) == (VERSION, 16384, 50_000_000)
    assert link.read_reg(0x0) == 0x47505531
    link.write_reg(0x4, 0xDEADBEEF)
    assert bridge.registers.values[0x4] == 0xDEADBEEF
    data = np.arange(3000, dtype=np.uint32).tobytes()           # 12,000 bytes: 12 blocks
    link.write_mem(0x1000 + 64, data)
    assert bytes(bridge.memory[64:64 + len(data)]) == data
    assert link.read_mem(0x1000 + 64, len(data)) == data
    assert bridge.executed.count(Command.WRITE_MEM) == -(-3000 // MAX_WORDS)


def test_block_size_follows_the_bridge():
    bridge = _bridge(max_words=16)
    link = _link(bridge)
    link.info()
    link.write_mem(0x1000, bytes(256))
    assert bridge.executed.count(Command.WRITE_MEM) == 4


def test_refusals_are_one_line_errors_and_leave_memory_alone():
    bridge = _bridge()
    link = _link(bridge)
    with pytest.raises(LinkError, match=r"READ_REG refused by the board: BUS_ERROR$"):
        link.read_reg(0x44)
    with pytest.raises(LinkError, match="WRITE_MEM refused by the board: OUT_OF_RANGE"):
        link.write_mem(0x1000 + 16380, bytes(8))                 # runs past the end
    assert not any(bridge.memory)
    with pytest.raises(LinkError, match="BAD_COMMAND"):
        link.request(0x7F)
    with pytest.raises(LinkError, match="BAD_LENGTH"):
        link.request(Command.READ_REG, b"\x00")
    with pytest.raises(ValueError, match="whole words"):
        link.read_mem(0x1002, 8)


def _nth(n, change):
    """A fault applied to the n-th crossing only."""
    count = [0]

    def fault(data: bytes) -> bytes:
        count[0] += 1
        return change(data) if count[0] == n else data
    return fault


def _flip(data: bytes) -> bytes:
    """One bit of a middle byte flipped (the CRC must catch it; a flip that made a frame
    delimiter would be a dropped byte's case)."""
    b = bytearray(data)
    mid = len(b) // 2
    b[mid] ^= 0x01 if b[mid] ^ 0x01 != END else 0x02
    return bytes(b)


def _drop_byte(data: bytes) -> bytes:
    return data[:3] + data[4:]


@pytest.mark.parametrize("where", ["to_board", "to_host"])
@pytest.mark.parametrize("fault", [_flip, _drop_byte, lambda d: b""],
                         ids=["corrupted", "dropped-byte", "lost"])
def test_a_damaged_exchange_is_retried_and_nothing_is_lost(where, fault):
    bridge = _bridge()
    link = _link(bridge, **{where: _nth(2, fault)})
    link.write_mem(0x1000, bytes(range(64)))
    assert link.read_mem(0x1000, 64) == bytes(range(64))        # the damaged exchange
    assert link.resent == 1
    assert bytes(bridge.memory[:64]) == bytes(range(64))


def test_a_repeated_register_write_rings_once():
    """The answer to a doorbell write is lost: the host sends it again, the bridge answers
    from the first execution and the register is written once."""
    bridge = _bridge()
    link = _link(bridge, to_host=_nth(1, lambda d: b""))
    link.write_reg(DOORBELL, 1)
    assert bridge.registers.writes == [(DOORBELL, 1)] and link.resent == 1
    link.write_reg(DOORBELL, 1)                          # a new request is executed again
    assert bridge.registers.writes == [(DOORBELL, 1), (DOORBELL, 1)]


def test_a_late_answer_to_an_earlier_request_is_ignored():
    """The first answer comes after the host has given up on it (the retry's answer came
    first): it arrives with the next request's answer, whose sequence number it does not
    have, and is dropped."""
    bridge = _bridge()
    held: list[bytes] = []

    def late(data: bytes) -> bytes:
        crossing = len(held)
        held.append(data)
        if crossing == 0:
            return b""                                   # answer to READ_REG 0x0, try 1
        if crossing == 2:
            return held[0] + data                        # ... arrives during READ_REG 0x4
        return data
    link = _link(bridge, to_host=late)
    assert link.read_reg(0x0) == 0x47505531
    bridge.registers.values[0x4] = 99
    assert link.read_reg(0x4) == 99
    assert (link.resent, link.dropped) == (1, 1)


def test_a_silent_board_gives_a_one_line_error_in_bounded_time():
    bridge = _bridge()
    link = _link(bridge, to_board=lambda d: b"")
    with pytest.raises(LinkError) as info:
        link.read_reg(0x0)
    message = str(info.value)
    assert "\n" not in message
    assert message == ("bridge model: no answer to READ_REG after 4 tries of 0.02 s: is the "
                       "board connected and its bitstream loaded?")


def test_a_line_that_always_corrupts_requests_says_so():
    link = _link(_bridge(), to_board=_flip)
    with pytest.raises(LinkError, match="the board saw a corrupted request to INFO after 4"):
        link.info()


def test_a_register_block_is_one_exchange_per_max_words():
    bridge = _bridge(max_words=2)
    bridge.registers.values.update({0x8: 8, 0xC: 12})
    link = _link(bridge)
    link.info()
    assert link.read_regs(0x0, 4) == [0x47505531, 0, 8, 12]
    assert link.read_regs(0x1000, 1) == [0]                         # the memory window
    assert bridge.executed.count(Command.READ_REGS) == 3
    with pytest.raises(LinkError, match=r"READ_REGS refused by the board: BUS_ERROR$"):
        link.read_regs(DOORBELL, 2)                                  # nothing at 0x14


def test_a_new_host_is_not_taken_for_the_last_one():
    """A second host (a new process) whose doorbell write has the same sequence number and
    bytes as the last request of the host before: its HELLO made the bridge forget that
    request, so the write is done, not answered as a repetition."""
    bridge = _bridge()
    first = _link(bridge)
    first.write_reg(DOORBELL, 1)
    second = HostLink(ModelTransport(bridge), timeout=0.02)
    second.connect()
    assert second.session == bridge.session != first.session
    second._seq = first._seq - 1                                     # the same next number
    second.write_reg(DOORBELL, 1)
    assert bridge.registers.writes == [(DOORBELL, 1), (DOORBELL, 1)]


def test_a_stale_answer_from_an_earlier_host_is_not_the_new_session():
    """Answers to an earlier host's HELLO still in the line, one for every sequence number,
    naming its session: the new host takes only the answer naming its own."""
    transport = ModelTransport(_bridge())
    transport._pending = b"".join(slip_encode(Answer(seq, Status.OK, b"\xad\xde\x00\x00").pack())
                                  for seq in range(256))
    link = HostLink(transport, timeout=0.02)
    assert link.connect() == transport.bridge.session
    assert link.dropped == 256 and link.resent == 0


def test_a_board_reset_between_requests_is_noticed_once_and_for_all():
    """The board is reset (or reflashed) while the host does nothing: the next request is
    refused (``NO_SESSION``) and says so in one line, and so is every later one, without
    reaching the board, until the host connects again."""
    bridge = _bridge()
    link = _link(bridge)
    assert link.read_reg(0x0) == 0x47505531
    bridge.reset()
    with pytest.raises(BoardReset) as exc:
        link.write_reg(DOORBELL, 1)
    assert str(exc.value) == ("bridge model: the board was reset or reflashed since this host "
                              "connected (it refused WRITE_REG: NO_SESSION); what the host "
                              "knew of it may be stale")
    executed = list(bridge.executed)
    with pytest.raises(BoardReset, match="NO_SESSION\\); connect again before READ_REG$"):
        link.read_reg(0x0)
    with pytest.raises(BoardReset, match="connect again$"):
        link.check_session()
    assert bridge.executed == executed and bridge.registers.writes == []
    link.connect()
    link.check_session()
    link.write_reg(DOORBELL, 1)
    assert bridge.registers.writes == [(DOORBELL, 1)]


def test_another_host_taking_the_board_is_noticed():
    bridge = _bridge()
    link = _link(bridge)
    link.check_session()
    _link(bridge)                                                    # another host's HELLO
    with pytest.raises(BoardReset, match="another host opened a session with the board"):
        link.check_session()


def test_a_closed_link_refuses_requests():
    closed = []
    transport = ModelTransport(_bridge())
    transport.close = lambda: closed.append(1)
    link = HostLink(transport, timeout=0.02)
    link.read_reg(0x0)
    link.close()
    link.close()
    assert closed == [1]
    with pytest.raises(LinkError, match="^bridge model: the link is closed$"):
        link.read_reg(0x0)


def test_a_bitstream_of_the_first_protocol_is_named():
    """A bridge of protocol version 1 answers HELLO BAD_COMMAND: the host says what that
    means instead of refusing its first register read."""
    class Version1(BridgeModel):
        def _answer(self, payload):
            request = Request.unpack(payload)
            if request.command == Command.HELLO:
                return Answer(request.seq, Status.BAD_COMMAND)
            return super()._answer(payload)
    bridge = Version1(Registers({0x0: 1}), 1024)
    link = HostLink(ModelTransport(bridge), timeout=0.02)
    with pytest.raises(LinkError) as exc:
        link.read_reg(0x0)
    assert str(exc.value) == ("bridge model: the board does not know HELLO: its bitstream "
                              "speaks an older host link (version 1): rebuild it")
