"""numcodecs' codecs in v3 arrays (``numcodecs.<id>``, zarr-python's
``zarr.codecs.numcodecs``): written by zarr-python and read by zarrc, and the other
way round, bit for bit, unsharded and inside a sharding codec, in local, memory and
zip stores; the kernels run the formats zarrc has; bad configurations and corrupt
chunks raise zarrc's errors; LZMA with a filter chain and categorize read back."""

from __future__ import annotations

import json
import lzma
import os
import zipfile

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON, snapshot
from interop.support import assert_bit_equal, sample

import zarrc
from zarrc.engine.python import PythonStrategy
from zarrc.errors import CodecError, MetadataError
from zarrc.stores import MemoryStore, ZipStore

numcodecs = pytest.importorskip("numcodecs")
pytestmark = [pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr")]

LZMA_FILTERS = [{"id": lzma.FILTER_DELTA, "dist": 8}, {"id": lzma.FILTER_LZMA2, "preset": 1}]

# case -> (zarr-python class name, its configuration, "filters" or "compressors", data type)
CASES = {
    "zlib": ("Zlib", {"level": 3}, "compressors", "float64"),
    "gzip": ("GZip", {}, "compressors", "int32"),
    "bz2": ("BZ2", {"level": 5}, "compressors", "float64"),
    "lzma": ("LZMA", {}, "compressors", "uint16"),
    "lz4": ("LZ4", {}, "compressors", "int64"),
    "zstd": ("Zstd", {"level": 3}, "compressors", "float32"),
    "zstd-checksum": ("Zstd", {"level": 1, "checksum": True}, "compressors", "float32"),
    "blosc": ("Blosc", {}, "compressors", "float64"),
    "blosc-zstd-bitshuffle": ("Blosc", {"cname": "zstd", "clevel": 3, "shuffle": 2}, "compressors", "int16"),
    "shuffle": ("Shuffle", {}, "compressors", "float64"),
    "crc32": ("CRC32", {}, "compressors", "int32"),
    "crc32c": ("CRC32C", {}, "compressors", "int32"),
    "crc32c-start": ("CRC32C", {"location": "start"}, "compressors", "int32"),
    "adler32": ("Adler32", {}, "compressors", "uint8"),
    "fletcher32": ("Fletcher32", {}, "compressors", "float64"),
    "jenkins_lookup3": ("JenkinsLookup3", {}, "compressors", "float64"),
    "delta": ("Delta", {"dtype": "<i4"}, "filters", "int32"),
    "delta-astype": ("Delta", {"dtype": "<i8", "astype": "<i2"}, "filters", "int64"),
    "fixedscaleoffset": ("FixedScaleOffset", {"offset": 1, "scale": 100, "dtype": "<f8", "astype": "<i4"},
                         "filters", "float64"),
    "quantize": ("Quantize", {"digits": 3, "dtype": "<f8"}, "filters", "float64"),
    "bitround": ("BitRound", {"keepbits": 7}, "filters", "float32"),
    "astype": ("AsType", {"encode_dtype": "<f4", "decode_dtype": "<f8"}, "filters", "float64"),
    "packbits": ("PackBits", {}, "filters", "bool"),
}
NATIVE = {"zlib", "gzip", "zstd", "zstd-checksum", "blosc", "blosc-zstd-bitshuffle", "crc32c"}
# numcodecs 0.13 (the lower bound, and the newest for Python 3.10) has no CRC32C
NO_CRC32C = not hasattr(numcodecs, "CRC32C")
needs_crc32c = pytest.mark.skipif(NO_CRC32C, reason="this numcodecs has no CRC32C (0.14 on)")
SHAPE, CHUNKS, SHARDS = (37, 11), (8, 5), (16, 10)
# every case unsharded and sharded in a local store; in memory and zip stores a native
# codec and numcodecs codecs of each category
LAYOUTS = [pytest.param(case, sharded, kind, id=f"{case}-{'sharded' if sharded else 'v3'}-{kind}")
           for kind in ("local", "memory", "zip") for case in sorted(CASES) for sharded in (False, True)
           if kind == "local" or case in ("zlib", "bz2", "delta", "packbits")]


def zarr_numcodecs():
    """zarr-python's numcodecs wrappers: zarr.codecs.numcodecs (3.1.3 on), else numcodecs.zarr3."""
    pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    try:
        import zarr.codecs.numcodecs as module
    except ImportError:      # (zarr-python 3.1.0 - 3.1.2)
        module = pytest.importorskip("numcodecs.zarr3")
    return module


def zarr_codec(case: str):
    cls, conf, _, _ = CASES[case]
    return getattr(zarr_numcodecs(), cls)(**conf)


def spec(case: str) -> dict:
    """The case's codec as a v3 spec dict (how a zarrc user names it)."""
    cls, conf, _, _ = CASES[case]
    return {"name": "numcodecs." + getattr(numcodecs, cls).codec_id, "configuration": conf}


def data_for(case: str) -> np.ndarray:
    dtype = CASES[case][3]
    if dtype == "bool":
        return sample("uint8", SHAPE, seed=3) % 3 == 0
    data = sample(dtype, SHAPE, seed=len(case))
    if np.dtype(dtype).kind == "f":          # (scaled for quantize, fixedscaleoffset, astype)
        data = np.nan_to_num(data, nan=0.5, posinf=2.0, neginf=-2.0)
        data = np.clip(data, -1e3, 1e3)
    if case == "delta-astype":
        data = data % 100
    return data


def codecs_of(a) -> list:
    return [c.to_json() for c in a.metadata.codecs]


def plain(value):
    return json.loads(json.dumps(value))


def fill(data: np.ndarray):
    return False if data.dtype == bool else 0


def codec_kwargs(case: str, codec) -> dict:
    return {CASES[case][2]: [codec]}


def open_as(kind: str, root: str):
    """A zarrc store of ``kind`` holding the files under ``root``."""
    if kind == "local":
        return root
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            path = os.path.join(d, n)
            with open(path, "rb") as f:
                files[os.path.relpath(path, root).replace(os.sep, "/")] = f.read()
    if kind == "memory":
        store = MemoryStore()
        for k, v in files.items():
            store.set(k, v)
        return store
    zpath = root + ".zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for k, v in files.items():
            zf.writestr(k, v)
    return ZipStore(zpath, mode="r")


def zarrc_store(kind: str, root: str):
    if kind == "local":
        return root
    if kind == "memory":
        return MemoryStore()
    return ZipStore(root + ".zip", mode="w")


def dump(store, root: str) -> str:
    """The keys of a zarrc store as files under ``root`` (for zarr-python to read)."""
    for key, value in snapshot(store).items():
        path = os.path.join(root, *key.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(value)
    return root


@pytest.mark.parametrize("case, sharded, kind", LAYOUTS)
def test_zarr_python_writes_zarrc_reads(tmp_path, case, sharded, kind):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    data = data_for(case)
    root = str(tmp_path / "z")
    z = zarr.create_array(root, shape=SHAPE, chunks=CHUNKS, shards=SHARDS if sharded else None,
                          dtype=data.dtype, fill_value=0, **codec_kwargs(case, zarr_codec(case)))
    z[...] = data
    z[:3, :4] = 0                                # (an all-fill chunk or inner chunk)
    expected = z[...]
    a = zarrc.open_array(open_as(kind, root), mode="r")
    assert_bit_equal(a[...], expected, case)
    assert_bit_equal(a[5:30:3, 2:9], expected[5:30:3, 2:9], case)
    assert codecs_of(a) == plain(z.metadata.to_dict()["codecs"])
    native = case in NATIVE and not isinstance(a._engine, PythonStrategy)
    assert native == (case in NATIVE), (case, type(a._engine).__name__)


@pytest.mark.parametrize("case, sharded, kind", LAYOUTS)
def test_zarrc_writes_zarr_python_reads(tmp_path, case, sharded, kind):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    data = data_for(case)
    z = zarr.create_array(str(tmp_path / "z"), shape=SHAPE, chunks=CHUNKS, dtype=data.dtype, fill_value=0,
                          **codec_kwargs(case, zarr_codec(case)))
    z[...] = data
    z[2:9, 1:3] = data[:7, :2]
    store = zarrc_store(kind, str(tmp_path / "c"))
    # zarr-python's codec object (it has to_dict) for one store, the spec dict for the others
    codec = zarr_codec(case) if kind == "local" else spec(case)
    a = zarrc.create_array(store, shape=SHAPE, chunks=CHUNKS, shards=SHARDS if sharded else None,
                           dtype=data.dtype, fill_value=fill(data), **codec_kwargs(case, codec))
    a[...] = data
    a[2:9, 1:3] = data[:7, :2]                   # (a partial write: chunks decoded and encoded again)
    assert_bit_equal(a[...], z[...], case)
    root = str(tmp_path / "c") if kind == "local" else dump(store, str(tmp_path / "dump"))
    if kind == "zip":
        store.close()
    back = zarr.open_array(root, mode="r")
    assert_bit_equal(back[...], z[...], case)
    inner = plain(back.metadata.to_dict()["codecs"])
    if sharded:
        inner = inner[0]["configuration"]["codecs"]
    assert inner == plain(z.metadata.to_dict()["codecs"])


@pytest.mark.parametrize("case", ["zlib", "bz2", "delta", "fixedscaleoffset", "lzma"])
def test_v2_numcodecs_both_ways(tmp_path, case):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    cls, conf, where, dtype = CASES[case]
    codec = getattr(numcodecs, cls)(**conf)
    kw = {"filters": [codec], "compressors": None} if where == "filters" else {"compressors": codec}
    data = data_for(case)
    z = zarr.create_array(str(tmp_path / "z"), shape=SHAPE, chunks=CHUNKS, dtype=dtype, fill_value=0,
                          zarr_format=2, **kw)
    z[...] = data
    assert_bit_equal(zarrc.open_array(str(tmp_path / "z"))[...], z[...], case)
    kw = {"filters": [codec.get_config()], "compressors": None} if where == "filters" else \
        {"compressors": codec.get_config()}
    a = zarrc.create_array(str(tmp_path / "c"), shape=SHAPE, chunks=CHUNKS, dtype=dtype, fill_value=0,
                           zarr_format=2, **kw)
    a[...] = data
    assert_bit_equal(zarr.open_array(str(tmp_path / "c"))[...], z[...], case)


def test_native_codecs_run_on_the_kernels_and_match_numcodecs():
    """numcodecs.zlib ... in a chain are the kernels' steps; numcodecs decodes their chunks."""
    for case in sorted(NATIVE - ({"crc32c"} if NO_CRC32C else set())):
        data = data_for(case)
        store = MemoryStore()
        a = zarrc.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype=data.dtype, compressors=[spec(case)])
        assert not isinstance(a._engine, PythonStrategy), case
        a[...] = data
        cls, conf, _, _ = CASES[case]
        raw = store.get("c/1/1")
        chunk = np.frombuffer(getattr(numcodecs, cls)(**conf).decode(raw), dtype=data.dtype)
        assert_bit_equal(chunk.reshape(CHUNKS), data[8:16, 5:10], case)


@needs_crc32c
def test_numcodecs_crc32c_is_the_v3_crc32c_at_the_end():
    payload = np.arange(100, dtype="<i4").tobytes()
    assert bytes(numcodecs.CRC32C().encode(payload)) == zarrc.codecs.Crc32c().encode(payload)


def test_a_numcodecs_object_as_a_v3_codec(tmp_path):
    """zarrc.codecs.numcodecs_v3 wraps a numcodecs object; any id numcodecs' registry
    builds works, as a bytes -> bytes codec after the array -> bytes one."""
    data = np.arange(60, dtype="int32").reshape(6, 10)
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(3, 5), dtype="int32",
                           filters=[zarrc.codecs.numcodecs_v3(numcodecs.Delta("<i4"))],
                           compressors=[zarrc.codecs.numcodecs_v3(numcodecs.Base64())])
    a[...] = data
    assert codecs_of(a)[-1] == {"name": "numcodecs.base64", "configuration": {}}
    assert_bit_equal(zarrc.open_array(str(tmp_path / "a"))[...], data)
    with open(tmp_path / "a" / "c" / "1" / "1", "rb") as f:
        raw = f.read()
    delta = numcodecs.Delta("<i4").encode(data[3:6, 5:10].copy())
    assert raw == numcodecs.Base64().encode(np.ascontiguousarray(delta).tobytes())


