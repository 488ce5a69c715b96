"""zarrc.copy, copy_all, copy_store: zarr-python 2's semantics (zarr-python 3 has the
names but raises NotImplementedError, checked here); what they write is read back
by zarr-python."""

from __future__ import annotations

import importlib
import io
import json

import numpy as np
import pytest

import zarrc
from zarrc.errors import ArgumentError, CopyError

copy_module = importlib.import_module("zarrc.api.copy")


def hierarchy(store, fmt: int = 3):
    g = zarrc.create_group(store, zarr_format=fmt, attributes={"top": 1})
    a = g.create_array("a", shape=(7, 9), chunks=(3, 4), dtype="i4", fill_value=-1, attributes={"u": "m"})
    a[...] = np.arange(63).reshape(7, 9)
    sub = g.create_group("sub", attributes={"s": True})
    b = sub.create_array("b", shape=(5,), chunks=(2,), dtype="f8")
    b[...] = np.linspace(0, 1, 5)
    sub.create_group("deeper").create_array("c", shape=(2,), dtype="u1")[...] = [1, 2]
    return g


def test_zarr_python_3_has_no_working_copy() -> None:
    zarr = pytest.importorskip("zarr")
    for f in (zarr.copy, zarr.copy_all, zarr.copy_store):
        with pytest.raises(NotImplementedError):
            f({}, {})


def test_copy_store_whole_store(tmp_path) -> None:
    src: dict = {}
    hierarchy(src)
    dest = str(tmp_path / "d.zarr")
    lines: list[str] = []
    n_copied, n_skipped, n_bytes = zarrc.copy_store(src, dest, log=lines.append)
    assert (n_copied, n_skipped) == (len(src), 0)
    assert n_bytes == sum(len(v) for v in src.values())
    assert lines[-1].startswith("all done: ") and len(lines) == len(src) + 1
    store = zarrc.stores.LocalStore(dest, mode="r")
    assert {k: store.get(k) for k in store.list_prefix("")} == src
    zipped = str(tmp_path / "d.zip")
    assert zarrc.copy_store(dest, zipped)[0] == len(src)       # a zip file made here is closed after
    zarr = pytest.importorskip("zarr")
    np.testing.assert_array_equal(zarr.open_array(dest, path="a", mode="r")[...],
                                  np.arange(63).reshape(7, 9))
    zstore = zarr.storage.ZipStore(zipped, mode="r")
    np.testing.assert_array_equal(zarr.open_array(zstore, path="a", mode="r")[...],
                                  np.arange(63).reshape(7, 9))
    zstore.close()


def test_copy_store_paths_patterns_and_if_exists() -> None:
    src: dict = {}
    hierarchy(src)
    dest: dict = {}
    c, s, _ = zarrc.copy_store(src, dest, source_path="sub", dest_path="moved/here",
                               excludes=["deeper"], includes="deeper/zarr.json")
    moved = sorted(dest)
    assert moved == sorted("moved/here/" + k[4:] for k in src
                           if k.startswith("sub/") and ("deeper" not in k or k == "sub/deeper/zarr.json"))
    assert (c, s) == (len(moved), 0)
    before = dict(dest)
    dest["moved/here/zarr.json"] = b"{}"
    before["moved/here/zarr.json"] = b"{}"
    with pytest.raises(CopyError, match="exists in destination"):
        zarrc.copy_store(src, dest, source_path="sub", dest_path="moved/here")
    assert dest == before                                      # nothing copied
    c, s, _ = zarrc.copy_store(src, dest, source_path="sub", dest_path="moved/here", if_exists="skip")
    assert s == len(moved) and dest["moved/here/zarr.json"] == b"{}"
    c, s, _ = zarrc.copy_store(src, dest, source_path="sub", dest_path="moved/here", if_exists="replace",
                               dry_run=True)
    assert s == 0 and dest["moved/here/zarr.json"] == b"{}"    # dry run: nothing written
    zarrc.copy_store(src, dest, source_path="sub", dest_path="moved/here", if_exists="replace")
    assert dest["moved/here/zarr.json"] == src["sub/zarr.json"]
    with pytest.raises(ArgumentError):
        zarrc.copy_store(src, dest, if_exists="sometimes")
    with pytest.raises(ArgumentError):
        zarrc.copy_store(src, dest, excludes="(")


