"""Interop with zarr-python 3: the same keys and bytes in both directions (directory and zip)."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON

zarr = pytest.importorskip("zarr", minversion="3.1", reason=NO_ZARR_PYTHON)
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync

from zarrc.stores import LocalStore, ZipStore

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")  # zarr-python rewrites metadata

DATA = np.arange(20 * 30, dtype="<i4").reshape(20, 30)


async def _collect(aiter):
    return [x async for x in aiter]


def zarr_contents(zstore) -> dict[str, bytes]:
    """Every key of a zarr-python store and its bytes, read by zarr-python."""
    sync(zstore._ensure_open())
    keys = sync(_collect(zstore.list()))
    proto = default_buffer_prototype()
    return {k: sync(zstore.get(k, prototype=proto)).to_bytes() for k in keys}


def write_with_zarr(store, zarr_format: int) -> None:
    group = zarr.open_group(store=store, mode="w", zarr_format=zarr_format)
    group.attrs["title"] = "interop"
    arr = group.create_array("temp", shape=DATA.shape, chunks=(8, 16), dtype=DATA.dtype, fill_value=0)
    arr[:] = DATA
    group.create_array("empty", shape=(4,), chunks=(2,), dtype="f8")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_directory_written_by_zarr_python(tmp_path, zarr_format):
    path = tmp_path / "z.zarr"
    write_with_zarr(str(path), zarr_format)
    expected = zarr_contents(zarr.storage.LocalStore(str(path), read_only=True))
    store = LocalStore(path, mode="r")
    assert sorted(store.list()) == sorted(expected)
    assert store.get_many(sorted(expected)) == [expected[k] for k in sorted(expected)]
    chunk = "temp/c/1/1" if zarr_format == 3 else "temp/1.1"
    assert store.get_range(chunk, 4, 8) == expected[chunk][4:12]
    meta = "zarr.json" if zarr_format == 3 else ".zgroup"
    keys, dirs = store.list_dir("")
    assert meta in keys and dirs == ["empty", "temp"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_local_store(tmp_path, zarr_format):
    src = {}
    write_with_zarr(zarr.storage.MemoryStore(src), zarr_format)
    store = LocalStore(tmp_path / "ours.zarr", mode="w")
    store.set_many({k: v.to_bytes() for k, v in src.items()})
    arr = zarr.open_array(str(tmp_path / "ours.zarr"), path="temp", mode="r")
    np.testing.assert_array_equal(arr[:], DATA)
    assert zarr.open_group(str(tmp_path / "ours.zarr"), mode="r").attrs["title"] == "interop"


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zip_written_by_zarr_python(tmp_path, zarr_format, compression):
    path = tmp_path / "z.zip"
    zstore = zarr.storage.ZipStore(path, mode="w", compression=compression)
    write_with_zarr(zstore, zarr_format)
    zstore.close()
    expected = zarr_contents(zarr.storage.ZipStore(path, mode="r"))
    with ZipStore(path) as store:
        assert sorted(store.list()) == sorted(expected)
        assert store.get_many(sorted(expected)) == [expected[k] for k in sorted(expected)]
        for key, value in expected.items():
            assert store.get_range(key, 3, 5) == value[3:8]
            assert store.get_range(key, -4) == value[-4:]


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_zip_store(tmp_path, zarr_format, compression):
    src = {}
    write_with_zarr(zarr.storage.MemoryStore(src), zarr_format)
    path = tmp_path / "ours.zip"
    with ZipStore(path, mode="w", compression=compression) as store:
        store.set_many({k: v.to_bytes() for k, v in src.items()})
    zstore = zarr.storage.ZipStore(path, mode="r")
    arr = zarr.open_array(zstore, path="temp", mode="r")
    np.testing.assert_array_equal(arr[:], DATA)
    assert zarr_contents(zstore) == {k: v.to_bytes() for k, v in src.items()}


def test_zarr_python_reads_the_later_of_two_members(tmp_path):
    src = {}
    write_with_zarr(zarr.storage.MemoryStore(src), 3)
    arr = zarr.open_array(zarr.storage.MemoryStore(src), path="temp")
    arr[:8, :16] = 7
    newer = src["temp/c/0/0"].to_bytes()
    arr[:8, :16] = DATA[:8, :16]
    path = tmp_path / "ours.zip"
    with ZipStore(path, mode="w") as store:
        store.set_many({k: v.to_bytes() for k, v in src.items()})
        store.set("temp/c/0/0", newer)  # the chunk written again: its member replaced
    arr = zarr.open_array(zarr.storage.ZipStore(path, mode="r"), path="temp", mode="r")
    expected = DATA.copy()
    expected[:8, :16] = 7
    np.testing.assert_array_equal(arr[:], expected)
