"""Zstd: levels, checksums, frames without a recorded size, several frames, and the
frame content size checks made before anything is written."""

import struct

import numpy as np
import pytest
from zstd_frames import zstd_with_content_size

from zarrc._kernels import library_versions
from zarrc._kernels import zstd as k
from zarrc.codecs import Zstd
from zarrc.errors import CodecError

DATA = (np.arange(50_000, dtype="<u4") // 7).tobytes()
LEVELS = [-131072, -5, -1, 0, 1, 3, 9, 19, 22]


def test_levels_range():
    lo, hi = k.zstd_levels()
    assert lo < -5 and hi == 22
    assert library_versions()["zstd"] == "1.5.7"


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("checksum", [False, True])
def test_round_trip(level, checksum, arrays):
    codec = Zstd(level, checksum)
    for (dtype, shape), a in arrays.items():
        enc = codec.encode(a)
        assert codec.decode(enc) == a.tobytes(), (dtype, shape)
        out = np.empty_like(a)
        assert codec.decode(enc, out=out) is out
        np.testing.assert_array_equal(out, a)


def test_checksum_flag_and_trailer():
    plain, checked = Zstd(3).encode(DATA), Zstd(3, checksum=True).encode(DATA)
    assert not plain[4] & 0x04 and checked[4] & 0x04     # frame header descriptor bit 2
    assert len(checked) == len(plain) + 4
    bad = checked[:-1] + bytes([checked[-1] ^ 1])
    with pytest.raises(CodecError, match="zstd"):
        Zstd().decode(bad)
    with pytest.raises(CodecError, match="zstd"):
        Zstd().decode(bad, out=bytearray(len(DATA)))


def test_level_0_is_default_level_3():
    assert Zstd(0).encode(DATA) == Zstd(3).encode(DATA)
    assert len(Zstd(19).encode(DATA)) < len(Zstd(-5).encode(DATA))


def test_frame_records_content_size():
    enc = Zstd().encode(DATA)
    with pytest.raises(CodecError, match=rf"claims {len(DATA)} bytes, {len(DATA) - 4} expected"):
        Zstd().decode(enc, out=bytearray(len(DATA) - 4))


def test_frame_without_content_size():
    enc = zstd_with_content_size(Zstd(5, checksum=True).encode(DATA), None)
    assert enc[4] & 0xE0 == 0                       # no size, not single segment
    assert Zstd().decode(enc) == DATA               # grows its buffer as it goes
    out = bytearray(len(DATA))
    Zstd().decode(enc, out=out)
    assert out == DATA
    for wrong in (len(DATA) - 1, len(DATA) + 1, 0):
        with pytest.raises(CodecError, match="zstd"):
            Zstd().decode(enc, out=bytearray(wrong))


def test_large_frame_without_content_size():
    data = bytes(range(256)) * 4000             # > the 64 KiB first guess, < the 1 MiB window
    enc = zstd_with_content_size(Zstd(1).encode(data), None)
    assert Zstd().decode(enc) == data


def test_several_frames_and_skippable_frames():
    a, b = DATA[:1000], DATA[1000:]
    skippable = struct.pack("<II", 0x184D2A50, 5) + b"hello"
    cat = Zstd(1).encode(a) + skippable + Zstd(9, checksum=True).encode(b)
    assert Zstd().decode(cat) == DATA
    out = bytearray(len(DATA))
    Zstd().decode(cat, out=out)
    assert out == DATA
    # one frame of unknown size among them
    mixed = Zstd(1).encode(a) + zstd_with_content_size(Zstd(1).encode(b), None)
    assert Zstd().decode(mixed) == DATA
    assert Zstd().decode(skippable + Zstd().encode(b"")) == b""


def test_content_size_above_4_gib_is_not_truncated():
    # A frame claiming 2**32 + len(out) bytes: the claim must be compared in full
    # (a 32-bit truncation would make it look like exactly len(out)) and refused
    # before the decoder writes to out.
    enc = Zstd().encode(DATA)
    for claim in (2**32 + len(DATA), 2**31 + len(DATA), 2**40):
        out = bytearray(b"\xaa") * len(DATA)
        with pytest.raises(CodecError, match="zstd"):
            Zstd().decode(zstd_with_content_size(enc, claim), out=out)
        assert out == b"\xaa" * len(DATA)


@pytest.mark.parametrize("claim", [2**31, 2**32 + 5, 2**40, 2**62])
def test_impossible_content_size_is_corrupt_not_memory_error(claim):
    # A few hundred bytes of blocks cannot decode to gigabytes: refused from the
    # header, without trying to allocate what it claims.
    with pytest.raises(CodecError, match="zstd"):
        Zstd().decode(zstd_with_content_size(Zstd().encode(DATA), claim))


def test_content_size_one_off():
    enc = Zstd().encode(DATA)
    for claim in (len(DATA) - 1, len(DATA) + 1):
        forged = zstd_with_content_size(enc, claim)
        with pytest.raises(CodecError, match="zstd"):
            Zstd().decode(forged)
        out = bytearray(claim)
        with pytest.raises(CodecError, match="zstd"):
            Zstd().decode(forged, out=out)
