"""Errors: corrupt chunks, checksum mismatches, malformed metadata and bad
selections raise specific zarrc errors that name the chunk key or node path, and
change nothing in the store; a failed write stores nothing (local files stay
byte-identical, no temporary files are left)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zarrc
from zarrc.errors import (ChecksumError, CodecError, MetadataError, SelectionError, StoreError,
                          ZarrcError)

from helpers import files, snapshot

CHAINS = {
    "bytes": dict(compressors=None),
    "blosc": dict(compressors=[{"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 8, "blocksize": 0}}]),
    "zstd": dict(compressors=[{"name": "zstd", "configuration": {"level": 1, "checksum": True}}]),
    "gzip": dict(compressors=[{"name": "gzip", "configuration": {"level": 1}}]),
    "zstd+crc32c": dict(compressors=[{"name": "zstd", "configuration": {"level": 1, "checksum": False}},
                                     {"name": "crc32c"}]),
}


def make(store, chain, path="grp/temperature"):
    arr = zarrc.create_array(store, path=path, shape=(9, 9), chunks=(3, 3), dtype="float64",
                             fill_value=-1.0, **CHAINS[chain])
    arr[...] = np.arange(81.0).reshape(9, 9)
    return arr


def corrupt(raw: bytes, how: str) -> bytes:
    rng = np.random.default_rng(7)
    if how == "truncated":
        return raw[: len(raw) // 2]
    if how == "random":
        return rng.integers(0, 256, len(raw) + 5, dtype=np.uint8).tobytes()
    if how == "empty":
        return b""
    flipped = bytearray(raw)                               # "flipped": one bit in the middle
    flipped[len(raw) // 2] ^= 0x10
    return bytes(flipped)


CASES = [(chain, how) for chain in CHAINS for how in ("truncated", "random", "empty")] + [
    ("zstd+crc32c", "flipped")]


@pytest.mark.parametrize("chain, how", CASES)
def test_corrupt_chunk_raises_and_changes_nothing(rw_store_maker, chain, how):
    store = rw_store_maker.new()
    arr = make(store, chain)
    key = "grp/temperature/c/1/2"
    store.set(key, corrupt(store.get(key), how))
    before = snapshot(store)
    with pytest.raises(CodecError) as info:
        arr[...]
    assert "chunk grp/temperature/c/1/2 of /grp/temperature" in str(info.value)
    if how == "flipped":
        assert isinstance(info.value, ChecksumError) and "checksum" in str(info.value)
    with pytest.raises(CodecError, match="c/1/2"):
        arr[4, 7]                                         # a selection inside the chunk
    np.testing.assert_array_equal(arr[:3, :], np.arange(27.0).reshape(3, 9))   # others still read
    with pytest.raises(CodecError, match="c/1/2"):
        arr[2:5, 2:8] = 0.0                              # partial write needs the corrupt chunk
    assert snapshot(store) == before


def test_failed_local_write_leaves_every_chunk_file_byte_identical(tmp_path):
    """A write spanning a corrupt chunk, chunks it covers wholly and chunks it covers
    partly fails before any file is replaced: the engine encodes every chunk first."""
    root = tmp_path / "s.zarr"
    arr = make(str(root), "zstd+crc32c", path="a")
    path = root / "a" / "c" / "2" / "2"
    path.write_bytes(corrupt(path.read_bytes(), "flipped"))
    before = files(root)
    stats = {p: os.stat(root / p).st_ino for p in before}
    with pytest.raises(ChecksumError, match="chunk a/c/2/2 of /a"):
        arr[1:8, 1:8] = 5.0                               # chunk (1, 1) wholly, the rest partly
    assert files(root) == before                          # same names, same bytes, no temp files
    assert {p: os.stat(root / p).st_ino for p in before} == stats   # not even rewritten
    np.testing.assert_array_equal(arr[:6, :6], np.arange(81.0).reshape(9, 9)[:6, :6])
    arr[6:, 6:] = 1.0                                     # a whole-chunk write needs no old chunk
    np.testing.assert_array_equal(arr[6:, 6:], np.ones((3, 3)))
    assert not [p for p in files(root) if os.path.basename(p).startswith(".")]


def test_chunk_that_is_a_directory_is_a_store_error(tmp_path):
    root = tmp_path / "s.zarr"
    arr = make(str(root), "bytes", path="a")
    chunk = root / "a" / "c" / "0" / "0"
    chunk.unlink()
    chunk.mkdir()
    with pytest.raises(StoreError, match="chunk a/c/0/0 of /a"):
        arr[...]
    before = files(root)
    for sel in ((slice(0, 3), slice(0, 3)), (0, 0)):      # whole chunk (rename), partial (read)
        with pytest.raises(StoreError, match="chunk a/c/0/0 of /a"):
            arr[sel] = 1.0
    assert files(root) == before and chunk.is_dir()        # no temporary file left behind


# ------------------------------------------------------------------ metadata

def _bad_documents(good: dict) -> dict[str, bytes]:
    def variant(**changes):
        doc = dict(good)
        for k, v in changes.items():
            if v is None:
                doc.pop(k)
            else:
                doc[k] = v
        return json.dumps(doc).encode()

    return {
        "not json": b"{\"zarr_format\": 3,",
        "not an object": b"[1, 2]",
        "binary": b"\x00\xff\xfe",
        "missing shape": variant(shape=None),
        "zarr_format 2": variant(zarr_format=2),
        "bad node_type": variant(node_type="table"),
        "unknown data type": variant(data_type="float13"),
        "bad fill value": variant(fill_value="hello"),
        "unknown codec": variant(codecs=good["codecs"] + [{"name": "lzma-9000"}]),
        "no array->bytes codec": variant(codecs=[{"name": "zstd", "configuration": {"level": 1}}]),
        "negative shape": variant(shape=[-1, 9]),
        "chunk rank": variant(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [3]}}),
        "unknown grid": variant(chunk_grid={"name": "rectilinear", "configuration": {}}),
        "unknown key encoding": variant(chunk_key_encoding={"name": "v9"}),
        "must_understand extension": variant(foo={"must_understand": True}),
    }


def test_malformed_metadata_raises_metadata_error(rw_store_maker):
    store = rw_store_maker.new()
    arr = make(store, "bytes")
    good = json.loads(store.get("grp/temperature/zarr.json"))
    for name, doc in _bad_documents(good).items():
        store.set("grp/temperature/zarr.json", doc)
        before = snapshot(store)
        for opener in (lambda: zarrc.open_array(store, path="grp/temperature"),
                       lambda: zarrc.open(store, path="grp/temperature", mode="r"),
                       lambda: zarrc.open_group(store, path="grp")["temperature"],
                       lambda: zarrc.open_array(store, path="grp/temperature", mode="a",
                                                shape=(2,), dtype="i1")):
            with pytest.raises(MetadataError) as info:
                opener()
            assert "/grp/temperature" in str(info.value), (name, str(info.value))
        assert snapshot(store) == before, name
    del arr


def test_malformed_group_metadata():
    store = {}
    zarrc.group(store, path="g")
    store["g/zarr.json"] = b'{"zarr_format": 3, "node_type": "group", "attributes": [1]}'
    with pytest.raises(MetadataError, match="/g"):
        zarrc.open_group(store, path="g")
    root = zarrc.open_group(store)
    with pytest.warns(UserWarning, match="member 'g' is skipped: zarr.json of /g"):   # (issue 23, item 5)
        assert root.members() == ()
    assert list(root) == ["g"]
    with pytest.raises(MetadataError, match="/g"):
        root["g"]


def test_create_array_with_bad_arguments_writes_nothing():
    store = {}
    for kwargs in [dict(compressors=[{"name": "nope"}]), dict(dtype="float13"),
                   dict(filters=[{"name": "transpose", "configuration": {"order": [0, 0]}}]),
                   dict(chunks=(0, 2)), dict(fill_value="x"), dict(order="K"), dict(zarr_format=4),
                   dict(serializer={"name": "bytes", "configuration": {"endian": "middle"}})]:
        args = dict(shape=(4, 4), dtype="int32", chunks=(2, 2)) | kwargs
        with pytest.raises((MetadataError, ValueError)):
            zarrc.create_array(store, path="x", **args)
        assert store == {}, kwargs


# ------------------------------------------------------------------ selections

BAD_SELECTIONS = [(9, 0), (0, -10), (0, 0, 0), (Ellipsis, Ellipsis), (slice(None, None, 0),),
                  (slice(None, None, -1),), (slice(0.5, 3),), ("x",), (1.0,), (None,), (Ellipsis, [1, 2]),
                  ([1, 99],), (np.array([1, 2]), [0, 1], 0), (True,), ({"a": 1},)]
# (``[1, 2]`` alone is an orthogonal selection, as in zarr-python: tests/test_orthogonal.py)


@pytest.mark.parametrize("sel", BAD_SELECTIONS, ids=repr)
def test_bad_selection_raises_and_changes_nothing(store_maker, sel):
    store = store_maker.new()
    arr = make(store, "blosc")
    before = snapshot(store)
    with pytest.raises(SelectionError) as info:
        arr[sel]
    assert isinstance(info.value, IndexError) and isinstance(info.value, ZarrcError)
    with pytest.raises(IndexError):
        arr[sel] = 1.0
    assert snapshot(store) == before


# ------------------------------------------------------------------ bad arguments

def _bad_arguments(tmp_path):
    """(name, call) of calls with bad arguments, each of which must raise a ZarrcError
    that is also a ValueError and write nothing."""
    from zarrc.stores import LocalStore, MemoryStore, ZipStore

    small = zarrc.create_array({}, shape=(4,), dtype="i4", chunks=(2,))
    return [
        ("33 dimensions", lambda: zarrc.create_array(tmp_path / "d33.zarr", shape=(1,) * 33, dtype="i4",
                                                     chunks=(1,) * 33)),
        ("9 bytes->bytes codecs", lambda: zarrc.create_array(tmp_path / "c9.zarr", shape=(4,), dtype="i4",
                                                             chunks=(2,), compressors=[zarrc.codecs.Crc32c()] * 9)),
        ("value of the wrong shape", lambda: small.__setitem__(slice(0, 2), np.zeros(3))),
        ("unknown open mode", lambda: zarrc.open_array(tmp_path / "x.zarr", mode="x")),
        ("unknown LocalStore mode", lambda: LocalStore(tmp_path / "l.zarr", mode="x")),
        ("unknown ZipStore mode", lambda: ZipStore(tmp_path / "z.zip", mode="q")),
        ("negative range length", lambda: MemoryStore({"k": b"abc"}).get_range("k", 0, -1)),
        ("unknown setting", lambda: zarrc.config.set(colour=3)),
        ("setting out of range", lambda: zarrc.config.set(threads=0)),
    ]


@pytest.mark.parametrize("case", range(9))
def test_bad_arguments_raise_zarrc_value_errors(case, tmp_path) -> None:
    name, call = _bad_arguments(tmp_path)[case]
    with pytest.raises(ZarrcError) as info:
        call()
    assert isinstance(info.value, ValueError), (name, type(info.value))
    assert list(tmp_path.iterdir()) == [], f"{name}: wrote {list(tmp_path.iterdir())}"


def test_kernel_errors_are_translated_in_one_place() -> None:
    """errors.from_kernel: a kernel's checksum mismatch is a ChecksumError, a failed
    I/O call a StoreError, anything else a CodecError, each carrying the kernel's
    code, expected and actual values; a MemoryError stays itself."""
    from zarrc._kernels import batch
    from zarrc._kernels import errors as kernel_codecs
    from zarrc.errors import from_kernel

    cases = [(kernel_codecs.CHECKSUM, ChecksumError), (kernel_codecs.IO, StoreError),
             (kernel_codecs.CORRUPT, CodecError)]
    for code, cls in cases:
        err = from_kernel(batch.TaskError("bad", code, 7, 9), "chunk c/0 of /a: ")
        assert type(err) is cls and str(err) == "chunk c/0 of /a: bad"
        assert (err.code, err.expected, err.actual) == (code, 7, 9)
    err = from_kernel(kernel_codecs.KernelError("zstd: corrupt", "zstd", kernel_codecs.CORRUPT, 1, 2))
    assert type(err) is CodecError and str(err) == "zstd: corrupt" and err.actual == 2
    oom = MemoryError("out of memory")
    assert from_kernel(oom) is oom


def _wrong_types():
    """(name, call) pairs: each passes an argument of the wrong type."""
    from zarrc.core.chunk_key import ChunkKeyEncoding
    from zarrc.stores import MemoryStore, make_store

    store = MemoryStore()
    zero_d = zarrc.create_array(MemoryStore(), shape=(), dtype="i4")
    return [
        ("make_store(3)", lambda: make_store(3)),
        ("store key not a str", lambda: store.get(5)),
        ("store prefix not a str", lambda: list(store.list_prefix(5))),
        ("store value not bytes", lambda: store.set("k", 1.5)),
        ("len of a 0-d array", lambda: len(zero_d)),
        ("attributes that are not JSON", lambda: zarrc.create_array(
            MemoryStore(), shape=(1,), dtype="i4", attributes={"a": object()})),
        ("chunk key encoding", lambda: ChunkKeyEncoding("bogus")),
    ]


@pytest.mark.parametrize("index", range(7))
def test_wrong_argument_types_are_zarrc_errors(index) -> None:
    """A wrong type or value given to the API, a store or a setting is a ZarrcError
    that is also the builtin class a user would catch (TypeError or ValueError)."""
    name, call = _wrong_types()[index]
    with pytest.raises(ZarrcError) as info:
        call()
    assert isinstance(info.value, (TypeError, ValueError)), (name, type(info.value))


def test_unknown_setting_is_a_zarrc_attribute_error() -> None:
    """zarrc.config.nope: a ZarrcError and an AttributeError (so hasattr works)."""
    with pytest.raises(ZarrcError) as info:
        zarrc.config.nope  # noqa: B018
    assert isinstance(info.value, AttributeError)
    assert not hasattr(zarrc.config, "nope")


def test_no_module_raises_a_bare_builtin_error() -> None:
    """errors.py's promise, kept by the source: no ``raise TypeError(...)``,
    ``raise ValueError(...)`` etc. anywhere in zarrc/ (a zarrc class deriving from
    the builtin is raised instead).  Not errors of input: NotImplementedError
    (abstract methods), AssertionError (an internal invariant), SystemExit (the
    demo's command line), AttributeError in a module's ``__getattr__`` (the module
    attribute protocol: a lazily imported name, anything else missing)."""
    import ast
    import builtins
    from pathlib import Path

    root = Path(zarrc.__file__).parent
    builtin_errors = {n for n, v in vars(builtins).items()
                      if isinstance(v, type) and issubclass(v, BaseException)}
    builtin_errors -= {"NotImplementedError", "AssertionError", "SystemExit"}
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        module_getattr = {id(n) for f in tree.body
                          if isinstance(f, ast.FunctionDef) and f.name == "__getattr__"
                          for n in ast.walk(f)}
        for node in ast.walk(tree):
            if id(node) in module_getattr and isinstance(node, ast.Raise):
                continue
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in builtin_errors:
                    found.append(f"{path.relative_to(root)}:{node.lineno}: raise {exc.id}")
    assert not found, "\n".join(found)
