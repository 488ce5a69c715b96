""".zarray documents written by zarr-python 3 (``zarr_format=2``) and tensorstore's
"zarr" driver: zarrc parses every one and writes the same document back, and
zarr-python reads what zarrc writes."""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
numcodecs = pytest.importorskip("numcodecs")

COMPRESSORS = {
    "blosc": lambda: numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
    "zstd": lambda: numcodecs.Zstd(level=5),
    "zlib": lambda: numcodecs.Zlib(level=4),
    "gzip": lambda: numcodecs.GZip(level=6),
    "lz4": lambda: numcodecs.LZ4(acceleration=2),
    "none": lambda: None,
}
FILTERS = {
    "delta": lambda dt: [numcodecs.Delta(dtype=dt)],
    "fixedscaleoffset": lambda dt: [numcodecs.FixedScaleOffset(offset=1, scale=10, dtype=dt, astype="<u2")],
    "quantize": lambda dt: [numcodecs.Quantize(digits=3, dtype=dt)],
    "astype": lambda dt: [numcodecs.AsType(encode_dtype=dt, decode_dtype=dt)],
    "none": lambda dt: None,
}
MATRIX_DTYPES = ["<i4", ">i2", "|u1", "<u8", "<f4", ">f8"]


def matrix():
    for dt, comp, filt, order, sep in itertools.product(MATRIX_DTYPES, COMPRESSORS, FILTERS, "CF", "./"):
        if filt == "quantize" and np.dtype(dt).kind != "f":
            continue
        yield pytest.param(dt, comp, filt, order, sep, id=f"{dt}-{comp}-{filt}-{order}-{sep}")


