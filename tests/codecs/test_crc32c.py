"""CRC-32C: known vectors, hardware (SSE4.2, 3-way interleaved) against software
(slicing-by-8) over lengths, alignments and the interleave block boundaries,
continuation over splits, other implementations, and the crc32c codec."""

import platform
from pathlib import Path

import numpy as np
import pytest

from zarrc._kernels import crc32c as k
from zarrc.codecs import Crc32c
from zarrc.errors import ChecksumError, CodecError

LONG, SHORT = 8192, 256          # the interleaved block sizes in crc32c_sse42.c

VECTORS = [
    (b"", 0x00000000),
    (b"a", 0xC1D04330),
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),                          # RFC 3720 B.4
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
    (b"The quick brown fox jumps over the lazy dog", 0x22620404),
]


def random_bytes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


@pytest.mark.parametrize("data, crc", VECTORS)
@pytest.mark.parametrize("fn", [k.crc32c, k.crc32c_software])
def test_known_vectors(fn, data, crc):
    assert fn(data) == crc


def test_hardware_detected_where_expected():
    cpuinfo = Path("/proc/cpuinfo")
    hw = k.crc32c_hardware()
    assert isinstance(hw, bool)
    if platform.machine() == "x86_64" and cpuinfo.exists() and " sse4_2" in cpuinfo.read_text():
        assert hw


def test_hardware_equals_software_small_lengths_and_alignments():
    buf = bytearray(random_bytes(2000 + 8, seed=1))
    mv = memoryview(buf)
    for offset in range(8):
        for n in range(2001):
            piece = mv[offset:offset + n]
            assert k.crc32c(piece) == k.crc32c_software(piece), (offset, n)


def boundary_lengths():
    """Lengths around multiples of the 3-way blocks, and combinations of both."""
    out = set()
    for base in [3 * LONG * m for m in (1, 2, 3)] + [3 * SHORT * m for m in (1, 2, 5, 31)] + \
                [3 * LONG + 3 * SHORT, 2 * 3 * LONG + 7 * 3 * SHORT]:
        for d in (-9, -8, -7, -1, 0, 1, 7, 8, 9, 15, 16, 17):
            out.add(base + d)
    return sorted(out)


def test_hardware_equals_software_across_interleave_boundaries():
    big = memoryview(bytearray(random_bytes(8 * LONG * 3 + 64, seed=2)))
    for n in boundary_lengths():
        for offset in (0, 1, 3, 7):
            piece = big[offset:offset + n]
            assert k.crc32c(piece) == k.crc32c_software(piece), (offset, n)


def test_big_buffer_matches_reference_package():
    crc32c = pytest.importorskip("crc32c")
    for n, seed in [(3 * LONG * 100 + 3 * SHORT * 5 + 13, 3), (5 << 20, 4)]:
        data = random_bytes(n, seed)
        assert k.crc32c(data) == crc32c.crc32c(data) == k.crc32c_software(data)


@pytest.mark.parametrize("fn", [k.crc32c, k.crc32c_software])
def test_continuation_equals_one_shot(fn):
    data = random_bytes(3 * LONG * 2 + 1000, seed=5)
    whole = fn(data)
    for split in [0, 1, 7, 8, 255, 256, 767, 768, 769, 3 * LONG - 1, 3 * LONG, len(data) - 1, len(data)]:
        assert fn(data[split:], fn(data[:split])) == whole, split
    crc = 0
    for i in range(0, len(data), 1000):
        crc = fn(data[i:i + 1000], crc)
    assert crc == whole


def test_mixing_hardware_and_software_continuations():
    data = random_bytes(100_000, seed=6)
    assert k.crc32c_software(data[40_000:], k.crc32c(data[:40_000])) == k.crc32c(data)


def test_agrees_with_crc32c_package():
    crc32c = pytest.importorskip("crc32c")
    for n in list(range(300)) + [4095, 4096, 4097, 65_537, 3 * LONG * 4 + 5]:
        data = random_bytes(n, seed=n)
        assert k.crc32c(data) == crc32c.crc32c(data), n
    assert k.crc32c(b"world", k.crc32c(b"hello ")) == crc32c.crc32c(b"world", crc32c.crc32c(b"hello "))


def test_agrees_with_numcodecs_crc32c(numcodecs_crc32c):
    nc = numcodecs_crc32c
    for n in (0, 1, 5, 1000, 100_003):
        data = np.frombuffer(random_bytes(n, seed=n + 7), np.uint8)
        enc = Crc32c().encode(data)
        assert enc == bytes(nc.encode(data))
        assert bytes(nc.decode(enc)) == data.tobytes()
        assert Crc32c().decode(bytes(nc.encode(data))) == data.tobytes()


def test_codec_appends_little_endian_checksum():
    enc = Crc32c().encode(b"123456789")
    assert enc == b"123456789" + (0xE3069283).to_bytes(4, "little")
    assert Crc32c().decode(enc) == b"123456789"
    out = bytearray(9)
    assert Crc32c().decode(enc, out=out) is out and out == b"123456789"
    assert Crc32c().encode(b"") == bytes(4)
    assert Crc32c().decode(bytes(4)) == b""


def test_codec_mismatch_raises_checksum_error():
    enc = bytearray(Crc32c().encode(random_bytes(1000)))
    for pos in (0, 500, 999, 1000, 1003):             # payload and stored checksum
        bad = bytearray(enc)
        bad[pos] ^= 0x10
        with pytest.raises(ChecksumError, match="crc32c: checksum mismatch"):
            Crc32c().decode(bytes(bad))
        out = bytearray(b"\x55" * 1000)
        with pytest.raises(ChecksumError):
            Crc32c().decode(bytes(bad), out=out)
        assert out == b"\x55" * 1000                   # nothing written


@pytest.mark.parametrize("n", [0, 1, 3])
def test_codec_too_short(n):
    with pytest.raises(CodecError, match=f"crc32c: input truncated: needs 4 bytes, holds {n}"):
        Crc32c().decode(b"\x00" * n)


def test_codec_out_of_wrong_size():
    enc = Crc32c().encode(b"abcdef")
    for size in (5, 7, 0):
        with pytest.raises(CodecError, match=f"6 bytes, {size} expected"):
            Crc32c().decode(enc, out=bytearray(size))
