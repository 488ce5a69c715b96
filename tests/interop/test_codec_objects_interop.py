"""Codecs given to ``create_array`` as zarr-python's codec objects, as spec dicts with
members left out, and as zarrc's own codec objects with options left unset: the same
array made by zarrc and by zarr-python with the same data has the same metadata
document and (where the codec is deterministic across builds) the same chunk bytes,
and each library reads the other's.  Options a codec leaves to the array (blosc's
typesize and shuffle, bytes' endian for one-byte types, a numcodecs wrapper's item
size or data type) are derived from the data type as zarr-python does."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON, files

import zarrc
import zarrc.codecs

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
numcodecs = pytest.importorskip("numcodecs")
zc = zarr.codecs

SHAPE, CHUNKS = (40, 60), (20, 30)


def _zstd_version(version: int) -> tuple[int, int, int]:
    return version // 10000, version // 100 % 100, version % 100


# zstd's output differs between its versions: zstd (and blosc's zstd) chunks are compared
# bit for bit only where numcodecs has the zstd zarrc has (else decoded, by both libraries)
SAME_ZSTD = ".".join(map(str, _zstd_version(numcodecs.zstd.VERSION_NUMBER))) == \
    __import__("zarrc._kernels.zstd", fromlist=["x"]).library_version()


def _data(dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    if dtype is str:
        words = np.array(["", "a", "héllo", "日本語", "x" * 40, "tab\tnew", "z" * 3], dtype=object)
        return words[rng.integers(0, len(words), SHAPE)]
    if dtype == "variable_length_bytes":
        blobs = np.array([b"", b"\x00", b"\xff\xfe", b"abc" * 9, b"q"], dtype=object)
        return blobs[rng.integers(0, len(blobs), SHAPE)]
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(SHAPE) * 50).round(1).astype(dt)
    return rng.integers(0, 60, SHAPE).astype(dt)


def _zarr_dtype(dtype):
    if dtype == "variable_length_bytes":
        from zarr.core.dtype import VariableLengthBytes
        return VariableLengthBytes()
    return dtype



def _make_both(tmp_path, dtype, zarrc_kw, zarr_kw, fmt=3):
    """The same array written by both libraries; (zarr-python's files, zarrc's files,
    the data, zarr-python's path, zarrc's path)."""
    data = _data(dtype)
    ours, theirs = str(tmp_path / "zarrc"), str(tmp_path / "zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # zarr-python's warnings about numcodecs and vlen types
        z = zarr.create_array(theirs, shape=SHAPE, chunks=CHUNKS, dtype=_zarr_dtype(dtype),
                              zarr_format=fmt, **zarr_kw)
        z[...] = data
        a = zarrc.create_array(ours, shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=fmt, **zarrc_kw)
        a[...] = data
    return files(theirs), files(ours), data, theirs, ours


def _check_both_ways(theirs_path, ours_path, data, exact_data=True):
    """Each library reads the other's array; lossless codecs give back ``data``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr_reads_ours = zarr.open_array(ours_path, mode="r")[...]
        zarr_reads_theirs = zarr.open_array(theirs_path, mode="r")[...]
    ours_reads_theirs = zarrc.open_array(theirs_path, mode="r")[...]
    ours_reads_ours = zarrc.open_array(ours_path, mode="r")[...]
    expected = np.asarray(data) if exact_data else zarr_reads_theirs
    for got in (zarr_reads_ours, ours_reads_theirs, ours_reads_ours):
        assert np.array_equal(np.asarray(got, dtype=expected.dtype), expected)


