"""The arrays the selection tests compare: the same data in zarr-python and zarrc
(v2, v3, sharded and nested-sharded layouts, 1-d to 4-d, edge chunks everywhere),
for tests/test_orthogonal.py and tests/test_vindex.py."""

from __future__ import annotations

import os
import shutil

import pytest
from helpers import NO_ZARR_PYTHON
from interop.support import assert_bit_equal, sample

import zarrc
from zarrc.errors import SelectionError
from zarrc.stores import MemoryStore, ZipStore

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)


# shape, inner chunks, chunks (= the middle level of nested shards), shards
GEOMETRY = {
    1: ((23,), (3,), (6,), (12,)),
    2: ((13, 11), (2, 3), (4, 3), (8, 6)),
    3: ((7, 6, 5), (1, 2, 2), (3, 2, 2), (6, 4, 4)),
    4: ((5, 4, 3, 6), (1, 2, 2, 3), (2, 2, 2, 3), (4, 4, 2, 6)),
}
LAYOUTS = {"v2": "int32", "v3": "float64", "sharded": "uint16", "nested": "complex64"}


def _nested_spec(inner, middle) -> dict:
    def sharding(chunk, codecs):
        return {"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk), "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}
    return sharding(middle, [sharding(inner, [{"name": "bytes", "configuration": {"endian": "little"}}])])


def _zarr_nested(inner, middle):
    from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec
    return ShardingCodec(chunk_shape=middle, index_codecs=[BytesCodec(), Crc32cCodec()],
                         codecs=[ShardingCodec(chunk_shape=inner, codecs=[BytesCodec()],
                                               index_codecs=[BytesCodec(), Crc32cCodec()])])


def create(lib, store, layout: str, ndim: int):
    shape, inner, chunks, shards = GEOMETRY[ndim]
    kw: dict = {"shape": shape, "dtype": LAYOUTS[layout], "fill_value": 0}
    if layout == "v2":
        kw.update(chunks=chunks, zarr_format=2)
    elif layout == "v3":
        kw.update(chunks=chunks)
    elif layout == "sharded":
        kw.update(chunks=chunks, shards=shards)
    else:
        kw.update(chunks=shards, compressors=None,
                  serializer=_nested_spec(inner, chunks) if lib is zarrc else _zarr_nested(inner, chunks))
    return lib.create_array(store, **kw)


class Pair:
    """The same array in zarr-python (``z``, a local directory) and zarrc (``a``).

    zarr-python 3.1 fails on orthogonal writes to sharded arrays (IndexError in its
    sharding codec's partial encode), so writes to a sharded array are compared with
    zarr-python's writes to ``zw``, the same data unsharded, chunked as the shards
    (the grid of its block selections too)."""

    def __init__(self, root, layout: str, ndim: int, store: str) -> None:
        self.root, self.layout, self.ndim, self.kind = root, layout, ndim, store
        self.data = sample(LAYOUTS[layout], GEOMETRY[ndim][0], seed=ndim)
        self.z = create(zarr, os.path.join(root, "z"), layout, ndim)
        self.z[...] = self.data
        self.a = self._zarrc(os.path.join(root, "c"))
        self.zw = self.z
        if layout in ("sharded", "nested"):
            shape, _, _, shards = GEOMETRY[ndim]
            self.zw = zarr.create_array(os.path.join(root, "zw"), shape=shape, chunks=shards,
                                        dtype=LAYOUTS[layout], fill_value=0)
            self.zw[...] = self.data

    def _zarrc(self, where: str):
        if self.kind == "local":       # zarr-python's files, copied
            shutil.copytree(os.path.join(self.root, "z"), where)
            return zarrc.open_array(where, mode="r+")
        store = ZipStore(where + ".zip", mode="w") if self.kind == "zip" else MemoryStore()
        a = create(zarrc, store, self.layout, self.ndim)
        a[...] = self.data
        return a

    def check_read(self, get) -> None:
        try:
            expected = get(self.z)
        except IndexError:            # (a block out of range on this geometry): both raise
            with pytest.raises(SelectionError):
                get(self.a)
            return
        assert_bit_equal(get(self.a), expected, f"{self.layout} {self.ndim}-d {self.kind}")

    def check_write(self, put) -> None:
        put(self.zw)
        put(self.a)
        assert_bit_equal(self.a[...], self.zw[...], f"{self.layout} {self.ndim}-d {self.kind} write")


PAIRS = [(lay, nd, st) for lay in LAYOUTS for nd in GEOMETRY for st in ("local", "memory", "zip")
         if st == "local" or nd == 2]


@pytest.fixture(params=PAIRS, ids=lambda p: f"{p[0]}-{p[1]}d-{p[2]}")
def pair(request, tmp_path):
    """One Pair per layout, dimensionality and store (a test module imports it)."""
    return Pair(str(tmp_path), *request.param)


def both_raise(pair, getters) -> None:
    """Each call raises IndexError in zarr-python and SelectionError (an IndexError)
    in zarrc."""
    for get in getters:
        with pytest.raises(IndexError):
            get(pair.z)
        with pytest.raises(SelectionError):
            get(pair.a)
