"""Rectilinear chunk grids between zarrc and zarr-python >= 3.2 (the first with them;
these run where it is installed, e.g. zarr-python 3.4 on Python 3.12, and skip with
zarr-python 3.1): zarr-python writes -> zarrc reads, zarrc writes -> zarr-python
reads, zarrc's codec pipeline inside zarr-python, and xarray's two engines.
tensorstore has no rectilinear grid (its zarr3 driver refuses the document:
'Expected "regular"'), checked here so that a tensorstore that gains one is noticed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrc

zarr = pytest.importorskip("zarr")
if not hasattr(zarr.Array, "read_chunk_sizes"):
    pytest.skip(f"zarr-python {zarr.__version__} has no rectilinear chunk grids (3.2 added them)",
                allow_module_level=True)

PIPE = "zarrc.ZarrcCodecPipeline"
SHAPE = (60, 100)
REF = np.arange(6000, dtype="i4").reshape(SHAPE)


@pytest.fixture(autouse=True)
def _rectilinear_enabled():
    with zarr.config.set({"array.rectilinear_chunks": True}):
        yield


LAYOUTS = {
    "lists": {"chunks": [[5, 25, 30], [40, 60]]},
    "mixed": {"chunks": [[5, 25, 30], 30]},
    "runs": {"chunks": [[10] * 5 + [5, 5], [50, 50]]},
    "sharded": {"chunks": (5, 10), "shards": [[10, 20, 30], [40, 60]]},
    # (nearly every chunk of its own shape: one batch for all of them in zarrc's kernels)
    "many shapes": {"chunks": [list(range(1, 11)) + [5], list(range(1, 14)) + [9]]},
}
SELECTIONS = [np.s_[:], np.s_[3:47:3, 10:90:7], np.s_[29, 5:], np.s_[..., 99]]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarr_python_writes_zarrc_reads(tmp_path, layout):
    z = zarr.create_array(str(tmp_path), shape=SHAPE, dtype="i4", fill_value=-1, **LAYOUTS[layout])
    z[:] = REF
    z[:2, :3] = -1              # a chunk left partly fill
    ref = REF.copy()
    ref[:2, :3] = -1
    a = zarrc.open_array(str(tmp_path))
    assert a.write_chunk_sizes == z.write_chunk_sizes
    assert a.read_chunk_sizes == z.read_chunk_sizes
    for sel in SELECTIONS:
        np.testing.assert_array_equal(a[sel], ref[sel])
    pts = (np.array([0, 59, 30, 5]), np.array([0, 99, 40, 39]))
    np.testing.assert_array_equal(a.vindex[pts], ref[pts])
    np.testing.assert_array_equal(a.oindex[[1, 50, 7], [99, 0, 45]], ref[np.ix_([1, 50, 7], [99, 0, 45])])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarrc_writes_zarr_python_reads(tmp_path, layout):
    a = zarrc.create_array(str(tmp_path), shape=SHAPE, dtype="i4", fill_value=-1, **LAYOUTS[layout])
    a[:] = REF
    a[3:33, 5:77] = 1
    ref = REF.copy()
    ref[3:33, 5:77] = 1
    z = zarr.open_array(str(tmp_path))
    assert z.write_chunk_sizes == a.write_chunk_sizes
    for sel in SELECTIONS:
        np.testing.assert_array_equal(z[sel], ref[sel])


@pytest.mark.parametrize("layout", ["lists", "runs"])
def test_metadata_documents_are_the_same(tmp_path, layout):
    zarr.create_array(str(tmp_path / "z"), shape=SHAPE, dtype="i4", **LAYOUTS[layout])
    zarrc.create_array(str(tmp_path / "c"), shape=SHAPE, dtype="i4", **LAYOUTS[layout])
    grids = [json.loads((tmp_path / n / "zarr.json").read_text())["chunk_grid"] for n in "zc"]
    assert grids[0] == grids[1]


def test_resize_and_append_give_zarr_pythons_edges(tmp_path):
    z = zarr.create_array(str(tmp_path / "z"), shape=(30, 4), chunks=[[10, 5, 15], 4], dtype="i4")
    a = zarrc.create_array(str(tmp_path / "c"), shape=(30, 4), chunks=[[10, 5, 15], 4], dtype="i4")
    for op in (lambda x: x.resize((42, 4)), lambda x: x.resize((12, 4)),
               lambda x: x.append(np.ones((50, 4), "i4"))):
        op(z)
        op(a)
        docs = [json.loads((tmp_path / n / "zarr.json").read_text()) for n in "zc"]
        assert docs[0]["chunk_grid"] == docs[1]["chunk_grid"]
        assert docs[0]["shape"] == docs[1]["shape"]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "c"))[:], a[:])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarrc_pipeline_inside_zarr_python(tmp_path, layout):
    with zarr.config.set({"codec_pipeline.path": PIPE, "codec_pipeline.strict": True}):
        z = zarr.create_array(str(tmp_path), shape=SHAPE, dtype="i4", fill_value=-1, **LAYOUTS[layout])
        z[:] = REF
        z[3:33, 5:77] = 1
        ref = REF.copy()
        ref[3:33, 5:77] = 1
        for sel in SELECTIONS:
            np.testing.assert_array_equal(z[sel], ref[sel])
        pts = (np.array([0, 59, 30, 5]), np.array([0, 99, 40, 39]))
        np.testing.assert_array_equal(z.vindex[pts], ref[pts])
        np.testing.assert_array_equal(z.oindex[[1, 50, 7], [99, 0, 45]], ref[np.ix_([1, 50, 7], [99, 0, 45])])
        assert type(z._async_array.codec_pipeline).__name__ == "ZarrcCodecPipeline"
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path))[:], ref)


def test_xarray_engines_agree(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    z = zarr.create_array(str(tmp_path), name="v", shape=SHAPE, dtype="f8", chunks=[[5, 25, 30], 30],
                          dimension_names=["y", "x"])
    z[:] = REF
    ours = xr.open_dataset(str(tmp_path), engine="zarrc", chunks={})
    theirs = xr.open_dataset(str(tmp_path), engine="zarr", chunks={}, consolidated=False)
    assert ours.v.encoding["preferred_chunks"] == theirs.v.encoding["preferred_chunks"]
    assert ours.v.chunks == theirs.v.chunks
    xr.testing.assert_identical(ours.load(), theirs.load())


def test_tensorstore_has_no_rectilinear_grid(tmp_path):
    ts = pytest.importorskip("tensorstore")
    zarrc.create_array(str(tmp_path), shape=SHAPE, dtype="i4", chunks=[[5, 25, 30], 30])
    with pytest.raises(ValueError, match="regular"):
        ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path)}}).result()


# codecs only Python runs (zarrc's Python strategy over the whole grid, a codec per
# chunk shape): variable-length strings, plain and in shards
STRINGS = np.arange(6000).astype(str).astype(object).reshape(SHAPE)
STRING_LAYOUTS = {"strings": {"chunks": [[5, 25, 30], [40, 60]]},
                  "sharded strings": {"chunks": (5, 20), "shards": [[10, 20, 30], [40, 60]]}}


@pytest.mark.parametrize("layout", STRING_LAYOUTS)
def test_strings_both_ways(tmp_path, layout):
    from zarrc.engine.python import PythonStrategy

    z = zarr.create_array(str(tmp_path / "z"), shape=SHAPE, dtype=str, **STRING_LAYOUTS[layout])
    a = zarrc.create_array(str(tmp_path / "c"), shape=SHAPE, dtype=str, **STRING_LAYOUTS[layout])
    assert type(a._engine) is PythonStrategy
    for x in (z, a):
        x[:] = STRINGS
        x[3:40, 17:80] = "w"
        x.vindex[[0, 59, 31], [99, 0, 40]] = "p"
    want = STRINGS.copy()
    want[3:40, 17:80] = "w"
    want[[0, 59, 31], [99, 0, 40]] = "p"
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "z"))[:], want)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "c"))[:], want)
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "z")).oindex[[4, 40], 38:62],
                                  want[np.ix_([4, 40], np.arange(38, 62))])
