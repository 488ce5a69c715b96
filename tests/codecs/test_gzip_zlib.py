"""Gzip and zlib: levels, the gzip header we write, agreement with Python's gzip
and zlib modules, several gzip members, padding and trailing data."""

import gzip
import io
import zlib

import numpy as np
import pytest

from zarrc._kernels import codecs as k
from zarrc.codecs import Gzip, Zlib
from zarrc.errors import CodecError

DATA = (np.arange(30_000, dtype="<i4") % 1000).tobytes()
# Byte equality with Python's zlib module holds for classic zlib (here 1.2.13 against
# our 1.3.1), not for zlib-ng, which some distributions and Python builds link instead.
SAME_DEFLATE = "ng" not in zlib.ZLIB_RUNTIME_VERSION


def test_zlib_version():
    assert k.library_versions()["zlib"] == "1.3.1"


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
    assert enc[8] == (2 if level == 9 else 4 if level == 1 else 0)   # XFL, as Python's gzip
    assert enc[9] == 255                             # OS unknown
    assert enc[-4:] == len(DATA).to_bytes(4, "little")
    assert enc[-8:-4] == zlib.crc32(DATA).to_bytes(4, "little")
    assert gzip.decompress(enc) == DATA
    if level > 0 and SAME_DEFLATE:   # level 0's stored blocks follow the output buffer sizes
        assert enc == gzipfile_compress(DATA, level)


def gzipfile_compress(data, level):
    """What Python's GzipFile (and so numcodecs.GZip) writes, with mtime 0."""
    buf = io.BytesIO()
    with gzip.GzipFile(mode="wb", fileobj=buf, compresslevel=level, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


@pytest.mark.parametrize("level", range(10))
def test_zlib_matches_python_zlib(level):
    enc = Zlib(level).encode(DATA)
    assert zlib.decompress(enc) == DATA
    if not SAME_DEFLATE:
        pytest.skip(f"Python's zlib is {zlib.ZLIB_RUNTIME_VERSION}")
    if level > 0:   # level 0's stored blocks follow the caller's output buffer sizes
        assert enc == zlib.compress(DATA, level)
    small = DATA[:4000]
    assert Zlib(level).encode(small) == zlib.compress(small, level)


def test_raw_deflate_kernel():
    enc = k.deflate_compress(DATA, 6, k.RAW)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    if SAME_DEFLATE:
        assert enc == c.compress(DATA) + c.flush()
    assert k.inflate(enc, k.RAW) == DATA
    out = bytearray(len(DATA))
    assert k.inflate_into(enc, out, k.RAW) == len(DATA)
    assert out == DATA
    with pytest.raises(ValueError, match="format"):
        k.inflate(enc, 3)


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
