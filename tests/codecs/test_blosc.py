"""Blosc: round trips over the parameter matrix, the frame header it writes,
partial decoding (decode_range) and multithreaded decoding."""

import struct

import numpy as np
import pytest

import zarrc
import zarrc.runtime.threads
from zarrc._kernels import blosc as k
from zarrc._kernels import library_versions
from zarrc.codecs import Blosc
from zarrc.errors import CodecError

CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]
# blosc header flags byte
DOSHUFFLE, MEMCPYED, DOBITSHUFFLE = 0x01, 0x02, 0x04


def test_compressors_built():
    assert set(CNAMES) <= set(k.blosc_compressors())
    assert library_versions()["blosc"].startswith("1.21")


@pytest.mark.parametrize("cname", CNAMES)
@pytest.mark.parametrize("clevel", [0, 1, 5, 9])
@pytest.mark.parametrize("shuffle", SHUFFLES)
def test_round_trip_matrix(cname, clevel, shuffle, arrays):
    for blocksize in (0, 256, 1000, 4096):
        for (dtype, shape), a in arrays.items():
            codec = Blosc(cname, clevel, shuffle, blocksize=blocksize)
            enc = codec.encode(a)
            assert bytes(codec.decode(enc)) == a.tobytes(), (dtype, shape, blocksize)
            out = np.empty_like(a)
            assert codec.decode(enc, out=out) is out
            np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("typesize", [1, 2, 3, 4, 7, 8, 16, 255])