def test_an_unwrapped_numcodecs_id_alone_is_the_array_to_bytes_codec():
    """An id of numcodecs' registry zarr-python does not wrap, with no codec after it,
    serialises the chunk (as imagecodecs' image codecs do): json2 here."""
    data = np.arange(30, dtype="int16").reshape(5, 6)
    store = MemoryStore()
    a = zarrc.create_array(store, shape=data.shape, chunks=(2, 6), dtype="int16", compressors=None,
                           serializer={"name": "numcodecs.json2"})
    assert [c.category for c in a.metadata.codecs] == ["array->bytes"]
    a[...] = data
    assert_bit_equal(a[...], data)
    assert numcodecs.JSON().decode(store.get("c/1/0")).tolist() == data[2:4].tolist()


@pytest.mark.parametrize("name", ["imagecodecs_png", "numcodecs.imagecodecs_png"])
def test_imagecodecs_codecs_through_numcodecs(name):
    """imagecodecs' codecs (numcodecs ids ``imagecodecs_<codec>``, also its v3 names):
    a PNG serialiser alone in the chain."""
    pytest.importorskip("imagecodecs")
    try:
        png = numcodecs.get_codec({"id": "imagecodecs_png"})
    except Exception:  # noqa: BLE001 (imagecodecs without its numcodecs entry points)
        pytest.skip("imagecodecs' codecs are not in numcodecs' registry (imagecodecs-numcodecs)")
    data = (np.arange(24 * 16) % 251).astype("uint8").reshape(24, 16)
    store = MemoryStore()
    a = zarrc.create_array(store, shape=data.shape, chunks=(8, 16), dtype="uint8", compressors=None,
                           serializer={"name": name})
    a[...] = data
    assert_bit_equal(a[...], data)
    assert bytes(store.get("c/1/0")[:4]) == b"\x89PNG"
    assert_bit_equal(np.asarray(png.decode(store.get("c/1/0"))).reshape(8, 16), data[8:16])