def test_copy_array_keeps_metadata_data_and_attrs(tmp_path) -> None:
    src = hierarchy({})
    dest = zarrc.create_group(str(tmp_path / "d.zarr"))
    out = io.StringIO()
    n = zarrc.copy(src["a"], dest, log=out)
    assert n == (1, 0, 63 * 4)
    assert out.getvalue().splitlines()[0] == "copy /a (7, 9) int32"
    a = dest["a"]
    assert a.metadata.to_json() == src["a"].metadata.to_json()
    np.testing.assert_array_equal(a[...], np.arange(63).reshape(7, 9))
    zarr = pytest.importorskip("zarr")
    zp = zarr.open_array(str(tmp_path / "d.zarr"), path="a", mode="r")
    np.testing.assert_array_equal(zp[...], np.arange(63).reshape(7, 9))
    assert dict(zp.attrs) == {"u": "m"}
    zarrc.copy(src["a"], dest, name="bare", without_attrs=True)
    assert dict(dest["bare"].attrs) == {}
    zarrc.copy(src["a"], dest, name="rechunked", chunks=(7, 1), compressors=None)
    assert dest["rechunked"].chunks == (7, 1) and dest["rechunked"].compressors == ()
    np.testing.assert_array_equal(dest["rechunked"][...], np.arange(63).reshape(7, 9))


def test_copy_array_in_bounded_blocks(monkeypatch) -> None:
    src = zarrc.create_array({}, shape=(50, 40), chunks=(7, 6), shards=(14, 12), dtype="u2")
    data = np.arange(2000, dtype="u2").reshape(50, 40)
    src[...] = data
    dest = zarrc.create_group({})
    seen = []
    original = copy_module.blocks

    def blocks(shape, step, itemsize):
        for sel in original(shape, step, itemsize):
            seen.append(sel)
            yield sel

    monkeypatch.setattr(copy_module, "BLOCK_BYTES", 14 * 12 * 2 * 3)      # three shards a block
    monkeypatch.setattr(copy_module, "blocks", blocks)
    zarrc.copy(src, dest, name="s")
    np.testing.assert_array_equal(dest["s"][...], data)
    assert dest["s"].shards == (14, 12) and dest["s"].chunks == (7, 6)
    assert len(seen) > 1
    for sel in seen:                           # whole shards, at most three of them
        assert all(s.start % c == 0 for s, c in zip(sel, (14, 12)))
        assert np.prod([s.stop - s.start for s in sel]) <= 14 * 12 * 3


def test_copy_group_recursive_shallow_and_if_exists() -> None:
    src = hierarchy({})
    dest_store: dict = {}
    dest = zarrc.create_group(dest_store)
    c, s, b = zarrc.copy(src["sub"], dest)
    assert (c, s) == (4, 0)                     # sub, b, deeper, c
    assert b == 5 * 8 + 2
    assert dict(dest["sub"].attrs) == {"s": True}
    np.testing.assert_array_equal(dest["sub/deeper/c"][...], [1, 2])
    before = dict(dest_store)
    with pytest.raises(CopyError, match="already exists"):
        zarrc.copy(src["sub"], dest)            # the arrays exist: found before anything is written
    assert dest_store == before
    assert zarrc.copy(src["sub"], dest, if_exists="skip")[:2] == (2, 2)    # groups merged, arrays skipped
    assert zarrc.copy(src["sub"], dest, if_exists="skip_initialized")[:2] == (2, 2)
    assert zarrc.copy(src["sub"], dest, if_exists="replace")[:2] == (4, 0)
    shallow = zarrc.create_group({})
    c, s, _ = zarrc.copy(src, shallow, name="root", shallow=True)
    assert (c, s) == (2, 0) and sorted(shallow["root"].keys()) == ["a"]
    assert dict(shallow["root"].attrs) == {"top": 1}
    dry = zarrc.create_group({})
    assert zarrc.copy(src, dry, name="root", dry_run=True)[:2] == (6, 0)
    assert list(dry.keys()) == []
    with pytest.raises(ArgumentError):
        zarrc.copy(src, dry)                    # a root group has no name


def test_copy_all_and_formats() -> None:
    src = hierarchy({}, fmt=2)
    dest_store: dict = {}
    dest = zarrc.create_group(dest_store)
    c, s, _ = zarrc.copy_all(src, dest)
    assert (c, s) == (5, 0) and dict(dest.attrs) == {"top": 1}
    assert dest["a"].metadata.zarr_format == 3                 # created in the destination's format
    np.testing.assert_array_equal(dest["a"][...], np.arange(63).reshape(7, 9))
    assert dest["a"].fill_value == -1
    np.testing.assert_array_equal(dest["sub/b"][...], np.linspace(0, 1, 5))
    doc = json.loads(dest_store["a/zarr.json"])
    assert doc["attributes"] == {"u": "m"}
    zarr = pytest.importorskip("zarr")
    from zarr.core.buffer import cpu
    as_zarr = zarr.storage.MemoryStore({k: cpu.Buffer.from_bytes(v) for k, v in dest_store.items()})
    np.testing.assert_array_equal(zarr.open_array(as_zarr, path="sub/b", mode="r")[...], np.linspace(0, 1, 5))
