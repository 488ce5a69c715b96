"""make_store: what zarrc.open accepts, turned into a store."""

from __future__ import annotations

import pytest

import zarrc
import zarrc.stores
from zarrc.errors import StoreError
from zarrc.stores import LocalStore, MemoryStore, Store, ZipStore, make_store


def test_paths(tmp_path):
    # (as_uri: file:///tmp/... on POSIX, file:///C:/... on Windows)
    for obj in (str(tmp_path / "a.zarr"), tmp_path / "a.zarr", (tmp_path / "a.zarr").as_uri()):
        store = make_store(obj)
        assert isinstance(store, LocalStore) and store.root == str(tmp_path / "a.zarr")
    assert (tmp_path / "with space").as_uri().endswith("/with%20space")
    assert make_store((tmp_path / "with space").as_uri()).root == str(tmp_path / "with space")


def test_file_uri_with_a_drive_letter(monkeypatch):
    """file:///C:/data names C:/data where paths start with a drive (Windows); this
    runs the Windows branch on any platform."""
    monkeypatch.setattr(zarrc.stores.local, "DRIVE_LETTERS", True)
    assert zarrc.stores.local.local_path_of("file:///C:/data/a%20b.zarr") == "C:/data/a b.zarr"
    assert zarrc.stores.local.local_path_of("file:///data/a.zarr") == "/data/a.zarr"
    monkeypatch.setattr(zarrc.stores.local, "DRIVE_LETTERS", False)
    assert zarrc.stores.local.local_path_of("file:///C:/data") == "/C:/data"


def test_zip_paths(tmp_path):
    store = make_store(tmp_path / "a.zip", mode="w")
    assert isinstance(store, ZipStore) and store.mode == "w"
    store.set("k", b"1")
    store.close()
    ro = make_store(str(tmp_path / "a.zip"), mode="r")
    assert ro.read_only and ro.get("k") == b"1"
    ro.close()
    with pytest.raises(StoreError, match="exists"):
        make_store(tmp_path / "a.zip", mode="w-")
    make_store(tmp_path / "a.zip", mode="r+").close()


def test_modes_pass_through(tmp_path):
    assert make_store(tmp_path, mode="r").read_only
    with pytest.raises(StoreError, match="does not exist"):
        make_store(tmp_path / "missing", mode="r")
    with pytest.raises(ValueError, match="mode"):
        make_store(tmp_path, mode="rw")


def test_dict():
    data = {"k": b"1"}
    store = make_store(data)
    assert isinstance(store, MemoryStore) and store.data is data
    assert make_store(data, mode="r").read_only
    with pytest.raises(StoreError, match="not empty"):
        make_store(data, mode="w-")
    make_store(data, mode="w")
    assert data == {}


def test_store_and_none(tmp_path):
    store = LocalStore(tmp_path)
    assert make_store(store) is store
    assert isinstance(make_store(None), MemoryStore)


@pytest.mark.parametrize("obj", [3, b"/tmp/x", ["a"], object()])
def test_other_types(obj):
    with pytest.raises(TypeError, match=type(obj).__qualname__):
        make_store(obj)


def test_other_url_schemes():
    """Remote URLs open a RemoteStore (no request is made until it is read:
    tests/stores/test_remote_*.py read and write them on local servers)."""
    from zarrc.stores.remote import RemoteStore

    pytest.importorskip("obstore")
    store = make_store("s3://bucket/data.zarr", storage_options={"anon": True})
    assert isinstance(store, RemoteStore) and store.url == "s3://bucket/data.zarr"
    assert make_store("https://example.invalid/data.zarr").read_only
    with pytest.raises(StoreError, match="host"):
        make_store("file://otherhost/data")
    with pytest.raises(StoreError, match="nosuchprotocol"):
        make_store("nosuchprotocol://x/y")
    with pytest.raises(TypeError, match="storage_options"):
        make_store("/tmp/local.zarr", storage_options={"anon": True})
    with pytest.raises(TypeError, match="storage_options"):
        make_store({}, storage_options={"anon": True})


def test_is_a_store():
    assert all(issubclass(c, Store) for c in (LocalStore, MemoryStore, ZipStore))


def test_a_missing_client_names_the_extra():
    """Without obstore and fsspec (their imports blocked in a fresh interpreter), a
    remote URL raises MissingDependencyError naming zarrc[remote]; so do Parquet
    references without pyarrow and fastparquet."""
    import subprocess
    import sys

    code = ("import sys\n"
            "for m in ('obstore', 'fsspec', 'pyarrow', 'fastparquet'): sys.modules[m] = None\n"
            "import zarrc\n"
            "from zarrc.errors import MissingDependencyError\n"
            "for url in ('s3://bucket/x', 'https://example.org/x', 'memory://x'):\n"
            "    try:\n"
            "        zarrc.open_array(url, mode='r')\n"
            "    except MissingDependencyError as e:\n"
            "        assert 'zarrc[remote]' in str(e) and isinstance(e, ImportError), e\n"
            "    else:\n"
            "        raise AssertionError(url)\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_zip_named_directory_is_a_directory_store(tmp_path):
    # zarr-python never guesses a zip file from a name: it writes "x.zarr.zip" as a
    # directory (xarray's test_zarr_closing_internal_zip_store), which reads back here
    path = tmp_path / "x.zarr.zip"
    assert isinstance(make_store(str(tmp_path / "new.zip"), mode="w"), ZipStore)    # (a zip file)
    path.mkdir()
    assert isinstance(make_store(str(path), mode="r"), LocalStore)
    zarrc.create_array(str(path), shape=(3,), dtype="i2", overwrite=True)[:] = [1, 2, 3]
    assert zarrc.open_array(str(path), mode="r")[:].tolist() == [1, 2, 3]
    assert (path / "zarr.json").is_file()
