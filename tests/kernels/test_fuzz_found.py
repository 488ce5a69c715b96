"""What fuzzing (./scripts/fuzz, fuzz/targets.py) found, each case reduced to its
cause; the fuzzer's own inputs are in fuzz/regressions/ (test_fuzz_corpus.py)."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest

from zarrc._kernels import blosc as k


def _lz4_frame(n=480, dtype="<u2", blocksize=128):
    x = (np.arange(n) % 251).astype(dtype)
    return x, bytearray(numcodecs.Blosc("lz4", 5, 1, blocksize).encode(x))


@pytest.mark.parametrize("versionlz", [0, 2, 50, 255])
def test_blosc_lz4_frame_of_another_versionlz_is_refused(versionlz):
    # blosc_rows took an LZ4 frame whose versionlz byte (header byte 1) c-blosc refuses
    # (it takes only LZ4's format version, 1); blosc_partial likewise
    x, frame = _lz4_frame()
    frame[1] = versionlz
    frame = bytes(frame)
    with pytest.raises(k.KernelError):
        k.blosc_decode(frame)
    out = np.zeros_like(x)
    assert not k.blosc_decode_rows(frame, out)
    assert not k.blosc_decode_rows(frame, out, split=1)
    with pytest.raises(k.KernelError):
        k.blosc_decode_range(frame, 2, bytearray(8))


@pytest.mark.parametrize("change", [(0, 1), (0, 3), (2, 0x08)])
def test_blosc_frame_of_another_version_or_future_flags_is_refused(change):
    # blosc_partial took frames whose version byte (not 2) or reserved flag (0x08)
    # c-blosc refuses
    at, value = change
    x, frame = _lz4_frame()
    frame[at] = value if at == 0 else frame[at] | value
    frame = bytes(frame)
    with pytest.raises(k.KernelError):
        k.blosc_decode(frame)
    with pytest.raises(k.KernelError):
        k.blosc_decode_range(frame, 2, bytearray(8))
    assert not k.blosc_decode_rows(frame, np.zeros_like(x))


def test_zstd_frame_with_an_empty_compressed_block_is_refused_on_both_paths():
    # a frame without a content size whose last block is "compressed" with size 0:
    # zstd's streaming decoder (zstd_decode of an unknown size) took it as empty,
    # its one-shot decoder (zstd_decode_into, the engine's) refuses it as corrupt
    from zarrc._kernels import zstd as z
    from zarrc.codecs import Zstd
    from zarrc.errors import CodecError
    frame = bytes([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x01, 0x05, 0x00, 0x00])
    with pytest.raises(k.KernelError, match="corrupt"):
        z.zstd_decode_into(frame, bytearray(0))
    with pytest.raises(k.KernelError, match="empty compressed block"):
        z.zstd_decode(frame)
    with pytest.raises(CodecError):
        Zstd().decode(frame)
    # the same block after a valid one, and frames without it, still decode
    good = bytes([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x01, 0x01, 0x00, 0x00])   # last block, raw, 0 bytes
    assert z.zstd_decode(good) == b""
    with pytest.raises(k.KernelError):
        z.zstd_decode(z.zstd_compress(b"abc" * 100) + frame)


def test_zstd_frame_whose_empty_last_block_ends_it_short_of_its_size_is_refused_on_both_paths():
    # a sizeless frame (7 bytes of RLE) followed by a frame recording 681 M bytes whose
    # only block is an empty raw one: zstd's streaming decoder (zstd_decode of an
    # unknown total) skips the size check on an empty last block and gave the 7 bytes,
    # its one-shot decoder (zstd_decode_into) refuses it; zarrc checks each frame's
    # recorded size on both (fuzz/regressions/zstd/frame-size-unchecked-...)
    from zarrc._kernels import zstd as z
    sizeless = bytes.fromhex("28b52ffd00003b000025")
    short = bytes.fromhex("28b52ffd80202d00a528010000")
    with pytest.raises(k.KernelError, match="other than the size its header records"):
        z.zstd_decode(sizeless + short)
    with pytest.raises(k.KernelError, match="corrupt"):
        z.zstd_decode_into(sizeless + short, bytearray(7))
    # frames whose sizes are right still decode, with or without an empty last block
    whole = z.zstd_compress(b"abc")
    assert z.zstd_decode(sizeless + whole + sizeless) == b"%" * 7 + b"abc" + b"%" * 7
    empty_last = bytes.fromhex("28b52ffd2000010000")      # records 0 bytes, one empty raw last block
    assert z.zstd_decode(sizeless + empty_last) == b"%" * 7


def _lz4_match_frame(offset, n=8192, tail=11):
    """A one-block, one-stream blosc LZ4 frame of n bytes: literal "A", a match of
    `offset` up to n - tail, then `tail` literals (LZ4's last bytes are literals)."""
    import struct
    ml = n - 1 - tail - 4                     # the match length field (4 added by LZ4)
    extra = b"\xff" * ((ml - 15) // 255) + bytes([(ml - 15) % 255])
    stream = (bytes([0x1F]) + b"A" + struct.pack("<H", offset) + extra
              + bytes([tail << 4]) + b"z" * tail)
    body = struct.pack("<i", 20) + struct.pack("<i", len(stream)) + stream
    header = bytes([2, 1, 0x20 | 0x10, 1]) + struct.pack("<iii", n, n, 16 + len(body))
    return header + body


@pytest.mark.parametrize("length", [8, 1000, 5000])
def test_blosc_lz4_match_of_offset_zero_is_refused_by_range_decodes(length):
    # fuzz/regressions/blosc_partial/lz4-match-offset-zero: a match of offset 0
    # (invalid in LZ4's format) leaves what the buffer held, and LZ4's full and
    # partial decoders hold different bytes: blosc_decode_range gave other bytes
    # than blosc_decode.  Each range path refuses it (a walk of a few bytes' sequences,
    # LZ4's partial decode, c-blosc's getitem past ZC_PARTIAL_MAX); offset 1 decodes
    good, bad = _lz4_match_frame(1), _lz4_match_frame(0)
    whole = k.blosc_decode(good)
    assert whole == b"A" * 8181 + b"z" * 11
    out = bytearray(length)
    k.blosc_decode_range(good, 8, out)
    assert out == whole[8:8 + length]
    with pytest.raises(k.KernelError, match="corrupt"):
        k.blosc_decode_range(bad, 8, bytearray(length))


def _shuffled_lz4_match_frame(offset):
    """As _lz4_match_frame, byte-shuffled items of 4 bytes: literal "ABCD", then the
    match (c-blosc decodes it into its scratch buffer and unshuffles from there; the
    row decoder, blosc_rows.c, into its own)."""
    import struct
    n, tail = 8192, 11
    ml = n - 4 - tail - 4
    extra = b"\xff" * ((ml - 15) // 255) + bytes([(ml - 15) % 255])
    stream = (bytes([0x4F]) + b"ABCD" + struct.pack("<H", offset) + extra
              + bytes([tail << 4]) + b"z" * tail)
    body = struct.pack("<i", 20) + struct.pack("<i", len(stream)) + stream
    return bytes([2, 1, 0x20 | 0x10 | 0x01, 4]) + struct.pack("<iii", n, n, 16 + len(body)) + body


def test_whole_frame_decodes_of_an_lz4_match_of_offset_zero_are_deterministic():
    # The same frame as above, decoded whole (c-blosc's decompress, blosc_rows.c), is not
    # refused: LZ4_decompress_safe (not its partial mode) writes zeros for a match of
    # offset 0 (lz4.c: LZ4_write32(op, 0) before the copy "when offset==0", then copies
    # from 8 bytes behind), so the result is corrupt data decoded to deterministic wrong
    # values -- the same bytes whatever the output, c-blosc's scratch or the row
    # decoder's held before, with 1 thread or 2 -- never memory the caller did not write
    for bad, expected in ((_lz4_match_frame(0), b"A" + bytes(8180) + b"z" * 11),
                          (_shuffled_lz4_match_frame(0), None)):
        dirty = _lz4_match_frame(1) if expected is not None else _shuffled_lz4_match_frame(4)
        got = []
        for prior in (dirty, bad):
            k.blosc_decode(prior)                          # (c-blosc's scratch now holds its bytes)
            got.append(k.blosc_decode(bad))
            for fill in (0x00, 0xAA, 0x55):
                for threads in (1, 2):
                    out = bytearray([fill]) * 8192
                    k.blosc_decode_into(bad, out, threads)
                    got.append(bytes(out))
            if expected is None:                           # (the row decoder takes shuffled items)
                for fill in (0xAA, 0x55):
                    big = np.full((4, 4096), fill, np.uint8).view("<u4")
                    assert k.blosc_decode_rows(bad, big[1:3, :1024])
                    got.append(big[1:3, :1024].tobytes())
                    assert (big[0].view(np.uint8) == fill).all() and (big[3].view(np.uint8) == fill).all()
        assert all(g == got[0] for g in got)
        if expected is not None:
            assert got[0] == expected
        else:                   # the literal's 4 bytes, unshuffled: each item's first byte, zeros after
            assert got[0][:16] == b"A\0\0\0B\0\0\0C\0\0\0D\0\0\0" and got[0][16:-11 * 4].count(0) >= 8000
