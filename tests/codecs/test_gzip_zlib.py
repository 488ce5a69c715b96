"""Gzip and zlib: levels, the gzip header we write, Python's gzip and zlib modules
reading what we write (libdeflate's streams, not zlib's bytes), several gzip
members, padding and trailing data."""

import gzip
import io
import zlib

import numpy as np
import pytest

from zarrc._kernels import deflate as k
from zarrc._kernels import library_versions
from zarrc.codecs import Gzip, Zlib
from zarrc.errors import CodecError

DATA = (np.arange(30_000, dtype="<i4") % 1000).tobytes()


def test_zlib_version():
    assert library_versions()["zlib"] == "1.3.1"


@pytest.mark.parametrize("level", range(10))
@pytest.mark.parametrize("cls", [Gzip, Zlib])
def test_round_trip(cls, level, arrays):
    codec = cls(level)
    for (dtype, shape), a in arrays.items():
        enc = codec.encode(a)
        assert codec.decode(enc) == a.tobytes(), (dtype, shape)
        out = np.empty_like(a)
        assert codec.decode(enc, out=out) is out
        np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("level", range(10))
def test_gzip_header_and_python_gzip(level):
    enc = Gzip(level).encode(DATA)
    assert enc[:4] == b"\x1f\x8b\x08\x00"            # magic, deflate, no flags
    assert enc[4:8] == bytes(4)                      # mtime 0: output is reproducible
    assert enc[8] == (4 if level <= 1 else 2 if level >= 8 else 0)   # XFL: fastest / slowest
    assert enc[9] == 255                             # OS unknown
    assert enc[-4:] == len(DATA).to_bytes(4, "little")
    assert enc[-8:-4] == zlib.crc32(DATA).to_bytes(4, "little")
    assert gzip.decompress(enc) == DATA
    assert enc == Gzip(level).encode(DATA)           # deterministic
    if level >= 1:
        assert len(enc) < len(DATA) // 2


@pytest.mark.parametrize("level", range(10))
def test_zlib_read_by_python_zlib(level):
    enc = Zlib(level).encode(DATA)
    assert enc[0] == 0x78 and (enc[0] * 256 + enc[1]) % 31 == 0     # CMF/FLG header
    assert zlib.decompress(enc) == DATA
    assert enc[-4:] == zlib.adler32(DATA).to_bytes(4, "big")
    small = DATA[:4000]
    assert zlib.decompress(Zlib(level).encode(small)) == small
    assert zlib.decompress(Zlib(level).encode(b"")) == b""


def test_compressed_levels_shrink():
    """Higher levels never compress this data worse than level 1 by much, and all
    levels above 0 compress it; level 0 stores it."""
    sizes = [len(Zlib(level).encode(DATA)) for level in range(10)]
    assert sizes[0] > len(DATA)
    assert max(sizes[1:]) < len(DATA) // 2
    assert min(sizes[2:]) <= sizes[1]


def test_raw_deflate_kernel():
    enc = k.deflate_compress(DATA, 6, k.RAW)
    assert zlib.decompressobj(-15).decompress(enc) == DATA
    assert k.inflate(enc, k.RAW) == DATA
    out = bytearray(len(DATA))
    assert k.inflate_into(enc, out, k.RAW) == len(DATA)
    assert out == DATA
    with pytest.raises(ValueError, match="format"):
        k.inflate(enc, 3)
    with pytest.raises(ValueError, match="format"):
        k.deflate_compress(DATA, 6, 3)


@pytest.mark.parametrize("level", [-2, 10])
def test_kernel_level_out_of_range(level):
    with pytest.raises(k.KernelError, match="level"):
        k.deflate_compress(DATA, level, k.ZLIB)


def test_kernel_default_level_is_6():
    assert k.deflate_compress(DATA, -1, k.ZLIB) == k.deflate_compress(DATA, 6, k.ZLIB)


def test_gzip_decodes_members_written_by_python():
    buf = io.BytesIO()
    with gzip.GzipFile(filename="chunk.bin", mode="wb", fileobj=buf, mtime=1234567) as f:
        f.write(DATA)                                 # header with FNAME, nonzero mtime
    assert Gzip().decode(buf.getvalue()) == DATA


def test_gzip_several_members():
    a, b = DATA[:5000], DATA[5000:]
    two = gzip.compress(a) + gzip.compress(b)
    assert gzip.decompress(two) == DATA
    assert Gzip().decode(two) == DATA
    out = bytearray(len(DATA))
    Gzip().decode(two, out=out)
    assert out == DATA
    three = Gzip(1).encode(a) + Gzip(9).encode(b"") + Gzip(5).encode(b)
    assert Gzip().decode(three) == DATA


def test_gzip_trailing_zero_padding():
    enc = Gzip().encode(DATA)
    for pad in (1, 7, 512):
        padded = enc + bytes(pad)
        assert Gzip().decode(padded) == DATA
        out = bytearray(len(DATA))
        Gzip().decode(padded, out=out)
        assert out == DATA


@pytest.mark.parametrize("tail", [b"x", b"garbage", b"\x00\x00\x01", b"\x1f", b"\x1f\x8b",
                                  b"\x1f\x8b\x08junk"])
def test_gzip_trailing_garbage_raises(tail):
    enc = Gzip().encode(DATA)
    with pytest.raises(CodecError, match="gzip"):
        Gzip().decode(enc + tail)
    with pytest.raises(CodecError, match="gzip"):
        Gzip().decode(enc + tail, out=bytearray(len(DATA)))


def test_gzip_verifies_crc_and_length():
    enc = bytearray(Gzip().encode(DATA))
    enc[-8] ^= 1                                       # CRC-32
    with pytest.raises(CodecError, match="gzip"):
        Gzip().decode(bytes(enc))
    enc[-8] ^= 1
    enc[-4] ^= 1                                       # ISIZE
    with pytest.raises(CodecError, match="gzip"):
        Gzip().decode(bytes(enc))


def test_zlib_verifies_adler32():
    enc = bytearray(Zlib().encode(DATA))
    enc[-1] ^= 1
    with pytest.raises(CodecError, match="zlib"):
        Zlib().decode(bytes(enc))


def test_gzip_and_zlib_are_not_interchangeable():
    with pytest.raises(CodecError, match="gzip"):
        Gzip().decode(Zlib().encode(DATA))
    with pytest.raises(CodecError, match="zlib"):
        Zlib().decode(Gzip().encode(DATA))


def test_highly_compressible_grows_output():
    data = bytes(8 << 20)                              # >> the first 64 KiB / 4x guess
    for codec in (Gzip(9), Zlib(9)):
        enc = codec.encode(data)
        assert len(enc) < len(data) // 500
        assert codec.decode(enc) == data
