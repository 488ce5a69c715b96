"""Zarr v2 arrays between zarrc, zarr-python and tensorstore (driver "zarr").

Every v2 data type, compressor and filter, both orders and both dimension
separators: an array written by one library reads bit-exactly in the others (the
whole array, edge chunks, steps, integer indices; missing chunks as the fill
value, including NaN and null fill values).  Then: partial updates of arrays the
other library wrote, v2 hierarchies with attributes, and bad ``.zarray`` /
``.zgroup`` documents, which zarrc rejects with a MetadataError naming the key.

zarrc's reads keep the stored byte order (``a.dtype`` is ">i4" for a ">i4" array,
as zarr-python); the other libraries' reads are compared in native byte order,
bit for bit.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc
from zarrc.errors import MetadataError

from interop import support

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
numcodecs = pytest.importorskip("numcodecs")

# zarr-python warns that numcodecs codecs and vlen types are not in the v2 spec; numcodecs'
# lossy filters warn about the overflow of infinities and extremes in the data
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning",
                                        "ignore::RuntimeWarning")

# ---------------------------------------------------------------- data types

# nested fields in mixed byte orders (what zarr-python 3 supports)
STRUCT = np.dtype([("t", "<i4"), ("pos", [("x", ">f8"), ("y", "<f4")]), ("flag", "|b1"), ("code", ">u2")])
# subarray fields: zarr-python 3 cannot write them (3.1 turns them into "|V6", 3.4 refuses)
# nor read them, so these are written by hand (as zarr-python 2 did) or checked with tensorstore
STRUCT_SUB = np.dtype([("a", "<i4"), ("b", [("x", ">f8"), ("y", "|u1", (2, 3))]), ("c", ">i2", (3,))])
FLAT_SUB = np.dtype([("t", ">i4"), ("c", "<i2", (3,)), ("v", "<f8")])

DTYPES = {
    "b1": "|b1", "i1": "|i1", "<i2": "<i2", ">i4": ">i4", "<u8": "<u8", ">u2": ">u2", "<f2": "<f2",
    ">f4": ">f4", "<f8": "<f8", "<c8": "<c8", ">c16": ">c16", "<M8[ns]": "<M8[ns]", ">m8[s]": ">m8[s]",
    "S7": "|S7", "<U3": "<U3", ">U2": ">U2", "V5": "|V5", "struct": STRUCT, "str": str, "bytes": bytes,
}


def np_dtype(key: str) -> np.dtype:
    dt = DTYPES[key]
    return np.dtype(object) if dt in (str, bytes) else np.dtype(dt)


def zarr_python_dtype(key: str):
    if key == "bytes":
        from zarr.dtype import VariableLengthBytes
        return VariableLengthBytes()
    return DTYPES[key]


def _record(t: int, x: float, y: float, flag: bool, code: int) -> np.void:
    r = np.zeros((), STRUCT)
    r["t"], r["pos"]["x"], r["pos"]["y"], r["flag"], r["code"] = t, x, y, flag, code
    return r[()]


# non-default fill values (the "custom" fill of a case)
FILLS = {
    "b1": True, "i1": -7, "<i2": 1234, ">i4": -42, "<u8": 2**64 - 1, ">u2": 65535, "<f2": -1.5,
    ">f4": 3.25, "<f8": -np.inf, "<c8": complex(1.5, -2), ">c16": complex(-0.0, 1e300),
    "<M8[ns]": np.datetime64("2001-02-03T04:05:06.123456789", "ns"), ">m8[s]": np.timedelta64(-5, "s"),
    "S7": b"ab\0c", "<U3": "é☃", ">U2": "x", "V5": b"\x01\x02\0\x04\x05",
    "struct": _record(-3, 2.5, -0.0, True, 513), "str": "fill ☃", "bytes": b"\0fill",
}


def fill_for(key: str, kind: str):
    """The fill_value argument for a case: None (leave it out: the default), FILLS'
    value, or NaN."""
    if kind == "default":
        return None
    if kind == "nan":
        return complex(np.nan, 1.0) if np_dtype(key).kind == "c" else np.nan
    return FILLS[key]


def default_fill(dt: np.dtype):
    """The fill value zarr-python 3 and zarrc give a v2 array when fill_value is left out."""
    if dt.kind == "O":
        return None  # set per codec by the caller
    if dt.kind in "mM":
        return np.array("NaT", dt)[()]
    return np.zeros((), dt)[()]


def full(dt: np.dtype, fill, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, dt)
    if dt.kind == "O":
        for i in np.ndindex(shape):
            out[i] = fill
    else:
        out[...] = fill
    return out


# ---------------------------------------------------------------- data

def values(dtype, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Deterministic data of ``dtype`` (a numpy dtype, ``str`` or ``bytes``): random
    with structure (every third element from a slow ramp); floats include NaNs with
    payloads, infinities, -0.0 and subnormals; strings and bytes vary in length and
    hold non-ASCII characters and NULs."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dtype is str or dtype is bytes:
        words = ["", "a", "zarr", "é", "温度", "🌍🌍", "\0x", "ab\0", "longer word"]
        out = np.empty(n, object)
        for i in range(n):
            text = "".join(rng.choice(words, size=int(rng.integers(0, 4))))
            if i % 3 == 0:
                text = words[(i // 3) % len(words)]
            out[i] = text if dtype is str else text.encode() + bytes(rng.integers(0, 256, i % 3, np.uint8))
        return out.reshape(shape)
    dt = np.dtype(dtype)
    if dt.fields is not None:
        out = np.zeros(shape, dt)
        for k, name in enumerate(dt.names):
            sub = dt.fields[name][0]
            out[name] = values(sub.base, shape + sub.shape, seed * 31 + k)
        return out
    native = dt.newbyteorder("=")
    ramp = np.arange(n)[::3] // 4
    if dt.kind in "biufc":
        flat = _sample(native, n, rng)
        flat[::3] = (ramp % 2).astype(bool) if dt.kind == "b" else ramp.astype(native)
    elif dt.kind in "mM":
        ints = rng.integers(-2**62, 2**62, n)
        ints[::3] = ramp * 1000
        ints[1::7] = np.iinfo(np.int64).min  # NaT
        flat = ints.view(native)
    elif dt.kind in "SV":
        raw = rng.integers(0, 256, (n, dt.itemsize), dtype=np.uint8)
        raw[np.arange(dt.itemsize) >= rng.integers(0, dt.itemsize + 1, (n, 1))] = 0  # trailing NULs
        raw[::3] = np.frombuffer(b"structure"[: dt.itemsize].ljust(dt.itemsize, b"\0"), np.uint8)
        flat = raw.reshape(-1).view(native)
    elif dt.kind == "U":
        chars = dt.itemsize // 4
        pool = np.array([ord(c) for c in "abcXYZ09 éß☃温🌍"], np.uint32)
        raw = rng.choice(pool, size=(n, chars))
        raw[np.arange(chars) >= rng.integers(0, chars + 1, (n, 1))] = 0
        raw[::3] = pool[ramp % len(pool), None]
        flat = raw.reshape(-1).view(native)
    else:
        raise AssertionError(dt)
    return flat.astype(dt).reshape(shape)  # a byte swap keeps every bit (NaN payloads too)


def _sample(dt: np.dtype, n: int, rng) -> np.ndarray:
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        flat[:2] = [info.min, info.max]
        return flat
    if dt.kind == "c":
        part = np.dtype(f"f{dt.itemsize // 2}")
        flat = np.empty(n, dt)
        flat.real, flat.imag = _floats(part, n, rng), _floats(part, n, rng)[::-1]
        return flat
    return _floats(dt, n, rng)


NAN_BITS = {2: [0x7C01, 0xFE01], 4: [0x7FA00001, 0xFFC00123], 8: [0x7FF0000000000001, 0xFFF8DEADBEEF0000]}
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _floats(dt: np.dtype, n: int, rng) -> np.ndarray:
    flat = (rng.standard_normal(n) * 100).astype(dt)
    bits = flat.view(UINT[dt.itemsize])
    specials = [np.asarray(v, dt).view(UINT[dt.itemsize]) for v in
                (-0.0, np.inf, -np.inf, np.finfo(dt).smallest_subnormal, np.finfo(dt).max)]
    specials += [UINT[dt.itemsize](b) for b in NAN_BITS[dt.itemsize]]
    where = rng.choice(n, size=min(n, 2 * len(specials)), replace=False)
    for i, w in enumerate(where):
        bits[w] = specials[i % len(specials)]
    return flat


# ---------------------------------------------------------------- comparison

def as_array(x, like: np.ndarray) -> np.ndarray:
    """A read result (array or scalar) as an array; a lone object item stays an object."""
    if isinstance(x, np.ndarray):
        return x
    if like.dtype.kind == "O":
        out = np.empty((), object)
        out[()] = x
        return out
    return np.asarray(x)


def pick(arr: np.ndarray, sel) -> np.ndarray:
    """``arr[sel]`` as an array of ``arr``'s dtype (0-d for an element, as zarrc and
    zarr-python return it; numpy gives a native-order scalar or a Python object)."""
    out = arr[sel]
    return out if isinstance(out, np.ndarray) else np.array(out, dtype=arr.dtype)


def _plain(x):
    return bytes(x) if isinstance(x, bytes) else str(x) if isinstance(x, str) else x


def assert_same(actual, expected, what: str, *, exact_dtype: bool = True) -> None:
    """Same shape and the very same bits in every element; the same dtype including
    byte order (``exact_dtype``) or up to byte order.  Object arrays: the same items,
    of the same types (str / bytes)."""
    expected = np.asarray(expected) if not isinstance(expected, np.ndarray) else expected
    actual = as_array(actual, expected)
    if expected.dtype.kind == "O":
        if exact_dtype:
            assert actual.dtype == object, f"{what}: dtype {actual.dtype}, expected object"
        actual = actual.astype(object)  # (zarr-python reads vlen-utf8 as StringDType)
        assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
        items = actual.reshape(-1)
        if not exact_dtype:  # zarr-python returns one vlen-bytes element as a 0-d "|S" array
            items = [_plain(x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x) for x in items]
        got = [(type(x).__name__, x) for x in items]
        want = [(type(x).__name__, x) for x in expected.reshape(-1)]
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        assert not bad, f"{what}: {len(bad)} of {len(want)} items differ: " + ", ".join(
            f"#{i} {got[i]!r} != {want[i]!r}" for i in bad[:5])
        return
    if exact_dtype:   # byte order included; assert_bit_equal compares up to byte order
        assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    support.assert_bit_equal(actual, expected, what)


# ---------------------------------------------------------------- layout

SHAPE, CHUNKS = (23, 17), (5, 4)
REGION = (slice(0, 18), slice(3, 17))   # chunk row 4 stays missing; chunk column 0 is partial
SELECTIONS = [
    Ellipsis,
    (slice(20, None), slice(16, None)),             # the corner edge chunk (missing)
    (slice(13, 22), slice(2, 17)),                  # across written, partial and missing chunks
    (slice(1, None, 3), slice(None, None, 5)),      # steps
    (slice(2, 19, 7), slice(15, 1, None)),          # a step, an empty slice
    (7, slice(None)),                               # an integer index
    (slice(None), -1),                              # the last column (edge chunks)
    (Ellipsis, 5),
    (-1, 16),                                       # one element of a missing chunk
    (4, 3),                                         # one written element
]


def chunk_boxes(shape=SHAPE, chunks=CHUNKS) -> dict[tuple[int, ...], tuple[slice, ...]]:
    grid = [math.ceil(s / c) for s, c in zip(shape, chunks)]
    return {coords: tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(coords, chunks, shape))
            for coords in np.ndindex(*grid)}


def equals_fill(part: np.ndarray, fill) -> bool:
    """Whether every element of ``part`` is ``fill``, bit for bit (items, for objects)."""
    if part.dtype.kind == "O":
        return all(type(x) is type(fill) and x == fill for x in part.reshape(-1))
    f = np.asarray(fill, part.dtype).reshape(1).view(np.uint8)
    return bool((np.ascontiguousarray(part).reshape(-1).view(np.uint8).reshape(-1, f.size) == f).all())


def read_json(path) -> object:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def chunk_files(path: str) -> set[str]:
    """Chunk keys under an array directory (metadata documents left out)."""
    keys = set()
    for root, _, files in os.walk(path):
        for f in files:
            key = os.path.relpath(os.path.join(root, f), path).replace(os.sep, "/")
            if not key.rsplit("/", 1)[-1].startswith(".z"):
                keys.add(key)
    return keys


def expected_keys(model: np.ndarray, fill, separator: str, fill_is_null: bool = False) -> set[str]:
    """Keys of the chunks a writer that drops chunks equal to the fill value stores."""
    return {separator.join(map(str, coords)) for coords, box in chunk_boxes(model.shape).items()
            if fill_is_null or not equals_fill(model[box], fill)}


# ---------------------------------------------------------------- the matrix

# numcodecs configurations; zarr-python gets numcodecs.get_codec(config), zarrc the
# codec object or the configuration (alternately)
COMPRESSORS = {
    "none": None,
    "blosc-lz4-shuffle": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "blosc-zstd-bitshuffle": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
    "blosc-autoshuffle": {"id": "blosc", "cname": "blosclz", "clevel": 7, "shuffle": -1, "blocksize": 0},
    "zstd": {"id": "zstd", "level": 5},
    "zlib": {"id": "zlib", "level": 4},
    "gzip": {"id": "gzip", "level": 6},
    "lz4": {"id": "lz4", "acceleration": 1},
    "lzma": {"id": "lzma", "preset": 1},
    "bz2": {"id": "bz2", "level": 5},
}
# what tensorstore's "zarr" driver reads (its zstd takes no "checksum" key); it also
# reads "|S" and "|V" (as "char" / "byte" arrays with one more dimension), but its
# Python binding returns those as "|V0" / "|S0" arrays without the bytes
TS_COMPRESSORS = {"none", "blosc-lz4-shuffle", "blosc-zstd-bitshuffle", "blosc-autoshuffle", "zstd", "zlib",
                  "gzip", "bz2"}
TS_KINDS = "biufc"


def codec(config):
    return None if config is None else numcodecs.get_codec(dict(config))


@dataclass(frozen=True)
class V2Case:
    dtype: str          # key of DTYPES
    compressor: str     # key of COMPRESSORS
    order: str
    separator: str
    fill: str           # "default", "custom", "nan"
    index: int

    @property
    def id(self) -> str:
        dtype = self.dtype.replace("[", "").replace("]", "")
        return f"{dtype}-{self.compressor}-{self.order}{self.separator}-{self.fill}"

    @property
    def np_dtype(self) -> np.dtype:
        return np_dtype(self.dtype)

    @property
    def fill_value(self):
        return fill_for(self.dtype, self.fill)

    def model_fill(self):
        """The fill value the array has (the default when fill_value is left out)."""
        if self.fill_value is not None:
            return self.fill_value
        if self.dtype == "str":
            return ""
        if self.dtype == "bytes":
            return b""
        return default_fill(self.np_dtype)

    def model(self, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(data, expected): what a writer writes over REGION, and the content after."""
        data = values(DTYPES[self.dtype], SHAPE, seed=100 + 7 * self.index + seed)
        expected = full(self.np_dtype, self.model_fill(), SHAPE)
        expected[REGION] = data[REGION]
        return data, expected


