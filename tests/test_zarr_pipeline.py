"""zarrc.ZarrcCodecPipeline: zarr-python arrays (v2 and v3, chunked and sharded,
blosc / zstd / gzip / crc32c / transpose), written and read with every selection kind,
give the same stored chunks and the same values with zarr-python's default pipeline
and with zarrc's; what zarrc cannot run goes to zarr-python's pipeline, or raises
with ``codec_pipeline.strict``."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON, files

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
zc = zarr.codecs

import zarrc

PIPE = "zarrc.ZarrcCodecPipeline"
SHAPE = (37, 50)

LAYOUTS = {
    "v3-blosc": {"chunks": (10, 16), "compressors": [zc.BloscCodec(cname="lz4", clevel=5)]},
    "v3-zstd-crc32c": {"chunks": (10, 16), "compressors": [zc.ZstdCodec(level=3), zc.Crc32cCodec()]},
    "v3-gzip": {"chunks": (10, 16), "compressors": [zc.GzipCodec(level=5)]},
    "v3-transpose": {"chunks": (10, 16), "filters": [zc.TransposeCodec(order=(1, 0))],
                         "compressors": [zc.ZstdCodec(level=1)]},
    "v3-sharded": {"chunks": (5, 8), "shards": (10, 16), "compressors": [zc.ZstdCodec(level=3)]},
    "v3-sharded-blosc": {"chunks": (5, 8), "shards": (20, 32),
                             "compressors": [zc.BloscCodec(cname="zstd", clevel=3)]},
    "v3-raw": {"chunks": (10, 16), "compressors": None},
    "v2-blosc": {"zarr_format": 2, "chunks": (10, 16)},
    "v2-zstd": {"zarr_format": 2, "chunks": (10, 16)},
}
# gzip streams need not be byte-identical between zlib builds: compared by value.  A
# shard updated in part is laid out by each writer its own way (zarrc copies the
# untouched inner chunks' bytes, zarr-python rewrites the shard): compared by value
# after partial writes, inner chunk by inner chunk after whole writes (the two place
# the inner chunks in a shard in different orders).
BY_VALUE = {"v3-gzip"}
SHARDED = {"v3-sharded", "v3-sharded-blosc"}


def _layout(name: str) -> dict:
    import numcodecs

    kw = dict(LAYOUTS[name])
    if name == "v2-zstd":
        kw["compressors"] = numcodecs.Zstd(level=3)
    if name == "v2-blosc":
        kw["compressors"] = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    return kw


def _pipeline(arr):
    return arr._async_array.codec_pipeline


def _make(root, name: str, dtype="int32", fill_value=0):
    return zarr.create_array(zarr.storage.LocalStore(root), name="a", shape=SHAPE, dtype=dtype,
                             fill_value=fill_value, **_layout(name))


def _both(tmp_path, name, ops, dtype="int32"):
    """Run ``ops(array)`` on an array made and used with the default pipeline and on
    one made and used with zarrc's; returns (default results, zarrc results, pipeline)."""
    a = _make(tmp_path / "default", name, dtype)
    ref = ops(a)
    with zarr.config.set({"codec_pipeline.path": PIPE}):
        b = _make(tmp_path / "zarrc", name, dtype)
        pipe = _pipeline(b)
        assert type(pipe).__name__ == "ZarrcCodecPipeline"
        got = ops(b)
    return ref, got, pipe


