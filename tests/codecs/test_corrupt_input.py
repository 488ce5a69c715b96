"""Corrupt, truncated, empty and oversized input: every decoder raises CodecError
(naming the codec and the sizes) and never crashes; where the data states its size
up front (blosc and zstd headers, crc32c) a mismatch with ``out`` is refused before
anything is written to it.  Ends with a seeded, bounded mutation fuzz over every
decoder path."""

import random
import struct
import tracemalloc

import numpy as np
import pytest
from zstd_frames import zstd_with_content_size

from zarrc._kernels import blosc as k
from zarrc.codecs import Blosc, Crc32c, Gzip, Zlib, Zstd
from zarrc.errors import ChecksumError, CodecError

ARR = np.arange(3000, dtype="<i4") // 3                       # blosc typesize 4
RAW = ARR.tobytes()                                            # 12000 bytes
SENTINEL = 0xA5


def sentinel_out(n):
    return np.full(n, SENTINEL, np.uint8)


def untouched(out):
    return bool((out == SENTINEL).all())


ALL = [Blosc("lz4", 5, "shuffle"), Blosc("zstd", 5, "bitshuffle", blocksize=1024), Zstd(3),
       Zstd(1, checksum=True), Gzip(5), Zlib(1), Crc32c()]


# ------------------------------------------------------------------ specific cases

@pytest.mark.parametrize("codec", ALL, ids=repr)
def test_empty_input(codec):
    with pytest.raises(CodecError, match=rf"^{codec.name}: .*holds 0"):
        codec.decode(b"")
    out = sentinel_out(16)
    with pytest.raises(CodecError, match=rf"^{codec.name}: .*holds 0"):
        codec.decode(b"", out=out)
    assert untouched(out)


