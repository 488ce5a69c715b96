"""blosc_decode_rows decodes a whole blosc frame straight into the rows of a strided
output region (src/blosc_rows.c), the way the read engine places a chunk in a larger
array: it must agree with c-blosc for every frame layout it takes (byte-shuffled LZ4,
split or not, leftover blocks, streams stored as is, frames stored as is), write
nothing outside the rows it keeps, decline the layouts it does not take, and never
crash on, or accept, a frame c-blosc refuses."""

from __future__ import annotations

import zlib

import numcodecs
import numpy as np
import pytest

from zarrc._kernels import blosc as k


def _chunk(rng, shape, dtype, kind):
    n = int(np.prod(shape))
    if kind == "random":       # incompressible: streams stored as is
        x = rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype)
    elif kind == "smooth":     # smooth high bytes, noisy low bytes (simulation output)
        x = (np.sin(np.arange(n) / 50.0) * 1000 + rng.integers(0, 8, n)).astype(dtype)
    else:
        x = np.zeros(n, dtype)
    return x.reshape(shape)


def _region(rng, shape, dtype):
    """A region of `shape` inside a larger array filled with a sentinel, at an offset,
    as a view whose last axis is contiguous and whose other axes are strided."""
    pad = [int(rng.integers(0, 5)) for _ in shape]
    big = np.full([s + 2 * p + 3 for s, p in zip(shape, pad)], 0, dtype)
    big.view(np.uint8)[...] = 0x5A
    return big, tuple(slice(p, p + s) for p, s in zip(pad, shape))


@pytest.mark.parametrize("cname", ["lz4", "lz4hc"])
@pytest.mark.parametrize("dtype", ["uint16", "int32", "float32", "float64", "int64"])
@pytest.mark.parametrize("kind", ["random", "smooth", "zeros"])
def test_rows_match_cblosc(cname, dtype, kind):
    rng = np.random.default_rng(zlib.crc32(f"{cname}/{dtype}/{kind}".encode()))  # same in every run
    for shape in [(64, 64, 64), (7, 33, 130), (1000,), (3, 5), (40, 3, 2, 17), (1, 1, 4096)]:
        x = _chunk(rng, shape, dtype, kind)
        for blocksize in [0, 4096, 1000 * x.itemsize, 256]:
            frame = numcodecs.Blosc(cname=cname, clevel=int(rng.integers(1, 10)), shuffle=1,
                                    blocksize=blocksize).encode(x)
            assert np.frombuffer(k.blosc_decode(frame), dtype).reshape(shape).tobytes() == x.tobytes()
            big, region = _region(rng, shape, dtype)
            before = big.copy()
            assert k.blosc_decode_rows(frame, big[region]) is True
            assert big[region].tobytes() == x.tobytes()
            outside = np.ones(big.shape, bool)
            outside[region] = False
            assert big.view(np.uint8).reshape(big.shape + (-1,))[outside].tobytes() == \
                before.view(np.uint8).reshape(big.shape + (-1,))[outside].tobytes()


@pytest.mark.parametrize("dtype", ["uint16", "float32", "float64"])
def test_edge_rows_and_items_are_dropped(dtype):
    """count < shape: only the leading `count` positions of each axis are written
    (an edge chunk of an array); everything else keeps its value."""
    rng = np.random.default_rng(3)
    shape = (9, 10, 300)
    x = _chunk(rng, shape, dtype, "smooth")
    frame = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1, blocksize=2048).encode(x)
    for count in [(9, 10, 300), (4, 10, 300), (9, 3, 300), (9, 10, 17), (1, 1, 1), (5, 7, 299)]:
        out = np.zeros(shape, dtype)
        assert k.blosc_decode_rows(frame, out, count) is True
        keep = tuple(slice(0, c) for c in count)
        expected = np.zeros(shape, dtype)
        expected[keep] = x[keep]
        assert out.tobytes() == expected.tobytes()


def test_frames_stored_as_is():
    """clevel 0: the frame holds the bytes as they are, taken for any typesize."""
    x = np.arange(3 * 7 * 11, dtype="<i2").reshape(3, 7, 11)
    for shuffle in (0, 1, 2):
        frame = numcodecs.Blosc(cname="lz4", clevel=0, shuffle=shuffle).encode(x)
        out = np.zeros((5, 9, 13), x.dtype)[1:4, 1:8, 1:12]
        assert k.blosc_decode_rows(frame, out) is True
        assert np.array_equal(out, x)