@pytest.mark.parametrize("module, cls, conf, dtype", [
    ("pcodec", "PCodec", {}, "float64"),
    ("zfpy", "ZFPY", {"mode": 4, "tolerance": -1, "rate": -1, "precision": -1}, "float64"),
])
def test_array_to_bytes_numcodecs(tmp_path, module, cls, conf, dtype):
    pytest.importorskip(module)
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    data = sample(dtype, SHAPE, seed=5)
    data = np.nan_to_num(data, nan=0.0, posinf=1.0, neginf=-1.0)
    z = zarr.create_array(str(tmp_path / "z"), shape=SHAPE, chunks=CHUNKS, dtype=dtype, compressors=None,
                          serializer=getattr(zarr_numcodecs(), cls)(**conf))
    z[...] = data
    assert_bit_equal(zarrc.open_array(str(tmp_path / "z"))[...], z[...])
    a = zarrc.create_array(str(tmp_path / "c"), shape=SHAPE, chunks=CHUNKS, dtype=dtype, compressors=None,
                           serializer=getattr(zarr_numcodecs(), cls)(**conf))
    a[...] = data
    assert_bit_equal(zarr.open_array(str(tmp_path / "c"))[...], z[...])


@pytest.mark.parametrize("codec, match", [
    ({"name": "numcodecs.zlib", "configuration": {"level": "x"}}, "numcodecs.zlib"),
    ({"name": "numcodecs.zlib", "configuration": {"id": "gzip"}}, "numcodecs.zlib"),
    ({"name": "numcodecs.blosc", "configuration": {"cname": "nope"}}, "numcodecs.blosc"),
    ({"name": "numcodecs.bz2", "configuration": {"level": 1, "nope": 2}}, "numcodecs.bz2"),
    ({"name": "numcodecs.no-such-codec"}, "numcodecs.no-such-codec"),
])
def test_bad_configuration_is_a_metadata_error_naming_the_codec(tmp_path, codec, match):
    with pytest.raises(MetadataError, match=match):
        zarrc.create_array(MemoryStore(), shape=(4,), dtype="float64", compressors=[codec])
    with pytest.raises(MetadataError, match="numcodecs.delta"):
        zarrc.create_array(MemoryStore(), shape=(4,), dtype="float64", filters=[{"name": "numcodecs.delta"}])


