"""Codecs only Python runs on a rectilinear grid (numcodecs filters, variable-length
strings, sharding around variable-length items): the Python strategy over the whole
grid (engine.python.GridCodecs: each chunk shape's codec, made once per shape; the
plan on the grid's boundaries).  Every selection kind read
and written against numpy, in memory and in a directory; resize; a corrupt chunk
named."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.engine.python import GridCodecs, PythonStrategy
from zarrc.errors import CodecError

SHAPE = (44, 48)
EDGES = [[8, 12, 20, 4], [12, 6, 30]]
DELTA = [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}]


def _make(store, kind):
    if kind == "numcodecs":
        a = zarrc.create_array(store, shape=SHAPE, chunks=EDGES, dtype="i4", fill_value=-1, filters=DELTA)
        return a, np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)
    data = np.arange(np.prod(SHAPE)).astype(str).astype(object).reshape(SHAPE)
    if kind == "strings":
        a = zarrc.create_array(store, shape=SHAPE, chunks=EDGES, dtype=str)
    else:                               # (whole shards of strings, each decoded in Python)
        a = zarrc.create_array(store, shape=SHAPE, chunks=(4, 6), shards=EDGES, dtype=str)
    return a, data


@pytest.mark.parametrize("on", ["files", "memory"])
@pytest.mark.parametrize("kind", ["numcodecs", "strings", "sharded strings"])
def test_every_selection_kind(tmp_path, on, kind):
    store = str(tmp_path / "a") if on == "files" else zarrc.storage.MemoryStore()
    a, data = _make(store, kind)
    assert type(a._engine) is PythonStrategy and isinstance(a._chunked.codec, GridCodecs)
    a[...] = data
    rng = np.random.default_rng(2)
    for _ in range(8):
        lo = [int(rng.integers(0, n)) for n in SHAPE]
        box = tuple(slice(x, int(rng.integers(x, n)) + 1, int(rng.integers(1, 3))) for x, n in zip(lo, SHAPE))
        np.testing.assert_array_equal(a[box], data[box])
        sel = tuple(np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)) for n in SHAPE)
        np.testing.assert_array_equal(a.oindex[sel], data[np.ix_(*sel)])
        pts = tuple(rng.integers(-n, n, 40) for n in SHAPE)
        np.testing.assert_array_equal(a.vindex[pts], data[pts])
        mask = rng.random(SHAPE) < 0.05
        np.testing.assert_array_equal(a.vindex[mask], data[mask])
        box = tuple(slice(x, int(rng.integers(x, n)) + 1) for x, n in zip(lo, SHAPE))
        v = data[box][::-1, ::-1].copy()
        a[box] = v
        data[box] = v
        a.oindex[sel] = data[0, 0]
        data[np.ix_(*sel)] = data[0, 0]
        a.vindex[pts] = data[1, 1]
        data[pts] = data[1, 1]
    b = zarrc.open_array(store)
    assert type(b._engine) is PythonStrategy
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b.blocks[1, 1], data[8:20, 12:18])
    b.resize((30, 40))
    b.resize((44, 54))
    want = np.full((44, 54), a.fill_value, data.dtype)
    want[:30, :40] = data[:30, :40]
    np.testing.assert_array_equal(zarrc.open_array(store)[...], want)


def test_a_codec_per_chunk_shape(tmp_path):
    """One codec per chunk shape, made when first met: 12 chunks of 9 shapes."""
    a, data = _make(str(tmp_path / "a"), "numcodecs")
    a[...] = data
    assert set(a._chunked.codec._codecs) == {(r, c) for r in (8, 12, 20, 4) for c in (12, 6, 30)}
    b = zarrc.open_array(str(tmp_path / "a"))
    b[9:10, 13:14]
    assert list(b._chunked.codec._codecs) == [(12, 6)]


def test_a_corrupt_chunk_is_named(tmp_path):
    a, data = _make(str(tmp_path / "a"), "numcodecs")
    a[...] = data
    (tmp_path / "a" / "c" / "2" / "1").write_bytes(b"not a chunk")
    for read in (lambda: a[...], lambda: a[25, 13:15], lambda: a.vindex[[21], [17]]):
        with pytest.raises(CodecError, match="chunk c/2/1 of"):
            read()
    np.testing.assert_array_equal(a[:20], data[:20])