@pytest.mark.parametrize("cname,shuffle,dtype", [
    ("lz4", 0, "float32"),          # not shuffled
    ("lz4", 2, "float32"),          # bit-shuffled
    ("blosclz", 1, "float32"),
    ("zstd", 1, "float32"),
    ("zlib", 1, "float32"),
    ("lz4", 1, "uint8"),            # typesize 1: nothing to unshuffle
    ("lz4", 1, "complex128"),       # typesize 16
    ("lz4", 1, "V3"),               # typesize 3
])
def test_declines_other_layouts(cname, shuffle, dtype):
    x = np.frombuffer((np.arange(48 * 1023) // 7 % 50).astype(np.uint8).tobytes(), dtype)
    frame = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle).encode(x)
    assert not frame[2] & 0x2          # compressed, not stored as is
    out = np.zeros(x.shape, np.uint8).view(dtype) if dtype == "V3" else np.zeros_like(x)
    assert k.blosc_decode_rows(frame, out) is False


def test_declines_rows_that_split_items():
    """The frame's typesize must divide the row: 8-byte items in rows of 12 bytes
    (a region of a wider array) are left to c-blosc; a contiguous output is one row."""
    x = (np.arange(400 * 6, dtype="<u2") // 50).reshape(400, 6)
    frame = k.blosc_compress(x, 5, 1, 8, "lz4")
    assert not frame[2] & 0x2
    assert k.blosc_decode_rows(frame, np.zeros((400, 8), x.dtype)[:, :6]) is False
    out = np.zeros_like(x)
    assert k.blosc_decode_rows(frame, out) is True and np.array_equal(out, x)


def test_corrupt_frames_never_accepted_where_cblosc_refuses():
    """Flipped bytes, truncations and wrong sizes: no crash; a frame taken here is one
    c-blosc decodes to the same bytes."""
    rng = np.random.default_rng(11)
    x = _chunk(rng, (16, 32, 64), "uint16", "smooth")
    good = bytearray(numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1, blocksize=8192).encode(x))
    for trial in range(3000):
        frame = bytearray(good)
        for _ in range(int(rng.integers(1, 4))):
            frame[int(rng.integers(0, len(frame)))] = int(rng.integers(0, 256))
        if trial % 5 == 0:
            frame = frame[:int(rng.integers(0, len(frame)))]
        out = np.zeros(x.shape, x.dtype)
        taken = k.blosc_decode_rows(bytes(frame), out)
        try:
            ref = np.frombuffer(k.blosc_decode(bytes(frame)), np.uint8)
        except k.KernelError:
            ref = None
        if taken:
            assert ref is not None and ref.size == out.nbytes, f"trial {trial}: accepted a frame c-blosc refuses"
            assert out.tobytes() == ref.tobytes()


def test_argument_checks():
    x = np.arange(100, dtype="<i4")
    frame = k.blosc_compress(x, 5, 1, 4, "lz4")
    with pytest.raises(ValueError, match="last axis contiguous"):
        k.blosc_decode_rows(frame, np.zeros((100, 2), "<i4")[:, 0])
    with pytest.raises(ValueError, match="does not fit"):
        k.blosc_decode_rows(frame, np.zeros(100, "<i4"), (101,))
    out = np.zeros(100, "<i4")
    out.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        k.blosc_decode_rows(frame, out)
    assert k.blosc_decode_rows(frame, np.zeros(99, "<i4")) is False    # decodes to another size


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32", "float64"])
def test_streaming_rows_at_every_alignment(dtype):
    """With streaming stores (the engine's large outputs) the rows land right whatever
    the output's offset from a cache line (numpy aligns to 16 bytes only): the items
    before a line boundary go through plain stores, nothing outside the rows moves."""
    rng = np.random.default_rng(11)
    x = _chunk(rng, (6, 5, 300), dtype, "smooth")
    frame = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1, blocksize=4096).encode(x)
    item = np.dtype(dtype).itemsize
    for offset in range(0, 72, item):
        raw = np.full(x.nbytes * 2 + 256, 0x5A, np.uint8)
        base = (-raw.ctypes.data) % 64 + offset
        wide = raw[base:base + 6 * 5 * 320 * item].view(dtype).reshape(6, 5, 320)
        before = raw.copy()
        assert k.blosc_decode_rows(frame, wide[:, :, :300], stream=True) is True
        assert wide[:, :, :300].tobytes() == x.tobytes()
        kept = np.ones(raw.size, bool)
        kept[base:base + wide.nbytes] = False
        assert raw[kept].tobytes() == before[kept].tobytes()
        assert wide[:, :, 300:].tobytes() == before[base:base + wide.nbytes].view(dtype).reshape(6, 5, 320)[:, :, 300:].tobytes()
        contiguous = raw[base:base + x.nbytes].view(dtype).reshape(x.shape)
        assert k.blosc_decode_rows(frame, contiguous, stream=True) is True
        assert contiguous.tobytes() == x.tobytes()


