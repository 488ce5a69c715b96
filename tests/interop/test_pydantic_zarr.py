"""zarrc.model against pydantic-zarr (the ZEP 6 anchor), both ways: pydantic-zarr's
JSON (``model_dump()`` / ``model_dump_json()`` of its v2 and v3 GroupSpec /
ArraySpec) loads in zarrc.model as the same hierarchy, and zarrc.model's
``to_dict()`` loads in pydantic-zarr (``model_validate``) as the same models; their
flat forms share keys; both read the same store alike (zarr-python's hierarchies
through pydantic-zarr's ``from_zarr``)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON

import zarrc
from zarrc import model
from zarrc.errors import SpecError
from zarrc.model import ArraySpec, GroupSpec

pydantic_zarr = pytest.importorskip(
    "pydantic_zarr",
    reason=f"pydantic-zarr is not installed (its releases need Python 3.11+, this is "
           f"{sys.version_info.major}.{sys.version_info.minor})")
from pydantic_zarr import v2 as pz2
from pydantic_zarr import v3 as pz3

PZ = {2: pz2, 3: pz3}
LITTLE = [{"name": "bytes", "configuration": {"endian": "little"}}]


def zarrc_hierarchy(store, zarr_format: int):
    """Written by zarrc: attributes, a NaN fill, dimension names, sharding, gzip / zlib,
    variable-length strings, nested and empty groups."""
    g = zarrc.create_group(store, zarr_format=zarr_format, attributes={"title": "t", "list": [1, 2.5]})
    g.create_array("x", shape=(10, 10), chunks=(5, 5), dtype="f4", fill_value=np.nan, attributes={"u": "m"},
                   dimension_names=["y", "x"] if zarr_format == 3 else None)
    if zarr_format == 3:
        g.create_array("sharded", shape=(64, 8), chunks=(8, 4), shards=(32, 8), dtype="<u2",
                       compressors=[{"name": "zstd", "configuration": {"level": 5}}])
        g.create_array("gz", shape=(5,), chunks=(5,), dtype="i8",
                       compressors=[{"name": "gzip", "configuration": {"level": 2}}])
    else:
        g.create_array("gz", shape=(5,), chunks=(5,), dtype="i8", compressors={"id": "zlib", "level": 2})
    g.create_array("strings", shape=(3,), chunks=(3,), dtype=str)
    sub = g.create_group("sub", attributes={"nested": {"k": None}})
    sub.create_array("flags", shape=(2, 2), chunks=(1, 2), dtype=bool)
    sub.create_group("empty")
    return g


def pydantic_models(zarr_format: int):
    """Made by pydantic-zarr alone (no store): its ArraySpec.from_array of numpy arrays
    and its constructors."""
    pz = PZ[zarr_format]
    codecs = {} if zarr_format == 2 else {"codecs": LITTLE}
    a = pz.ArraySpec.from_array(np.arange(12, dtype="int32").reshape(3, 4), attributes={"a": 1}, **codecs)
    chunks = {"chunks": (2,)} if zarr_format == 2 else {
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": (2,)}}, "codecs": LITTLE}
    b = pz.ArraySpec.from_array(np.zeros(5, dtype="float64"), **chunks)
    inner = pz.GroupSpec(attributes={"inner": True}, members={"b": b})
    return pz.GroupSpec(attributes={"root": "yes"}, members={"a": a, "inner": inner})


def test_a_bytes_codec_without_endian_is_refused_by_name() -> None:
    """pydantic-zarr's v3 ``from_array`` writes ``{"name": "bytes"}`` for every data
    type; the v3 spec requires "endian" for types of more than one byte, so zarrc
    (as it opens arrays) names the node and the field (one-byte types load)."""
    ok = pz3.ArraySpec.from_array(np.zeros(3, dtype="uint8"))
    assert ArraySpec.from_dict(ok).to_dict()["codecs"] == [{"name": "bytes"}]
    spec = pz3.GroupSpec(attributes={}, members={"a": pz3.ArraySpec.from_array(np.zeros(3, dtype="int32"))})
    with pytest.raises(SpecError, match=r'array /a: "codecs"\[0\] "bytes": "configuration" needs "endian"') as info:
        GroupSpec.from_json(spec.model_dump_json())
    assert (info.value.path, info.value.field) == ("/a", "codecs")


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def fmt(request) -> int:
    return request.param


def test_pydantic_zarrs_json_loads_in_zarrc(fmt) -> None:
    pz_model = pydantic_models(fmt)
    from_json = GroupSpec.from_json(pz_model.model_dump_json())
    from_python = GroupSpec.from_dict(pz_model.model_dump())       # (tuples)
    from_object = GroupSpec.from_dict(pz_model)
    assert from_json == from_python == from_object
    assert from_json.zarr_format == fmt
    a = from_json.members["a"]
    assert a.shape == (3, 4) and a.dtype == np.dtype("int32") and dict(a.attributes) == {"a": 1}
    assert from_json.members["inner"].members["b"].metadata.chunk_shape == (2,)
    # and back: pydantic-zarr reads zarrc's dict as the model it wrote
    assert type(pz_model).model_validate(from_json.to_dict()) == pz_model
    # a store written from it opens in zarrc
    store: dict = {}
    from_json.to_store(store)
    assert zarrc.open_array(store, path="a", mode="r").shape == (3, 4)


def test_zarrcs_dict_loads_in_pydantic_zarr(fmt) -> None:
    store: dict = {}
    zarrc_hierarchy(store, fmt)
    spec = GroupSpec.from_store(store)
    pz = PZ[fmt]
    validated = pz.GroupSpec.model_validate(spec.to_dict())
    validated_json = pz.GroupSpec.model_validate_json(spec.to_json())
    assert validated == validated_json
    assert set(validated.members) == set(spec.members)
    # pydantic-zarr's dump of it is the same hierarchy for zarrc
    assert GroupSpec.from_dict(validated.model_dump()) == spec
    assert GroupSpec.from_json(validated.model_dump_json()) == spec
    for name, member in spec.members.items():
        cls = pz.ArraySpec if isinstance(member, ArraySpec) else pz.GroupSpec
        assert cls.model_validate(member.to_dict()) == validated.members[name]


def test_flat_forms_share_keys(fmt) -> None:
    store: dict = {}
    zarrc_hierarchy(store, fmt)
    spec = GroupSpec.from_store(store)
    pz = PZ[fmt]
    theirs = pz.GroupSpec.model_validate(spec.to_dict()).to_flat()
    ours = spec.to_flat()
    assert set(theirs) == set(ours)
    for key, node in ours.items():
        assert type(theirs[key]).model_validate(node.to_dict()) == theirs[key]
    assert model.from_flat({k: v.model_dump() for k, v in theirs.items()}) == spec
    assert GroupSpec.from_dict(pz.from_flat(theirs)) == spec


def test_like_agrees_with_pydantic_zarr(fmt) -> None:
    store: dict = {}
    zarrc_hierarchy(store, fmt)
    a = GroupSpec.from_store(store)
    b = a.replace(attributes={"changed": 1})
    pz = PZ[fmt]
    pa, pb = pz.GroupSpec.model_validate(a.to_dict()), pz.GroupSpec.model_validate(b.to_dict())
    for kwargs in ({}, {"exclude": {"attributes"}}, {"include": {"members"}}, {"include": {"attributes"}}):
        assert a.like(b, **kwargs) == pa.like(pb, **kwargs), kwargs
    assert a.like(pa) and not a.like(pb) and a.like(pb, exclude={"attributes"})


def test_pydantic_zarrs_dumps_validate_against_the_schema(fmt) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the test extra installs jsonschema")
    validator = jsonschema.Draft202012Validator(model.json_schema())
    validator.validate(json.loads(pydantic_models(fmt).model_dump_json()))
    store: dict = {}
    zarrc_hierarchy(store, fmt)
    dumped = PZ[fmt].GroupSpec.model_validate(GroupSpec.from_store(store).to_dict()).model_dump_json()
    validator.validate(json.loads(dumped))


@pytest.mark.parametrize("consolidated", [False, True], ids=["listed", "consolidated"])
def test_a_zarr_python_hierarchy_reads_alike(fmt, consolidated, tmp_path) -> None:
    """pydantic-zarr's ``from_zarr`` of a hierarchy zarr-python wrote, and zarrc's
    ``from_store`` of the same store, are one hierarchy; and its depth limit is zarrc's."""
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    path = str(tmp_path / "zp.zarr")
    g = zarr.create_group(path, zarr_format=fmt, attributes={"a": [1, 2]})
    g.create_array("x", shape=(6, 4), chunks=(3, 2), dtype="f8", attributes={"units": "K"})
    if fmt == 3:
        g.create_array("sh", shape=(16,), chunks=(4,), shards=(8,), dtype="i4")
    s = g.create_group("s")
    s.create_array("y", shape=(3,), chunks=(3,), dtype="u1")
    if consolidated:
        zarr.consolidate_metadata(path)
        g = zarr.open_group(path, mode="r")
    pz = PZ[fmt]
    theirs = pz.GroupSpec.from_zarr(g)
    ours = GroupSpec.from_store(path)
    assert GroupSpec.from_dict(theirs) == ours
    # (compared as JSON: pydantic-zarr keeps zarr-python's tuples inside codec configurations)
    assert pz.GroupSpec.model_validate(ours.to_dict()).model_dump(mode="json") == theirs.model_dump(mode="json")
    assert GroupSpec.from_dict(pz.GroupSpec.from_zarr(g, depth=1)) == GroupSpec.from_store(path, depth=1)
    # pydantic-zarr writes zarrc's spec with zarr-python; zarrc reads it back the same
    out = str(tmp_path / "written.zarr")
    pz.GroupSpec.model_validate(ours.to_dict()).to_zarr(zarr.storage.LocalStore(out), path="")
    assert GroupSpec.from_store(out) == ours
