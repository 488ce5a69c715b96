"""Items of variable-length string (and bytes) arrays that are not plain ``str``:
zarrc stores them as zarr-python does, in v2 and v3 alike (None, numbers and other
objects as ``str(item)``, bytes decoded from UTF-8: numpy's cast to a string type),
with the same chunk bytes; an item that cannot be stored is named by its index in the
array, whichever way it was written (``a[...] =``, ``oindex``, ``vindex``, sharded)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON, files

import zarrc
from zarrc.errors import CodecError

MIXED = ["x", None, 3, b"\xc3\xa9t\xc3\xa9", np.str_("q"), 1.5, True, np.float32(2.5), "", b"b"]



def _object_array(values, shape=None) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out if shape is None else out.reshape(shape)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("shards", [None, (10,)])
def test_items_stored_as_zarr_python_stores_them(tmp_path, fmt, shards):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    if fmt == 2 and shards:
        pytest.skip("Zarr v2 arrays are not sharded")
    value = _object_array(MIXED)
    arrays = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (zarr, zarrc):
            a = lib.create_array(str(tmp_path / lib.__name__), shape=(10,), chunks=(5,), shards=shards,
                                 dtype=str, zarr_format=fmt, compressors=None)
            a[:] = value
            arrays[lib.__name__] = a
        expected = list(arrays["zarr"][:])
    assert expected == ["x", "None", "3", "été", "q", "1.5", "True", "2.5", "", "b"]
    assert list(arrays["zarrc"][:]) == expected
    ours, theirs = files(tmp_path / "zarrc"), files(tmp_path / "zarr")
    meta = ("zarr.json", ".zarray", ".zattrs")
    assert {k: v for k, v in ours.items() if k not in meta} == \
        {k: v for k, v in theirs.items() if k not in meta}
    # the same items written one by one, and read by the other library
    for i, item in enumerate(MIXED):
        arrays["zarrc"][i] = item
    assert list(zarrc.open_array(str(tmp_path / "zarr"), mode="r")[:]) == expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert list(zarr.open_array(str(tmp_path / "zarrc"), mode="r")[:]) == expected


WRITES = {
    # how the bad item reaches array index (3, 7)
    "setitem": lambda a, bad: a.__setitem__((slice(2, 5), slice(5, 8)),
                                            _object_array(["o"] * 5 + [bad] + ["o"] * 3, (3, 3))),
    "oindex": lambda a, bad: a.oindex.__setitem__(([1, 3], [2, 7]), _object_array(["o", "o", "o", bad], (2, 2))),
    "vindex": lambda a, bad: a.vindex.__setitem__(([0, 3, 5], [1, 7, 0]), _object_array(["o", bad, "o"])),
    "whole": lambda a, bad: a.__setitem__(Ellipsis, _object_array(
        ["o"] * 31 + [bad] + ["o"] * 16, (6, 8))),
}
BAD = {
    "not-utf8": (b"\xff\xfe", r"vlen-utf8: is b'\\xff\\xfe' \(bytes\), not UTF-8"),
    "lone-surrogate": ("a\ud800", r"vlen-utf8: is 'a\\ud800', which UTF-8 cannot encode"),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("shards", [None, (4, 6)])
@pytest.mark.parametrize("how", list(WRITES))
@pytest.mark.parametrize("bad", list(BAD))
def test_a_bad_item_is_named_by_its_array_index(tmp_path, fmt, shards, how, bad):
    if fmt == 2 and shards:
        pytest.skip("Zarr v2 arrays are not sharded")
    a = zarrc.create_array(str(tmp_path / "root"), name="names", shape=(6, 8), chunks=(2, 3), shards=shards,
                           dtype=str, zarr_format=fmt, fill_value="")
    a[...] = _object_array([f"v{i}" for i in range(48)], (6, 8))
    before = files(tmp_path / "root")
    item, message = BAD[bad]
    with pytest.raises(CodecError, match=r"^item \(3, 7\) of /names: " + message):
        WRITES[how](a, item)
    assert files(tmp_path / "root") == before          # nothing written
    assert a[3, 7] == "v31"


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_refuses_the_same_items(tmp_path, fmt):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    for k, item in enumerate((b"\xff\xfe", "a\ud800")):
        a = zarr.create_array(str(tmp_path / f"zarr{k}"), shape=(4,), chunks=(2,), dtype=str,
                              zarr_format=fmt)
        with pytest.raises(UnicodeError):
            a[:] = _object_array(["o", "o", "o", item])
        b = zarrc.create_array(str(tmp_path / f"zarrc{k}"), shape=(4,), chunks=(2,), dtype=str,
                               zarr_format=fmt)
        with pytest.raises(CodecError, match=re.escape("item (3,) of /: vlen-utf8: is")):
            b[:] = _object_array(["o", "o", "o", item])


@pytest.mark.parametrize("fmt", [2, 3])
def test_bytes_arrays_refuse_items_that_are_not_bytes_in_both_formats(tmp_path, fmt):
    # zarrc's rule for variable-length bytes, the same in v2 and v3 (zarr-python stores None
    # and 0 as empty items there, silently): only bytes, bytearray and memoryview items
    a = zarrc.create_array(str(tmp_path / "b"), name="blobs", shape=(3, 4), chunks=(2, 2), dtype=bytes,
                           zarr_format=fmt)
    for bad, shown in ((None, "None (NoneType)"), (0, "0 (int)"), ("s", "'s' (str)")):
        with pytest.raises(CodecError, match=re.escape(f"item (2, 1) of /blobs: vlen-bytes: is {shown}, "
                                                       "expected bytes")):
            a.oindex[[0, 2], [1]] = _object_array([b"ok", bad], (2, 1))
    a[0, :] = _object_array([b"a", bytearray(b"b"), memoryview(b"c"), np.bytes_(b"d")])
    assert list(a[0, :]) == [b"a", b"b", b"c", b"d"]
