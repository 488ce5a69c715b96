"""GDAL's own test stores (``../shared/corpus/gdal_zarr``, its autotest data) opened by
GDAL's driver and by zarrc: each numeric array GDAL reads, zarrc reads to the same
values (in GDAL's data type where GDAL widens, as float16 to Float32), with the
dimension names GDAL reports (GDAL names a dimension without one ``dim<i>``, zarrc
leaves it None).  Where GDAL refuses a store or an array, its reason is checked to be
one of the known limits of its version (``GDAL_LIMITS``): a filter or codec it lacks,
or, before 3.8, a final-v3 store it lists as empty.  All stores are described by one
GDAL run (``interop/gdal_peer.describe_many``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import zarrc
from interop import gdal_peer

# as tests/test_peer_corpus.py: $ZARRC_CORPUS, else shared/corpus beside the repository
CORPUS = Path(os.environ.get("ZARRC_CORPUS") or Path(__file__).resolve().parents[2].parent / "shared" / "corpus") \
    / "gdal_zarr"

pytestmark = pytest.mark.skipif(gdal_peer.available() is not None, reason=str(gdal_peer.available()))

# why GDAL 3.6 refuses some of its own newer test stores (they test later versions)
GDAL_LIMITS = ("Filter fixedscaleoffset not handled", "Filter quantize not handled",
               "Filter shuffle not handled", "Filter bitround not handled",
               "Decompressor imagecodecs_tiff not handled", "not recognized as a supported file format")
# what GDAL reads and zarrc refuses, on purpose: store -> the error's words
ZARRC_REFUSES = {
    # GDAL's JSON parser takes the single quotes of "dtype": '!b1' (its autotest reads the
    # array's attributes); it is not JSON, which zarrc (as zarr-python) refuses
    "array_attrs.zarr": "is not valid JSON",
}


def stores() -> list[str]:
    if not CORPUS.exists():
        return []
    found = [p for p in sorted(CORPUS.iterdir()) if p.is_dir() and p.name != "v3"]
    found += [p for p in sorted((CORPUS / "v3").iterdir()) if p.is_dir()] if (CORPUS / "v3").exists() else []
    return [str(p.relative_to(CORPUS)) for p in found]


STORES = stores()


@pytest.fixture(scope="module")
def gdal_views(tmp_path_factory):
    if not STORES:
        pytest.skip(f"GDAL's test stores are not at {CORPUS}")
    return gdal_peer.describe_many([str(CORPUS / s) for s in STORES], str(tmp_path_factory.mktemp("corpus")))


def zarrc_node(store: str, name: str):
    """The array ``name`` (GDAL's full name) of ``store`` as zarrc opens it."""
    path = CORPUS / store
    if name.strip("/") == path.name.removesuffix(".zarr") and (path / ".zarray").exists():
        return zarrc.open_array(str(path), mode="r")
    return zarrc.open_group(str(path), mode="r")[name.strip("/")]


@pytest.mark.parametrize("store", STORES or ["(absent)"])
def test_gdal_and_zarrc_read_gdal_test_store(gdal_views, store):
    seen = gdal_views[str(CORPUS / store)]
    if seen["refused"]:
        assert any(limit in seen["refused"] for limit in GDAL_LIMITS), seen["refused"]
        pytest.skip(f"GDAL {gdal_peer.require()} refuses {store}: {seen['refused'][:120]}")
    if not seen["arrays"]:
        v3 = (CORPUS / store / "zarr.json").exists() or store.endswith(".zr3")
        assert v3 and gdal_peer.version_tuple() < (3, 8), f"GDAL lists no array of {store}"
        pytest.skip(f"GDAL {gdal_peer.require()} lists no array of the Zarr v3 store {store}")
    if store in ZARRC_REFUSES:
        with pytest.raises(zarrc.errors.MetadataError, match=ZARRC_REFUSES[store]):
            zarrc.open(str(CORPUS / store), mode="r")
        return
    compared = 0
    for name, info in seen["arrays"].items():
        problem = info.get("open_error") or info.get("read_error")
        if problem:
            assert any(limit in problem for limit in GDAL_LIMITS), (name, problem)
            continue
        mine = zarrc_node(store, name)
        assert tuple(info["shape"]) == mine.shape, name
        names = mine.dimension_names or (None,) * mine.ndim
        assert [n if n is not None else f"dim{i}" for i, n in enumerate(names)] == info["dims"], name
        if "npy" not in info:            # strings, compounds: GDAL's own types, not compared
            continue
        theirs = np.load(info["npy"])
        values = mine[...]
        assert theirs.shape == values.shape, name
        as_theirs = values.astype(theirs.dtype)
        np.testing.assert_array_equal(as_theirs, theirs, err_msg=f"{store}{name}")
        if theirs.dtype == values.dtype.newbyteorder("="):
            assert as_theirs.tobytes() == theirs.tobytes(), f"{store}{name}: not bit for bit"
        compared += 1
    assert compared or all("open_error" in i or "read_error" in i or "npy" not in i
                           for i in seen["arrays"].values())