@pytest.fixture(scope="module")
def write(tmp_path_factory):
    """``write(**create_array_kwargs) -> (zarray_bytes, zattrs dict or None)``."""
    counter = itertools.count()

    def make(**kwargs):
        path = tmp_path_factory.mktemp("zp") / f"a{next(counter)}"
        kwargs.setdefault("shape", (10, 6))
        kwargs.setdefault("chunks", (5, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            zarr.create_array(str(path), zarr_format=2, **kwargs)
        zattrs = path / ".zattrs"
        return (path / ".zarray").read_bytes(), (json.loads(zattrs.read_text()) if zattrs.exists() else None)

    return make


def check_roundtrip(data: bytes, zattrs=None) -> ArrayMetadataV2:
    meta = ArrayMetadataV2.from_json(data, zattrs)
    doc = json.loads(data)
    assert meta.to_json() == doc
    assert list(meta.to_json()) == list(doc)
    assert json.loads(meta.to_bytes()) == doc
    assert ArrayMetadataV2.from_json(meta.to_bytes(), zattrs) == meta
    return meta


@pytest.mark.parametrize(("dtype", "compressor", "filters", "order", "separator"), list(matrix()))
def test_zarr_python_matrix(write, dtype, compressor, filters, order, separator):
    data, _ = write(dtype=dtype, compressors=COMPRESSORS[compressor](), filters=FILTERS[filters](dtype),
                    order=order, chunk_key_encoding={"name": "v2", "separator": separator})
    meta = check_roundtrip(data)
    assert meta.dtype == np.dtype(dtype) and meta.dtype.str == np.dtype(dtype).str
    assert meta.order == order and meta.dimension_separator == separator
    assert (meta.compressor is None) == (compressor == "none")
    if compressor != "none":
        assert meta.compressor["id"] == compressor
    assert (meta.filters is None) == (filters == "none")


def test_to_bytes_matches_zarr_python_bytes(write):
    data, _ = write(dtype="<f8", fill_value=math.nan, filters=[numcodecs.Delta(dtype="<f8")])
    assert ArrayMetadataV2.from_json(data).to_bytes() == data


DTYPE_FILLS = [
    ("bool", [None, False, True]),
    ("|i1", [None, 0, -128, 127]),
    (">i2", [0, -(2**15)]),
    ("<i8", [-(2**63), 2**63 - 1]),
    ("<u4", [2**32 - 1]),
    (">u8", [2**64 - 1]),
    ("<f2", [0.0, 0.1, math.nan, math.inf, 65504.0]),
    (">f4", [-0.0, 1e-40, -math.inf, 0.1]),
    ("<f8", [5e-324, 1e300, math.nan]),
    ("<c8", [1 + 2j, complex(math.nan, math.inf)]),
    (">c16", [complex(-0.0, 1e300)]),
    ("<M8[ns]", [None, np.datetime64("NaT", "ns"), np.datetime64(5, "ns")]),
    (">M8[D]", [np.datetime64("2020-01-02")]),
    ("<m8[s]", [np.timedelta64(7, "s")]),
    ("<m8[10ms]", [None]),
    ("|S5", [None, b"", b"ab", b"abcde"]),
    ("<U3", [None, "", "ab", "xyz"]),
    (">U2", ["é"]),
    ("|V3", [None, b"abc"]),
    ([("a", "<i4"), ("b", "|u1")], [None, np.array((1, 2), dtype=[("a", "<i4"), ("b", "|u1")])[()]]),
    ([("a", ">f8"), ("c", [("x", "|u1"), ("y", "<f2")])], [None]),
]


def dtype_fill_params():
    for dtype, fills in DTYPE_FILLS:
        for i, fill in enumerate(fills):
            yield pytest.param(dtype, fill, id=f"{dtype}-{i}")


@pytest.mark.parametrize(("dtype", "fill_value"), list(dtype_fill_params()))
def test_zarr_python_dtypes_and_fill_values(write, dtype, fill_value):
    data, _ = write(dtype=dtype, fill_value=fill_value)
    meta = check_roundtrip(data)
    assert meta.dtype == np.dtype(dtype)
    if fill_value is not None and meta.dtype.kind not in "SVU" and meta.dtype.fields is None:
        expected = np.asarray(fill_value).astype(meta.dtype)[()]
        if meta.dtype.kind in "fc":
            np.testing.assert_array_equal(meta.fill_value, expected)
        else:
            assert meta.fill_value == expected or (np.isnat(expected) and np.isnat(meta.fill_value))


@pytest.mark.parametrize("dtype", ["VariableLengthUTF8", "VariableLengthBytes"])
def test_zarr_python_variable_length(write, dtype):
    data, _ = write(dtype=getattr(zarr.dtype, dtype)())
    meta = check_roundtrip(data)
    assert meta.dtype == np.dtype(object)
    assert meta.fill_value in ("", b"")


def test_zarr_python_string_fill(write):
    data, _ = write(dtype=str, fill_value="hello")
    assert check_roundtrip(data).fill_value == "hello"


def test_zarr_python_attributes_and_group(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(str(tmp_path), mode="w", zarr_format=2, attributes={"title": "t", "n": [1, 2]})
        root.create_array("x", shape=(4,), chunks=(2,), dtype="<f4", attributes={"units": "K"})
    group = GroupMetadataV2.from_json((tmp_path / ".zgroup").read_bytes(),
                                      (tmp_path / ".zattrs").read_bytes())
    assert group.attributes == {"title": "t", "n": [1, 2]}
    assert group.to_json() == json.loads((tmp_path / ".zgroup").read_text())
    assert group.attributes_to_json() == json.loads((tmp_path / ".zattrs").read_text())
    meta = ArrayMetadataV2.from_json((tmp_path / "x" / ".zarray").read_bytes(),
                                     (tmp_path / "x" / ".zattrs").read_bytes(), path="x")
    assert meta.attributes == {"units": "K"}


@pytest.mark.parametrize("doc", [
    {"shape": [10, 6], "chunks": [5, 3], "dtype": ">f8", "fill_value": "NaN", "order": "F", "filters": None,
     "dimension_separator": "/", "compressor": {"id": "zlib", "level": 1}, "zarr_format": 2},
    {"shape": [7], "chunks": [3], "dtype": "|S4", "fill_value": "YWI=", "order": "C",
     "filters": [{"id": "delta", "dtype": "|S4"}], "dimension_separator": ".", "compressor": None,
     "zarr_format": 2},
    {"shape": [7], "chunks": [3], "dtype": [["a", "<i4"], ["b", "<u2"]], "fill_value": "AQAAAAIA",
     "order": "C", "filters": None, "dimension_separator": ".", "compressor": None, "zarr_format": 2},
    {"shape": [7], "chunks": [3], "dtype": "<M8[ms]", "fill_value": 12, "order": "C", "filters": None,
     "dimension_separator": ".", "compressor": None, "zarr_format": 2},
])
def test_zarr_python_reads_what_zarrc_writes(tmp_path, doc):
    meta = ArrayMetadataV2.from_json(doc)
    (tmp_path / ".zarray").write_bytes(meta.to_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arr = zarr.open_array(str(tmp_path), mode="r")
    assert arr.dtype == meta.dtype
    assert arr.shape == meta.shape and arr.chunks == meta.chunks
    assert arr.order == meta.order if hasattr(arr, "order") else True
    fill = arr.fill_value
    if meta.dtype.kind == "f":
        assert np.isnan(fill) and np.isnan(meta.fill_value)
    else:
        ours = np.asarray(meta.fill_value, dtype=meta.dtype)
        assert np.asarray(fill, dtype=meta.dtype).tobytes() == ours.tobytes()


TENSORSTORE = [
    ({"dtype": "<f4", "shape": [10, 6], "chunks": [5, 3]}, None),
    ({"dtype": ">i2", "shape": [10, 6], "chunks": [5, 3], "compressor": {"id": "zlib", "level": 3},
      "order": "F", "fill_value": 7, "dimension_separator": "/"}, None),
    ({"dtype": [["a", "<i4"], ["b", "<f8", [2]]], "shape": [4], "chunks": [2]}, "a"),
    ({"dtype": "|S4", "shape": [4], "chunks": [2], "fill_value": "YWJjZA=="}, None),
    ({"dtype": "<c8", "shape": [4], "chunks": [2], "fill_value": [1.0, "NaN"]}, None),
    ({"dtype": "<f8", "shape": [4], "chunks": [2], "fill_value": "-Infinity",
      "compressor": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2}}, None),
    ({"dtype": "|b1", "shape": [4], "chunks": [2], "fill_value": True, "compressor": None}, None),
    ({"dtype": ">u8", "shape": [3, 3, 3], "chunks": [1, 2, 3], "fill_value": 2**64 - 1,
      "compressor": {"id": "zstd", "level": 1}}, None),
]


@pytest.mark.parametrize(("metadata", "field"), TENSORSTORE)
def test_tensorstore_zarr_driver(tmp_path, metadata, field):
    ts = pytest.importorskip("tensorstore")
    spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path)}, "metadata": metadata}
    if field:
        spec["field"] = field
    ts.open(spec, create=True).result()
    data = (tmp_path / ".zarray").read_bytes()
    meta = ArrayMetadataV2.from_json(data)
    assert meta.to_json() == json.loads(data)
    for key, value in metadata.items():
        if key == "compressor" and value is not None:  # tensorstore adds its defaults (blosc blocksize)
            assert value.items() <= meta.to_json()[key].items()
        else:
            assert meta.to_json()[key] == value