def _cases() -> list[V2Case]:
    """Each data type with three compressors (each compressor gets six data types);
    orders and separators cycle; the fill value is the default, a custom value or,
    for floating point types, NaN."""
    names = list(COMPRESSORS)
    out = []
    for i, key in enumerate(DTYPES):
        for j in range(3):
            k = len(out)
            fill = ["default", "custom", "nan" if np_dtype(key).kind in "fc" else "custom"][j]
            out.append(V2Case(key, names[(3 * i + j) % len(names)], "CF"[k % 2], "./"[(k // 2) % 2], fill, k))
    return out


CASES = _cases()


def zarr_python_create(path: str, c: V2Case, *, filters=None, attributes=None):
    # (no fill_value for the default: zarr-python writes null for an explicit None)
    # (and no filters for none: its default adds the vlen codec of str / bytes)
    fill = {} if c.fill_value is None else {"fill_value": c.fill_value}
    if filters is not None:
        fill["filters"] = filters
    return zarr.create_array(
        path, shape=SHAPE, chunks=CHUNKS, dtype=zarr_python_dtype(c.dtype), zarr_format=2, order=c.order,
        compressors=codec(COMPRESSORS[c.compressor]), **fill,
        chunk_key_encoding={"name": "v2", "separator": c.separator}, attributes=attributes)


def zarrc_create(path: str, c: V2Case, *, filters=None, attributes=None):
    config = COMPRESSORS[c.compressor]
    # (zstd as its configuration: numcodecs' Zstd adds a "checksum" key tensorstore rejects)
    compressor = codec(config) if c.index % 2 == 0 and c.compressor != "zstd" else config
    separator = ({"dimension_separator": c.separator} if c.index % 3 else
                 {"chunk_key_encoding": {"name": "v2", "separator": c.separator}})
    kwargs = {"compressor": compressor} if c.index % 4 == 1 else {"compressors": compressor}
    if c.fill_value is not None:      # (left out for the default: None would be a null fill)
        kwargs["fill_value"] = c.fill_value
    return zarrc.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=DTYPES[c.dtype], zarr_format=2,
                              order=c.order, filters=filters, attributes=attributes,
                              **separator, **kwargs)


def check_zarrc_reads(path: str, c: V2Case, expected: np.ndarray, what: str) -> None:
    a = zarrc.open_array(path, mode="r")
    assert a.metadata.zarr_format == 2
    assert (a.shape, a.chunks, a.dtype, a.order) == (SHAPE, CHUNKS, c.np_dtype, c.order)
    assert a.dtype.str == c.np_dtype.str
    assert a.metadata.dimension_separator == c.separator
    check_codec_objects(a, path)
    for sel in SELECTIONS:
        assert_same(a[sel], pick(expected, sel), f"{what}: zarrc a[{sel!r}]")


def check_codec_objects(a, path: str) -> None:
    """``a.compressors`` / ``a.filters``: numcodecs codecs of the .zarray's ids."""
    doc = read_json(os.path.join(path, ".zarray"))
    assert [x.codec_id for x in a.compressors] == ([doc["compressor"]["id"]] if doc["compressor"] else [])
    assert [x.codec_id for x in a.filters] == [f["id"] for f in doc["filters"] or ()]


def check_zarr_python_reads(path: str, expected: np.ndarray, what: str) -> None:
    if expected.dtype.fields and not zarr_python_reads_nested_fields():
        return
    z = zarr.open_array(path, mode="r")
    assert z.metadata.zarr_format == 2
    for sel in SELECTIONS:
        assert_same(z[sel], pick(expected, sel), f"{what}: zarr-python z[{sel!r}]", exact_dtype=False)


_PROBES: dict[str, bool] = {}


def zarr_python_reads_nested_fields() -> bool:
    """Whether zarr-python opens a v2 array whose structured dtype has nested fields
    (3.1 writes them but cannot open them again)."""
    if "nested" not in _PROBES:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            zarr.create_array(tmp, shape=(1,), dtype=STRUCT, zarr_format=2, fill_value=bytes(STRUCT.itemsize))
            try:
                zarr.open_array(tmp, mode="r")
                _PROBES["nested"] = True
            except ValueError:
                _PROBES["nested"] = False
    return _PROBES["nested"]


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_zarr_python_writes_zarrc_reads(c: V2Case, tmp_path) -> None:
    path = str(tmp_path / "z")
    data, expected = c.model()
    z = zarr_python_create(path, c)
    z[REGION] = data[REGION]
    assert_same(z[...], expected, "zarr-python's own read", exact_dtype=False)
    assert chunk_files(path) == expected_keys(expected, c.model_fill(), c.separator)
    check_zarrc_reads(path, c, expected, c.id)
    a = zarrc.open(path, mode="r")
    assert isinstance(a, zarrc.Array) and a.nchunks_initialized == len(chunk_files(path))
    fill = expected[-1, -1]  # (a missing chunk)
    if c.np_dtype.kind == "O":
        assert (type(a.fill_value), a.fill_value) == (type(fill), fill)
    else:
        assert_same(np.asarray(a.fill_value, c.np_dtype), np.asarray(fill, c.np_dtype), "fill_value")


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_zarrc_writes_zarr_python_and_tensorstore_read(c: V2Case, tmp_path) -> None:
    path = str(tmp_path / "a")
    data, expected = c.model(seed=1)
    a = zarrc_create(path, c, attributes={"case": c.id})
    a[REGION] = data[REGION]
    assert_same(a[...], expected, "zarrc's own read")
    assert chunk_files(path) == expected_keys(expected, c.model_fill(), c.separator)
    doc = read_json(os.path.join(path, ".zarray"))
    assert (doc["order"], doc["dimension_separator"]) == (c.order, c.separator)
    config = COMPRESSORS[c.compressor]
    assert doc["compressor"] in (config, config and codec(config).get_config())  # as given
    assert doc["filters"] == ({"str": [{"id": "vlen-utf8"}], "bytes": [{"id": "vlen-bytes"}]}.get(c.dtype))
    check_zarr_python_reads(path, expected, c.id)
    assert read_json(os.path.join(path, ".zattrs")) == {"case": c.id}

    if c.np_dtype.kind in TS_KINDS and c.compressor in TS_COMPRESSORS and not (
            "checksum" in (doc["compressor"] or {})):
        check_tensorstore_reads(path, expected, c.id)


# ---------------------------------------------------------------- tensorstore

def check_tensorstore_reads(path: str, expected: np.ndarray, what: str) -> None:
    ts = pytest.importorskip("tensorstore")
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": path}}, open=True).result()
    assert_same(t.read().result(), expected, f"{what}: tensorstore read", exact_dtype=False)
    for sel in [(slice(13, 22), slice(2, 17)), (slice(1, None, 3), slice(None, None, 5)), (7, slice(None))]:
        assert_same(t[sel].read().result(), pick(expected, sel), f"{what}: tensorstore t[{sel!r}]",
                    exact_dtype=False)


TS_WRITES = [  # dtype, compressor, order, separator, fill (None: tensorstore's default)
    ("|b1", "none", "F", "/", True),
    ("|i1", "blosc-autoshuffle", "C", ".", None),
    (">i4", "blosc-zstd-bitshuffle", "F", "/", -42),
    ("<u8", "zlib", "C", "/", 2**64 - 1),
    ("<f2", "gzip", "F", ".", "NaN"),
    (">f4", "bz2", "C", ".", "-Infinity"),
    ("<f8", "zstd", "F", "/", "NaN"),
    ("<c8", "blosc-lz4-shuffle", "C", "/", [1.5, "NaN"]),
    (">c16", "zlib", "F", ".", [-0.0, 2.0]),
    (">u2", "none", "C", "/", 7),
]


@pytest.mark.parametrize(("dtype", "compressor", "order", "separator", "fill_json"), TS_WRITES,
                         ids=[f"{d}-{c}-{o}{s}" for d, c, o, s, _ in TS_WRITES])
def test_tensorstore_writes_zarrc_reads(tmp_path, dtype, compressor, order, separator, fill_json) -> None:
    ts = pytest.importorskip("tensorstore")
    path = str(tmp_path / "t")
    dt = np.dtype(dtype)
    metadata = {"shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": dtype, "order": order,
                "dimension_separator": separator, "compressor": COMPRESSORS[compressor],
                "fill_value": fill_json, "filters": None}
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": path}, "metadata": metadata},
                create=True).result()
    data = values(dt, SHAPE, seed=sum(map(ord, dtype)))
    t[REGION].write(support.native(data[REGION])).result()
    fill = np.zeros((), dt) if fill_json is None else np.asarray(
        _from_json(fill_json), dt) if not isinstance(fill_json, list) else np.asarray(
        complex(*map(_from_json, fill_json)), dt)
    expected = full(dt, fill, SHAPE)
    expected[REGION] = data[REGION]
    doc = read_json(os.path.join(path, ".zarray"))
    a = zarrc.open_array(str(tmp_path), mode="r", path="t")
    assert (a.dtype.str, a.order, a.metadata.dimension_separator) == (dt.str, order, separator)
    assert chunk_files(path) <= {separator.join(map(str, k)) for k in chunk_boxes()}
    for sel in SELECTIONS:
        assert_same(a[sel], pick(expected, sel), f"zarrc a[{sel!r}] of tensorstore's {doc}")

    # zarrc updates tensorstore's chunks; tensorstore reads the result
    a = zarrc.open_array(path, mode="r+")
    update = values(dt, SHAPE, seed=99)
    a[3:21:2, 1:16] = update[3:21:2, 1:16]
    expected[3:21:2, 1:16] = update[3:21:2, 1:16]
    check_tensorstore_reads(path, expected, "tensorstore after zarrc's update")


def _from_json(v):
    return {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}.get(v, v) if isinstance(v, str) else v


def test_tensorstore_reads_structured_fields(tmp_path) -> None:
    """tensorstore opens each field of a (flat) structured array on its own, subarray
    fields as extra dimensions; zarrc writes one, tensorstore reads every field."""
    ts = pytest.importorskip("tensorstore")
    path = str(tmp_path / "s")
    a = zarrc.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=FLAT_SUB, zarr_format=2, order="F",
                           compressors={"id": "zlib", "level": 1}, dimension_separator="/",
                           fill_value=bytes(FLAT_SUB.itemsize))
    data = values(FLAT_SUB, SHAPE, seed=5)
    a[REGION] = data[REGION]
    expected = np.zeros(SHAPE, FLAT_SUB)
    expected[REGION] = data[REGION]
    assert_same(a[...], expected, "zarrc's own read")
    for name in FLAT_SUB.names:
        t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": path}, "field": name},
                    open=True).result()
        assert_same(t.read().result(), expected[name], f"tensorstore field {name}", exact_dtype=False)