def _inner_chunks(shard: bytes, config: dict) -> list[bytes | None]:
    """A shard's inner chunks in C order (None: empty), from its index (uint64 offset and
    size pairs, then a crc32c): zarr-python and zarrc place them in other orders."""
    n = 1
    for outer, inner in zip(CHUNKS if config.get("outer") is None else config["outer"],
                            config["chunk_shape"]):
        n *= outer // inner
    size = n * 16 + 4
    index = shard[:size] if config.get("index_location") == "start" else shard[-size:]
    pairs = np.frombuffer(index[:-4], dtype="<u8").reshape(n, 2)
    empty = np.uint64(2**64 - 1)
    return [None if o == empty else shard[int(o):int(o) + int(m)] for o, m in pairs]


def _compare(tmp_path, dtype, zarrc_kw, zarr_kw=None, *, exact=True, lossless=True, fmt=3):
    """Both libraries' arrays: the same metadata document, the same chunk keys, the same
    chunk bytes (``exact``; inner chunks for a sharded array), each reading the other's."""
    theirs, ours, data, theirs_path, ours_path = _make_both(
        tmp_path, dtype, zarrc_kw, zarrc_kw if zarr_kw is None else zarr_kw, fmt)
    meta = "zarr.json" if fmt == 3 else ".zarray"
    doc = json.loads(ours[meta])
    assert doc == json.loads(theirs[meta])
    assert sorted(ours) == sorted(theirs)
    sharding = doc["codecs"][0]["configuration"] if fmt == 3 and \
        doc["codecs"][0]["name"] == "sharding_indexed" else None
    if exact:
        for key in theirs:
            if key == meta:       # (the same document; its keys in another order)
                continue
            if sharding is None:
                assert ours[key] == theirs[key], key
            else:
                shard = dict(sharding, outer=doc["chunk_grid"]["configuration"]["chunk_shape"])
                assert _inner_chunks(ours[key], shard) == _inner_chunks(theirs[key], shard), key
    elif fmt == 3 and doc["codecs"][-1]["name"] == "blosc":
        # other zstd builds: still the same blosc header (flags: shuffle and compressor,
        # typesize, sizes), byte 2 on (byte 1 is the compressor library's format version)
        for key in theirs:
            if key != meta:
                assert ours[key][2:12] == theirs[key][2:12], key
    _check_both_ways(theirs_path, ours_path, data, lossless)
    return doc, ours


def _codecs(doc):
    return doc["codecs"]


# ---------------------------------------------------------------- the example

def test_blosc_codec_object_takes_the_item_size(tmp_path):
    # compressors=zarr.codecs.BloscCodec(cname="lz4", shuffle="shuffle") on float32: typesize 4,
    # so the byte shuffle works, and the stored bytes are zarr-python's
    doc, ours = _compare(tmp_path, "f4", dict(compressors=zc.BloscCodec(cname="lz4", shuffle="shuffle")))
    assert _codecs(doc)[1] == {"name": "blosc", "configuration": {
        "typesize": 4, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}}
    theirs = files(tmp_path / "zarr")
    stored = sum(len(v) for k, v in ours.items() if k != "zarr.json")
    assert stored == sum(len(v) for k, v in theirs.items() if k != "zarr.json")
    # and smaller than with typesize 1, where the byte shuffle does nothing
    one = zarrc.create_array(str(tmp_path / "one"), shape=SHAPE, chunks=CHUNKS, dtype="f4",
                             compressors=zc.BloscCodec(cname="lz4", shuffle="shuffle", typesize=1))
    one[...] = _data("f4")
    assert stored < sum(len(v) for k, v in files(tmp_path / "one").items() if k != "zarr.json")


# ---------------------------------------------------------------- zarr-python's codec objects