def _stored(root, name=""):
    """The array's stored files; a shard as its index's (empty?, inner chunk bytes) per
    inner chunk in order (zarrc and zarr-python place inner chunks in a different order)."""
    stored = files(root / "a")
    if name not in SHARDED:
        return stored
    kw = LAYOUTS[name]
    n = int(np.prod(np.array(kw["shards"]) // np.array(kw["chunks"])))
    out = {}
    for key, blob in stored.items():
        if key == "zarr.json":
            out[key] = blob
            continue
        index = np.frombuffer(blob[len(blob) - 16 * n - 4:-4], "<u8").reshape(n, 2)
        out[key] = [None if off == 2**64 - 1 else blob[off:off + size] for off, size in index]
    return out


def _writes(a):
    rng = np.random.default_rng(5)
    data = rng.integers(-1000, 1000, SHAPE).astype(a.dtype)
    a[:] = data
    a[3:17, 5:40] = 7                                  # partial chunks (basic)
    a[4, 9] = -3                                        # one element
    a.set_orthogonal_selection(([1, 30, 2], slice(0, 50, 7)), 11)
    a.set_coordinate_selection(([0, 36, 20, 5], [49, 0, 17, 17]), [1, 2, 3, 4])
    mask = np.zeros(SHAPE, bool)
    mask[::5, ::3] = True
    a.set_mask_selection(mask, 9)
    a.set_block_selection((1, slice(1, 2)), 5)
    a[20:30, 16:32] = 0                                 # a whole chunk back to the fill value
    return [a[:]]


def _reads(a):
    rng = np.random.default_rng(6)
    a[:] = rng.integers(-1000, 1000, SHAPE).astype(a.dtype)
    idx = rng.integers(0, SHAPE[0], 12)
    return [
        a[:], a[3:29, 7:45], a[::3, 5::4], a[6], a[:, 17], a[36, 49], a[...],
        a.get_orthogonal_selection((idx, slice(None, None, 3))),
        a.get_orthogonal_selection(([5, 1, 30, 1], [0, 49, 20])),
        a.get_orthogonal_selection((4, [3, 2, 40])),
        a.oindex[np.arange(SHAPE[0]) % 2 == 0, 3:9],
        a.get_coordinate_selection((idx, idx % SHAPE[1])),
        a.vindex[[[1, 2], [30, 36]], [[0, 49], [7, 8]]],
        a.get_mask_selection(np.arange(np.prod(SHAPE)).reshape(SHAPE) % 7 == 0),
        a.get_block_selection((slice(0, 2), 1)),
        a.blocks[1, 0],
    ]


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_writes_store_the_same_chunks(tmp_path, name):
    ref, got, pipe = _both(tmp_path, name, _writes)
    np.testing.assert_array_equal(got[0], ref[0])
    assert pipe.native_calls > 0 and pipe.fallback_calls == 0, pipe.unsupported
    a_files, b_files = _stored(tmp_path / "default"), _stored(tmp_path / "zarrc")
    assert sorted(a_files) == sorted(b_files)
    if name not in BY_VALUE | SHARDED:
        assert a_files == b_files
    # each side's chunks read back by the other pipeline
    with zarr.config.set({"codec_pipeline.path": PIPE}):
        np.testing.assert_array_equal(zarr.open_array(zarr.storage.LocalStore(tmp_path / "default"),
                                                      path="a")[:], ref[0])
    np.testing.assert_array_equal(zarr.open_array(zarr.storage.LocalStore(tmp_path / "zarrc"),
                                                  path="a")[:], ref[0])


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_whole_writes_store_the_same_chunks(tmp_path, name):
    def ops(a):
        data = np.arange(np.prod(SHAPE), dtype=a.dtype).reshape(SHAPE) % 1000
        data[:10] = 0                                   # all fill value: no chunk stored
        a[:] = data
        a[10:30] = data[10:30] + 1                      # whole chunks / shards rewritten
        return [a[:]]

    ref, got, pipe = _both(tmp_path, name, ops)
    np.testing.assert_array_equal(got[0], ref[0])
    assert pipe.native_calls == 3 and pipe.fallback_calls == 0, pipe.unsupported
    a_files, b_files = _stored(tmp_path / "default", name), _stored(tmp_path / "zarrc", name)
    assert sorted(a_files) == sorted(b_files)
    if name not in BY_VALUE:
        assert a_files == b_files


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_reads_give_the_same_values(tmp_path, name):
    ref, got, pipe = _both(tmp_path, name, _reads)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g, r)
        assert np.shape(g) == np.shape(r)
    assert pipe.fallback_calls == 0, pipe.unsupported


@pytest.mark.parametrize("dtype", ["float32", ">f8", "uint8", "int64", "bool", "complex64"])
def test_data_types(tmp_path, dtype):
    name = "v2-zstd" if dtype.startswith(">") else "v3-zstd-crc32c"

    def ops(a):
        rng = np.random.default_rng(1)
        a[:] = (rng.random(SHAPE) * 100).astype(a.dtype)
        a[2:5, 3] = 1
        return [a[:], a[1:9, ::7], a.vindex[[0, 36], [1, 2]]]

    ref, got, pipe = _both(tmp_path, name, ops, dtype)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g, r)
        assert g.dtype == r.dtype
    assert pipe.fallback_calls == 0, pipe.unsupported
    assert _stored(tmp_path / "default") == _stored(tmp_path / "zarrc")