# ---------------------------------------------------------------- filters

def _cat_labels():
    return ["", "red", "grün", "blau☃"]


# name -> (dtype, filters (numcodecs codecs), compressor config, data, fill_value, order, separator)
FILTER_CASES = {
    "delta": ("<i8", lambda: [numcodecs.Delta(dtype="<i8", astype="<i4")], None, "walk", 0, "C", "."),
    "delta+blosc": (">i4", lambda: [numcodecs.Delta(dtype=">i4")], COMPRESSORS["blosc-zstd-bitshuffle"],
                    "random", -1, "F", "/"),
    "fixedscaleoffset": ("<f8", lambda: [numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8",
                                                                    astype="<u2")],
                         COMPRESSORS["zlib"], "range", 1500.0, "F", "."),
    "quantize+blosc": ("<f4", lambda: [numcodecs.Quantize(digits=3, dtype="<f4")],
                       COMPRESSORS["blosc-lz4-shuffle"], "finite", np.nan, "C", "/"),
    "quantize-big-endian": (">f8", lambda: [numcodecs.Quantize(digits=2, dtype=">f8")], None, "finite",
                            0.0, "F", "/"),
    "bitround": ("<f4", lambda: [numcodecs.BitRound(keepbits=7)], COMPRESSORS["zstd"], "finite", 0.0,
                 "C", "."),
    "shuffle": (">i4", lambda: [numcodecs.Shuffle(elementsize=4)], None, "random", 0, "F", "."),
    "shuffle+blosc": ("<u8", lambda: [numcodecs.Shuffle(elementsize=8)], COMPRESSORS["blosc-autoshuffle"],
                      "random", 5, "C", "/"),
    "packbits": ("|b1", lambda: [numcodecs.PackBits()], None, "random", False, "F", "/"),
    "packbits+blosc": ("|b1", lambda: [numcodecs.PackBits()], COMPRESSORS["blosc-autoshuffle"], "random",
                       True, "C", "."),
    "categorize": ("<U5", lambda: [numcodecs.Categorize(labels=_cat_labels(), dtype="<U5", astype="|u1")],
                   COMPRESSORS["gzip"], "labels", "", "C", "/"),
    # (Categorize of an object array, which zarr-python 2 allowed without a vlen codec,
    # opens in neither zarr-python 3 nor zarrc: both want an object codec for "|O")
    "vlen-utf8+blosc": (str, lambda: [numcodecs.VLenUTF8()], COMPRESSORS["blosc-lz4-shuffle"],
                        "strings", "", "F", "."),
    "astype": ("<f8", lambda: [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")],
               COMPRESSORS["bz2"], "random", 0.5, "F", "."),
    "delta+shuffle+lz4": ("<i2", lambda: [numcodecs.Delta(dtype="<i2"), numcodecs.Shuffle(elementsize=2)],
                          COMPRESSORS["lz4"], "random", 0, "C", "."),
}