OBJECT_CASES = {
    "blosc-defaults-f4": ("f4", lambda: dict(compressors=zc.BloscCodec())),
    "blosc-defaults-u1": ("u1", lambda: dict(compressors=zc.BloscCodec())),
    "blosc-defaults-i2": ("i2", lambda: dict(compressors=zc.BloscCodec(cname="lz4"))),
    "blosc-given-kept": ("f8", lambda: dict(compressors=zc.BloscCodec(typesize=2, shuffle="noshuffle"))),
    "blosc-given-bitshuffle": ("f4", lambda: dict(compressors=zc.BloscCodec(shuffle="bitshuffle"))),
    "blosc-string": (str, lambda: dict(compressors=zc.BloscCodec(cname="lz4"))),
    "zstd": ("f4", lambda: dict(compressors=zc.ZstdCodec(level=3, checksum=True))),
    "zstd-default": ("i4", lambda: dict(compressors=zc.ZstdCodec())),
    "bytes-one-byte": ("i1", lambda: dict(serializer=zc.BytesCodec(), compressors=None)),
    "bytes-big": ("i2", lambda: dict(serializer=zc.BytesCodec(endian="big"), compressors=None)),
    "transpose": ("f4", lambda: dict(filters=zc.TransposeCodec(order=(1, 0)), compressors=zc.BloscCodec())),
    "crc32c": ("u2", lambda: dict(compressors=[zc.ZstdCodec(), zc.Crc32cCodec()])),
    "shards": ("f4", lambda: dict(shards=(40, 60), compressors=zc.BloscCodec(cname="lz4"))),
    "shards-default-blosc": ("f4", lambda: dict(shards=(40, 60), compressors=zc.BloscCodec())),
    "sharding-object": ("i4", lambda: dict(
        serializer=zc.ShardingCodec(chunk_shape=(10, 15),
                                    codecs=[zc.BytesCodec(), zc.BloscCodec(cname="lz4")]),
        compressors=None)),
    "sharding-object-u1": ("u1", lambda: dict(
        serializer=zc.ShardingCodec(chunk_shape=(10, 15),
                                    codecs=[zc.BytesCodec(), zc.BloscCodec(cname="lz4")],
                                    index_location="start"), compressors=None)),
    "vlen-utf8": (str, lambda: dict(serializer=zc.VLenUTF8Codec(), compressors=zc.ZstdCodec())),
    "vlen-bytes": ("variable_length_bytes",
                   lambda: dict(serializer=zc.VLenBytesCodec(), compressors=zc.BloscCodec())),
    "numcodecs-shuffle": ("f8", lambda: dict(compressors=[zc.numcodecs.Shuffle(), zc.numcodecs.Zstd()])),
    "numcodecs-blosc": ("f4", lambda: dict(compressors=zc.numcodecs.Blosc())),
    "numcodecs-zstd": ("i4", lambda: dict(compressors=zc.numcodecs.Zstd(level=2))),
    "numcodecs-fixedscaleoffset": ("f8", lambda: dict(
        filters=zc.numcodecs.FixedScaleOffset(offset=0, scale=10, astype="i4"))),
    "numcodecs-quantize": ("f4", lambda: dict(filters=zc.numcodecs.Quantize(digits=3))),
}
LOSSY = ("numcodecs-quantize",)


@pytest.mark.parametrize("name", list(OBJECT_CASES))
def test_zarr_python_codec_objects(tmp_path, name):
    dtype, kwargs = OBJECT_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # zarr-python: numcodecs wrappers are unstable
        kw = kwargs()
    _compare(tmp_path, dtype, kw, lossless=name not in LOSSY, exact=SAME_ZSTD or not _uses_zstd(kw))


def _uses_zstd(kwargs) -> bool:
    """Whether the codecs of ``create_array`` keywords use zstd (zstd, or blosc's zstd)."""
    text = repr(kwargs).lower()
    if "blosc" in text and "cname" not in text:
        return True        # (blosc's default cname is zstd)
    return "zstd" in text


def test_gzip_codec_object(tmp_path):
    # zarrc's gzip comes from libdeflate: the same metadata, other (valid) bytes
    doc, _ = _compare(tmp_path, "f4", dict(compressors=zc.GzipCodec()), exact=False)
    assert _codecs(doc)[1] == {"name": "gzip", "configuration": {"level": 5}}


