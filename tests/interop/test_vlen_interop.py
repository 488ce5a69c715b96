"""Variable-length strings and bytes, v3 (string / variable_length_bytes with
vlen-utf8 / vlen-bytes) and v2 (object arrays with the VLen filters), written by
zarr-python and read by zarrc, and the other way round."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)

STRINGS = ["", "a", "héllo wörld", "日本語", "x" * 500, "tab\tnew\nline", "\x00nul"]
BLOBS = [b"", b"\x00", b"\xff\xfe", b"abc" * 100, b"z", b"\x00\x01\x02", b"q" * 7]


def _values(kind, shape):
    pool = STRINGS if kind == "str" else BLOBS
    out = np.empty(shape, object)
    for i, idx in enumerate(np.ndindex(*shape)):
        out[idx] = pool[(i * 3 + i // 5) % len(pool)]
    return out


def _zarr_dtype(kind):
    if kind == "str":
        return str
    from zarr.core.dtype import VariableLengthBytes
    return VariableLengthBytes()


def _compressor(fmt, name):
    if name is None:
        return None
    if fmt == 2:
        import numcodecs
        return {"blosc": numcodecs.Blosc(cname="lz4"), "zstd": numcodecs.Zstd(level=3)}[name]
    return {"blosc": zarr.codecs.BloscCodec(cname="lz4"), "zstd": zarr.codecs.ZstdCodec(level=3)}[name]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", ["str", "bytes"])
@pytest.mark.parametrize("compressor", [None, "blosc", "zstd"])
def test_zarr_python_writes_zarrc_reads(tmp_path, fmt, kind, compressor):
    x = _values(kind, (9, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path), shape=(12, 5), chunks=(4, 3), dtype=_zarr_dtype(kind),
                              zarr_format=fmt, compressors=_compressor(fmt, compressor))
        z[:9] = x                     # rows 9.. of the last chunk row stay unwritten
    a = zarrc.open_array(str(tmp_path), mode="r")
    assert a.zarr_format == fmt and a.dtype == object
    got = a[:]
    assert got[:9].tolist() == x.tolist()
    empty = "" if kind == "str" else b""
    assert all(v == empty and type(v) is type(empty) for v in got[9:].ravel())
    assert a[2:7:2, 1:].tolist() == x[2:7:2, 1:].tolist()
    assert a[4, 2] == x[4, 2]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", ["str", "bytes"])
@pytest.mark.parametrize("compressor", [None, "blosc", "zstd"])
def test_zarrc_writes_zarr_python_reads(tmp_path, fmt, kind, compressor):
    x = _values(kind, (10, 6))
    if fmt == 2:
        comp = {None: None, "blosc": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
                "zstd": {"id": "zstd", "level": 3}}[compressor]
    else:
        comp = {None: None, "blosc": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                                     "shuffle": "shuffle"}},
                "zstd": {"name": "zstd", "configuration": {"level": 3}}}[compressor]
    a = zarrc.create_array(str(tmp_path), shape=x.shape, chunks=(3, 4), zarr_format=fmt,
                           dtype=str if kind == "str" else bytes, compressors=comp)
    a[:] = x
    a[1:3, 4] = x[0, 0]
    x[1:3, 4] = x[0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(str(tmp_path), mode="r")
        got = z[:]
    assert [[v if isinstance(v, (str, bytes)) else str(v) for v in row] for row in got.tolist()] == x.tolist()


def test_zarrc_stores_non_strings_in_string_arrays_as_zarr_python():
    # (tests/interop/test_string_items.py compares the chunks with zarr-python's)
    a = zarrc.create_array({}, shape=(3,), chunks=(2,), dtype=str)
    a[:] = np.array([1, None, 2.5], dtype=object)
    assert a[:].tolist() == ["1", "None", "2.5"]
    with pytest.raises(zarrc.errors.CodecError, match=r"item \(2,\) of /: vlen-utf8: is b'\\xff'"):
        a[:] = np.array(["a", "b", b"\xff"], dtype=object)
    assert a[:].tolist() == ["1", "None", "2.5"]
