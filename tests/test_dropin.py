"""``import zarrc as zarr``: zarr-python's names for stores (``zarrc.storage``), codecs
(``zarrc.codecs``), errors (``zarrc.errors``), ``get_basic_selection(out=, fields=)``
and 0-d reads, each checked against zarr-python doing the same thing."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON
from numpy.lib.recfunctions import repack_fields

import zarrc
import zarrc.errors as zc_errors
from zarrc.errors import ReadOnlyError

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)


def norm(doc):
    """A to_dict() as JSON reads it (zarr-python's tuples are JSON lists)."""
    return json.loads(json.dumps(doc))


# ---------------------------------------------------------------- storage


def test_storage_names_and_keywords(tmp_path) -> None:
    for name in ("LocalStore", "MemoryStore", "ZipStore", "StorePath", "StoreLike"):
        assert name in dir(zarr.storage)
        assert getattr(zarrc.storage, name) is not None
    data = np.arange(12, dtype="i4").reshape(3, 4)
    for lib, sub in ((zarr, "zp"), (zarrc, "zc")):
        local = lib.storage.LocalStore(str(tmp_path / f"{sub}.zarr"), read_only=False)
        lib.create_array(local, shape=(3, 4), chunks=(2, 2), dtype="i4")[...] = data
        ro = lib.storage.LocalStore(str(tmp_path / f"{sub}.zarr"), read_only=True)
        assert ro.read_only and not local.read_only
        np.testing.assert_array_equal(lib.open_array(ro)[...], data)
        with pytest.raises(ValueError):
            lib.open_array(ro)[0, 0] = 5
        d: dict = {}
        mem = lib.storage.MemoryStore(store_dict=d)
        lib.create_array(mem, shape=(3, 4), chunks=(2, 2), dtype="i4")[...] = data
        assert "zarr.json" in d and "c/0/0" in d                # written into the given dict
        assert lib.storage.MemoryStore(read_only=True).read_only
        path = str(tmp_path / f"{sub}.zip")
        zs = lib.storage.ZipStore(path, mode="w", read_only=False)
        lib.create_array(zs, shape=(3, 4), chunks=(2, 2), dtype="i4")[...] = data
        zs.close()
        zr = lib.storage.ZipStore(path, mode="r")
        assert zr.read_only
        np.testing.assert_array_equal(lib.open_array(zr, mode="r")[...], data)
        zr.close()
        sp = lib.storage.StorePath(mem, "x")
        assert (sp.store, sp.path) == (mem, "x") and (sp / "y").path == "x/y"
    # each library reads the other's zip file
    for a, b in (("zp", zarrc), ("zc", zarr)):
        store = b.storage.ZipStore(str(tmp_path / f"{a}.zip"), mode="r")
        np.testing.assert_array_equal(b.open_array(store, mode="r")[...], data)
        store.close()


def test_remote_store_classes() -> None:
    """zarrc.storage.FsspecStore / ObjectStore take zarr-python's arguments (more in
    tests/stores/test_remote_*.py)."""
    fsspec = pytest.importorskip("fsspec")
    obstore_store = pytest.importorskip("obstore.store")
    data = np.arange(10, dtype="i4")
    stores = [zarrc.storage.FsspecStore.from_url("memory://zarrc-dropin/a"),
              zarrc.storage.FsspecStore(fsspec.filesystem("memory"), path="/zarrc-dropin/b"),
              zarrc.storage.ObjectStore(obstore_store.MemoryStore())]
    for store in stores:
        zarrc.create_array(store, shape=(10,), chunks=(4,), dtype="i4", overwrite=True)[...] = data
        np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[...], data)
    assert stores[1].path == "/zarrc-dropin/b" and stores[1].fs is not None
    ro = zarrc.storage.FsspecStore.from_url("memory://zarrc-dropin/a", read_only=True)
    with pytest.raises(zarrc.errors.ReadOnlyError):
        ro.set("k", b"1")
    with pytest.raises(TypeError, match="obstore"):
        zarrc.storage.ObjectStore(None)