def filter_data(dtype, kind: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "walk":
        return np.cumsum(rng.integers(-1000, 1000, SHAPE), axis=1).astype(dtype) + 10**6
    if kind == "range":
        return np.round(rng.uniform(1000, 7000, SHAPE), 1).astype(dtype)
    if kind == "finite":
        x = rng.standard_normal(SHAPE) * 1000
        x[::4, ::3] = np.linspace(0, 1, SHAPE[1])[::3]
        return x.astype(dtype)
    if kind == "labels":
        return np.array(_cat_labels(), dtype)[rng.integers(0, 4, SHAPE)]
    if kind == "strings":
        return values(str, SHAPE, seed)
    return values(np.dtype(dtype), SHAPE, seed)


def filter_roundtrip(filters, arr: np.ndarray) -> np.ndarray:
    """What reading back ``arr`` gives after encoding it with ``filters`` (the
    element-wise lossy ones change values)."""
    flat = arr.reshape(-1)
    enc = flat
    for f in filters:
        enc = f.encode(enc)
    for f in reversed(filters):
        enc = f.decode(enc)
    out = np.asarray(enc, dtype=arr.dtype) if arr.dtype.kind == "O" else np.frombuffer(
        np.ascontiguousarray(enc).tobytes(), arr.dtype)
    return out.reshape(arr.shape)


def filter_model(name: str, seed: int):
    dtype, make, _, kind, fill, _, _ = FILTER_CASES[name]
    dt = np.dtype(object) if dtype is str else np.dtype(dtype)
    data = filter_data(dtype, kind, seed)
    before = full(dt, fill, SHAPE)
    before[REGION] = data[REGION]
    expected = filter_roundtrip(make(), before).copy()
    for box in chunk_boxes().values():  # chunks nobody wrote stay missing: fill value, not encoded
        if equals_fill(before[box], fill):
            expected[box] = before[box]
    return dt, data, before, expected


@pytest.mark.parametrize("name", list(FILTER_CASES))
def test_filters_zarr_python_writes_zarrc_reads(tmp_path, name) -> None:
    dtype, make, comp, _, fill, order, sep = FILTER_CASES[name]
    dt, data, before, expected = filter_model(name, seed=1)
    path = str(tmp_path / "z")
    z = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=2, order=order,
                          filters=make(), compressors=codec(comp), fill_value=fill,
                          chunk_key_encoding={"name": "v2", "separator": sep})
    z[REGION] = data[REGION]
    assert_same(z[...], expected, "zarr-python's own read", exact_dtype=False)
    assert chunk_files(path) == expected_keys(before, fill, sep)
    a = zarrc.open_array(path, mode="r")
    assert a.dtype == dt and a.dtype.str == dt.str
    check_codec_objects(a, path)
    for sel in SELECTIONS:
        assert_same(a[sel], pick(expected, sel), f"zarrc a[{sel!r}]")