@pytest.mark.parametrize("sharded", [False, True], ids=["v3", "sharded"])
@pytest.mark.parametrize("case", ["bz2", "lzma", "lz4", "crc32", "adler32", "fletcher32", "jenkins_lookup3",
                                  "crc32c-start", "shuffle", "zlib", "blosc", "delta", "packbits"])
def test_corrupt_chunks_raise_codec_errors(case, sharded):
    if case.startswith("crc32c") and NO_CRC32C:
        pytest.skip("this numcodecs has no CRC32C (0.14 on)")
    data = data_for(case)
    store = MemoryStore()
    a = zarrc.create_array(store, shape=SHAPE, chunks=CHUNKS, shards=SHARDS if sharded else None,
                           dtype=data.dtype, fill_value=fill(data), **codec_kwargs(case, spec(case)))
    a[...] = data
    key = "c/0/0"
    raw = bytes(store.get(key))
    cut = len(raw) - 3 if sharded else len(raw) // 2      # (the shard's index or a chunk's data)
    for bad in (raw[:cut], raw[:1] + bytes([raw[1] ^ 0xFF]) + raw[2:] if case.startswith(("crc", "adler",
                                                                  "fletcher", "jenkins")) else raw[:cut]):
        store.set(key, bad)
        with pytest.raises(CodecError, match="c/0/0"):
            a[...]
    store.set(key, raw)
    assert_bit_equal(a[...], data)