def test_memory_store_and_missing_chunks(tmp_path):
    with zarr.config.set({"codec_pipeline.path": PIPE}):
        store = zarr.storage.MemoryStore()
        a = zarr.create_array(store, shape=(30, 30), chunks=(10, 10), dtype="float64",
                              fill_value=-1.5)
        a[12:15, 2:25] = 3.0
        got = a[:]
    want = np.full((30, 30), -1.5)
    want[12:15, 2:25] = 3.0
    np.testing.assert_array_equal(got, want)
    assert sorted(k for k in store._store_dict if k.startswith("c/")) == ["c/1/0", "c/1/1", "c/1/2"]
    assert _pipeline(a).native_calls == 2 and _pipeline(a).fallback_calls == 0
    # zarr-python's default pipeline reads what zarrc stored in its MemoryStore
    np.testing.assert_array_equal(zarr.open_array(store)[:], want)


def _identity_codec() -> type:
    """A bytes-to-bytes codec of the test's own, registered with zarr-python under a
    name zarrc does not know (a user's codec): arrays using it are not zarrc's."""
    from dataclasses import dataclass

    from zarr.abc.codec import BytesBytesCodec
    from zarr.registry import register_codec

    @dataclass(frozen=True)
    class Identity(BytesBytesCodec):
        is_fixed_size = True

        @classmethod
        def from_dict(cls, data):
            return cls()

        def to_dict(self):
            return {"name": "zarrc-test.identity"}

        async def _decode_single(self, chunk_bytes, chunk_spec):
            return chunk_bytes

        async def _encode_single(self, chunk_bytes, chunk_spec):
            return chunk_bytes

        def compute_encoded_size(self, input_byte_length, chunk_spec):
            return input_byte_length

    register_codec("zarrc-test.identity", Identity)
    return Identity


def test_fallback_and_strict():
    # metadata zarrc cannot read (a codec only zarr-python knows): zarr-python's pipeline runs it
    store = zarr.storage.MemoryStore()
    with zarr.config.set({"codec_pipeline.path": PIPE}):
        a = zarr.create_array(store, shape=(20,), chunks=(5,), dtype="int16", compressors=[_identity_codec()()])
        a[3:17] = np.arange(14, dtype="int16")
        pipe = _pipeline(a)
        assert "zarrc-test.identity" in pipe.unsupported
        assert pipe.fallback_calls == 1 and pipe.native_calls == 0
        np.testing.assert_array_equal(a[:], np.r_[[0] * 3, np.arange(14), [0] * 3])
        with zarr.config.set({"codec_pipeline.strict": True}), \
                pytest.raises(zarrc.ZarrcPipelineUnsupported, match="zarrc-test.identity"):
            zarr.open_array(store)
    # (zarr-python takes a NotImplementedError from the pipeline's constructor as "use
    # from_codecs", which would fall back in silence)
    assert not issubclass(zarrc.ZarrcPipelineUnsupported, NotImplementedError)


def test_object_stores_run_natively_and_wrappers_fall_back():
    """zarr-python's ObjectStore (here over obstore's in-memory store) runs natively,
    through a RemoteStore over it; a LoggingStore around a MemoryStore falls back (it
    counts zarr-python's own calls)."""
    obstore_store = pytest.importorskip("obstore.store", reason="obstore (zarrc[remote]) is not installed")
    store = zarr.storage.ObjectStore(obstore_store.MemoryStore())
    with zarr.config.set({"codec_pipeline.path": PIPE, "codec_pipeline.strict": True}):
        a = zarr.create_array(store, shape=(40,), chunks=(5,), dtype="int16")
        a[3:37] = np.arange(34, dtype="int16")
        pipe = _pipeline(a)
        assert pipe.unsupported is None and pipe.fallback_calls == 0 and pipe.native_calls == 1
        np.testing.assert_array_equal(a[:], np.r_[[0] * 3, np.arange(34), [0] * 3])
    with zarr.config.set({"codec_pipeline.path": PIPE}):
        logged = zarr.create_array(zarr.storage.LoggingStore(zarr.storage.MemoryStore()), shape=(4,),
                                   chunks=(2,), dtype="i4")
        logged[:] = [1, 2, 3, 4]
        assert "LoggingStore" in _pipeline(logged).unsupported
        np.testing.assert_array_equal(logged[:], [1, 2, 3, 4])


