"""``zeros_like`` / ``ones_like`` / ``full_like`` / ``empty_like``, top-level and
``Group``'s, against zarr-python's on sharded, chunked and v2 sources (issue 32,
item 6): both forms go through one helper (``zarrc.core.like.like_arguments``), and the
metadata document each library writes is the same.  zarr-python (3.1 and 3.4) takes
a sharded source's ``chunks`` (its inner chunks) as the new chunk grid and copies its
whole codec list, so the new array's shards are its inner chunks: zarrc does too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON

import zarrc

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
ZARR_VERSION = tuple(int(p) for p in zarr.__version__.split(".")[:2])

SOURCES = {
    "sharded": {"shape": (100, 60), "chunks": (10, 20), "shards": (50, 60), "dtype": "int16",
                "fill_value": 3, "compressors": [{"name": "zstd", "configuration": {"level": 5}}]},
    "chunked": {"shape": (100, 60), "chunks": (30, 20), "dtype": "float32", "fill_value": 1.5},
    "v2": {"shape": (40, 7), "chunks": (16, 7), "dtype": "<u4", "fill_value": 9, "zarr_format": 2},
}
FUNCS = ["zeros_like", "ones_like", "full_like", "empty_like"]


def document(root: Path, path: str) -> dict:
    """The metadata document at ``path`` (v3 zarr.json, or v2 .zarray) with the
    attributes that only one library writes left out."""
    for name in ("zarr.json", ".zarray"):
        f = root / path / name
        if f.exists():
            doc = json.loads(f.read_text())
            doc.pop("attributes", None)
            return doc
    raise AssertionError(f"no metadata document at {root / path}")


def pair(tmp_path: Path, source: str):
    """The same source array made by each library, with the same values."""
    kw = SOURCES[source]
    made = []
    for lib in (zarrc, zarr):
        a = lib.create_array(str(tmp_path / f"src-{lib.__name__}.zarr"), **kw)
        a[...] = np.arange(np.prod(kw["shape"]), dtype=kw["dtype"]).reshape(kw["shape"]) % 50
        made.append(a)
    return made


def extra(func: str) -> dict:
    return {"fill_value": 7} if func == "full_like" else {}


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("func", FUNCS)
def test_top_level_and_group_like_zarr_python(tmp_path, source, func):
    zc_src, zp_src = pair(tmp_path, source)
    fmt = SOURCES[source].get("zarr_format", 3)
    roots = {lib: tmp_path / lib for lib in ("zc", "zp")}
    # (zarr-python 3.1 makes a v3 array from a v2 source unless told the format)
    getattr(zarrc, func)(zc_src, store=str(roots["zc"]), path="top", zarr_format=fmt, **extra(func))
    getattr(zarr, func)(zp_src, store=str(roots["zp"]), path="top", zarr_format=fmt, **extra(func))
    zc_group = zarrc.open_group(str(roots["zc"] / "g"), mode="w", zarr_format=fmt)
    zp_group = zarr.open_group(str(roots["zp"] / "g"), mode="w", zarr_format=fmt)
    made = getattr(zc_group, func)(name="member", data=zc_src, **extra(func))
    paths = ["top"]
    if fmt == 3 or ZARR_VERSION >= (3, 4):      # (3.1's Group.*_like makes a v3 array from a v2 one)
        getattr(zp_group, func)(name="member", data=zp_src, **extra(func))
        paths.append("g/member")
    for path in paths:
        assert document(roots["zc"], path) == document(roots["zp"], path), path
    # the group's member and the top-level array are made alike
    assert document(roots["zc"], "top") == document(roots["zc"], "g/member")
    opened = zarr.open_array(str(roots["zc"] / "g" / "member"), mode="r")
    assert (made.shape, made.chunks, made.shards, made.dtype, made.fill_value) == \
        (opened.shape, opened.chunks, opened.shards, opened.dtype, opened.fill_value)
    np.testing.assert_array_equal(made[...], opened[...])


def test_sharded_like_takes_the_inner_chunks(tmp_path):
    # the figures of the sharded case, spelled out: grid = the source's inner chunks,
    # its codecs (sharding included) copied; chunks= overrides the grid
    zc_src, _ = pair(tmp_path, "sharded")
    a = zarrc.zeros_like(zc_src)
    assert (a.chunks, a.shards, a.fill_value) == ((10, 20), (10, 20), 0)
    g = zarrc.group()
    b = g.zeros_like(name="b", data=zc_src, chunks=(20, 20))
    assert (b.chunks, b.shards) == ((10, 20), (20, 20))
    assert b.metadata.to_json()["codecs"] == zc_src.metadata.to_json()["codecs"]