def test_lzma_with_a_filter_chain(tmp_path):
    """xz streams record their filters: read without passing them (numcodecs cannot
    decode when given them), v3 and v2, written by zarr-python or zarrc."""
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    data = sample("float64", SHAPE, seed=2)
    conf = {"format": lzma.FORMAT_XZ, "filters": LZMA_FILTERS}
    z = zarr.create_array(str(tmp_path / "z3"), shape=SHAPE, chunks=CHUNKS, dtype="float64",
                          compressors=[zarr_numcodecs().LZMA(**conf)])
    z[...] = data                                   # (zarr-python writes it, and cannot read it)
    assert_bit_equal(zarrc.open_array(str(tmp_path / "z3"))[...], data)
    z2 = zarr.create_array(str(tmp_path / "z2"), shape=SHAPE, chunks=CHUNKS, dtype="float64", zarr_format=2,
                           compressors=numcodecs.LZMA(**conf))
    z2[...] = data
    assert_bit_equal(zarrc.open_array(str(tmp_path / "z2"))[...], data)
    for fmt, path in ((3, "c3"), (2, "c2")):
        codec = {"name": "numcodecs.lzma", "configuration": conf} if fmt == 3 else {"id": "lzma", **conf}
        a = zarrc.create_array(str(tmp_path / path), shape=SHAPE, chunks=CHUNKS, dtype="float64",
                               zarr_format=fmt, compressors=[codec] if fmt == 3 else codec)
        a[...] = data
        assert_bit_equal(zarrc.open_array(str(tmp_path / path))[...], data)
        key = "c/1/0" if fmt == 3 else "1.0"
        with open(tmp_path / path / key, "rb") as f:
            assert lzma.decompress(f.read()) == data[8:16, :5].tobytes()


def test_categorize_v2_reads_back(tmp_path):
    labels = ["apple", "banana", "cherry"]
    data = np.array(["apple", "cherry", "", "banana", "apple", "cherry", "banana"], dtype=object)
    categorize = numcodecs.Categorize(labels, dtype=object, astype="u1")
    a = zarrc.create_array(str(tmp_path / "c"), shape=(7,), chunks=(3,), dtype=str, zarr_format=2,
                           filters=[categorize.get_config()], compressors=None)
    a[...] = data
    a[5] = "apple"
    expected = data.copy()
    expected[5] = "apple"
    assert list(zarrc.open_array(str(tmp_path / "c"))[...]) == list(expected)
    with open(tmp_path / "c" / "0", "rb") as f:
        assert f.read() == bytes([1, 3, 0])       # the codes (0: not a label)
    # as zarr-python 2 wrote it: categorize is the object codec, no vlen filter beside it
    with open(tmp_path / "c" / ".zarray") as f:
        assert [f["id"] for f in json.load(f)["filters"]] == ["categorize"]