def test_explicit_typesize_and_odd_lengths(typesize):
    data = bytes((i * 7 // 5) & 0xFF for i in range(5003))  # not a multiple of any typesize > 1
    for shuffle in SHUFFLES:
        codec = Blosc("lz4", 5, shuffle, typesize=typesize, blocksize=512)
        enc = codec.encode(data)
        assert k.blosc_header(enc)[3] == typesize
        assert codec.decode(enc) == data


def test_header_records_parameters():
    a = np.arange(10_000, dtype="<i4")
    nbytes, cbytes, blocksize, typesize, flags = k.blosc_header(Blosc("lz4", 5, "shuffle").encode(a))
    assert (nbytes, typesize) == (a.nbytes, 4)
    assert flags & DOSHUFFLE and not flags & DOBITSHUFFLE
    # an explicit blocksize is honoured as is by zstd; for the other codecs c-blosc
    # enlarges blocks of 128 items or more, which it splits by byte (numcodecs too)
    enc = Blosc("zstd", 5, "bitshuffle", blocksize=4096).encode(a)
    nbytes, cbytes, blocksize, typesize, flags = k.blosc_header(enc)
    assert (blocksize, cbytes) == (4096, len(enc))
    assert flags & DOBITSHUFFLE and not flags & DOSHUFFLE
    assert not k.blosc_header(Blosc("lz4", 5, "noshuffle").encode(a))[4] & (DOSHUFFLE | DOBITSHUFFLE)
    # typesize None takes the item size of the buffer; an explicit one overrides it
    assert k.blosc_header(Blosc().encode(a.astype("<f8")))[3] == 8
    assert k.blosc_header(Blosc(typesize=2).encode(a.astype("<f8")))[3] == 2
    assert k.blosc_header(Blosc().encode(a.tobytes()))[3] == 1


def test_clevel_0_stores_uncompressed():
    a = np.arange(5000, dtype="<u2")
    enc = Blosc("zstd", 0).encode(a)
    assert k.blosc_header(enc)[4] & MEMCPYED
    assert len(enc) == a.nbytes + 16
    assert enc[16:] == a.tobytes()
    assert k.blosc_decoded_size(enc) == a.nbytes


def test_higher_clevel_compresses_more():
    a = np.repeat(np.arange(4096, dtype="<i8"), 16)
    sizes = [len(Blosc("zstd", c, "shuffle").encode(a)) for c in (0, 1, 9)]
    assert sizes[0] > sizes[1] >= sizes[2]


def test_empty_input():
    enc = Blosc().encode(b"")
    assert len(enc) == 16
    assert k.blosc_decoded_size(enc) == 0
    assert Blosc().decode(enc) == b""
    out = np.empty(0, "u1")
    assert Blosc().decode(enc, out=out) is out


def test_decode_range_matches_slices():
    a = np.arange(20_000, dtype="<f8") * 0.5
    raw = a.tobytes()
    for cname in CNAMES:
        for shuffle in SHUFFLES:
            codec = Blosc(cname, 5, shuffle, blocksize=2048)
            enc = codec.encode(a)
            for start, stop in [(0, 8), (0, len(raw)), (2040, 2056), (8, 24_000), (len(raw) - 8, len(raw)),
                                (4096, 4096), (16_000, 159_992)]:
                out = np.zeros(stop - start, "u1")
                assert codec.decode_range(enc, start, out) is out
                assert out.tobytes() == raw[start:stop], (cname, shuffle, start, stop)


def test_decode_range_uncompressed_frame():
    a = np.arange(3000, dtype="<i4")
    enc = Blosc("lz4", 0).encode(a)
    out = np.empty(40, "u1")
    Blosc().decode_range(enc, 400, out)
    assert out.tobytes() == a.tobytes()[400:440]


@pytest.mark.parametrize("start, length", [(2, 8), (4, 6), (0, 3)])
def test_decode_range_must_be_typesize_aligned(start, length):
    enc = Blosc(typesize=4).encode(np.arange(1000, dtype="<i4"))
    with pytest.raises(CodecError, match="typesize"):
        Blosc().decode_range(enc, start, np.empty(length, "u1"))


@pytest.mark.parametrize("start, length", [(4000, 4), (3996, 8), (8000, 0), (0, 4004)])
def test_decode_range_past_the_end(start, length):
    enc = Blosc(typesize=4).encode(np.arange(1000, dtype="<i4"))
    with pytest.raises(CodecError, match="4000"):
        Blosc().decode_range(enc, start, np.empty(length, "u1"))


def test_large_buffer_multithreaded_decode():
    # >= split_bytes from the main thread: runs of blocks are decoded on several threads
    a = np.tile(np.arange(1 << 16, dtype="<u4"), 40)  # 10 MiB
    enc = Blosc("lz4", 5, "shuffle", blocksize=1 << 16).encode(a)
    with zarrc.config.set(threads=4, split_bytes=1 << 20):
        assert zarrc.runtime.threads.codec_threads(a.nbytes) == 4
        np.testing.assert_array_equal(np.frombuffer(Blosc().decode(enc), "<u4"), a)
        out = np.empty_like(a)
        Blosc().decode(enc, out=out)
        np.testing.assert_array_equal(out, a)
        small = np.full(a.size - 1, 7, "<u4")
        with pytest.raises(CodecError, match=rf"blosc: header claims {a.nbytes} bytes, {small.nbytes} exp"):
            Blosc().decode(enc, out=small)
        assert (small == 7).all()


@pytest.mark.parametrize("typesize", [2, 4, 8, 16])
@pytest.mark.parametrize("cname", ["lz4", "zstd"])
def test_multithreaded_decode_of_a_size_not_a_multiple_of_typesize(cname, typesize):
    data = (np.arange((3 << 20) + 5) % 251).astype("u1").tobytes()
    codec = Blosc(cname, 1, "shuffle", typesize=typesize, blocksize=1 << 16)
    enc = codec.encode(data)
    assert k.blosc_header(enc)[3] == typesize
    with zarrc.config.set(threads=2, split_bytes=1 << 20):
        assert codec.decode(enc) == data
        out = bytearray(len(data))
        codec.decode(enc, out=out)
        assert out == data


def test_multithreaded_decode_of_a_corrupt_block():
    a = np.tile(np.arange(1 << 16, dtype="<u4"), 40)
    enc = bytearray(Blosc("zstd", 1, "shuffle", blocksize=1 << 16).encode(a))
    assert k.blosc_header(bytes(enc))[2] == 1 << 16                 # 160 blocks
    enc[16 + 4 * 100:16 + 4 * 101] = struct.pack("<I", len(enc) + 100)  # block 100 starts past the end
    with zarrc.config.set(threads=4, split_bytes=1 << 20):
        with pytest.raises(CodecError, match="^blosc: corrupt data"):
            Blosc().decode(bytes(enc))
        with pytest.raises(CodecError, match="^blosc: corrupt data"):
            Blosc().decode(bytes(enc), out=np.empty_like(a))


def test_kernel_threads_agree():
    data = bytes(range(256)) * 4000
    enc = k.blosc_compress(data, 5, 1, 4, "blosclz", 8192, 1)
    for nthreads in (1, 2, 4):
        assert k.blosc_decode(enc, nthreads) == data
        out = bytearray(len(data))
        assert k.blosc_decode_into(enc, out, nthreads) == len(data)
        assert out == data