# ---------------------------------------------------------------- spec dicts with members left out

# (zarrc's argument, zarr-python's equivalent: the same dict where zarr-python takes it)
DICT_CASES = {
    "blosc-cname-clevel": ("f4", {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}, None),
    "blosc-empty": ("u1", {"name": "blosc", "configuration": {}}, None),
    "blosc-typesize-only": ("f8", {"name": "blosc", "configuration": {"typesize": 2}}, None),
    "blosc-bare": ("i2", {"name": "blosc"}, lambda: zc.BloscCodec()),
    "blosc-name": ("f4", "blosc", lambda: zc.BloscCodec()),
    "zstd-bare": ("f4", {"name": "zstd"}, lambda: zc.ZstdCodec()),
    "zstd-empty": ("f4", {"name": "zstd", "configuration": {}}, None),
}


@pytest.mark.parametrize("name", list(DICT_CASES))
def test_spec_dicts_take_zarr_pythons_defaults(tmp_path, name):
    dtype, ours, theirs = DICT_CASES[name]
    zarr_kw = dict(compressors=ours if theirs is None else theirs())
    _compare(tmp_path, dtype, dict(compressors=ours), zarr_kw,
             exact=SAME_ZSTD or not _uses_zstd([ours, zarr_kw]))


def test_gzip_spec_dict_takes_the_default_level(tmp_path):
    doc, _ = _compare(tmp_path, "f4", dict(compressors={"name": "gzip"}),
                      dict(compressors=zc.GzipCodec()), exact=False)
    assert _codecs(doc)[1] == {"name": "gzip", "configuration": {"level": 5}}


@pytest.mark.parametrize("dtype", ["f4", "u1"])
def test_bytes_spec_dict(tmp_path, dtype):
    _compare(tmp_path, dtype, dict(serializer={"name": "bytes"}), dict(serializer=zc.BytesCodec()))


def test_sharding_spec_dict_without_codecs(tmp_path):
    blosc = {"name": "blosc", "configuration": {"cname": "lz4"}}
    _compare(tmp_path, "f4", dict(serializer={"name": "sharding_indexed", "configuration": {
        "chunk_shape": [10, 10], "codecs": [{"name": "bytes"}, blosc]}}, compressors=None),
        dict(serializer=zc.ShardingCodec(chunk_shape=(10, 10),
                                         codecs=[zc.BytesCodec(), zc.BloscCodec(cname="lz4")]),
             compressors=None))


# ---------------------------------------------------------------- zarrc's own codec objects

ZARRC_CASES = {
    "blosc-unset-f4": ("f4", lambda: zarrc.codecs.Blosc(cname="lz4"), lambda: zc.BloscCodec(cname="lz4")),
    "blosc-unset-u1": ("u1", lambda: zarrc.codecs.Blosc(cname="lz4"), lambda: zc.BloscCodec(cname="lz4")),
    "blosc-given": ("f4", lambda: zarrc.codecs.Blosc(cname="zstd", clevel=3, shuffle="noshuffle", typesize=2),
                    lambda: zc.BloscCodec(cname="zstd", clevel=3, shuffle="noshuffle", typesize=2)),
    "blosc-given-shuffle-u1": ("u1", lambda: zarrc.codecs.Blosc(cname="lz4", shuffle="shuffle"),
                               lambda: zc.BloscCodec(cname="lz4", shuffle="shuffle")),
    "zstd": ("f8", lambda: zarrc.codecs.Zstd(), lambda: zc.ZstdCodec()),
}


@pytest.mark.parametrize("name", list(ZARRC_CASES))
def test_zarrc_codec_objects_with_unset_options(tmp_path, name):
    dtype, ours, theirs = ZARRC_CASES[name]
    kw = dict(compressors=ours())
    _compare(tmp_path, dtype, kw, dict(compressors=theirs()), exact=SAME_ZSTD or not _uses_zstd(kw))


