"""The host link's wire format: SLIP framing (RFC 1055), CRC-16/CCITT-FALSE, requests,
answers and the INFO record."""

from __future__ import annotations

import random

import pytest

from boards.protocol import (END, ESC, ESC_END, ESC_ESC, MAGIC, Answer, Command, Info,
                             LinkError, Request, SlipDecoder, crc16, slip_encode)


def test_crc_is_ccitt_false():
    # the check value of the CRC catalogue (reveng.sourceforge.io, CRC-16/IBM-3740)
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"6789", crc16(b"12345")) == 0x29B1           # continues a running value


def test_slip_escapes_end_and_esc_as_rfc_1055_says():
    assert slip_encode(bytes([1, END, 2, ESC, 3])) == bytes(
        [END, 1, ESC, ESC_END, 2, ESC, ESC_ESC, 3, END])


def test_frames_survive_any_split_and_every_byte_value():
    rng = random.Random(5)
    payloads = [bytes(range(256)), bytes([END] * 5), bytes([ESC, END, ESC]), b"x"]
    payloads += [rng.randbytes(rng.randrange(1, 300)) for _ in range(50)]
    stream = b"".join(slip_encode(p) for p in payloads)
    decoder, got, i = SlipDecoder(limit=4096), [], 0
    while i < len(stream):
        step = rng.randrange(1, 40)
        got += decoder.feed(stream[i:i + step])
        i += step
    assert got == payloads


def test_decoder_finds_the_next_frame_after_damage():
    good = slip_encode(b"good")
    decoder = SlipDecoder(limit=64)
    # bytes before the first END come out as a frame (its CRC will fail); a bad escape inside
    # a frame and an overlong frame are dropped whole
    stream = b"\x01\x02" + good + bytes([END, 7, ESC, 0x55, 8, END]) + good
    stream += bytes([END]) + b"z" * 100 + bytes([END]) + good
    assert decoder.feed(stream) == [b"\x01\x02", b"good", b"good", b"good"]
    # a frame whose closing END is lost ends at the next frame's opening END: it comes out
    # (its CRC then fails) and the next frame is whole
    assert decoder.feed(slip_encode(b"abc")[:-1] + good) == [b"abc", b"good"]


def test_requests_and_answers_round_trip_and_check_their_crc():
    r = Request(7, Command.WRITE_REG, bytes(range(8)))
    assert Request.unpack(r.pack()) == r
    a = Answer(7, 0, b"\x01\x02\x03\x04")
    assert Answer.unpack(a.pack()) == a
    damaged = bytearray(r.pack())
    damaged[3] ^= 0x10
    with pytest.raises(LinkError, match="fails its CRC"):
        Request.unpack(bytes(damaged))
    with pytest.raises(LinkError, match="too short"):
        Answer.unpack(b"\x01\x00")


def test_info_round_trips_and_refuses_foreign_data():
    info = Info(1, 256, 65536, 50_000_000, 25_000_000, bytes(range(16)))
    data = info.pack()
    assert data.startswith(MAGIC) and len(data) == 36
    assert Info.unpack(data) == info
    with pytest.raises(LinkError, match="not this protocol"):
        Info.unpack(b"HELLO" + data[5:])