@pytest.mark.parametrize("name", list(FILTER_CASES))
def test_filters_zarrc_writes_zarr_python_reads(tmp_path, name) -> None:
    dtype, make, comp, _, fill, order, sep = FILTER_CASES[name]
    _, data, before, expected = filter_model(name, seed=2)
    path = str(tmp_path / "a")
    as_configs = list(FILTER_CASES).index(name) % 2 == 1  # codec objects or their configurations
    filters = [f.get_config() for f in make()] if as_configs else make()
    a = zarrc.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=2, order=order,
                           filters=filters, compressors=comp if as_configs else codec(comp),
                           fill_value=fill, dimension_separator=sep)
    a[REGION] = data[REGION]
    assert_same(a[...], expected, "zarrc's own read")
    assert chunk_files(path) == expected_keys(before, fill, sep)
    doc = read_json(os.path.join(path, ".zarray"))
    want = [f.get_config() for f in make()]
    if dtype is str and not any(f["id"] == "vlen-utf8" for f in want):
        want.insert(0, {"id": "vlen-utf8"})
    assert doc["filters"] == want
    check_zarr_python_reads(path, expected, name)


# ---------------------------------------------------------------- fill values

def test_null_fill_value(tmp_path) -> None:
    """A .zarray with "fill_value": null (as zarr-python 2 wrote by default): zarrc
    reads missing chunks as zeros, writes into them (zeros around what it wrote),
    and zarr-python reads the result."""
    path = str(tmp_path / "n")
    z = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=">f8", zarr_format=2, order="F",
                          compressors=codec(COMPRESSORS["zlib"]), fill_value=0.0,
                          chunk_key_encoding={"name": "v2", "separator": "/"})
    data = values(np.dtype(">f8"), SHAPE, seed=4)
    z[REGION] = data[REGION]
    doc = read_json(os.path.join(path, ".zarray"))
    doc["fill_value"] = None
    with open(os.path.join(path, ".zarray"), "w") as f:
        json.dump(doc, f)
    expected = np.zeros(SHAPE, ">f8")
    expected[REGION] = data[REGION]

    a = zarrc.open_array(path, mode="r")
    assert a.fill_value is None and a.metadata.fill_value is None
    for sel in SELECTIONS:
        assert_same(a[sel], pick(expected, sel), f"zarrc a[{sel!r}]")

    a = zarrc.open_array(path, mode="r+")
    a[19:22, 0:6] = data[19:22, 0:6]           # chunks (3, 0), (4, 0), (4, 1): missing before
    expected[19:22, 0:6] = data[19:22, 0:6]
    assert {"3/0", "4/0", "4/1"} <= chunk_files(path)
    assert_same(a[...], expected, "zarrc after writing into missing chunks")
    check_zarr_python_reads(path, expected, "null fill")
    assert read_json(os.path.join(path, ".zarray"))["fill_value"] is None


@pytest.mark.parametrize("key", ["b1", "<i2", ">f4", "<c8", "<M8[ns]", ">m8[s]", "S7", "<U3", "V5", "str",
                                 "bytes"])
def test_default_fill_value_as_zarr_python(tmp_path, key) -> None:
    """No fill_value: zarrc writes the same .zarray dtype, fill value and filters as
    zarr-python (0, NaT, "", base64 of nothing ...), and missing chunks read the same."""
    z = zarr.create_array(str(tmp_path / "z"), shape=(7,), chunks=(3,), dtype=zarr_python_dtype(key),
                          zarr_format=2)
    a = zarrc.create_array(str(tmp_path / "a"), shape=(7,), chunks=(3,), dtype=DTYPES[key], zarr_format=2)
    zdoc = read_json(tmp_path / "z" / ".zarray")
    adoc = read_json(tmp_path / "a" / ".zarray")
    assert (adoc["dtype"], adoc["fill_value"], adoc["filters"]) == (zdoc["dtype"], zdoc["fill_value"],
                                                                    zdoc["filters"])
    assert_same(z[...], a[...], "missing chunks", exact_dtype=False)


NULL_KEYS = ["b1", "<i2", ">f4", "<c8", "<M8[ns]", "S7", "<U3", "V5", "struct", "str", "bytes"]


def zeros_of(key: str, shape) -> np.ndarray:
    """What a null fill value reads as (as zarr-python 3 reads it): zero bytes, NaT for
    datetimes and timedeltas, "" and b"" for vlen strings / bytes."""
    if key in ("str", "bytes"):
        return full(np.dtype(object), "" if key == "str" else b"", shape)
    if np_dtype(key).kind in "mM":
        return np.full(shape, np.array("NaT", np_dtype(key)))
    return np.zeros(shape, np_dtype(key))