def test_zarrc_blosc_unset_options():
    codec = zarrc.codecs.Blosc()
    assert codec.shuffle is None and codec.typesize is None
    assert codec.get_config()["shuffle"] == -1          # numcodecs' AUTOSHUFFLE
    assert "shuffle" not in codec.to_dict()["configuration"]
    data = np.arange(5000, dtype="<f4")
    # by the item size, as numcodecs' AUTOSHUFFLE: byte shuffle for 4-byte items, bit shuffle for 1
    for buf in (data, data.view(np.uint8)):
        assert codec.encode(buf) == numcodecs.Blosc(cname="lz4", shuffle=-1).encode(buf)
    assert numcodecs.get_codec(codec.get_config()).encode(data) == codec.encode(data)


# ---------------------------------------------------------------- Zarr v2: numcodecs objects

V2_CASES = {
    "blosc-shuffle": ("f4", lambda: dict(compressors=numcodecs.Blosc(cname="lz4", shuffle=1))),
    "blosc-default": ("f8", lambda: dict(compressors=numcodecs.Blosc())),
    "blosc-auto-u1": ("u1", lambda: dict(compressors=numcodecs.Blosc(cname="lz4", shuffle=-1))),
    "blosc-auto-after-delta": ("i4", lambda: dict(filters=[numcodecs.Delta(dtype="i4")],
                                                  compressors=numcodecs.Blosc(shuffle=-1))),
    # the vlen filter makes bytes: AUTOSHUFFLE is a bit shuffle there (numcodecs decides per buffer)
    "blosc-auto-strings": (str, lambda: dict(compressors=numcodecs.Blosc(cname="lz4", shuffle=-1))),
    "blosc-strings": (str, lambda: dict(compressors=numcodecs.Blosc(cname="zstd", shuffle=1))),
    "zstd": ("i2", lambda: dict(compressors=numcodecs.Zstd(level=2))),
    "zarrc-blosc-unset": ("f4", lambda: dict(compressors=zarrc.codecs.Blosc(cname="lz4"))),
}


@pytest.mark.parametrize("name", list(V2_CASES))
def test_v2_numcodecs_objects(tmp_path, name):
    dtype, kwargs = V2_CASES[name]
    kw = kwargs()
    zarr_kw = kw
    if isinstance(kw.get("compressors"), zarrc.codecs.Blosc):      # zarr-python takes numcodecs' own
        zarr_kw = dict(compressors=numcodecs.get_codec(kw["compressors"].get_config()))
    _compare(tmp_path, dtype, kw, zarr_kw, fmt=2, exact=SAME_ZSTD or not _uses_zstd(kw))


# ---------------------------------------------------------------- reading documents that leave members out

def test_stored_documents_that_leave_members_out_read_as_zarr_python_reads_them(tmp_path):
    path = str(tmp_path / "a")
    data = _data("f4")
    z = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype="f4", shards=(40, 60),
                          compressors=[zc.BloscCodec(cname="lz4"), zc.Crc32cCodec()])
    z[...] = data
    with open(os.path.join(path, "zarr.json")) as f:
        full = json.load(f)
    doc = json.loads(json.dumps(full))
    sharding = doc["codecs"][0]["configuration"]
    sharding["codecs"][1]["configuration"] = {"cname": "lz4", "clevel": 5}       # no typesize, shuffle
    del sharding["index_codecs"], sharding["index_location"]                     # zarr-python's defaults
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump(doc, f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_array(path, mode="r")
        assert np.array_equal(theirs[...], data)
        expected = theirs.metadata.to_dict()["codecs"]
    ours = zarrc.open_array(path, mode="r")
    assert np.array_equal(ours[...], data)
    assert ours.metadata.to_json()["codecs"] == full["codecs"]
    assert json.loads(json.dumps(ours.metadata.to_dict()["codecs"])) == json.loads(json.dumps(expected))