def test_registry_pickling_and_import():
    from zarr.registry import get_pipeline_class

    with zarr.config.set({"codec_pipeline.path": PIPE}):
        assert get_pipeline_class() is zarrc.ZarrcCodecPipeline
        a = zarr.create_array(zarr.storage.MemoryStore(), shape=(4,), chunks=(2,), dtype="i4")
        a[:] = [1, 2, 3, 4]
        pipe = pickle.loads(pickle.dumps(_pipeline(a)))
        assert type(pipe) is zarrc.ZarrcCodecPipeline and pipe.unsupported is None
    # importing zarrc imports no zarr; the entry point names the class by its path
    code = ("import sys, zarrc; assert 'zarr' not in sys.modules; "
            "from importlib.metadata import entry_points; "
            "e, = [e for e in entry_points(group='zarr.codec_pipeline') if e.name == 'zarrc']; "
            "assert e.value == 'zarrc:ZarrcCodecPipeline', e.value; "
            "import zarr; from zarr.registry import get_pipeline_class; "
            "zarr.config.set({'codec_pipeline.path': 'zarrc.ZarrcCodecPipeline'}); "
            "print(get_pipeline_class().__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ZarrcCodecPipeline"


def test_dask_through_zarr_python(tmp_path):
    da = pytest.importorskip("dask.array")
    import dask

    x = da.from_array(np.arange(60 * 40, dtype="float64").reshape(60, 40), chunks=(15, 10))
    with zarr.config.set({"codec_pipeline.path": PIPE}), dask.config.set(scheduler="threads"):
        da.to_zarr(x, str(tmp_path / "x.zarr"))
        z = zarr.open_array(str(tmp_path / "x.zarr"))
        assert type(_pipeline(z)) is zarrc.ZarrcCodecPipeline
        y = da.from_zarr(str(tmp_path / "x.zarr"))
        got = (y[5:55] * 2).compute()
        pipe = _pipeline(z)
        assert pipe.native_calls == 0          # (a new array object each time: its own pipeline)
        np.testing.assert_array_equal(z[:], x.compute())
        assert pipe.native_calls == 1 and pipe.fallback_calls == 0
    np.testing.assert_array_equal(got, x.compute()[5:55] * 2)
    # written through zarrc's pipeline, read back by zarr-python's own
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "x.zarr"))[:], x.compute())


