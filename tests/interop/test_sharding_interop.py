"""Sharded arrays across implementations: arrays written by tensorstore (zarr3
driver, a ``sharding_indexed`` codec in "codecs") and by zarr-python 3
(``create_array(shards=...)``, ``ShardingCodec`` for the index at the start and for
nesting) read bit-exactly in zarrc, also after zarrc updated parts of them; arrays
written by zarrc read bit-exactly in both.

Every configuration has shards that overhang the array edge, shards the writer
never stored, partly written shards and inner chunks that stay empty.  The
configurations cover index at start / end, index codecs bytes (little, big) with
and without crc32c, inner chains bytes only / blosc / zstd / gzip / crc32c /
transpose, and nested sharding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc

from interop import support

ts = pytest.importorskip("tensorstore")
zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
INDEX = {"crc": [LE, CRC], "le": [LE], "be": [BE], "be+crc": [BE, CRC]}
EMPTY = 2**64 - 1


def sharding(chunk_shape, codecs, location="end", index="crc") -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": codecs, "index_codecs": INDEX[index],
        "index_location": location}}


def blosc(typesize: int) -> dict:
    return {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                               "typesize": typesize, "blocksize": 0}}


def zstd(level=3) -> dict:
    return {"name": "zstd", "configuration": {"level": level, "checksum": False}}


def gzip(level=5) -> dict:
    return {"name": "gzip", "configuration": {"level": level}}


def transpose(order) -> dict:
    return {"name": "transpose", "configuration": {"order": list(order)}}


@dataclass(frozen=True)
class Config:
    """One sharded array: ``codecs`` is the array's codec list (one sharding codec),
    ``shards`` the chunk grid (outer shard shape), ``inner`` the innermost chunk shape."""

    id: str
    dtype: str
    shape: tuple
    shards: tuple
    inner: tuple
    codecs: tuple
    fill_value: object = 0

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @property
    def fill(self) -> np.generic:
        return np.asarray(self.fill_value, self.np_dtype)[()]

    @property
    def region(self) -> tuple:
        """What the first writer writes: leaves the last row of shards missing,
        starts inside the first shards (partly written shards, empty inner chunks)
        and reaches the overhanging edge in the other dimensions."""
        first = slice(1, max(2, (self.shape[0] - 1) // self.shards[0] * self.shards[0] - 1))
        return (first,) + tuple(slice(1, n) for n in self.shape[1:])


S2, SH2 = (23, 30), (8, 12)
CONFIGS = [
    Config("end-bytes-int16", "int16", S2, SH2, (4, 6), (sharding((4, 6), [LE]),)),
    Config("start-blosc-float32", "float32", S2, SH2, (4, 3),
           (sharding((4, 3), [LE, blosc(4)], "start"),), 1.5),
    Config("end-zstd-uint8-be-index", "uint8", S2, SH2, (2, 6),
           (sharding((2, 6), [LE, zstd()], "end", "be"),), 7),
    Config("start-gzip-float64-big-le-index", "float64", S2, SH2, (4, 4),
           (sharding((4, 4), [BE, gzip()], "start", "le"),), float("nan")),
    Config("end-crc32c-int32", "int32", S2, SH2, (8, 4), (sharding((8, 4), [LE, CRC], "end", "be+crc"),), -3),
    Config("transpose-3d-int64", "int64", (7, 9, 11), (4, 6, 8), (2, 3, 4),
           (sharding((2, 3, 4), [transpose((2, 0, 1)), LE, zstd(1)], "start"),)),
    Config("nested-end-start", "uint16", S2, (16, 24), (4, 6),
           (sharding((8, 12), [sharding((4, 6), [transpose((1, 0)), LE, gzip(1)], "start", "be")]),)),
    Config("nested-start-end-complex64", "complex64", (19, 21), (12, 12), (3, 2),
           (sharding((6, 4), [sharding((3, 2), [LE, blosc(8), CRC], "end", "le")], "start"),)),
    Config("1d-start-zstd", "int32", (50,), (16,), (4,), (sharding((4,), [LE, zstd()], "start"),), 0),
]
IDS = [c.id for c in CONFIGS]


# ---------------------------------------------------------------- writers / readers

def ts_metadata(cfg: Config) -> dict:
    return {"shape": list(cfg.shape), "data_type": cfg.dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(cfg.shards)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": support.fill_json(cfg.fill),
            "codecs": list(cfg.codecs)}


def ts_spec(path: str) -> dict:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}


def ts_read(path: str) -> np.ndarray:
    return ts.open(ts_spec(path), open=True).result().read().result()


def zarr_codec(spec: dict):
    """A zarr-python codec object from a v3 codec spec (sharding nested too)."""
    from zarr import codecs as zc
    conf = spec.get("configuration", {})
    if spec["name"] == "sharding_indexed":
        return zc.ShardingCodec(chunk_shape=tuple(conf["chunk_shape"]),
                                codecs=[zarr_codec(c) for c in conf["codecs"]],
                                index_codecs=[zarr_codec(c) for c in conf["index_codecs"]],
                                index_location=conf["index_location"])   # a str in every zarr 3.x
    return {"bytes": zc.BytesCodec, "blosc": zc.BloscCodec, "zstd": zc.ZstdCodec, "gzip": zc.GzipCodec,
            "crc32c": zc.Crc32cCodec, "transpose": zc.TransposeCodec}[spec["name"]](**conf)


def zarr_read(path: str) -> np.ndarray:
    return zarr.open_array(path, mode="r")[...]


def zarrc_create(cfg: Config, path: str) -> zarrc.Array:
    return zarrc.create_array(path, shape=cfg.shape, dtype=cfg.dtype, chunks=cfg.shards,
                              serializer=cfg.codecs[0], compressors=None, fill_value=cfg.fill_value)


def selections(cfg: Config) -> list:
    """The whole array, the overhanging edge, steps across shards, an integer with
    slices, the last element."""
    nd = len(cfg.shape)
    return [Ellipsis,
            tuple(slice(-5, None) for _ in range(nd)),
            tuple(slice(1, None, 3) for _ in range(nd)),
            (cfg.shape[0] // 2,) + tuple(slice(i, None, 2) for i in range(nd - 1)),
            tuple(n - 1 for n in cfg.shape)]


def check_zarrc_reads(cfg: Config, path: str, expected: np.ndarray) -> None:
    a = zarrc.open_array(path, mode="r")
    outer = tuple(cfg.codecs[0]["configuration"]["chunk_shape"])   # (a.chunks: zarr-python's meaning)
    assert (a.shape, a._chunked.chunks, a.chunks, a.shards, a.dtype) == (
        cfg.shape, cfg.inner, outer, cfg.shards, cfg.np_dtype)
    support.assert_scalar_bit_equal(a.fill_value, cfg.fill)
    for sel in selections(cfg):
        support.assert_bit_equal(a[sel], np.asarray(expected[sel]), f"zarrc a[{sel!r}]")


def zarrc_updates(cfg: Config, a, expected: np.ndarray, seed: int) -> None:
    """Partial writes through zarrc, applied to the model too: into the missing last
    row of shards (over the edge), with steps across every shard, the fill value over
    one inner chunk (left empty) and over a whole shard (deleted)."""
    update = support.sample(cfg.dtype, cfg.shape, seed)
    edge = (slice(cfg.shape[0] - 3, None),) + tuple(slice(n // 3, n) for n in cfg.shape[1:])
    steps = tuple(slice(i % 2, None, 3 + i) for i in range(len(cfg.shape)))
    for sel in (edge, steps):
        a[sel] = update[sel]
        expected[sel] = update[sel]
    inner_box = tuple(slice(s, s + i) for s, i in zip(cfg.shards, cfg.inner))   # in shard (1, 1, ...)
    shard_box = tuple(slice(0, s) for s in cfg.shards)                          # shard (0, 0, ...)
    for sel in (inner_box, shard_box):
        a[sel] = cfg.fill
        expected[sel] = cfg.fill


def model(cfg: Config, seed: int) -> tuple[np.ndarray, np.ndarray]:
    data = support.sample(cfg.dtype, cfg.shape, seed)
    expected = np.full(cfg.shape, cfg.fill, cfg.np_dtype)
    expected[cfg.region] = data[cfg.region]
    return data, expected


def shard_key(coords) -> str:
    return "c/" + "/".join(map(str, coords))


# ---------------------------------------------------------------- tensorstore

@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_tensorstore_writes_zarrc_reads(cfg, tmp_path) -> None:
    path = str(tmp_path / "arr")
    data, expected = model(cfg, seed=1)
    t = ts.open({**ts_spec(path), "metadata": ts_metadata(cfg)}, create=True).result()
    t[cfg.region].write(data[cfg.region]).result()
    support.assert_bit_equal(ts_read(path), expected, "tensorstore's own read")
    check_zarrc_reads(cfg, path, expected)

    # zarrc updates the shards tensorstore wrote; tensorstore and zarrc read the result
    zarrc_updates(cfg, zarrc.open_array(path, mode="r+"), expected, seed=2)
    support.assert_bit_equal(ts_read(path), expected, "tensorstore after zarrc's updates")
    check_zarrc_reads(cfg, path, expected)
    assert not (tmp_path / "arr" / shard_key([0] * len(cfg.shape))).exists()


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_zarrc_writes_tensorstore_and_zarr_python_read(cfg, tmp_path) -> None:
    path = str(tmp_path / "arr")
    data, expected = model(cfg, seed=3)
    a = zarrc_create(cfg, path)
    a[cfg.region] = data[cfg.region]
    support.assert_bit_equal(ts_read(path), expected, "tensorstore")
    support.assert_bit_equal(zarr_read(path), expected, "zarr-python")
    zarrc_updates(cfg, a, expected, seed=4)
    support.assert_bit_equal(ts_read(path), expected, "tensorstore after updates")
    support.assert_bit_equal(zarr_read(path), expected, "zarr-python after updates")
    check_zarrc_reads(cfg, path, expected)
    # the stored shards are exactly those holding a value other than the fill value
    grid = [math.ceil(n / s) for n, s in zip(cfg.shape, cfg.shards)]
    stored = {p.relative_to(tmp_path / "arr").as_posix() for p in (tmp_path / "arr").rglob("*")
              if p.is_file() and p.name != "zarr.json"}
    fill_bits = np.asarray(cfg.fill).reshape(1).view(np.uint8)
    wanted = set()
    for coords in np.ndindex(*grid):
        box = tuple(slice(c * s, (c + 1) * s) for c, s in zip(coords, cfg.shards))
        part = np.ascontiguousarray(expected[box]).reshape(-1).view(np.uint8)
        if not (part == np.tile(fill_bits, part.size // fill_bits.size)).all():
            wanted.add(shard_key(coords))
    assert stored == wanted


def test_zarrc_partial_update_keeps_tensorstore_inner_chunks(tmp_path) -> None:
    """zarrc rewrites one inner chunk of a shard tensorstore wrote (gzip level 9):
    every other inner chunk keeps tensorstore's bytes."""
    path = str(tmp_path / "arr")
    cfg = Config("gzip9", "int32", (8, 12), (8, 12), (2, 3), (sharding((2, 3), [LE, gzip(9)], "start"),))
    data = support.sample(cfg.dtype, cfg.shape, 9)
    t = ts.open({**ts_spec(path), "metadata": ts_metadata(cfg)}, create=True).result()
    t.write(data).result()

    def inner_chunks() -> list:
        raw = (tmp_path / "arr" / "c" / "0" / "0").read_bytes()
        table = np.frombuffer(raw[:16 * 16], "<u8").reshape(16, 2)
        return [raw[int(o):int(o) + int(n)] for o, n in table]
    before = inner_chunks()
    a = zarrc.open_array(path, mode="r+")
    a[3, 4] = 42                                    # inner chunk (1, 1) = number 5
    data[3, 4] = 42
    after = inner_chunks()
    assert [i for i in range(16) if before[i] != after[i]] == [5]
    support.assert_bit_equal(ts_read(path), data, "tensorstore")


