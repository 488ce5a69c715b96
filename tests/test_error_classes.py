"""zarrc's errors are also instances of the builtin class zarr-python's error for
the same mistake derives from, so ``except`` clauses written for zarr-python keep
working: checked in the same test against zarr-python itself."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON

import zarrc
from zarrc.errors import (ContainsNodeError, NodeNotFoundError, NodeTypeError, ReadOnlyError, SelectionError,
                          StoreNotFoundError, ZarrcError)

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)


def raised(call) -> BaseException:
    with pytest.raises(Exception) as info:
        call()
    return info.value


def check(builtin: type, zp_call, zc_call, zc_class: type) -> None:
    """zarr-python raises a ``builtin``; zarrc raises a ``zc_class`` that is one too."""
    zp, zc = raised(zp_call), raised(zc_call)
    assert isinstance(zp, builtin), (type(zp), builtin)
    assert isinstance(zc, zc_class) and isinstance(zc, ZarrcError), type(zc)
    assert isinstance(zc, builtin), (type(zc).__mro__, builtin)


def test_missing_store_in_mode_r_is_file_not_found(tmp_path) -> None:
    missing = str(tmp_path / "nothing.zarr")
    for zp_open, zc_open in ((zarr.open_array, zarrc.open_array), (zarr.open_group, zarrc.open_group),
                             (zarr.open, zarrc.open)):
        check(FileNotFoundError, lambda f=zp_open: f(missing, mode="r"),
              lambda f=zc_open: f(missing, mode="r"), StoreNotFoundError)


def test_missing_node_in_mode_r_is_file_not_found(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    zarr.create_group(root)
    for zp_open, zc_open in ((zarr.open_array, zarrc.open_array), (zarr.open_group, zarrc.open_group),
                             (zarr.open, zarrc.open)):
        check(FileNotFoundError, lambda f=zp_open: f(root, path="x/y", mode="r"),
              lambda f=zc_open: f(root, path="x/y", mode="r"), NodeNotFoundError)
    assert isinstance(raised(lambda: zarrc.open_array(root, path="x", mode="r")), KeyError)   # (as before)


def test_node_of_the_other_kind_is_value_error(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    zarr.create_group(root).create_array("a", shape=(3,), dtype="i4")
    check(ValueError, lambda: zarr.open_array(root, mode="r"), lambda: zarrc.open_array(root, mode="r"),
          NodeTypeError)
    check(ValueError, lambda: zarr.open_group(root, path="a", mode="r"),
          lambda: zarrc.open_group(root, path="a", mode="r"), NodeTypeError)


def test_existing_node_is_value_error(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    zarr.create_group(root).create_array("a", shape=(3,), dtype="i4")
    check(ValueError, lambda: zarr.create_array(root, name="a", shape=(3,), dtype="i4"),
          lambda: zarrc.create_array(root, name="a", shape=(3,), dtype="i4"), ContainsNodeError)
    check(ValueError, lambda: zarr.create_group(root, path="a"),
          lambda: zarrc.create_group(root, path="a"), ContainsNodeError)
    assert isinstance(raised(lambda: zarrc.create_group(root, path="a")), FileExistsError)   # (as before)


def test_write_to_read_only_is_value_error(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    zarr.create_array(root, shape=(4,), chunks=(2,), dtype="i4", fill_value=0)
    zp, zc = zarr.open_array(root, mode="r"), zarrc.open_array(root, mode="r")
    check(ValueError, lambda: zp.__setitem__(0, 1), lambda: zc.__setitem__(0, 1), ReadOnlyError)
    check(ValueError, lambda: zp.vindex.__setitem__(([1],), 1), lambda: zc.vindex.__setitem__(([1],), 1),
          ReadOnlyError)
    np.testing.assert_array_equal(zc[...], np.zeros(4, "i4"))           # nothing written
    store = zarrc.stores.LocalStore(root, mode="r")
    with pytest.raises(ValueError):
        store.set("c/0", b"x")


def test_out_of_bounds_is_index_error(tmp_path) -> None:
    root = str(tmp_path / "s.zarr")
    zarr.create_array(root, shape=(4, 5), chunks=(2, 2), dtype="i4")
    zp, zc = zarr.open_array(root, mode="r"), zarrc.open_array(root, mode="r")
    for sel in ((4, 0), (slice(None), 5), (-5, 0)):
        check(IndexError, lambda sel=sel: zp[sel], lambda sel=sel: zc[sel], SelectionError)
    check(IndexError, lambda: zp.vindex[[4], [0]], lambda: zc.vindex[[4], [0]], SelectionError)
    check(IndexError, lambda: zp.oindex[[0], [7]], lambda: zc.oindex[[0], [7]], SelectionError)


def test_unknown_dtype_is_type_error(tmp_path) -> None:
    from zarrc.errors import MetadataError, UnknownDataTypeError

    for zarr_format in (2, 3):
        check(TypeError, lambda f=zarr_format: zarr.create_array({}, shape=(2,), dtype="notadtype", zarr_format=f),
              lambda f=zarr_format: zarrc.create_array({}, shape=(2,), dtype="notadtype", zarr_format=f),
              UnknownDataTypeError)
        err = raised(lambda f=zarr_format: zarrc.create_array({}, shape=(2,), dtype="notadtype", zarr_format=f))
        assert isinstance(err, MetadataError) and "notadtype" in str(err)
    group = zarrc.group({})
    assert isinstance(raised(lambda: group.create_array("a", shape=(2,), dtype="notadtype")), UnknownDataTypeError)
    # a dtype with no Zarr v3 data type (a subarray): zarr-python 3.1 raises a
    # TypeError, 3.4 a ValueError; zarrc's error is both
    subarray = np.dtype([("a", "<i4", (2,))])
    assert isinstance(raised(lambda: zarr.create_array({}, shape=(2,), dtype=subarray, zarr_format=3)),
                      (TypeError, ValueError))
    err = raised(lambda: zarrc.create_array({}, shape=(2,), dtype=subarray, zarr_format=3))
    assert isinstance(err, UnknownDataTypeError) and isinstance(err, TypeError) and isinstance(err, ValueError)