def test_zarr_python_local_store_objects(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    zp = zarr.create_array(zarr.storage.LocalStore(root), name="a", shape=(6,), chunks=(4,), dtype="i4")
    zp[...] = np.arange(6)
    zc = zarrc.open_array(zarr.storage.LocalStore(root), path="a")
    np.testing.assert_array_equal(zc[...], np.arange(6))
    zc[:2] = [7, 8]
    np.testing.assert_array_equal(zarr.open_array(root, path="a")[...], [7, 8, 2, 3, 4, 5])
    ro = zarrc.open_array(zarr.storage.LocalStore(root, read_only=True), path="a")
    assert ro.store.read_only
    with pytest.raises(ReadOnlyError):
        ro[0] = 1
    np.testing.assert_array_equal(zarr.open_array(root, path="a")[:2], [7, 8])      # nothing written


def test_zarr_python_memory_store_shares_its_dict() -> None:
    mem = zarr.storage.MemoryStore()
    zc = zarrc.create_array(mem, name="a", shape=(5,), chunks=(2,), dtype="f8", fill_value=0)
    zc[...] = np.arange(5) * 1.5
    zp = zarr.open_array(mem, path="a")                      # zarr-python reads zarrc's writes
    np.testing.assert_array_equal(zp[...], np.arange(5) * 1.5)
    zp[0] = 9                                                 # and zarrc reads zarr-python's
    assert zarrc.open_array(mem, path="a")[0] == 9
    zarr.create_group(mem, path="g")
    assert "g" in zarrc.open_group(mem)


def test_zarr_python_zip_store_objects(tmp_path) -> None:
    path = str(tmp_path / "a.zip")
    zs = zarr.storage.ZipStore(path, mode="w")
    zarr.create_array(zs, shape=(4,), chunks=(2,), dtype="i2")[...] = [1, 2, 3, 4]
    zc = zarrc.open_array(zs)          # zarr-python's store is closed, the file reopened by zarrc
    zc[0] = 10
    zc.store.close()
    np.testing.assert_array_equal(zarr.open_array(zarr.storage.ZipStore(path, mode="r"), mode="r")[...],
                                  [10, 2, 3, 4])
    ro = zarrc.open_array(zarr.storage.ZipStore(path, mode="r"))
    assert ro.store.read_only
    np.testing.assert_array_equal(ro[...], [10, 2, 3, 4])


def test_other_zarr_python_stores_through_their_async_interface() -> None:
    """zarr-python stores zarrc has no native twin of (here a WrapperStore) are used
    through their own asynchronous interface (a RemoteStore over them)."""
    from zarrc.stores.remote import RemoteStore

    inner = zarr.storage.MemoryStore()
    wrapped = zarr.storage.WrapperStore(inner)
    group = zarrc.open_group(wrapped)
    assert isinstance(group.store, RemoteStore)
    group.create_array("a", shape=(5,), chunks=(2,), dtype="i2")[...] = np.arange(5)
    np.testing.assert_array_equal(zarr.open_array(inner, path="a")[...], np.arange(5))


# ---------------------------------------------------------------- codecs


CODEC_CASES = [
    ("BloscCodec", {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}),
    ("BloscCodec", {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 0}),
    ("ZstdCodec", {"level": 3, "checksum": True}),
    ("ZstdCodec", {}),
    ("GzipCodec", {"level": 4}),
    ("BytesCodec", {"endian": "big"}),
    ("BytesCodec", {}),
    ("TransposeCodec", {"order": (1, 0)}),
    ("Crc32cCodec", {}),
    ("VLenUTF8Codec", {}),
    ("VLenBytesCodec", {}),
    ("ShardingCodec", {"chunk_shape": (2, 2)}),
    ("ShardingCodec", {"chunk_shape": (2, 2), "index_location": "start"}),
]


@pytest.mark.parametrize("name, kwargs", CODEC_CASES)
def test_codec_names_and_to_dict(name, kwargs) -> None:
    zp, zc = getattr(zarr.codecs, name)(**kwargs), getattr(zarrc.codecs, name)(**kwargs)
    assert norm(zc.to_dict()) == norm(zp.to_dict())


@pytest.mark.parametrize("kwargs", [{}, {"clevel": 3}, {"shuffle": "noshuffle"}])
@pytest.mark.parametrize("dtype", ["f4", "u1", "i8"])
def test_blosc_codec_defaults_are_zarr_pythons(kwargs, dtype) -> None:
    # BloscCodec() is zstd in zarr-python (zarrc's Blosc() is lz4); the stored codecs agree
    docs = []
    for lib in (zarr, zarrc):
        a = lib.create_array({}, shape=(64,), dtype=dtype, compressors=lib.codecs.BloscCodec(**kwargs))
        docs.append(norm(a.metadata.to_dict()["codecs"]))
    assert docs[0] == docs[1]
    with pytest.raises(TypeError):
        zarrc.codecs.BloscCodec("lz4")          # keyword-only, as zarr-python's


def test_codec_enums_and_nested_codecs() -> None:
    zc = zarrc.codecs
    assert {"BloscShuffle", "BloscCname", "Endian", "ShardingCodecIndexLocation"} <= set(dir(zarr.codecs))
    blosc = zc.BloscCodec(cname=zc.BloscCname.lz4, shuffle=zc.BloscShuffle.bitshuffle, typesize=4)
    assert norm(blosc.to_dict()) == norm(zarr.codecs.BloscCodec(cname="lz4", shuffle="bitshuffle",
                                                                typesize=4, clevel=5).to_dict())
    assert zc.BytesCodec(endian=zc.Endian.big).to_dict() == zarr.codecs.BytesCodec(endian="big").to_dict()
    kwargs = {"chunk_shape": (2, 2), "index_location": "start"}
    inner = {"codecs": [zc.BytesCodec(), zc.ZstdCodec(level=1)]}
    zp_inner = {"codecs": [zarr.codecs.BytesCodec(), zarr.codecs.ZstdCodec(level=1)]}
    assert norm(zc.ShardingCodec(**kwargs, **inner).to_dict()) == \
        norm(zarr.codecs.ShardingCodec(**kwargs, **zp_inner).to_dict())
    loc = zc.ShardingCodec(chunk_shape=(2,), index_location=zc.ShardingCodecIndexLocation.start)
    assert loc.to_dict()["configuration"]["index_location"] == "start"


def test_numcodecs_wrappers() -> None:
    assert set(zarrc.codecs.numcodecs.__all__) <= set(dir(zarr.codecs.numcodecs))
    for name, kwargs in (("Zlib", {"level": 1}), ("Zstd", {"level": 2}), ("Shuffle", {"elementsize": 4}),
                         ("Delta", {"dtype": "<i4"})):
        zp = getattr(zarr.codecs.numcodecs, name)(**kwargs)
        zc = getattr(zarrc.codecs.numcodecs, name)(**kwargs)
        assert norm(zc.to_dict()) == norm(zp.to_dict())


def test_sharding_codec_as_serializer_makes_a_sharded_array() -> None:
    data = np.arange(64, dtype="i4").reshape(8, 8)
    stores = {}
    for lib in (zarr, zarrc):
        stores[lib] = {}
        a = lib.create_array(stores[lib], shape=(8, 8), chunks=(4, 4), dtype="i4", compressors=None,
                             serializer=lib.codecs.ShardingCodec(chunk_shape=(2, 2),
                                                                 codecs=[lib.codecs.BytesCodec()]))
        a[...] = data
        assert (a.shards, a.chunks) == ((4, 4), (2, 2))
    zc_doc = json.loads(stores[zarrc]["zarr.json"])
    zp_doc = json.loads(stores[zarr]["zarr.json"].to_bytes())
    assert zc_doc["codecs"] == zp_doc["codecs"] and zc_doc["chunk_grid"] == zp_doc["chunk_grid"]
    assert zc_doc["codecs"][0]["name"] == "sharding_indexed"
    from zarr.core.buffer import cpu
    as_zarr = zarr.storage.MemoryStore({k: cpu.Buffer.from_bytes(v) for k, v in stores[zarrc].items()})
    np.testing.assert_array_equal(zarr.open_array(as_zarr)[...], data)


# ---------------------------------------------------------------- errors


ERROR_NAMES = ["ArrayNotFoundError", "GroupNotFoundError", "NodeNotFoundError", "ContainsArrayError",
               "ContainsGroupError", "ContainsArrayAndGroupError", "MetadataValidationError",
               "NodeTypeValidationError", "BaseZarrError", "UnknownCodecError", "ZarrUserWarning",
               "ZarrDeprecationWarning", "ZarrRuntimeWarning"]
INDEX_ERRORS = ["BoundsCheckError", "NegativeStepError", "VindexInvalidSelectionError"]


def test_error_names_and_builtin_bases() -> None:
    import zarr.core.indexing as zp_indexing
    every = [n for n in dir(zarr.errors) if isinstance(getattr(zarr.errors, n), type)
             and issubclass(getattr(zarr.errors, n), BaseException)]
    assert set(ERROR_NAMES) <= set(every)
    for name in every:
        zp, zc = getattr(zarr.errors, name), getattr(zc_errors, name)
        for base in (ValueError, FileNotFoundError, IndexError, UserWarning, RuntimeWarning,
                     DeprecationWarning, FutureWarning):
            if issubclass(zp, base):
                assert issubclass(zc, base), (name, base)
    for name in INDEX_ERRORS:
        assert issubclass(getattr(zp_indexing, name), IndexError)
        assert issubclass(getattr(zc_errors, name), IndexError)


def raised_name(call) -> str:
    with pytest.raises(Exception) as info:
        call()
    return type(info.value).__name__


def test_same_mistakes_raise_the_same_classes(tmp_path) -> None:
    roots = {}
    for lib in (zarr, zarrc):
        root = roots[lib] = str(tmp_path / f"{lib.__name__}.zarr")
        g = lib.create_group(root)
        g.create_array("a", shape=(10,), chunks=(5,), dtype="i4")
        g.create_group("g")
    unknown_codec = {}
    for lib in (zarr, zarrc):             # an array whose metadata names a codec nobody has
        root = str(tmp_path / f"{lib.__name__}-codec.zarr")
        zarrc.create_array(root, shape=(3,), dtype="i4")
        with open(os.path.join(root, "zarr.json")) as f:
            doc = json.load(f)
        doc["codecs"].append({"name": "nope"})
        with open(os.path.join(root, "zarr.json"), "w") as f:
            json.dump(doc, f)
        unknown_codec[lib] = root
    cases = [
        lambda lib: lib.open_array(roots[lib], path="nope", mode="r"),
        lambda lib: lib.open_group(roots[lib], path="nope", mode="r"),
        lambda lib: lib.open(roots[lib], path="nope", mode="r"),
        lambda lib: lib.create_array(roots[lib], name="a", shape=(3,), dtype="i4"),
        lambda lib: lib.create_array(roots[lib], name="g", shape=(3,), dtype="i4"),
        lambda lib: lib.create_group(roots[lib], path="a"),
        lambda lib: lib.create_group(roots[lib], path="g"),
        lambda lib: lib.open_group(roots[lib]).create_array("a", shape=(3,), dtype="i4"),
        lambda lib: lib.open_group(roots[lib]).create_group("g"),
        lambda lib: lib.open_array(roots[lib], path="a")[10],
        lambda lib: lib.open_array(roots[lib], path="a").oindex[[10]],
        lambda lib: lib.open_array(roots[lib], path="a").vindex[[10]],
        lambda lib: lib.open_array(roots[lib], path="a")[::-1],
        lambda lib: lib.open_array(roots[lib], path="a").vindex[0:2],
        lambda lib: lib.open_array(roots[lib], path="a").blocks[5],
        lambda lib: lib.open_array(unknown_codec[lib]),
    ]
    for i, case in enumerate(cases):
        zp, zc = raised_name(lambda c=case: c(zarr)), raised_name(lambda c=case: c(zarrc))
        assert zp == zc, (i, zp, zc)
    # a node of the other kind: zarrc's NodeTypeError subclasses that are zarr-python's classes too
    for case, zc_name in ((lambda lib: lib.open_group(roots[lib], path="a", mode="r"), "ExpectedGroupError"),
                          (lambda lib: lib.open_array(roots[lib], path="g", mode="r"), "ExpectedArrayError")):
        zp_name = raised_name(lambda c=case: c(zarr))
        with pytest.raises(getattr(zc_errors, zp_name)) as info:
            case(zarrc)
        assert type(info.value).__name__ == zc_name and isinstance(info.value, zc_errors.NodeTypeError)


def test_specific_errors_keep_their_old_bases(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    zarrc.create_group(root).create_array("a", shape=(3,), dtype="i4")
    with pytest.raises(zc_errors.ArrayNotFoundError) as info:
        zarrc.open_array(root, path="x", mode="r")
    assert isinstance(info.value, (KeyError, FileNotFoundError, zc_errors.NodeNotFoundError))
    with pytest.raises(zc_errors.ContainsArrayError) as info2:
        zarrc.create_array(root, name="a", shape=(3,), dtype="i4")
    assert isinstance(info2.value, (FileExistsError, zc_errors.ContainsNodeError))
    with pytest.raises(zc_errors.BoundsCheckError) as info3:
        zarrc.open_array(root, path="a")[5]
    assert isinstance(info3.value, zc_errors.SelectionError)


# ---------------------------------------------------------------- selections


def test_get_basic_selection_out_and_0d() -> None:
    data = np.arange(20, dtype="i4").reshape(4, 5)
    arrays = {}
    for lib in (zarr, zarrc):
        arrays[lib] = lib.create_array({}, shape=(4, 5), chunks=(3, 2), dtype="i4")
        arrays[lib][...] = data
    from zarr.core.buffer import cpu
    for sel in ((slice(1, 4), 2), (slice(None), slice(1, None, 2)), (Ellipsis, 3), 2):
        expect = arrays[zarr].get_basic_selection(sel)
        shape = np.shape(expect)
        for out in (np.zeros(shape, "i4"), cpu.NDBuffer.from_numpy_array(np.zeros(shape, "i4"))):
            got = arrays[zarrc].get_basic_selection(sel, out=out)
            np.testing.assert_array_equal(got, expect)
            np.testing.assert_array_equal(out if isinstance(out, np.ndarray) else out.as_numpy_array(), expect)
    for sel in ((1, 2), (Ellipsis, 1, 2), (1, slice(2, 3))):        # ints everywhere: a numpy scalar
        zp, zc = arrays[zarr].get_basic_selection(sel), arrays[zarrc].get_basic_selection(sel)
        assert type(zc) is type(zp) and np.array_equal(zc, zp), (sel, type(zp), type(zc))
    for wrong in (np.zeros((2,), "i4"), np.zeros((3,), "f8")):
        with pytest.raises(ValueError):
            arrays[zarrc].get_basic_selection((slice(1, 4), 2), out=wrong)
    with pytest.raises(IndexError):
        arrays[zarrc].get_basic_selection([0, 1], out=np.zeros(2, "i4"))
    for lib in (zarr, zarrc):
        z = lib.create_array({}, shape=(), dtype="i4", fill_value=3)
        for got in (z[()], z[...], z.get_basic_selection(()), z.get_basic_selection(...)):
            assert type(got) is np.int32 and got == 3, (lib, type(got))


def test_get_basic_selection_fields() -> None:
    # (zarr-python 3.1 and 3.4 raise TypeError for fields= on a structured array: numpy's
    # field access is the reference)
    dtype = np.dtype([("x", "<i4"), ("y", "<f8")])
    data = np.array([(i, i * 1.5) for i in range(12)], dtype=dtype).reshape(4, 3)
    a = zarrc.create_array({}, shape=(4, 3), chunks=(2, 2), dtype=dtype)
    a[...] = data
    np.testing.assert_array_equal(a.get_basic_selection((slice(0, 3), 1), fields="x"), data[0:3, 1]["x"])
    got = a.get_basic_selection(slice(1, 3), fields=["y", "x"])
    np.testing.assert_array_equal(got["y"], data[1:3]["y"])
    np.testing.assert_array_equal(got["x"], data[1:3]["x"])
    out = np.zeros(3, "<f8")
    assert a.get_basic_selection((1, slice(None)), out=out, fields="y") is out
    np.testing.assert_array_equal(out, data[1]["y"])
    with pytest.raises(IndexError):
        a.get_basic_selection(0, fields="nope")


@pytest.mark.parametrize("fmt", [2, 3])
def test_basic_selection_fields_against_zarr_python(fmt) -> None:
    # the same structured array in each library: whole-array reads agree; a field of a
    # basic selection reads and writes as numpy's field access does (zarr-python 3.1 and
    # 3.4 raise TypeError reading one and write every field for set_basic_selection's
    # fields=: what zarrc does is checked against numpy)
    dtype = np.dtype([("x", "<i4"), ("y", "<f8"), ("z", "S3")])
    data = np.zeros((6, 5), dtype)
    data["x"] = np.arange(30).reshape(6, 5)
    data["y"] = data["x"] * 0.5
    data["z"] = b"ab"
    arrays = {lib: lib.create_array({}, shape=(6, 5), chunks=(4, 2), dtype=dtype, zarr_format=fmt)
              for lib in (zarr, zarrc)}
    for a in arrays.values():
        a[...] = data
    a = arrays[zarrc]
    np.testing.assert_array_equal(a[...], arrays[zarr][...])
    for selection, fields in [((slice(1, 5), 2), "x"), ((2, 3), "y"), ((2, 3), ["x", "y"]),
                              (Ellipsis, ["y", "x"]), ((slice(None), slice(1, 4)), ["z"]),
                              ((slice(0, 6, 2), Ellipsis), "y")]:
        got = a.get_basic_selection(selection, fields=fields)
        # (several fields: packed, in the order given, as zarr-python 2's fields=)
        want = repack_fields(np.asarray(data[selection])[fields])
        assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape, (selection, fields)
        np.testing.assert_array_equal(got, want)
    expected = data.copy()
    a.set_basic_selection((slice(0, 5), 1), 99, fields="x")
    expected[0:5, 1]["x"] = 99
    a.set_basic_selection((3, slice(None)), np.arange(5) * 0.25, fields=["y"])
    expected[3, :]["y"] = np.arange(5) * 0.25
    a.set_basic_selection(Ellipsis, expected)                       # (no fields: the whole items)
    a.set_basic_selection((0, 0), b"zz", fields="z")
    expected[0, 0]["z"] = b"zz"
    np.testing.assert_array_equal(a[...], expected)
    with pytest.raises(IndexError):
        a.set_basic_selection(0, 1, fields="nope")
    with pytest.raises(IndexError):
        a.set_basic_selection((slice(None), 0), 1, fields=["x", "y"])      # one field per write
    with pytest.raises(IndexError):
        a.set_basic_selection([0, 1], 1, fields="x")                      # not a basic selection
    np.testing.assert_array_equal(a[...], expected)                    # (nothing changed)


def test_store_paths_where_a_store_is_expected(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    for lib in (zarr, zarrc):
        sp = lib.storage.StorePath(lib.storage.LocalStore(root), "grp")
        lib.create_array(sp, name=lib.__name__, shape=(3,), dtype="i4")[...] = [1, 2, 3]
        lib.create_group(sp / "sub", path=f"inner_{lib.__name__}")
    for lib in (zarr, zarrc):
        for name in ("zarr", "zarrc"):
            sp = lib.storage.StorePath(lib.storage.LocalStore(root), "grp")
            np.testing.assert_array_equal(lib.open_array(sp, path=name)[...], [1, 2, 3])
            np.testing.assert_array_equal(lib.open_array(sp / name)[...], [1, 2, 3])
        for name in ("zarr", "zarrc"):
            assert isinstance(lib.open_group(root, path=f"grp/sub/inner_{name}"), lib.Group)
    zp_path = zarr.storage.StorePath(zarr.storage.LocalStore(root), "grp/zarr")    # zarr-python's object
    np.testing.assert_array_equal(zarrc.open_array(zp_path)[...], [1, 2, 3])


def test_store_keywords_that_contradict_are_refused(tmp_path) -> None:
    from zarrc.errors import ArgumentError
    with pytest.raises(ArgumentError, match="contradicts"):
        zarrc.storage.LocalStore(str(tmp_path / "x"), mode="r", read_only=False)
    with pytest.raises(ArgumentError, match="contradicts"):
        zarrc.storage.ZipStore(str(tmp_path / "x.zip"), mode="w", read_only=True)
    assert not (tmp_path / "x.zip").exists()                   # nothing made
    with pytest.raises(ArgumentError, match="not both"):
        zarrc.storage.MemoryStore({}, store_dict={})
    (tmp_path / "y").mkdir()
    assert not zarrc.storage.LocalStore(str(tmp_path / "y"), mode="r+").read_only     # zarrc's modes too
    assert zarrc.storage.LocalStore(str(tmp_path / "y"), mode="r", read_only=True).read_only