@pytest.mark.parametrize("key", NULL_KEYS)
def test_null_fill_value_from_zarr_python(tmp_path, key) -> None:
    """fill_value=None given explicitly: zarr-python 3 writes "fill_value": null for a v2
    array (when the argument is left out, the type's default).  zarrc reads missing
    chunks as zarr-python does (zeros; NaT for datetimes)."""
    path = str(tmp_path / "z")
    z = zarr.create_array(path, shape=(7,), chunks=(3,), dtype=zarr_python_dtype(key), zarr_format=2,
                          fill_value=None)
    assert read_json(os.path.join(path, ".zarray"))["fill_value"] is None
    expected = zeros_of(key, (7,))
    if key != "struct":  # (zarr-python cannot write into a structured array with a null fill value)
        data = values(DTYPES[key], (7,), seed=3)
        z[3:6] = data[3:6]  # one whole chunk (zarr-python pads a partial one with its own choice)
        expected[3:6] = data[3:6]
    a = zarrc.open_array(path, mode="r")
    assert a.fill_value is None
    for sel in [Ellipsis, slice(2, 6), 6]:
        assert_same(a[sel], pick(expected, sel), f"zarrc a[{sel!r}]")
    check_peer = key != "struct" or zarr_python_reads_nested_fields()
    if check_peer:
        assert_same(zarr.open_array(path, mode="r")[...], expected, "zarr-python", exact_dtype=False)


@pytest.mark.parametrize("key", NULL_KEYS)
def test_zarrc_explicit_none_fill_value_is_null(tmp_path, key) -> None:
    """zarrc.create_array(..., zarr_format=2, fill_value=None) writes "fill_value": null,
    as zarr-python's create_array does for the same call (zarrc takes zarr-python's
    keywords with zarr-python's meaning); leaving fill_value out gives the default
    (test_default_fill_value_as_zarr_python)."""
    a = zarrc.create_array(str(tmp_path / "a"), shape=(7,), chunks=(3,), dtype=DTYPES[key], zarr_format=2,
                           fill_value=None)
    assert read_json(tmp_path / "a" / ".zarray")["fill_value"] is None
    assert a.fill_value is None
    assert_same(a[...], zeros_of(key, (7,)), "zarrc")


def test_nan_fill_bits(tmp_path) -> None:
    """Missing chunks of a "NaN" fill value read as the same NaN bits in both libraries,
    for every float byte order and complex."""
    for dtype in ["<f2", ">f4", "<f8", ">c8", "<c16"]:
        path = str(tmp_path / dtype.replace("<", "l").replace(">", "b"))
        z = zarr.create_array(path, shape=(9,), chunks=(4,), dtype=dtype, zarr_format=2, fill_value=np.nan)
        z[:2] = np.arange(2)
        want = np.asarray(z[...])
        a = zarrc.open_array(path, mode="r")
        got = a[...]
        assert got.dtype.str == dtype
        assert_same(got, want, f"{dtype} NaN fill", exact_dtype=False)
        assert np.isnan(np.asarray(got[4:]).real).all()


# ---------------------------------------------------------------- hand-written v2 arrays

def write_by_hand(path: str, shape, chunks, dtype: np.dtype, order: str, sep: str, compressor, filters,
                  fill_json, content: np.ndarray, skip=()) -> None:
    """A v2 array as any v2 writer (zarr-python 2, ...) lays it out: the .zarray, and
    each chunk's elements in ``order``, through the filters and the compressor."""
    os.makedirs(path, exist_ok=True)
    doc = {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype_json(dtype),
           "compressor": compressor and compressor.get_config(), "fill_value": fill_json, "order": order,
           "filters": [f.get_config() for f in filters] or None, "dimension_separator": sep}
    with open(os.path.join(path, ".zarray"), "w") as f:
        json.dump(doc, f)
    for coords, box in chunk_boxes(shape, chunks).items():
        if coords in skip:
            continue
        chunk = np.zeros(chunks, dtype)  # edge chunks: padded (with zeros) to the full chunk shape
        chunk[tuple(slice(0, b.stop - b.start) for b in box)] = content[box]
        buf = np.ravel(chunk, order=order)
        for flt in filters:
            buf = flt.encode(buf)
        if compressor is not None:
            buf = compressor.encode(buf)
        key = os.path.join(path, *[str(c) for c in coords]) if sep == "/" else os.path.join(
            path, ".".join(map(str, coords)))
        os.makedirs(os.path.dirname(key), exist_ok=True)
        with open(key, "wb") as f:
            f.write(bytes(np.ascontiguousarray(buf).data) if isinstance(buf, np.ndarray) else bytes(buf))


def dtype_json(dt: np.dtype):
    if dt.fields is None:
        return dt.str
    fields = [(n, dt.fields[n][0]) for n in dt.names]
    return [[n, dtype_json(f.base)] + ([list(f.shape)] if f.shape else []) for n, f in fields]


@pytest.mark.parametrize("order,sep", [("C", "/"), ("F", ".")])
def test_structured_subarray_fields(tmp_path, order, sep) -> None:
    """Nested fields with subarray fields in mixed byte orders, which zarr-python 3
    cannot handle: written by hand, read by zarrc bit-exactly; written by zarrc, the
    chunks decode by hand to the same bytes."""
    shape, chunks = (9, 7), (4, 3)
    content = values(STRUCT_SUB, shape, seed=8)
    path = str(tmp_path / "h")
    write_by_hand(path, shape, chunks, STRUCT_SUB, order, sep, numcodecs.Zlib(3), [], None, content,
                  skip={(2, 0), (2, 2)})
    expected = content.copy()
    expected[8:, 0:3] = np.zeros((), STRUCT_SUB)
    expected[8:, 6:] = np.zeros((), STRUCT_SUB)
    a = zarrc.open_array(path, mode="r")
    assert a.dtype == STRUCT_SUB and a.metadata.fill_value is None
    for sel in [Ellipsis, (slice(3, None, 2), slice(2, 7)), (8, slice(None)), (slice(None), 6), (0, 0)]:
        assert_same(a[sel], pick(expected, sel), f"zarrc a[{sel!r}]")

    b = zarrc.create_array(str(tmp_path / "c"), shape=shape, chunks=chunks, dtype=STRUCT_SUB, zarr_format=2,
                           order=order, dimension_separator=sep, compressors=numcodecs.Zlib(3))
    b[...] = content
    doc = read_json(tmp_path / "c" / ".zarray")
    assert doc["dtype"] == dtype_json(STRUCT_SUB) and doc["fill_value"] is None
    for coords, box in chunk_boxes(shape, chunks).items():
        raw = numcodecs.Zlib(3).decode((tmp_path / "c" / sep.join(map(str, coords))).read_bytes())
        chunk = np.frombuffer(raw, STRUCT_SUB).reshape(chunks, order=order)
        assert_same(chunk[tuple(slice(0, s.stop - s.start) for s in box)], content[box], f"chunk {coords}")


# ---------------------------------------------------------------- partial writes

PARTIAL = {  # dtype key, compressor, filters, order, separator, fill kind
    "i4-delta-blosc-F/": (">i4", "blosc-lz4-shuffle", lambda: [numcodecs.Delta(dtype=">i4")], "F", "/",
                          "custom"),
    "f8-quantize-zstd-F/": ("<f8", "zstd", lambda: [numcodecs.Quantize(digits=4, dtype="<f8")], "F", "/",
                            "nan"),
    "bool-packbits-F.": ("b1", "gzip", lambda: [numcodecs.PackBits()], "F", ".", "default"),
    "str-lz4-F/": ("str", "lz4", lambda: None, "F", "/", "custom"),
    "struct-lzma-C/": ("struct", "lzma", lambda: None, "C", "/", "custom"),
    "U3-shuffle-F/": ("<U3", "none", lambda: [numcodecs.Shuffle(elementsize=12)], "F", "/", "default"),
}


