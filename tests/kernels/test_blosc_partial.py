"""blosc_decode_range decodes small ranges by decompressing only stream prefixes
(src/blosc_partial.c): it must agree with a full decode for every frame layout
(shuffle / bitshuffle / none, split or not, leftover blocks, stored streams,
memcpyed frames, every compressor) and never crash on corrupt frames."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest

from zarrc._kernels import blosc as k


def _data(rng, n, typesize, kind):
    if kind == "random":
        return rng.integers(0, 256, n * typesize, dtype=np.uint8)
    if kind == "smooth":
        return (np.sin(np.arange(n * typesize) / 300.0) * 100 + 128).astype(np.uint8)
    return np.zeros(n * typesize, np.uint8)


@pytest.mark.parametrize("cname", ["lz4", "lz4hc", "blosclz", "zstd", "zlib"])
@pytest.mark.parametrize("shuffle", [0, 1, 2])
@pytest.mark.parametrize("typesize", [1, 2, 4, 8, 3, 16, 24])
def test_ranges_match_full_decode(cname, shuffle, typesize):
    rng = np.random.default_rng(typesize * 7 + shuffle)
    for trial in range(4):
        n = int(rng.integers(1, 60_000))
        kind = ["random", "smooth", "zeros"][trial % 3]
        x = _data(rng, n, typesize, kind)
        blocksize = int(rng.choice([0, 4096, 65536, 1000 * typesize]))
        frame = numcodecs.Blosc(cname=cname, clevel=int(rng.integers(0, 10)), shuffle=shuffle,
                                blocksize=blocksize).encode(x.view(f"V{typesize}") if typesize > 1 else x)
        full = k.blosc_decode(frame)
        assert full == x.tobytes()
        for _ in range(25):
            e = int(rng.integers(0, n))
            m = int(rng.integers(1, min(600, n - e) + 1))
            out = bytearray(m * typesize)
            k.blosc_decode_range(frame, e * typesize, out)
            assert bytes(out) == full[e * typesize:(e + m) * typesize]


def test_corrupt_frames_raise_or_decode_never_crash():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 8, 100_000).astype("<u2")
    frame = bytes(numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1).encode(x))
    for i in range(5000):
        g = bytearray(frame)
        for _ in range(int(rng.integers(1, 6))):
            pos = int(rng.integers(0, min(len(g), 1500) if i % 2 else len(g)))
            g[pos] = int(rng.integers(0, 256))
        if i % 5 == 0:
            g = g[:int(rng.integers(0, len(g)))]
        out = bytearray(2 * int(rng.integers(1, 40)))
        try:
            k.blosc_decode_range(bytes(g), 2 * int(rng.integers(0, 90_000)), out)
        except k.KernelError:
            pass


def _traced_data(rng, n, kind):
    """Bytes whose LZ4 streams hold what tracing must follow: long runs (matches with
    extra length bytes, offsets shorter than their match), long literal stretches
    (extra literal-length bytes) and smooth, row-like repeats."""
    if kind == "smooth":
        return (np.sin(np.arange(n) / 700.0) * 120 + 128 + rng.integers(0, 2, n)).astype(np.uint8)
    parts, size = [], 0
    while size < n:
        m = int(rng.integers(1, 5000))
        if kind == "mixed" and rng.random() < 0.4:
            part = rng.integers(0, 256, m, dtype=np.uint8)
        else:
            period = rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8)
            part = np.tile(period, m // len(period) + 1)[:m]
        parts.append(part)
        size += m
    return np.concatenate(parts)[:n]


@pytest.mark.parametrize("kind", ["smooth", "runs", "mixed"])
@pytest.mark.parametrize("typesize", [1, 2, 4, 8])
def test_few_items_traced_through_sequences(kind, typesize):
    """Ranges of a few items are found by walking the LZ4 sequences (no decode):
    they must agree with a full decode anywhere in large, many-sequence streams."""
    rng = np.random.default_rng(typesize + len(kind))
    n = 300_000 // typesize
    x = _traced_data(rng, n * typesize, kind)
    for clevel, blocksize in ((5, 0), (9, 0), (1, 65536)):
        frame = numcodecs.Blosc(cname="lz4", clevel=clevel, shuffle=1, blocksize=blocksize).encode(
            x.view(f"V{typesize}") if typesize > 1 else x)
        full = k.blosc_decode(frame)
        assert full == x.tobytes()
        for e in [0, n - 1] + [int(i) for i in rng.integers(0, n, 150)]:
            m = int(rng.integers(1, 5))
            m = min(m, n - e)
            out = bytearray(m * typesize)
            k.blosc_decode_range(frame, e * typesize, out)
            assert bytes(out) == full[e * typesize:(e + m) * typesize], (clevel, e, m)
