"""Fixtures for the metadata tests: documents written by zarr-python and tensorstore,
and a valid minimal array document to mutate."""

from __future__ import annotations

import copy
import json
import warnings

import pytest

from helpers import NO_ZARR_PYTHON


@pytest.fixture
def array_doc():
    """A factory for a valid array zarr.json dict (int32, shape [10, 6]); keyword
    arguments replace top-level members, and a value of ``None`` deletes one."""
    base = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10, 6],
        "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 3]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }

    def make(**changes):
        doc = copy.deepcopy(base)
        for key, value in changes.items():
            if value is None:
                doc.pop(key, None)
            else:
                doc[key] = value
        return doc

    return make


@pytest.fixture(scope="session")
def zarr_python_doc(tmp_path_factory):
    """``make(**create_array_kwargs) -> dict``: the zarr.json zarr-python writes."""
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    counter = iter(range(10**9))

    def make(**kwargs):
        path = tmp_path_factory.mktemp("zp") / f"a{next(counter)}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            zarr.create_array(str(path), **kwargs)
        return json.loads((path / "zarr.json").read_text())

    return make


@pytest.fixture(scope="session")
def zarr_python_open(tmp_path_factory):
    """``open(doc_bytes) -> zarr.Array``: zarr-python reading a zarr.json we wrote."""
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    counter = iter(range(10**9))

    def open_(doc: bytes):
        path = tmp_path_factory.mktemp("zr") / f"a{next(counter)}"
        path.mkdir()
        (path / "zarr.json").write_bytes(doc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return zarr.open_array(str(path), mode="r")

    return open_


@pytest.fixture(scope="session")
def tensorstore_doc(tmp_path_factory):
    """``make(metadata) -> dict``: the zarr.json tensorstore's zarr3 driver writes."""
    ts = pytest.importorskip("tensorstore")
    counter = iter(range(10**9))

    def make(metadata):
        path = tmp_path_factory.mktemp("ts") / f"a{next(counter)}"
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}, "metadata": metadata}
        ts.open(spec, create=True).result()
        return json.loads((path / "zarr.json").read_text())

    return make


@pytest.fixture(scope="session")
def tensorstore_open(tmp_path_factory):
    """``open(doc_bytes) -> ts.TensorStore``: tensorstore reading a zarr.json we wrote."""
    ts = pytest.importorskip("tensorstore")
    counter = iter(range(10**9))

    def open_(doc: bytes):
        path = tmp_path_factory.mktemp("tr") / f"a{next(counter)}"
        path.mkdir()
        (path / "zarr.json").write_bytes(doc)
        return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()

    return open_