@pytest.mark.parametrize("codec", ALL, ids=repr)
def test_truncated_input(codec):
    enc = codec.encode(ARR)
    for cut in (1, 3, len(enc) // 2, len(enc) - 1):
        with pytest.raises(CodecError, match=rf"^{codec.name}: "):
            codec.decode(enc[:cut])
        with pytest.raises(CodecError, match=rf"^{codec.name}: "):
            codec.decode(enc[:cut], out=np.empty(len(RAW), np.uint8))


@pytest.mark.parametrize("codec", ALL, ids=repr)
def test_out_of_the_wrong_size(codec):
    enc = codec.encode(ARR)
    for size in (0, 1, len(RAW) - 4, len(RAW) - 1, len(RAW) + 1, len(RAW) + 4, 2 * len(RAW)):
        out = sentinel_out(size)
        with pytest.raises(CodecError, match=rf"^{codec.name}: .*\b{size}\b"):
            codec.decode(enc, out=out)
        if not isinstance(codec, (Gzip, Zlib)):   # inflate learns the size by inflating
            assert untouched(out), size


@pytest.mark.parametrize("codec", [Blosc("lz4"), Blosc("zlib", 1, "noshuffle", blocksize=256),
                                   Blosc("lz4", 0)], ids=repr)
def test_blosc_header_claiming_more_than_out_writes_nothing(codec):
    enc = bytearray(codec.encode(ARR))
    for claim in (len(RAW) + 4, 2 * len(RAW), 2**31 - 1 - 16):    # up to blosc's maximum
        enc[4:8] = struct.pack("<I", claim)
        out = sentinel_out(len(RAW))
        # (an uncompressed frame fails its own size check first, a huge claim its block count)
        message = "memcpyed" if codec.clevel == 0 else rf"header claims {claim} bytes, {len(RAW)} expected"
        with pytest.raises(CodecError, match=rf"^blosc: .*({message}|more blocks than the frame)"):
            codec.decode(bytes(enc), out=out)
        assert untouched(out)


@pytest.mark.parametrize("extra", [1, 2**31, 2**32 - 1])
def test_blosc_header_claiming_more_than_the_input_holds(extra):
    enc = bytearray(Blosc("lz4").encode(ARR))
    claim = min(len(enc) + extra, 2**32 - 1)                       # cbytes: unsigned 32 bits
    enc[12:16] = struct.pack("<I", claim)
    with pytest.raises(CodecError, match=rf"blosc: input truncated .*needs {claim} bytes, holds {len(enc)}"):
        Blosc().decode(bytes(enc))
    out = sentinel_out(len(RAW))
    with pytest.raises(CodecError):
        Blosc().decode(bytes(enc), out=out)
    assert untouched(out)
    with pytest.raises(CodecError):
        Blosc().decode_range(bytes(enc), 0, out[:8])
    assert untouched(out)


@pytest.mark.parametrize("offset, value, message", [
    (0, 3, "format version"),                       # version
    (3, 0, "typesize 0"),                           # typesize
    (4, 2**31, "over 2 GiB"),                       # nbytes
    (12, 15, "fewer bytes than a header"),          # cbytes
    (8, 0, "block size does not fit"),              # blocksize 0
    (8, 2**31 - 1, "block size does not fit"),      # blocksize > nbytes
    (4, 2**30, "more blocks than the frame has offsets"),  # nbytes: 2**19 blocks of 2048
])
def test_blosc_header_fields(offset, value, message):
    enc = bytearray(Blosc("zstd", 5, "shuffle", blocksize=2048).encode(ARR))
    width = 1 if offset in (0, 3) else 4
    enc[offset:offset + width] = value.to_bytes(width, "little")
    with pytest.raises(CodecError, match=rf"^blosc: .*{message}"):
        Blosc().decode(bytes(enc), out=np.empty(len(RAW), np.uint8))
    with pytest.raises(CodecError, match="^blosc: "):
        Blosc().decode(bytes(enc))
    with pytest.raises(CodecError, match="^blosc: "):
        Blosc().decode_range(bytes(enc), 4, np.empty(8, np.uint8))


@pytest.mark.parametrize("claim", [2**30, 2**31 - 17])
def test_blosc_header_claim_refused_before_allocating(claim):
    # a few hundred bytes claiming a gigabyte in blocks the frame has no room for:
    # refused from the header, before the decoder allocates the claimed size
    enc = bytearray(Blosc("zstd", 5, "shuffle", blocksize=2048).encode(ARR))
    enc[4:8] = struct.pack("<I", claim)
    tracemalloc.start()
    try:
        with pytest.raises(CodecError, match="^blosc: .*more blocks than the frame"):
            Blosc().decode(bytes(enc))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_blosc_memcpyed_flag_with_wrong_size():
    enc = bytearray(Blosc("lz4", 5).encode(ARR))
    enc[2] |= 0x02
    with pytest.raises(CodecError, match=r"blosc: .*memcpyed"):
        Blosc().decode(bytes(enc))


def test_zstd_frame_claiming_more_than_out_writes_nothing():
    enc = Zstd().encode(RAW)
    for claim in (len(RAW) + 1, 2 * len(RAW)):
        out = sentinel_out(len(RAW))
        with pytest.raises(CodecError, match=rf"zstd: frame header claims {claim} bytes, {len(RAW)} exp"):
            Zstd().decode(zstd_with_content_size(enc, claim), out=out)
        assert untouched(out)


@pytest.mark.parametrize("codec", [Gzip(), Zlib()], ids=repr)
def test_deflate_decoding_to_more_or_fewer_bytes_than_out(codec):
    enc = codec.encode(RAW)
    with pytest.raises(CodecError, match=rf"{codec.name}: data decodes to more than the {len(RAW) - 1} "):
        codec.decode(enc, out=bytearray(len(RAW) - 1))
    with pytest.raises(CodecError, match=rf"{codec.name}: data decodes to {len(RAW)} bytes, {len(RAW) + 1} "):
        codec.decode(enc, out=bytearray(len(RAW) + 1))


def test_zstd_without_size_decoding_to_more_or_fewer_bytes_than_out():
    enc = zstd_with_content_size(Zstd().encode(RAW), None)
    with pytest.raises(CodecError, match=rf"zstd: data decodes to more than the {len(RAW) - 1} bytes"):
        Zstd().decode(enc, out=bytearray(len(RAW) - 1))
    with pytest.raises(CodecError, match=rf"zstd: data decodes to {len(RAW)} bytes, {len(RAW) + 1} expected"):
        Zstd().decode(enc, out=bytearray(len(RAW) + 1))


def _sizeless_rle_frame(blocks, size=1 << 17, byte=b"\x07"):
    """A zstd frame recording no content size (window 128 KiB) of ``blocks`` RLE
    blocks of ``size`` copies of ``byte`` each: one byte of input per block."""
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")
    for i in range(blocks):
        frame += (int(i == blocks - 1) | 1 << 1 | size << 3).to_bytes(3, "little") + byte
    return bytes(frame)


@pytest.mark.parametrize("blocks", [1, 2, 3, 8, 40])
def test_zstd_without_size_of_rle_blocks_decodes_and_its_cut_frames_are_refused(blocks):
    # the growing decode (no size recorded, no out) stopped when the input was read
    # and room was left, before zstd had flushed an RLE block's output: a valid
    # frame refused as truncated (1, 2 and 8 blocks); numcodecs 0.16's zstd reads it
    # (0.13's, the lower bound's, refuses it)
    frame = _sizeless_rle_frame(blocks)
    assert Zstd().decode(frame) == b"\x07" * (blocks << 17)
    for cut in (1, 4):
        with pytest.raises(CodecError, match="truncated"):
            Zstd().decode(frame[:-cut])


def test_gzip_member_truncated_inside_a_second_member():
    enc = Gzip().encode(RAW[:6000]) + Gzip().encode(RAW[6000:])
    with pytest.raises(CodecError, match="gzip: input truncated"):
        Gzip().decode(enc[:-3])


def test_crc32c_errors():
    enc = bytearray(Crc32c().encode(RAW))
    enc[100] ^= 4
    with pytest.raises(ChecksumError, match=f"over {len(RAW)} bytes"):
        Crc32c().decode(bytes(enc))


def test_blosc_decode_range_on_corrupt_block():
    # zlib splits blocks of >= 128 items and then enlarges them: 64 items stay 64
    enc = bytearray(Blosc("zlib", 5, "shuffle", blocksize=256).encode(ARR))
    assert k.blosc_header(bytes(enc))[2] == 256
    enc[-20:] = bytes(20)                                            # the last block's data
    out = sentinel_out(8)
    Blosc().decode_range(bytes(enc), 0, out)                         # first block: intact
    assert out.tobytes() == RAW[:8]
    with pytest.raises(CodecError, match="blosc: corrupt data"):
        Blosc().decode_range(bytes(enc), len(RAW) - 8, sentinel_out(8))


# ------------------------------------------------------------------ mutation fuzz

def fuzz_targets():
    """(codec, encoded, raw, sized) for small frames of every codec and variant; sized
    is False where a mutation can make another valid encoding of a different size: a
    zstd frame without a content size or checksum, and several frames or members
    (cut at a boundary)."""
    a16 = (np.arange(400) % 37).astype("<i2")
    a32 = (np.arange(300) // 5).astype("<i4")
    a8 = (np.arange(700) % 11).astype("u1")
    f8 = np.arange(150) * 0.5
    out = []
    for codec, a in [(Blosc("lz4", 5, "shuffle"), a16), (Blosc("zstd", 5, "bitshuffle", blocksize=256), a32),
                     (Blosc("zlib", 1, "noshuffle", blocksize=128), a16),   # 64 items: not split
                     (Blosc("blosclz", 9, "shuffle", blocksize=512), f8),
                     (Blosc("lz4hc", 9, "noshuffle", typesize=3), a8[:301]), (Blosc("lz4", 0), a32[:100]),
                     (Zstd(3), a32), (Zstd(-5, checksum=True), a16), (Gzip(5), a16), (Gzip(0), a8[:50]),
                     (Zlib(9), a32), (Crc32c(), a8[:200])]:
        out.append((codec, codec.encode(a), a.tobytes(), True))
    z = Zstd(3)
    out.append((z, zstd_with_content_size(z.encode(a32), None), a32.tobytes(), False))    # size unknown
    out.append((z, z.encode(a32[:100]) + z.encode(a32[100:]), a32.tobytes(), False))  # two frames
    out.append((Gzip(), Gzip(1).encode(a16[:100]) + Gzip(9).encode(a16[100:]), a16.tobytes(), False))
    return out


INTEGRITY_CHECKED = (Gzip, Zlib, Crc32c)


def check_message(exc, name):
    """The message names the codec and at least one size."""
    message = str(exc)
    assert message.startswith(f"{name}: ") and any(c.isdigit() for c in message), message


def attempt(codec, data, raw, rng, sized=True, item=4):
    """Run ``data`` through every decoder path of ``codec``; only CodecError may be
    raised, naming the codec, and a decode that succeeds has exactly the expected size:
    the size of ``out``, the blosc header's claim, else (if ``sized``) ``len(raw)``.
    ``item`` is the blosc typesize: decode_range asks for whole items."""
    n = len(raw)
    try:
        got = codec.decode(data)
    except CodecError as e:
        check_message(e, codec.name)
    else:
        if isinstance(codec, Blosc):
            assert len(got) == k.blosc_decoded_size(data)
        elif sized:
            assert len(got) == n
        if sized and isinstance(codec, INTEGRITY_CHECKED):
            assert got == raw
    out = sentinel_out(n)
    try:
        codec.decode(data, out=out)
    except CodecError as e:
        check_message(e, codec.name)
    else:
        if isinstance(codec, INTEGRITY_CHECKED):
            assert out.tobytes() == raw
    if isinstance(codec, Blosc):
        start = rng.randrange(0, n // item + 1) * item
        length = rng.randrange(0, (n - start) // item + 1) * item
        try:
            codec.decode_range(data, start, np.empty(length, np.uint8))
        except CodecError as e:
            check_message(e, "blosc")
        try:
            assert k.blosc_decode_into(data, bytearray(n), 3) == n       # blosc's own threads
        except k.KernelError:
            pass


INTERESTING = [0, 1, 2, 3, 4, 15, 16, 17, 255, 256, 1024, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]


def header_overwrites(codec, enc, raw):
    """Header fields set to values near the limits and near the true sizes."""
    values = INTERESTING + [len(raw) + d for d in (-4, -1, 1, 4)] + [len(enc) + d for d in (-1, 1)]
    if isinstance(codec, Blosc):
        fields = [(0, 1), (1, 1), (2, 1), (3, 1), (4, 4), (8, 4), (12, 4), (16, 4), (20, 4)]
    elif isinstance(codec, Zstd):
        fields = [(4, 1), (5, 1), (6, 2), (6, 4), (8, 3)]
    elif isinstance(codec, Gzip):
        fields = [(2, 1), (3, 1), (10, 3), (len(enc) - 8, 4), (len(enc) - 4, 4)]
    elif isinstance(codec, Zlib):
        fields = [(0, 1), (1, 1), (2, 3), (len(enc) - 4, 4)]
    else:
        fields = [(len(enc) - 4, 4)]
    for offset, width in fields:
        for v in values:
            if offset + width <= len(enc):
                yield enc[:offset] + (v & (256**width - 1)).to_bytes(width, "little") + enc[offset + width:]


def mutations(codec, enc, raw, rng):
    for cut in range(len(enc)):                                       # every truncation
        yield enc[:cut]
    for bit in range(len(enc) * 8):                                   # bit flips: all in
        if bit < 8 * 64 or rng.random() < 0.5:                         # the headers, half after
            b = bytearray(enc)
            b[bit // 8] ^= 1 << (bit % 8)
            yield bytes(b)
    for extra in (b"\x00", bytes(7), b"\xff", b"\x1f\x8b", bytes(rng.randrange(256) for _ in range(100))):
        yield enc + extra                                             # extensions
    yield from header_overwrites(codec, enc, raw)
    if isinstance(codec, Zstd):                                       # frame content size
        for size in [None, 0, 1, len(raw) - 1, len(raw) + 1, 2 * len(raw), 2**31, 2**32 + len(raw), 2**63]:
            yield zstd_with_content_size(enc, size)
    for _ in range(200):                                              # random runs over the data
        b = bytearray(enc)
        i = rng.randrange(len(b))
        b[i:i + rng.randrange(1, 9)] = bytes(rng.randrange(256) for _ in range(8))
        yield bytes(b)


def test_mutated_encodings():
    rng = random.Random(20240611)
    count = 0
    for codec, enc, raw, sized in fuzz_targets():
        item = k.blosc_header(enc)[3] if isinstance(codec, Blosc) else 1
        for data in mutations(codec, enc, raw, rng):
            attempt(codec, data, raw, rng, sized, item)
            count += 1
    assert count > 20_000


def test_random_bytes():
    rng = random.Random(7)
    prefixes = [b"", Blosc("lz4").encode(ARR)[:16], Blosc("lz4", 0).encode(ARR)[:16], Zstd().encode(ARR)[:6],
                b"\x28\xb5\x2f\xfd", b"\x1f\x8b\x08\x00", b"\x78\x9c", b"\x02\x01\x21\x04"]
    codecs = [Blosc(), Zstd(), Gzip(), Zlib(), Crc32c()]
    for i in range(3000):
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120)))
        data = prefixes[i % len(prefixes)] + body
        for codec in codecs:
            attempt(codec, data, RAW, rng, sized=False)   # not an encoding of RAW


def test_zstd_decode_with_a_limit_refuses_more_and_holds_at_most_one_byte_beyond():
    from zarrc._kernels import errors
    from zarrc._kernels import zstd as z
    sizeless = _sizeless_rle_frame(8)                            # 1 MiB, no size recorded
    sized = z.zstd_compress(b"\x07" * (1 << 20))
    for frame in (sizeless, sized, sized + sizeless):
        n = len(z.zstd_decode(frame))
        assert z.zstd_decode(frame, n) == b"\x07" * n
        for limit in (0, 1000, n - 1):
            with pytest.raises(errors.KernelError, match=f"more than the {limit} bytes") as got:
                z.zstd_decode(frame, limit)
            assert got.value.code == errors.TOO_LARGE