# ---------------------------------------------------------------- zarr-python

ZARR_PYTHON = ["end-bytes-int16", "start-blosc-float32", "start-gzip-float64-big-le-index",
               "transpose-3d-int64", "nested-end-start", "nested-start-end-complex64"]


@pytest.mark.parametrize("cfg", [c for c in CONFIGS if c.id in ZARR_PYTHON], ids=ZARR_PYTHON)
def test_zarr_python_sharding_codec_writes_zarrc_reads(cfg, tmp_path) -> None:
    path = str(tmp_path / "arr")
    data, expected = model(cfg, seed=5)
    z = zarr.create_array(path, shape=cfg.shape, dtype=cfg.dtype, chunks=cfg.shards,
                          serializer=zarr_codec(cfg.codecs[0]), filters=None, compressors=None,
                          fill_value=cfg.fill_value)
    z[cfg.region] = data[cfg.region]
    check_zarrc_reads(cfg, path, expected)
    zarrc_updates(cfg, zarrc.open_array(path, mode="r+"), expected, seed=6)
    support.assert_bit_equal(zarr_read(path), expected, "zarr-python after zarrc's updates")
    check_zarrc_reads(cfg, path, expected)


@pytest.mark.parametrize("compressors", ["auto", "blosc"])
def test_zarr_python_create_array_shards(compressors, tmp_path) -> None:
    """zarr.create_array(shards=..., chunks=...) and zarrc.create_array(shards=...,
    chunks=...) make the same metadata; each reads the other's data."""
    from zarr.codecs import BloscCodec
    shape, shards, chunks = (21, 26), (8, 10), (4, 5)
    data = support.sample("float32", shape, 11)
    region = (slice(2, 15), slice(3, 26))
    expected = np.zeros(shape, "float32")
    expected[region] = data[region]
    kw = {} if compressors == "auto" else {
        "compressors": [BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")]}
    z = zarr.create_array(str(tmp_path / "z"), shape=shape, dtype="float32", chunks=chunks, shards=shards,
                          fill_value=0, **kw)
    z[region] = data[region]
    a = zarrc.open_array(str(tmp_path / "z"), mode="r+")
    assert a.chunks == chunks and a.shards == shards
    support.assert_bit_equal(a[...], expected, "zarrc")
    support.assert_bit_equal(a[-5:, ::3], expected[-5:, ::3], "zarrc edge")
    a[10:21, 0:7] = data[10:21, 0:7]
    expected[10:21, 0:7] = data[10:21, 0:7]
    support.assert_bit_equal(zarr_read(str(tmp_path / "z")), expected, "zarr-python")

    zc_kw = {} if compressors == "auto" else {"compressors": [{"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}}]}
    b = zarrc.create_array(str(tmp_path / "c"), shape=shape, dtype="float32", chunks=chunks, shards=shards,
                           fill_value=0, **zc_kw)
    b[...] = expected
    zb = zarr.open_array(str(tmp_path / "c"), mode="r")
    assert zb.chunks == chunks and zb.shards == shards

    def outline(arr) -> tuple:
        [codec] = arr.metadata.codecs
        location = getattr(codec.index_location, "value", codec.index_location)  # enum (3.1) or str (3.4)
        return (type(codec).__name__, tuple(codec.chunk_shape), location,
                [type(c).__name__ for c in codec.codecs], [type(c).__name__ for c in codec.index_codecs])
    assert outline(zb) == outline(z)
    support.assert_bit_equal(zb[...], expected, "zarr-python")
    support.assert_bit_equal(ts_read(str(tmp_path / "c")), expected, "tensorstore")
