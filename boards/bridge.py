"""The board side of the host link: requests from the SLIP decoder, executed on the SoC's
AXI4-Lite port, answers to the SLIP encoder. It does what :class:`boards.bridge_model.
BridgeModel` does (the reference its tests compare with), byte for byte.

Board memory is the SoC's block-RAM window (the prefetch buffer, ``window`` in the SoC's
register map), so every command is AXI4-Lite accesses: ``READ_MEM``/``WRITE_MEM`` move one
word per access inside ``memory`` (checked before anything is done, ``OUT_OF_RANGE``
otherwise), ``READ_REG``/``WRITE_REG`` one access anywhere, ``READ_REGS`` one per word
anywhere (all of them before the answer, into the frame buffer, so that a failed one makes the
answer ``BUS_ERROR``). Until a host opens a session with ``HELLO`` after the bridge's reset,
every command but ``INFO`` and ``HELLO`` is refused with ``NO_SESSION``.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from gpgpu_hdl.soc.axi import AxiLiteSignature

from .framing import RX_LAYOUT, TX_LAYOUT, crc16_byte
from .protocol import MAX_WORDS, Command, Info, Status

__all__ = ["BridgeCore"]

#: bytes of a request kept in registers (seq, command, address, value or word count)
_HEAD = 10


class BridgeCore(wiring.Component):
    """Executes host-link requests.

    Parameters
    ----------
    addr_width : int
        The SoC's AXI4-Lite address width.
    memory : (int, int)
        The AXI4-Lite address and size in bytes of the board memory window.
    info : Info
        What ``INFO`` answers (its ``max_words`` limits the blocks).

    Members
    -------
    rx : In(stream.Signature(RX_LAYOUT))
        Frames from :class:`~boards.framing.SlipDecoder`.
    tx : Out(stream.Signature(TX_LAYOUT))
        Answers to :class:`~boards.framing.SlipEncoder`.
    bus : Out(AxiLiteSignature)
        The SoC's host port.
    """

    def __init__(self, *, addr_width: int, memory: tuple[int, int], info: Info) -> None:
        base, size = memory
        if base % 4 or size % 4 or size <= 0 or base + size > 1 << addr_width:
            raise ValueError(f"memory window {base:#x}+{size} must be whole words inside the "
                             f"{addr_width}-bit address space")
        if not 1 <= info.max_words <= MAX_WORDS:
            raise ValueError(f"max_words must be 1 to {MAX_WORDS}, not {info.max_words}")
        self._addr_width = addr_width
        self._memory = (base, size)
        self._info = info
        super().__init__({
            "rx": In(stream.Signature(RX_LAYOUT)),
            "tx": Out(stream.Signature(TX_LAYOUT)),
            "bus": Out(AxiLiteSignature(addr_width=addr_width)),
        })

    def elaborate(self, platform):
        m = Module()
        max_words = self._info.max_words
        depth = _HEAD + 4 * max_words + 2
        m.submodules.frame = frame = memory.Memory(shape=8, depth=depth, init=[])
        wr = frame.write_port()
        rd = frame.read_port(transparent_for=())

        # --- receiving: bytes into the buffer, the first ones into registers, the CRC of all
        # but the last two bytes (those are the request's CRC) ------------------------------
        count = Signal(range(depth + 2))
        head = Array(Signal(8, name=f"head{i}") for i in range(_HEAD))
        tail = Array(Signal(8, name=f"tail{i}") for i in range(2))   # the last two bytes
        crc = Signal(16, init=0xFFFF)
        seq, cmd = head[0], head[1]
        addr = Cat(head[2], head[3], head[4], head[5])
        value = Cat(head[6], head[7], head[8], head[9])
        words_arg = Cat(head[6], head[7])
        args = Signal(range(depth + 1))             # argument bytes of the request
        m.d.comb += args.eq(count - 4)

        # the last request (to answer a repeated WRITE_REG without writing again)
        last_valid = Signal()
        last = Array(Signal(8, name=f"last{i}") for i in range(_HEAD))
        last_count = Signal.like(count)
        last_status = Signal(8)
        # the session a host opened with HELLO (0 from the reset: none)
        session = Signal(32)

        # --- answer state -------------------------------------------------------------------
        status = Signal(8)
        length = Signal(range(4 * max_words + 37))  # answer data bytes
        index = Signal.like(length)
        word = Signal(32)
        out_crc = Signal(16, init=0xFFFF)
        phase = Signal(range(5))                    # 0 seq, 1 status, 2 data, 3/4 CRC
        info_bytes = self._info.pack()
        info_rom = Array(Const(b, 8) for b in info_bytes)
        pointer = Signal(self._addr_width)          # the AXI address of the next word
        left = Signal(range(max_words + 1))         # words still to move
        base, size = self._memory
        bus = self.bus

        end_addr = Signal(self._addr_width + 12)
        in_memory = Signal()
        m.d.comb += in_memory.eq((addr >= base) & (end_addr <= base + size) & (addr[:2] == 0))

        out_byte = Signal(8)
        with m.Switch(phase):
            with m.Case(0):
                m.d.comb += out_byte.eq(seq)
            with m.Case(1):
                m.d.comb += out_byte.eq(status)
            with m.Case(2), m.Switch(cmd):
                with m.Case(Command.INFO):
                    m.d.comb += out_byte.eq(info_rom[index])
                with m.Case(Command.HELLO):
                    m.d.comb += out_byte.eq(session.word_select(index[:2], 8))
                with m.Default():
                    m.d.comb += out_byte.eq(word.word_select(index[:2], 8))
            with m.Case(3):
                m.d.comb += out_byte.eq(out_crc[:8])
            with m.Case(4):
                m.d.comb += out_byte.eq(out_crc[8:])
        m.d.comb += [self.tx.payload.byte.eq(out_byte), self.tx.payload.last.eq(phase == 4)]

        m.d.comb += [bus.wstrb.eq(0xF), bus.bready.eq(1), bus.rready.eq(1)]

        with m.FSM():
            with m.State("RECV"):
                m.d.comb += self.rx.ready.eq(1)
                with m.If(self.rx.valid & self.rx.payload.end):
                    m.d.sync += [tail[0].eq(0), tail[1].eq(0), crc.eq(0xFFFF)]
                    with m.If(self.rx.payload.bad):
                        m.d.sync += count.eq(0)     # dropped whole, no answer
                    with m.Elif((count < 4) | (crc != Cat(tail[0], tail[1]))):
                        m.d.sync += [status.eq(Status.BAD_CRC), length.eq(0)]
                        m.next = "ANSWER_INIT"
                    with m.Else():
                        m.d.sync += end_addr.eq(0)
                        m.next = "CHECK"
                with m.Elif(self.rx.valid):
                    byte = self.rx.payload.byte
                    with m.If(count < depth):
                        m.d.comb += [wr.addr.eq(count), wr.data.eq(byte), wr.en.eq(1)]
                        with m.If(count < _HEAD):
                            m.d.sync += head[count].eq(byte)
                        m.d.sync += count.eq(count + 1)
                    m.d.sync += [tail[0].eq(tail[1]), tail[1].eq(byte)]
                    with m.If(count >= 2):             # the CRC lags two bytes behind
                        m.d.sync += crc.eq(crc16_byte(crc, tail[0]))

            with m.State("CHECK"):                  # the command, its length, its range
                ok_len = Signal()
                words = Signal(range(max_words + 2))
                with m.Switch(cmd):
                    with m.Case(Command.INFO):
                        m.d.comb += ok_len.eq(args == 0)
                    with m.Case(Command.READ_REG):
                        m.d.comb += ok_len.eq(args == 4)
                    with m.Case(Command.WRITE_REG):
                        m.d.comb += ok_len.eq(args == 8)
                    with m.Case(Command.READ_MEM, Command.READ_REGS):
                        m.d.comb += [ok_len.eq((args == 6) & (words_arg >= 1)
                                               & (words_arg <= max_words)),
                                     words.eq(words_arg)]
                    with m.Case(Command.HELLO):
                        m.d.comb += ok_len.eq(args == 4)
                    with m.Case(Command.WRITE_MEM):
                        m.d.comb += [ok_len.eq((args >= 8) & (args[:2] == 0)
                                               & (args <= 4 + 4 * max_words)),
                                     words.eq((args - 4) >> 2)]
                m.d.sync += [end_addr.eq(addr + (words << 2)), left.eq(words),
                             pointer.eq(addr), length.eq(0), index.eq(0)]
                repeat = Signal()
                m.d.comb += repeat.eq(last_valid & (last_count == count)
                                      & (cmd == Command.WRITE_REG)
                                      & Cat(last[i] == head[i] for i in range(_HEAD)).all())
                with m.If(~(cmd <= Command.READ_REGS)):
                    m.d.sync += status.eq(Status.BAD_COMMAND)
                    m.next = "REMEMBER"
                with m.Elif((session == 0) & (cmd != Command.INFO) & (cmd != Command.HELLO)):
                    m.d.sync += status.eq(Status.NO_SESSION)
                    m.next = "ANSWER_INIT"
                with m.Elif(~ok_len):
                    m.d.sync += status.eq(Status.BAD_LENGTH)
                    m.next = "REMEMBER"
                with m.Elif(repeat):
                    m.d.sync += status.eq(last_status)
                    m.next = "ANSWER_INIT"
                with m.Else():
                    m.next = "EXECUTE"

            with m.State("EXECUTE"), m.Switch(cmd):
                with m.Case(Command.INFO):
                    m.d.sync += [status.eq(Status.OK), length.eq(len(info_bytes))]
                    m.next = "REMEMBER"
                with m.Case(Command.HELLO):             # not remembered: never a repeat
                    with m.If(addr != 0):               # the argument; 0 only asks
                        m.d.sync += [session.eq(addr), last_valid.eq(0)]
                    m.d.sync += [status.eq(Status.OK), length.eq(4)]
                    m.next = "ANSWER_INIT"
                with m.Case(Command.READ_REGS):
                    m.d.sync += status.eq(Status.OK)
                    m.next = "REGS_AR"
                with m.Case(Command.READ_REG):
                    m.next = "AR"
                with m.Case(Command.WRITE_REG):
                    m.d.sync += word.eq(value)
                    m.next = "AW"
                with m.Case(Command.READ_MEM, Command.WRITE_MEM):
                    with m.If(~in_memory):
                        m.d.sync += status.eq(Status.OUT_OF_RANGE)
                        m.next = "REMEMBER"
                    with m.Elif(cmd == Command.READ_MEM):
                        m.d.sync += [status.eq(Status.OK), length.eq(left << 2)]
                        m.next = "REMEMBER"
                    with m.Else():
                        m.d.sync += [status.eq(Status.OK), index.eq(6)]
                        m.next = "FETCH"

            # --- WRITE_MEM: each word from the buffer, then an AXI write --------------------
            with m.State("FETCH"):
                m.d.comb += [rd.addr.eq(index), rd.en.eq(1)]
                m.d.sync += index.eq(index + 1)
                m.next = "GATHER"
            with m.State("GATHER"):
                # rd.data is the byte at index - 1; the next read is already addressed
                m.d.comb += [rd.addr.eq(index), rd.en.eq(1)]
                m.d.sync += [word.eq(Cat(word[8:], rd.data)), index.eq(index + 1)]
                with m.If((index - 6) % 4 == 0):
                    m.d.sync += index.eq(index)
                    m.next = "AW"

            # --- one AXI4-Lite write of `word` at `pointer` (or the register) ---------------
            with m.State("AW"):
                aw_done, w_done = Signal(), Signal()
                m.d.comb += [bus.awaddr.eq(Mux(cmd == Command.WRITE_REG, addr, pointer)),
                             bus.awvalid.eq(~aw_done), bus.wdata.eq(word),
                             bus.wvalid.eq(~w_done)]
                with m.If(bus.awvalid & bus.awready):
                    m.d.sync += aw_done.eq(1)
                with m.If(bus.wvalid & bus.wready):
                    m.d.sync += w_done.eq(1)
                with m.If(bus.bvalid):
                    m.d.sync += [aw_done.eq(0), w_done.eq(0)]
                    with m.If(bus.bresp != 0):
                        m.d.sync += status.eq(Status.BUS_ERROR)
                        m.next = "REMEMBER"
                    with m.Elif(cmd == Command.WRITE_REG):
                        m.d.sync += status.eq(Status.OK)
                        m.next = "REMEMBER"
                    with m.Elif(left == 1):
                        m.next = "REMEMBER"
                    with m.Else():
                        m.d.sync += [left.eq(left - 1), pointer.eq(pointer + 4)]
                        m.next = "FETCH"

            # --- READ_REG: one AXI4-Lite read -----------------------------------------------
            with m.State("AR"):
                m.d.comb += [bus.araddr.eq(addr), bus.arvalid.eq(1)]
                with m.If(bus.arready):
                    m.next = "R"
            with m.State("R"), m.If(bus.rvalid):
                m.d.sync += [word.eq(bus.rdata),
                             status.eq(Mux(bus.rresp == 0, Status.OK, Status.BUS_ERROR)),
                             length.eq(Mux(bus.rresp == 0, 4, 0))]
                m.next = "REMEMBER"

            # --- READ_REGS: every word into the frame buffer (from byte 0: the request's
            # bytes are in registers by now), then the answer from there ---------------------
            with m.State("REGS_AR"):
                m.d.comb += [bus.araddr.eq(pointer), bus.arvalid.eq(1)]
                with m.If(bus.arready):
                    m.next = "REGS_R"
            with m.State("REGS_R"), m.If(bus.rvalid):
                m.d.sync += [word.eq(bus.rdata), pointer.eq(pointer + 4)]
                with m.If(bus.rresp != 0):
                    m.d.sync += status.eq(Status.BUS_ERROR)
                    m.next = "REMEMBER"
                with m.Else():
                    m.next = "REGS_STORE"
            with m.State("REGS_STORE"):                 # the word's 4 bytes, one a cycle
                m.d.comb += [wr.addr.eq(index), wr.data.eq(word.word_select(index[:2], 8)),
                             wr.en.eq(1)]
                m.d.sync += index.eq(index + 1)
                with m.If(index[:2] == 3):
                    with m.If(left == 1):
                        m.d.sync += length.eq(index + 1)
                        m.next = "REMEMBER"
                    with m.Else():
                        m.d.sync += left.eq(left - 1)
                        m.next = "REGS_AR"

            with m.State("REMEMBER"):
                m.d.sync += [last_valid.eq(1), last_count.eq(count), last_status.eq(status)]
                for i in range(_HEAD):
                    m.d.sync += last[i].eq(head[i])
                m.next = "ANSWER_INIT"
            with m.State("ANSWER_INIT"):
                m.d.sync += [index.eq(0), phase.eq(0), out_crc.eq(0xFFFF), count.eq(0)]
                m.next = "ANSWER"

            # --- the answer: seq, status, data (READ_MEM reads a word per 4 bytes), CRC ------
            with m.State("ANSWER"):
                need_word = (phase == 2) & (index[:2] == 0) & (status == Status.OK)
                with m.If((phase == 2) & (index == length)):
                    m.d.sync += phase.eq(3)
                with m.Elif(need_word & (cmd == Command.READ_MEM)):
                    m.next = "MEM_AR"
                with m.Elif(need_word & (cmd == Command.READ_REGS)):
                    m.d.comb += [rd.addr.eq(index), rd.en.eq(1)]
                    m.d.sync += index.eq(index + 1)
                    m.next = "BUF_LOAD"
                with m.Else():
                    m.d.comb += self.tx.valid.eq(1)
                    with m.If(self.tx.ready):
                        with m.If(phase < 3):               # the CRC covers what precedes it
                            m.d.sync += out_crc.eq(crc16_byte(out_crc, out_byte))
                        with m.If(phase == 2):
                            m.d.sync += index.eq(index + 1)
                        with m.Elif(phase == 4):
                            m.d.sync += phase.eq(0)
                            m.next = "RECV"
                        with m.Else():
                            m.d.sync += phase.eq(phase + 1)
            with m.State("MEM_AR"):
                m.d.comb += [bus.araddr.eq(pointer), bus.arvalid.eq(1)]
                with m.If(bus.arready):
                    m.next = "MEM_R"
            with m.State("MEM_R"), m.If(bus.rvalid):
                m.d.sync += [word.eq(bus.rdata), pointer.eq(pointer + 4)]
                m.next = "MEM_SEND"
            with m.State("BUF_LOAD"):                   # READ_REGS: a word from the buffer
                # rd.data is the byte at index - 1; the next read is already addressed
                m.d.comb += [rd.addr.eq(index), rd.en.eq(1)]
                m.d.sync += [word.eq(Cat(word[8:], rd.data)), index.eq(index + 1)]
                with m.If(index[:2] == 0):              # the word's fourth byte is in
                    m.d.sync += index.eq(index - 4)
                    m.next = "MEM_SEND"
            with m.State("MEM_SEND"):                # four bytes of the word just read
                m.d.comb += self.tx.valid.eq(1)
                with m.If(self.tx.ready):
                    m.d.sync += [out_crc.eq(crc16_byte(out_crc, out_byte)), index.eq(index + 1)]
                    with m.If(index[:2] == 3):
                        m.next = "ANSWER"
        return m