def test_xarray_through_zarr_python(tmp_path, monkeypatch):
    """xarray's to_zarr (whole and region writes) and open_zarr on zarrc's pipeline, in
    strict mode (nothing falls back): the same stored chunks and the same dataset as
    with zarr-python's own pipeline."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask.array")
    import pandas as pd

    rng = np.random.default_rng(8)
    ds = xr.Dataset(
        {"v": (("time", "y", "x"), rng.standard_normal((12, 20, 30)).astype("float32"),
               {"units": "K"}),
         "n": (("time", "y"), rng.integers(0, 100, (12, 20)).astype("int16"))},
        coords={"time": pd.date_range("2026-01-01", periods=12, freq="6h"), "y": np.arange(20.0)})
    encoding = {"v": {"chunks": (4, 10, 16), "compressors": [zc.BloscCodec(cname="lz4", clevel=5)]},
                "n": {"chunks": (5, 8), "compressors": [zc.ZstdCodec(level=3)]}}
    patch = ds.isel(time=slice(4, 8)) * 2

    def write_and_read(path):
        ds.to_zarr(path, zarr_format=3, encoding=encoding, consolidated=False)
        patch.drop_vars(["y"]).to_zarr(path, region={"time": slice(4, 8)}, consolidated=False)
        return xr.open_zarr(path, consolidated=False).load()

    ref = write_and_read(tmp_path / "default.zarr")
    calls = []                              # (reading?) of every call zarrc's pipeline ran
    run = zarrc.ZarrcCodecPipeline._run_natively

    async def counted(self, batch, buffer, drop_axes, reading):
        calls.append(reading)
        return await run(self, batch, buffer, drop_axes, reading)

    monkeypatch.setattr(zarrc.ZarrcCodecPipeline, "_run_natively", counted)
    with zarr.config.set({"codec_pipeline.path": PIPE, "codec_pipeline.strict": True}):
        got = write_and_read(tmp_path / "zarrc.zarr")
    assert calls.count(False) >= 4 and calls.count(True) >= 2      # (the variables and coordinates)
    xr.testing.assert_identical(got, ref)
    assert files(tmp_path / "zarrc.zarr") == files(tmp_path / "default.zarr")


def test_read_missing_chunks_false_goes_to_zarr_python():
    # zarr-python >= 3.2's array.read_missing_chunks=False reports missing chunks, which
    # zarrc fills: such reads go to zarr-python's pipeline (3.1 has no such setting)
    errors = pytest.importorskip("zarr.errors")
    if not hasattr(errors, "ChunkNotFoundError"):
        pytest.skip("this zarr-python has no read_missing_chunks setting")
    with zarr.config.set({"codec_pipeline.path": PIPE}):
        a = zarr.create_array(zarr.storage.MemoryStore(), shape=(4,), chunks=(2,), dtype="i4",
                              config={"read_missing_chunks": False})
        a[:2] = [1, 2]
        with pytest.raises(errors.ChunkNotFoundError):
            a[:]
        np.testing.assert_array_equal(a[:2], [1, 2])
        assert _pipeline(a).fallback_calls == 2 and _pipeline(a).native_calls == 1


@pytest.mark.parametrize("fmt", [2, 3])
def test_string_arrays_run_natively(fmt):
    """Variable-length strings: zarr-python 3.2+ on numpy 2 hands the pipeline
    StringDType buffers (3.1: object ones); zarrc reads into them and writes from
    them natively, in strict mode too, storing the chunks zarr-python stores and
    giving its values for every selection kind."""
    words = np.array([f"w{i}" * (i % 4) for i in range(30)], dtype=object).reshape(5, 6)
    stores = {}
    for pipe in ("zarr.core.codec_pipeline.BatchedCodecPipeline", PIPE):
        store = stores[pipe] = zarr.storage.MemoryStore()
        with zarr.config.set({"codec_pipeline.path": pipe, "codec_pipeline.strict": pipe == PIPE}):
            a = zarr.create_array(store, shape=words.shape, chunks=(2, 4), dtype=str, zarr_format=fmt)
            a[...] = words
            a[1:4, 2] = np.array(["x", "", "yy"], dtype=a.dtype)
            a.vindex[[0, 4], [5, 0]] = np.array(["corner", "other"], dtype=a.dtype)
            if pipe == PIPE:
                assert _pipeline(a).native_calls == 3 and _pipeline(a).fallback_calls == 0
    chunks = {pipe: {k: v.to_bytes() for k, v in s._store_dict.items() if "/" in k or k[0].isdigit()}
              for pipe, s in stores.items()}
    assert chunks[PIPE] == chunks["zarr.core.codec_pipeline.BatchedCodecPipeline"]
    with zarr.config.set({"codec_pipeline.path": PIPE, "codec_pipeline.strict": True}):
        ours = zarr.open_array(stores[PIPE], mode="r")
        theirs = zarr.open_array(stores["zarr.core.codec_pipeline.BatchedCodecPipeline"], mode="r")
        for get in (lambda a: a[...], lambda a: a[1:5:2, 1:],
                    lambda a: a.oindex[[4, 0], [1, 3, 5]], lambda a: a.vindex[[0, 4, 2], [5, 0, 3]],
                    lambda a: a.get_mask_selection(np.eye(5, 6, dtype=bool))):
            got, want = get(ours), get(theirs)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.astype(object), want.astype(object))
        assert _pipeline(ours).fallback_calls == 0