def _nblocks(frame, nbytes):
    blocksize = int.from_bytes(frame[8:12], "little")
    return -(-nbytes // blocksize)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32", "float64"])
@pytest.mark.parametrize("clevel", [5, 0])
def test_every_block_split(dtype, clevel):
    """A frame decoded as two threads sharing it would (the blocks from `split` on,
    then those before it: each range starts the row cursor at its first block) gives
    the same bytes for every split point: a short last block, rows dropped at the
    edges (count < shape), rows shorter and longer than a block, frames stored as
    is (clevel 0).  Shuffled uint8 frames are declined either way."""
    rng = np.random.default_rng(11)
    for shape, count, blocksize in [((9, 10, 300), None, 2048), ((9, 10, 300), (5, 7, 299), 2048),
                                    ((3, 1000), (2, 999), 1000), ((6, 40, 8), (6, 39, 5), 256),
                                    ((4, 7, 777), None, 4096)]:
        x = _chunk(rng, shape, dtype, "smooth")
        frame = numcodecs.Blosc(cname="lz4", clevel=clevel, shuffle=1, blocksize=blocksize).encode(x)
        nblocks = _nblocks(frame, x.nbytes)
        keep = tuple(slice(0, c) for c in (count or shape))
        whole = np.zeros(shape, dtype)
        taken = k.blosc_decode_rows(frame, whole, count)
        assert taken or (clevel and np.dtype(dtype).itemsize == 1)   # (uint8: stored as is, or not)
        for split in range(nblocks + 1):
            big, region = _region(rng, shape, dtype)
            before = big.copy()
            out = big[region]
            assert k.blosc_decode_rows(frame, out, count, split=split) is taken
            if not taken:
                continue
            expected = before[region].copy()
            expected[keep] = x[keep]
            assert out.tobytes() == expected.tobytes(), (shape, count, split)
            outside = np.ones(big.shape, bool)
            outside[region] = False
            assert big[outside].tobytes() == before[outside].tobytes()


def test_split_corrupt_block_in_second_half():
    """Bytes flipped in the blocks of the frame's second half: whatever the split, the
    frame is taken exactly when the unsplit decode takes it (with the same bytes),
    never when c-blosc refuses it, and nothing crashes."""
    rng = np.random.default_rng(12)
    x = _chunk(rng, (8, 64, 64), "float32", "smooth")
    good = bytes(numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1, blocksize=8192).encode(x))
    nblocks = _nblocks(good, x.nbytes)
    half = int.from_bytes(good[16 + 4 * (nblocks // 2):20 + 4 * (nblocks // 2)], "little")
    refused = 0
    for _ in range(300):
        frame = bytearray(good)
        for _ in range(int(rng.integers(1, 4))):
            frame[int(rng.integers(half, len(frame)))] = int(rng.integers(0, 256))
        frame = bytes(frame)
        whole = np.zeros_like(x)
        taken = k.blosc_decode_rows(frame, whole)
        try:
            k.blosc_decode(frame)
        except k.KernelError:
            refused += 1
            assert not taken
        for split in range(0, nblocks + 1, 3):
            out = np.zeros_like(x)
            assert k.blosc_decode_rows(frame, out, split=split) is taken
            if taken:
                assert out.tobytes() == whole.tobytes()
    assert refused > 0