def apply_writes(arr, expected: np.ndarray, key: str, seed: int, fill, filters) -> None:
    """Partial writes to ``arr`` and the model ``expected``: across written, partial and
    missing chunks, with steps, one element, a broadcast scalar, and the fill value over
    a whole chunk (which a writer may then delete)."""
    update = values(DTYPES[key], SHAPE, seed=seed)
    for sel in [(slice(2, 21), slice(1, 10)), (slice(0, 23, 4), slice(1, 17, 5)),
                (22, 0), (slice(6, 9), slice(None, None, 3))]:
        arr[sel] = update[sel]
        expected[sel] = update[sel]
    one = update[5, 5]
    arr[10:12, 12:17] = one
    expected[10:12, 12:17] = one
    whole = chunk_boxes()[(0, 1)]
    arr[whole] = fill
    expected[whole] = fill
    if filters:  # (these filters are lossless, or idempotent like Quantize, and keep the fill value)
        expected[...] = filter_roundtrip(filters, expected)


@pytest.mark.parametrize("name", list(PARTIAL))
def test_zarrc_updates_zarr_python_array(tmp_path, name) -> None:
    key, comp, make, order, sep, fill_kind = PARTIAL[name]
    c = V2Case(key, comp, order, sep, fill_kind, 3)
    path = str(tmp_path / "z")
    data, expected = c.model()
    z = zarr_python_create(path, c, filters=make())
    z[REGION] = data[REGION]
    filters = make()
    if filters:
        expected[...] = filter_roundtrip(filters, expected)
        expected[20:] = full(c.np_dtype, c.model_fill(), (3, SHAPE[1]))
    a = zarrc.open_array(path, mode="r+")
    apply_writes(a, expected, key, 11, c.model_fill(), filters)
    assert_same(a[...], expected, "zarrc's read of its update")
    assert "0.1" not in chunk_files(path) and "0/1" not in chunk_files(path)  # all fill: deleted
    check_zarr_python_reads(path, expected, name)


@pytest.mark.parametrize("name", list(PARTIAL))
def test_zarr_python_updates_zarrc_array(tmp_path, name) -> None:
    key, comp, make, order, sep, fill_kind = PARTIAL[name]
    c = V2Case(key, comp, order, sep, fill_kind, 4)
    if c.np_dtype.fields and not zarr_python_reads_nested_fields():
        pytest.skip(f"zarr-python {zarr.__version__} cannot open v2 arrays with nested fields")
    path = str(tmp_path / "a")
    data, expected = c.model(seed=2)
    a = zarrc_create(path, c, filters=make())
    a[REGION] = data[REGION]
    filters = make()
    if filters:
        expected[...] = filter_roundtrip(filters, expected)
        expected[20:] = full(c.np_dtype, c.model_fill(), (3, SHAPE[1]))
    z = zarr.open_array(path, mode="r+")
    apply_writes(z, expected, key, 12, c.model_fill(), filters)
    assert_same(z[...], expected, "zarr-python's read of its update", exact_dtype=False)
    check_zarrc_reads(path, c, expected, name)


# ---------------------------------------------------------------- hierarchies

ROOT_ATTRS = {"title": "v2 ☃ hiérarchie", "nested": {"a": [1, 2.5, None, True, {"b": "温度"}]}, "n": -3}
TREE = {  # path -> ("group", attrs) or ("array", attrs, dtype key, compressor, order, separator)
    "g1": ("group", {"level": 1}),
    "g1/g2": ("group", {"level": 2, "ü": ["x"]}),
    "g1/g2/deep": ("array", {"units": "K"}, ">f4", "blosc-zstd-bitshuffle", "F", "/"),
    "g1/strings": ("array", {}, "str", "zlib", "C", "."),
    "empty": ("group", {}),
    "top": ("array", {"scale": [1, 2]}, "<M8[ns]", "none", "C", "/"),
    "cplx": ("array", {"parts": ["re", "im"]}, ">c16", "gzip", "F", "."),
}


def tree_case(path: str, index: int) -> V2Case:
    _, _, key, comp, order, sep = TREE[path]
    return V2Case(key, comp, order, sep, "custom", index)


def children(path: str) -> list[str]:
    prefix = path + "/" if path else ""
    return sorted(p[len(prefix):] for p in TREE if p.startswith(prefix) and "/" not in p[len(prefix):])


def check_hierarchy(g, path: str, is_group, is_array, read) -> None:
    assert dict(g.attrs) == (ROOT_ATTRS if not path else TREE[path][1])
    members = dict(g.members())
    assert sorted(members) == children(path), f"members of /{path}"
    for name, node in members.items():
        child = f"{path}/{name}" if path else name
        if TREE[child][0] == "group":
            assert is_group(node), child
            check_hierarchy(node, child, is_group, is_array, read)
        else:
            assert is_array(node), child
            assert dict(node.attrs) == TREE[child][1]
            c = tree_case(child, len(child))
            read(node, child, c.model()[1])


def test_zarr_python_hierarchy_opens_in_zarrc(tmp_path) -> None:
    root = str(tmp_path)
    groups = {"": zarr.open_group(root, mode="w", zarr_format=2, attributes=ROOT_ATTRS)}
    for path, node in TREE.items():
        parent, _, name = path.rpartition("/")
        if node[0] == "group":
            groups[path] = groups[parent].create_group(name, attributes=node[1])
        else:
            c = tree_case(path, len(path))
            z = zarr_python_create(os.path.join(root, path), c, attributes=node[1])
            data, _ = c.model()
            z[REGION] = data[REGION]
    assert os.path.exists(tmp_path / ".zgroup") and not os.path.exists(tmp_path / "zarr.json")

    def read(node, child, expected):
        assert node.metadata.zarr_format == 2
        assert node.dtype.str == np_dtype(TREE[child][2]).str
        for sel in [Ellipsis, (slice(19, None), slice(2, None, 3))]:
            assert_same(node[sel], pick(expected, sel), f"zarrc {child}[{sel!r}]")

    g = zarrc.open_group(root, mode="r")
    assert g.metadata.zarr_format == 2
    check_hierarchy(g, "", lambda n: isinstance(n, zarrc.Group), lambda n: isinstance(n, zarrc.Array), read)
    assert sorted(g["g1"].array_keys()) == ["strings"] and sorted(g["g1"].group_keys()) == ["g2"]
    assert isinstance(zarrc.open(root, mode="r", path="g1/g2"), zarrc.Group)
    deep = g["g1/g2/deep"]
    read(deep, "g1/g2/deep", tree_case("g1/g2/deep", len("g1/g2/deep")).model()[1])
    assert zarrc.open_group(root, mode="r", path="g1").attrs.asdict() == {"level": 1}