def test_categorize_array_written_as_zarr_python_2_did_reads(tmp_path):
    labels = ["x", "yy", "zzz"]
    data = np.array(["yy", "x", "zzz", "zzz", "x"], dtype=object)
    categorize = numcodecs.Categorize(labels, dtype=object, astype="u1")
    zlib = numcodecs.Zlib(level=1)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [5], "chunks": [3], "dtype": "|O", "fill_value": None, "order": "C",
        "compressor": zlib.get_config(), "filters": [categorize.get_config()]}))
    for i in range(2):
        (tmp_path / "a" / str(i)).write_bytes(zlib.encode(categorize.encode(
            np.resize(data[3 * i:3 * i + 3], 3))))
    assert list(zarrc.open_array(str(tmp_path / "a"), mode="r")[...]) == list(data)


def test_numcodecs_python_path_spreads_chunks_over_the_workers(monkeypatch):
    """Chunks of a numcodecs-only chain are decoded as one batch on the worker pool."""
    from zarrc.engine import python as engine_python
    calls = []
    real = engine_python.run_each
    monkeypatch.setattr(engine_python, "run_each", lambda items, work, n: (calls.append(len(items)),
                                                                           real(items, work, n)))
    data = data_for("bz2")
    a = zarrc.create_array(MemoryStore(), shape=SHAPE, chunks=CHUNKS, dtype=data.dtype,
                           compressors=[spec("bz2")])
    a[...] = data
    calls.clear()
    assert_bit_equal(a[...], data)
    assert calls == [a.nchunks]


def test_nested_sharding_with_numcodecs_inside(tmp_path):
    """numcodecs codecs in the innermost chunks of nested shards, both ways."""
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec
    nc = zarr_numcodecs()
    data = sample("int32", SHAPE, seed=9)
    inner = [nc.Delta(dtype="<i4"), BytesCodec(), nc.BZ2(level=1)]
    serializer = ShardingCodec(chunk_shape=CHUNKS, index_codecs=[BytesCodec(), Crc32cCodec()], codecs=[
        ShardingCodec(chunk_shape=(4, 5), codecs=inner, index_codecs=[BytesCodec(), Crc32cCodec()])])
    for lib, name in ((zarr, "z"), (zarrc, "c")):
        a = lib.create_array(str(tmp_path / name), shape=SHAPE, chunks=SHARDS, dtype="int32", fill_value=0,
                             compressors=None, serializer=serializer)
        a[...] = data
        a[:8, :5] = 0                             # (an all-fill inner shard)
    expected = data.copy()
    expected[:8, :5] = 0
    assert_bit_equal(zarrc.open_array(str(tmp_path / "z"))[...], expected)
    assert_bit_equal(zarr.open_array(str(tmp_path / "c"))[...], expected)


def test_numcodecs_filter_before_sharding(tmp_path):
    """A numcodecs filter that flattens (delta) before sharding_indexed: the chain run
    in Python hands its sharding step to the engine's one shard codec (ShardCodec)
    with the stored shape; zarrc writes (whole, then in part), zarrc and zarr-python
    read it back (zarr-python cannot write this layout: it indexes the 1-d output)."""
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    serializer = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                          {"name": "numcodecs.zlib", "configuration": {"level": 1}}]}}
    a = zarrc.create_array(str(tmp_path / "c"), shape=(16, 16), chunks=(8, 8), dtype="int32", fill_value=0,
                           filters=[{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}],
                           serializer=serializer, compressors=None)
    expected = np.arange(256, dtype="int32").reshape(16, 16)
    expected[8:, 8:] = 0                          # (an all-fill shard: not stored)
    a[...] = expected
    a[2:5, 3:9] = -7
    expected[2:5, 3:9] = -7
    assert sorted(os.listdir(tmp_path / "c" / "c" / "1")) == ["0"]
    assert_bit_equal(zarrc.open_array(str(tmp_path / "c"))[...], expected)
    assert_bit_equal(zarr.open_array(str(tmp_path / "c"), mode="r")[...], expected)
