"""Issue 39's extensions in other implementations' own test stores (/work/shared/corpus,
or $ZARRC_CORPUS), read by path, never copied.  Every store there that uses one of
them: bitround (zarrs v3, zarrita.js v2, GDAL v2 with delta), zfpy (zarrs v2/v3 and
zarr-python 3 through numcodecs.zfpy) and packbits (only inside zarrs' ``optional``
data type, which zarrc does not read).  The corpus holds no rectilinear grid, no
scale_offset / cast_value, no ml_dtypes type and no ``subchunk_write_order`` shard
(checked with grep over every zarr.json / .zarray / .zmetadata); those are covered
by zarr-python 3.4 writing them (tests/interop/test_rectilinear_zarr34.py,
test_value_codecs.py, test_subchunk_write_order.py, test_tensorstore_ml_dtypes.py).
GDAL's v2 ``fixedscaleoffset`` stores (numcodecs' relative of scale_offset) are here
too.

Expected values: the writers' data as their tests state it (zarrs writes
``arange(100)`` for its zfpy arrays) or the writer's own decoding of the chunk
files: bitround's decode is the identity, so an uncompressed bitround chunk *is*
the values; numcodecs' Delta and ZFPY decode what zarr-python wrote."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import zarrc
from zarrc.errors import MetadataError

CORPUS = Path(os.environ.get("ZARRC_CORPUS", "/work/shared/corpus"))
PEERS = CORPUS / "peer_corpus"


def store(rel: str) -> Path:
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"corpus store {rel} is not at {path}")
    return path


def raw(path: Path, key: str, dtype: str) -> np.ndarray:
    return np.frombuffer((path / key).read_bytes(), dtype=dtype)


# ------------------------------------------------------------------ bitround

BITROUND = {
    # store, chunk key, on-disk dtype, shape
    "peer_corpus/zarrs/codec/bitround/bitround_float32.zarr": ("c/0", "<f4", (9,)),
    "peer_corpus/zarrs/codec/bitround/bitround_uint8.zarr": ("c/0", "u1", (10,)),
    "peer_corpus/zarrita.js/v2/data.zarr/1d.contiguous.bitround.f4": ("0", "<f4", (4,)),
}


@pytest.mark.parametrize("rel", list(BITROUND))
def test_bitround_stores_read_their_rounded_bytes(rel):
    path = store(rel)
    key, dtype, shape = BITROUND[rel]
    a = zarrc.open_array(str(path), mode="r")
    got = a[...]
    assert a.shape == shape and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.view("u1"), raw(path, key, dtype).view("u1"))


def test_zarrs_bitround_float32_keeps_3_mantissa_bits():
    got = zarrc.open_array(str(store("peer_corpus/zarrs/codec/bitround/bitround_float32.zarr")), mode="r")[...]
    finite = got[np.isfinite(got)]
    assert (finite.view("u4") & ((1 << 20) - 1) == 0).all()     # 23 - 3 low bits cleared
    assert np.isnan(got[6]) and got[7] == np.inf and got[8] == -np.inf


def test_zarrita_bitround_values():
    # zarrita.js' fixture: [1.1, 2.2, 3.3, 4.4] rounded to 3 mantissa bits
    got = zarrc.open_array(str(store("peer_corpus/zarrita.js/v2/data.zarr/1d.contiguous.bitround.f4")), mode="r")
    np.testing.assert_array_equal(got[...], np.array([1.125, 2.25, 3.25, 4.5], "f4"))


@pytest.mark.filterwarnings("ignore:the consolidated metadata")   # its .zmetadata has an "|O" fill_value 0
def test_zarrita_bitround_in_its_group():
    g = zarrc.open_group(str(store("peer_corpus/zarrita.js/v2/data.zarr")), mode="r")
    np.testing.assert_array_equal(g["1d.contiguous.bitround.f4"][...], np.array([1.125, 2.25, 3.25, 4.5], "f4"))


def test_gdal_bitround_then_delta():
    numcodecs = pytest.importorskip("numcodecs")
    path = store("gdal_zarr/bitround0.zarr/bitround0")
    a = zarrc.open_array(str(path), mode="r")
    want = numcodecs.Delta(dtype="u1").decode((path / "0.0").read_bytes()).reshape(20, 20)
    np.testing.assert_array_equal(a[...], want)
    np.testing.assert_array_equal(a[3:17, 5], want[3:17, 5])


# ------------------------------------------------------------------ zfpy

ZFPY = {
    # zarrs' v2 / v3 arrays, and zarr-python 3's (all float32 arange(100), 5x5 chunks, tolerance 0.01)
    "peer_corpus/zarrs/v2/array_zfpy_C.zarr": "{}.{}",
    "peer_corpus/zarrs/v3/array_zfpy.zarr": "{}.{}",
    "peer_corpus/zarrs/v3_zarr_python/array_zfpy.zarr": "c/{}/{}",
}


@pytest.mark.parametrize("rel", list(ZFPY))
def test_zfpy_stores(rel):
    path = store(rel)
    try:
        from numcodecs.zfpy import ZFPY  # noqa: F401  (numcodecs defines it only where zfpy imports)
    except ImportError:
        pytest.skip("numcodecs' zfpy codec is not available (zfpy missing, or not importable here)")
    a = zarrc.open_array(str(path), mode="r")
    got = a[...]
    assert a.shape == (10, 10) and got.dtype == np.float32
    want = np.arange(100, dtype="f4").reshape(10, 10)
    np.testing.assert_allclose(got, want, atol=0.01, rtol=0)
    np.testing.assert_array_equal(a[2:7, 3:9], got[2:7, 3:9])
    try:
        from numcodecs.zfpy import ZFPY
    except ImportError:
        return
    for i in range(2):
        for j in range(2):
            chunk = ZFPY(mode=4, tolerance=0.01).decode((path / ZFPY_KEY(rel, i, j)).read_bytes())
            np.testing.assert_array_equal(got[5 * i:5 * i + 5, 5 * j:5 * j + 5], chunk.reshape(5, 5))


def ZFPY_KEY(rel: str, i: int, j: int) -> str:
    return ZFPY[rel].format(i, j)


# ------------------------------------------------------------------ packbits (zarrs' optional)

@pytest.mark.parametrize("rel", ["peer_corpus/zarrs/v3/array_optional.zarr/array",
                                 "peer_corpus/zarrs/v3/array_optional_nested.zarr/array"])
def test_zarrs_optional_data_type_is_refused_by_name(rel):
    """zarrs' ``optional`` data type (a packbits mask beside the data) is not a zarrc
    data type: opening says so instead of misreading."""
    path = store(rel)
    with pytest.raises(MetadataError, match="optional.*not a supported data type"):
        zarrc.open_array(str(path), mode="r")


# ------------------------------------------------------------------ v2 fixedscaleoffset (GDAL)

GDAL_FSO = [1000.0, 1000.1, 1000.2, 1000.3, 1000.4, 1000.6, 1000.7, 1000.8, 1000.9, 1001.0]


@pytest.mark.parametrize("name, member", [("f4_astype_u1", ""), ("f8_astype_u1", ""), ("f8_astype_u2", ""),
                                          ("f8_astype_u4", ""), ("f8_astype_f4", "data")])
def test_gdal_fixedscaleoffset(name, member):
    """numcodecs' FixedScaleOffset (zarr v2's relative of scale_offset): the values
    GDAL's test states, and bit for bit the writer's own decoding (numcodecs; for
    astype f4 it decodes in float32, where GDAL computes in double)."""
    numcodecs = pytest.importorskip("numcodecs")
    path = store(f"gdal_zarr/fixedscaleoffset_dtype_{name}.zarr") / member
    a = zarrc.open_array(str(path), mode="r")
    got = a[...]
    dtype = "f4" if name.startswith("f4") else "f8"
    assert got.dtype == np.dtype(dtype) and got.shape == (10,)
    np.testing.assert_allclose(got, GDAL_FSO, rtol=0, atol=1e-4)
    codec = numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype=dtype, astype=name.split("_")[-1])
    want = codec.decode((path / "0").read_bytes())
    np.testing.assert_array_equal(got.view("u1"), np.asarray(want, dtype).view("u1"))
