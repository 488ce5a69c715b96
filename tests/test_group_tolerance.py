"""A group lists all its members and opens the readable ones when one member has an
unknown data type or codec or a document that does not parse (issue 23, item 5):
the listing skips that member with a warning naming it and why, and opening it
raises the error naming what is unknown.  Hierarchies written by zarr-python, with
hand-written bad members; local, memory and zip stores; v2 and v3; with
consolidated metadata too."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON
from interop.support import assert_bit_equal

import zarrc
from zarrc.errors import CodecError, MetadataError
from zarrc.stores import LocalStore, MemoryStore, ZipStore

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)

# member -> (what its error names)
BAD_V3 = {"bad_dtype": "made_up_type", "bad_codec": "made_up_codec", "sub/broken": "not valid JSON"}
BAD_V2 = {"bad_dtype": "made_up_type", "bad_codec": "made_up_codec", "sub/broken": "not valid JSON"}


def write_zarr_python(root: str, fmt: int) -> None:
    g = zarr.open_group(root, mode="w", zarr_format=fmt)
    good = g.create_array("good", shape=(6,), chunks=(4,), dtype="i4")
    good[...] = np.arange(6, dtype="i4")
    sub = g.create_group("sub")
    sub.create_array("y", shape=(3,), chunks=(2,), dtype="f8")[...] = [1.5, 2.5, 3.5]


def bad_documents(root: str, fmt: int) -> dict[str, bytes]:
    """The bad members' documents (key -> bytes), made from the good array's."""
    if fmt == 3:
        base = json.loads(Path(root, "good", "zarr.json").read_text())
        return {
            "bad_dtype/zarr.json": json.dumps({**base, "data_type": "made_up_type"}).encode(),
            "bad_codec/zarr.json": json.dumps({**base, "codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "made_up_codec"}]}).encode(),
            "sub/broken/zarr.json": b'{"zarr_format": 3, "node_type": "array", ',
        }
    base = json.loads(Path(root, "good", ".zarray").read_text())
    return {
        "bad_dtype/.zarray": json.dumps({**base, "dtype": "made_up_type"}).encode(),
        "bad_codec/.zarray": json.dumps({**base, "compressor": {"id": "made_up_codec"}}).encode(),
        "sub/broken/.zarray": b'{"zarr_format": 2, ',
    }


def make_store(kind: str, root: str, docs: dict[str, bytes]):
    for key, raw in docs.items():
        path = os.path.join(root, *key.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(raw)
    if kind == "local":
        return LocalStore(root, mode="r")
    files = {}
    for base, _, names in os.walk(root):
        for name in names:
            full = os.path.join(base, name)
            files[os.path.relpath(full, root).replace(os.sep, "/")] = Path(full).read_bytes()
    store = ZipStore(root + ".zip", mode="w") if kind == "zip" else MemoryStore()
    store.set_many(files)
    return store


def warned_names(record) -> str:
    return "\n".join(str(w.message) for w in record)


@pytest.mark.parametrize("kind", ["local", "memory", "zip"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_listing_skips_unreadable_members_and_opening_one_names_the_error(tmp_path, kind, fmt):
    root = str(tmp_path / "h.zarr")
    write_zarr_python(root, fmt)
    store = make_store(kind, root, bad_documents(root, fmt))
    g = zarrc.open_group(store, mode="r")
    assert sorted(g) == ["bad_codec", "bad_dtype", "good", "sub"] and len(g) == 4
    assert "bad_dtype" in g and sorted(g["sub"]) == ["broken", "y"]
    with pytest.warns(UserWarning) as record:
        members = dict(g.members(max_depth=None))
    assert sorted(members) == ["good", "sub", "sub/y"]
    text = warned_names(record)
    for name, reason in BAD_V3.items():
        assert f"member {name.rsplit('/', 1)[-1]!r}" in text and reason in text, (name, text)
    with pytest.warns(UserWarning) as record:
        assert [name for name, _ in g.arrays()] == ["good"]
    assert "bad_dtype" in warned_names(record)
    with pytest.warns(UserWarning) as record:
        assert g.nmembers() == 2
    assert "bad_codec" in warned_names(record)
    # the readable ones read as zarr-python reads them
    assert_bit_equal(g["good"][...], zarr.open_array(root, path="good", mode="r")[...])
    assert_bit_equal(members["sub/y"][...], zarr.open_array(root, path="sub/y", mode="r")[...])
    # opening a bad one raises, naming what is unknown
    with pytest.raises(MetadataError, match="made_up_type"):
        g["bad_dtype"]
    with pytest.raises((MetadataError, CodecError), match="made_up_codec"):
        g["bad_codec"]
    with pytest.raises(MetadataError, match="not valid JSON"):
        g["sub/broken"]
    with pytest.raises(MetadataError, match="made_up_type"):
        g.get("bad_dtype")


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_metadata_with_an_unreadable_member(tmp_path, kind, fmt):
    """zarr-python's consolidated metadata, a bad member added to it and to the
    store: a member's entry is parsed when it is first touched, so the group opens
    with its consolidated metadata (use_consolidated None or True), its listings
    skip the member with a warning naming it, and reaching it raises the entry's
    error, naming the key.  A document whose structure is broken falls back to the
    store (None) or raises (True): test_consolidated_metadata_that_is_malformed."""
    root = str(tmp_path / "h.zarr")
    write_zarr_python(root, fmt)
    zarr.consolidate_metadata(root)
    docs = bad_documents(root, fmt)
    del docs[next(k for k in docs if k.startswith("sub/broken"))]
    if fmt == 3:
        group_doc = json.loads(Path(root, "zarr.json").read_text())
        entries = group_doc["consolidated_metadata"]["metadata"]
        entries["bad_dtype"] = json.loads(docs["bad_dtype/zarr.json"])
        docs["zarr.json"] = json.dumps(group_doc).encode()
    else:
        zmeta = json.loads(Path(root, ".zmetadata").read_text())
        zmeta["metadata"]["bad_dtype/.zarray"] = json.loads(docs["bad_dtype/.zarray"])
        zmeta["metadata"]["bad_dtype/.zattrs"] = {}
        docs[".zmetadata"] = json.dumps(zmeta).encode()
    store = make_store(kind, root, docs)
    key = '"bad_dtype"' if fmt == 3 else '"bad_dtype/.zarray"'
    for use in (True, None):
        g = zarrc.open_group(store, mode="r", use_consolidated=use)
        assert g.consolidated
        assert sorted(g) == ["bad_dtype", "good", "sub"]
        with pytest.warns(UserWarning) as record:
            assert sorted(name for name, _ in g.members(max_depth=None)) == ["good", "sub", "sub/y"]
        assert "bad_dtype" in warned_names(record) and "made_up_type" in warned_names(record)
        assert_bit_equal(g["good"][...], zarr.open_array(root, path="good", mode="r")[...])
        with pytest.raises(MetadataError, match=f"key {key}: .*made_up_type"):
            g["bad_dtype"]
        with pytest.raises(MetadataError, match="made_up_type"):     # (each time, not kept)
            g["bad_dtype"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_metadata_that_is_malformed(tmp_path, fmt):
    """A consolidated document whose structure is broken (a key that leaves the
    group) is refused when the group is opened: use_consolidated=True raises,
    None lists the store with a warning."""
    root = str(tmp_path / "h.zarr")
    write_zarr_python(root, fmt)
    zarr.consolidate_metadata(root)
    if fmt == 3:
        group_doc = json.loads(Path(root, "zarr.json").read_text())
        group_doc["consolidated_metadata"]["metadata"]["../out"] = {"zarr_format": 3, "node_type": "group"}
        Path(root, "zarr.json").write_text(json.dumps(group_doc))
    else:
        zmeta = json.loads(Path(root, ".zmetadata").read_text())
        zmeta["metadata"]["../out/.zgroup"] = {"zarr_format": 2}
        Path(root, ".zmetadata").write_text(json.dumps(zmeta))
    with pytest.raises(MetadataError, match=r'"\.\./out.*must not have a "\." or "\.\." segment'):
        zarrc.open_group(root, mode="r", use_consolidated=True)
    with pytest.warns(UserWarning, match="consolidated metadata .* not used"):
        g = zarrc.open_group(root, mode="r")
    assert not g.consolidated and sorted(g) == ["good", "sub"]


def test_a_readable_hierarchy_gives_no_warning(tmp_path, recwarn):
    root = str(tmp_path / "h.zarr")
    write_zarr_python(root, 3)
    g = zarrc.open_group(root, mode="r")
    assert sorted(name for name, _ in g.members(max_depth=None)) == ["good", "sub", "sub/y"]
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]