def test_zarrc_hierarchy_opens_in_zarr_python(tmp_path) -> None:
    root = str(tmp_path)
    groups = {"": zarrc.group(root, zarr_format=2, attributes=ROOT_ATTRS)}
    for path, node in TREE.items():
        parent, _, name = path.rpartition("/")
        if node[0] == "group":
            groups[path] = groups[parent].create_group(name, attributes=node[1] or None)
        else:
            c = tree_case(path, len(path))
            a = groups[parent].create_array(name, shape=SHAPE, chunks=CHUNKS, dtype=DTYPES[c.dtype],
                                            order=c.order, compressors=COMPRESSORS[c.compressor],
                                            dimension_separator=c.separator, fill_value=c.fill_value)
            assert a.metadata.zarr_format == 2  # inherited from the group
            a.attrs.update(node[1])
            data, _ = c.model()
            a[REGION] = data[REGION]
    for path, node in [("", ("group",)), *TREE.items()]:
        files = set(os.listdir(os.path.join(root, path)))
        assert "zarr.json" not in files and (".zgroup" if node[0] == "group" else ".zarray") in files, path

    def read(node, child, expected):
        assert node.metadata.zarr_format == 2
        for sel in [Ellipsis, (slice(19, None), slice(2, None, 3))]:
            assert_same(node[sel], pick(expected, sel), f"zarr-python {child}[{sel!r}]", exact_dtype=False)

    g = zarr.open_group(root, mode="r")
    assert g.metadata.zarr_format == 2
    check_hierarchy(g, "", lambda n: isinstance(n, zarr.Group), lambda n: isinstance(n, zarr.Array), read)
    assert isinstance(zarr.open(root, mode="r", path="g1/g2/deep"), zarr.Array)


# ---------------------------------------------------------------- bad metadata

GOOD_ZARRAY = {"zarr_format": 2, "shape": [6, 4], "chunks": [3, 2], "dtype": "<i4",
               "compressor": {"id": "zlib", "level": 1}, "fill_value": 0, "order": "C", "filters": None,
               "dimension_separator": "."}


def _edit(**changes):
    doc = {k: v for k, v in GOOD_ZARRAY.items() if changes.get(k, 0) is not _DROP}
    doc.update({k: v for k, v in changes.items() if v is not _DROP})
    return doc


_DROP = object()

BAD_ZARRAY = {  # id -> (document, text the error must name)
    "v3-dtype-name-only": (_edit(data_type="int32", dtype=_DROP), "dtype"),
    "missing-shape": (_edit(shape=_DROP), "shape"),
    "missing-dtype": (_edit(dtype=_DROP), "dtype"),
    "missing-compressor": (_edit(compressor=_DROP), "compressor"),
    "missing-fill_value": (_edit(fill_value=_DROP), "fill_value"),
    "missing-order": (_edit(order=_DROP), "order"),
    "missing-filters": (_edit(filters=_DROP), "filters"),
    "missing-zarr_format": (_edit(zarr_format=_DROP), "zarr_format"),
    "zarr_format-3": (_edit(zarr_format=3), "zarr_format"),
    "dtype-i3": (_edit(dtype="<i3"), "dtype"),
    "dtype-v3-name": (_edit(dtype="int32"), "dtype"),
    "dtype-no-byte-order": (_edit(dtype="i4"), "dtype"),
    "dtype-bad-field": (_edit(dtype=[["a"]], fill_value=None), "dtype"),
    "dtype-number": (_edit(dtype=4), "dtype"),
    "fill-string-for-int": (_edit(fill_value="abc"), "fill_value"),
    "fill-float-for-int": (_edit(fill_value=1.5), "fill_value"),
    "fill-list-for-float": (_edit(dtype="<f8", fill_value=[1, 2]), "fill_value"),
    "fill-bad-nan-spelling": (_edit(dtype="<f8", fill_value="nan"), "fill_value"),
    "fill-number-for-complex-pair": (_edit(dtype="<c8", fill_value=[1.0]), "fill_value"),
    "fill-number-for-bytes": (_edit(dtype="|S3", fill_value=5), "fill_value"),
    "fill-not-base64": (_edit(dtype="|S3", fill_value="***"), "fill_value"),
    "fill-too-big-for-u1": (_edit(dtype="|u1", fill_value=256), "fill_value"),
    "fill-list-for-bool": (_edit(dtype="|b1", fill_value=[2]), "fill_value"),
    "order-K": (_edit(order="K"), "order"),
    "compressor-no-id": (_edit(compressor={"level": 1}), "compressor"),
    "filters-not-list": (_edit(filters={"id": "delta"}), "filters"),
    "separator": (_edit(dimension_separator="-"), "dimension_separator"),
    "chunks-rank": (_edit(chunks=[3]), "chunks"),
    "object-without-codec": (_edit(dtype="|O", fill_value=None), "filters"),
}


def _put(dirpath, name: str, doc) -> None:
    os.makedirs(dirpath, exist_ok=True)
    with open(os.path.join(dirpath, name), "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))


def test_good_zarray_opens(tmp_path) -> None:
    """(The documents below differ from this one in one key each.)"""
    _put(tmp_path / "a", ".zarray", GOOD_ZARRAY)
    a = zarrc.open_array(str(tmp_path / "a"), mode="r")
    assert_same(a[...], np.zeros((6, 4), "<i4"), "empty array")
    zarr.open_array(str(tmp_path / "a"), mode="r")


@pytest.mark.parametrize("bad", list(BAD_ZARRAY))
def test_bad_zarray_raises_metadata_error(tmp_path, bad) -> None:
    doc, key = BAD_ZARRAY[bad]
    _put(tmp_path / "g" / "arr", ".zarray", doc)
    _put(tmp_path / "g", ".zgroup", {"zarr_format": 2})
    for opener in (lambda: zarrc.open_array(str(tmp_path / "g" / "arr"), mode="r"),
                   lambda: zarrc.open_array(str(tmp_path), mode="r", path="g/arr"),
                   lambda: zarrc.open(str(tmp_path / "g"), mode="r")["arr"]):
        with pytest.raises(MetadataError, match=re.escape(key)) as info:
            opener()
        assert ".zarray" in str(info.value)


BOTH = r"\.zarray.*\.zgroup|\.zgroup.*\.zarray"  # (a regular expression)
BAD_OTHER = {  # id -> ({file name: document}, the opener, text the error must name)
    "zgroup-format-3": ({".zgroup": {"zarr_format": 3}}, "group", "zarr_format"),
    "zgroup-missing-format": ({".zgroup": {}}, "group", "zarr_format"),
    "zgroup-not-json": ({".zgroup": "{zarr_format: 2"}, "group", ".zgroup"),
    "zattrs-not-object": ({".zgroup": {"zarr_format": 2}, ".zattrs": [1, 2]}, "group", ".zattrs"),
    "zattrs-not-json": ({".zarray": GOOD_ZARRAY, ".zattrs": "{'a': 1}"}, "array", ".zattrs"),
    "zarray-not-json": ({".zarray": '{"zarr_format": 2,'}, "array", ".zarray"),
    "zarray-and-zgroup-array": ({".zarray": GOOD_ZARRAY, ".zgroup": {"zarr_format": 2}}, "array", BOTH),
    "zarray-and-zgroup-group": ({".zarray": GOOD_ZARRAY, ".zgroup": {"zarr_format": 2}}, "group", BOTH),
    "zarray-and-zgroup-open": ({".zarray": GOOD_ZARRAY, ".zgroup": {"zarr_format": 2}}, "open", BOTH),
}


@pytest.mark.parametrize("bad", list(BAD_OTHER))
def test_bad_v2_documents_raise_metadata_error(tmp_path, bad) -> None:
    files, how, key = BAD_OTHER[bad]
    for name, doc in files.items():
        _put(tmp_path / "n", name, doc)
    opener = {"array": zarrc.open_array, "group": zarrc.open_group, "open": zarrc.open}[how]
    with pytest.raises(MetadataError, match=key if key is BOTH else re.escape(key)):
        opener(str(tmp_path / "n"), mode="r")
