"""Every array other implementations wrote into their own test stores (issue 41, item 7),
read by zarrc as its writer means it.

The stores are in ``../shared/corpus`` beside the repository (or ``$ZARRC_CORPUS``):
GDAL's autotest data (``gdal_zarr/``) and the test data of zarrs, zarrita.js, zarr.js,
zarr-python 2 (``fixture/``), zarr-java, neuroglancer, netCDF-C's NCZarr,
zarr_implementations and n5-zarr (``peer_corpus/``); they are read by path and never
copied into the repository.  Without them every test here is skipped, with the reason.

An array is a folder holding a ``.zarray`` (read with ``zarr_format=2``) or an array's
``zarr.json`` (``zarr_format=3``); zarrs keeps both in some folders, which then count
twice.  Each one is, by the lists below:

- read by zarrc with the values zarr-python 3 reads (the default);
- read by zarrc with the values its writer means where zarr-python cannot read it
  (``EXPECTED``: the values stated by the writer's test or generator, or decoded from
  the chunk bytes by hand);
- refused with a ZarrcError naming the node where the store is damaged (``DAMAGED``)
  or uses something zarrc does not read (``UNSUPPORTED``), each with the reason.

The test of the counts (``test_the_lists_name_only_arrays_of_the_corpus``) keeps the
lists true to the corpus: a name that is no longer an array there fails it."""

from __future__ import annotations

import base64
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import zarrc
from zarrc.errors import ZarrcError

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ZARRC_CORPUS") or REPO.parent / "shared" / "corpus")
ROOTS = ("gdal_zarr", "peer_corpus")

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus of other implementations' "
                                f"test stores at {CORPUS} (set ZARRC_CORPUS)")


def _arrays() -> list[tuple[str, int]]:
    """(path below CORPUS, zarr format) of every array in the corpus, sorted."""
    found = []
    for root in ROOTS:
        for folder, dirs, files in os.walk(CORPUS / root):
            dirs.sort()
            rel = str(Path(folder).relative_to(CORPUS))
            if ".zarray" in files:
                found.append((rel, 2))
            if "zarr.json" in files:
                try:
                    doc = json.loads((Path(folder) / "zarr.json").read_bytes())
                except ValueError:
                    doc = {"node_type": "array"}
                if isinstance(doc, dict) and doc.get("node_type") == "array":
                    found.append((rel, 3))
    return sorted(found)


ARRAYS = _arrays() if CORPUS.is_dir() else []

_OME = "peer_corpus/neuroglancer/ome_zarr/all_0.6"
_SYMLINK = ("its chunk c/0/0/0 holds the text of a symlink ('../../../../../../base_array/0'): "
            "neuroglancer's repository keeps the chunk as a link, the copy made it a file")
_TIFF = ("compressor imagecodecs_tiff: an imagecodecs codec (GDAL decodes TIFF itself); without "
         "imagecodecs installed there is no codec to run")

# (path, format) -> why zarrc refuses it: damaged or invalid data
DAMAGED: dict[tuple[str, int], str] = {
    **{(f"{_OME}/{name}.zarr/array", 3): _SYMLINK
       for name in ("axis_dependent/mapAxis", "basic/identity", "basic/scale",
                    "basic/sequenceScaleTranslation", "basic/translation", "simple/affine",
                    "simple/rotation")},
    ("peer_corpus/neuroglancer/zarr_v3/from_zarrita/data.zarr/3d.chunked.mixed.i2.F", 3):
        'transpose "order" "F": a draft of v3 (zarrita 2022); the spec takes a permutation only',
    ("gdal_zarr/array_attrs.zarr", 2):
        "its .zarray is not JSON (dtype '!b1' in single quotes), which zarrc refuses as zarr-python "
        "does; GDAL's lenient JSON parser opens it (its test reads the array's attributes)",
    ("gdal_zarr/v3/sharing_too_small_data_file/ar", 3):
        "the shard file is shorter than its index: GDAL's test expects the read to fail",
}

# (path, format) -> what zarrc does not read, and why (refused with a ZarrcError)
UNSUPPORTED: dict[tuple[str, int], str] = {
    ("peer_corpus/zarr-java/testdata/storage_transformer/exists", 3):
        "storage transformer chunk-manifest-json (zarr-java's own; zarr-python refuses it too)",
    ("peer_corpus/zarrs/v3/array_optional.zarr/array", 3):
        "data type optional: zarrs' extension (zarr-python refuses it too)",
    ("peer_corpus/zarrs/v3/array_optional_nested.zarr/array", 3):
        "data type optional: zarrs' extension (zarr-python refuses it too)",
    ("gdal_zarr/uint16_imagecodecs_tiff.zarr/uint16_imagecodecs_tiff", 2): _TIFF,
    ("gdal_zarr/uint16_imagecodecs_tiff_inconsistent_size.zarr/uint16_imagecodecs_tiff", 2): _TIFF,
    ("gdal_zarr/uint16_imagecodecs_tiff_invalid_tiff.zarr/uint16_imagecodecs_tiff", 2): _TIFF,
    ("gdal_zarr/uint16_imagecodecs_tiff_too_many_bands.zarr/uint16_imagecodecs_tiff", 2): _TIFF,
    ("gdal_zarr/v3/fixed_length_utf32.zarr/ar", 3):
        'codec bytes without "endian" for fixed_length_utf32 (4-byte items): the spec requires it, '
        "zarr-python 3.4 refuses it; GDAL reads it as little-endian",
}


def _chunk(rel: str, key: str, dtype: str) -> np.ndarray:
    return np.frombuffer((CORPUS / rel / key).read_bytes(), dtype=dtype)


def _fixture(n: int, k: int) -> np.ndarray:
    # zarr-python 2's fixture/N/0 is uncompressed and 1-d (order F changes nothing): its
    # chunk files are the values; fixture/N/1..6 hold the same data with other
    # compressors (zarr-python 2's test_format_compatibility reads them all alike)
    rel = f"peer_corpus/zarr-python-v2/fixture/{n}/0"
    meta = json.loads((CORPUS / rel / ".zarray").read_bytes())
    size, chunk = meta["shape"][0], meta["chunks"][0]
    parts = [_chunk(rel, str(i), meta["dtype"]) for i in range(-(-size // chunk))]
    return np.concatenate(parts)[:size]


def _compound_complex() -> np.ndarray:
    # a nested structured type zarr-python 3 has no type for: chunk 0 holds the first
    # record, the second is missing and so the fill value (base64 of one record)
    rel = "gdal_zarr/compound_complex.zarr"
    meta = json.loads((CORPUS / rel / ".zarray").read_bytes())

    def dtype(fields):
        return [(name, dtype(t) if isinstance(t, list) else t) for name, t in fields]
    dt = np.dtype(dtype(meta["dtype"]))
    fill = np.frombuffer(base64.b64decode(meta["fill_value"]), dt)
    return np.concatenate([_chunk(rel, "0", dt), fill])


def _transposed_sharding() -> np.ndarray:
    # transpose [1, 0], then shards of (10, 12), that is (12, 10) after the transpose,
    # with inner chunks of (6, 5) (zstd), the index at the end (crc32c): zarr-python
    # checks the inner chunks against the untransposed shard and refuses it.  Each
    # shard decoded by hand (numcodecs' zstd), transposed back and placed
    numcodecs = pytest.importorskip("numcodecs")
    rel = "gdal_zarr/v3/transposed_sharding.zarr"
    out = np.zeros((24, 26), "f4")
    for si in range(3):
        for sj in range(3):
            shard = (CORPUS / rel / f"c/{si}/{sj}").read_bytes()
            index = np.frombuffer(shard[-(16 * 4 + 4):-4], "<u8").reshape(4, 2)
            inner = np.zeros((12, 10), "f4")
            for k, (offset, nbytes) in enumerate(index.tolist()):
                if offset != 2**64 - 1:
                    a, b = divmod(k, 2)
                    data = numcodecs.Zstd().decode(shard[offset:offset + nbytes])
                    inner[a * 6:a * 6 + 6, b * 5:b * 5 + 5] = np.frombuffer(data, "<f4").reshape(6, 5)
            r, c = si * 10, sj * 12
            out[r:r + 10, c:c + 12] = inner.T[:min(10, 24 - r), :min(12, 26 - c)]
    return out


# (path, format) -> the values its writer means, where zarr-python 3 does not read it
EXPECTED: dict[tuple[str, int], Callable[[], object]] = {
    # zarr-python 2 wrote fill_value 0 for string types and read it leniently (b"0" / "0")
    **{(f"peer_corpus/zarr-python-v2/fixture/{n}/{k}", 2): (lambda n=n, k=k: _fixture(n, k))
       for n in (14, 15) for k in range(7)},
    # json2: the chunk is the JSON of the items, then the dtype and shape
    ("peer_corpus/zarrita.js/v2/data.zarr/1d.contiguous.json2.O", 2):
        lambda: np.array(["foo", "bar", "baz", "qux"], dtype=object),
    # bitround (not in zarr-python): its decode is the identity, the chunks are the values
    ("peer_corpus/zarrs/codec/bitround/bitround_float32.zarr", 3):
        lambda: _chunk("peer_corpus/zarrs/codec/bitround/bitround_float32.zarr", "c/0", "<f4"),
    ("peer_corpus/zarrs/codec/bitround/bitround_uint8.zarr", 3):
        lambda: _chunk("peer_corpus/zarrs/codec/bitround/bitround_uint8.zarr", "c/0", "u1"),
    # GDAL's generate_test_files.py writes [1, 2] (zarr-python 3 refuses LZMA filters
    # with the default format; numcodecs, the writer, takes them)
    ("gdal_zarr/lzma_with_filters.zarr", 2): lambda: np.array([1, 2], dtype="u1"),
    ("gdal_zarr/compound_complex.zarr", 2): _compound_complex,
    ("gdal_zarr/v3/transposed_sharding.zarr", 3): _transposed_sharding,
    # GDAL's deprecated v3 form without codecs (zarr-python: KeyError 'codecs'), read as
    # "bytes": the chunk is the values
    ("gdal_zarr/v3/test_deprecated_no_codecs.zr3/ar", 3):
        lambda: _chunk("gdal_zarr/v3/test_deprecated_no_codecs.zr3/ar", "c/0", "u1"),
}

# (path, format) -> why only zarrc reads it and how its values are checked otherwise
# (by a test of their own, or the shape and type of the metadata here)
ZARRC_ONLY: dict[tuple[str, int], str] = {
    **{(f"gdal_zarr/byte_cf1.zr3/{name}", 3): "GDAL's draft-v3 store without codecs "
       "(zarr-python: KeyError 'codecs'); values in tests/test_conventions.py"
       for name in ("Band1", "transverse_mercator", "x", "y")},
    **{(f"gdal_zarr/v3/test_deprecated_no_codecs.zr3/{name}", 3): "no codecs (GDAL's "
       "deprecated form, read with a warning)" for name in ("ar", "marvin/android")},
}


def _values_equal(got: np.ndarray, want: np.ndarray) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "OTU" or got.dtype.kind in "OT":       # str / StringDType / object
        return got.astype(object).tolist() == want.astype(object).tolist()
    if got.dtype != want.dtype:
        return False
    if got.dtype.kind in "mM":
        return np.array_equal(got.view("i8"), want.view("i8"))
    if got.dtype.kind in "fc":
        return np.array_equal(got, want, equal_nan=True)
    return got.tobytes() == want.tobytes()


def _zarrc_read(rel: str, fmt: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarrc.open_array(str(CORPUS / rel), mode="r", zarr_format=fmt)[...]


def _id(case: tuple[str, int]) -> str:
    return f"{case[0]}@v{case[1]}"


@pytest.mark.parametrize("case", ARRAYS, ids=_id)
def test_array_reads_as_its_writer_means(case):
    rel, fmt = case
    if case in DAMAGED or case in UNSUPPORTED:
        with pytest.raises(ZarrcError) as info:
            _zarrc_read(rel, fmt)
        assert "/" in str(info.value)            # (names the node or the key)
        return
    if "zfpy" in rel:                            # (zarrc[zfp]: the test extra has it)
        pytest.importorskip("zfpy")
    if "pcodec" in rel:                          # (numcodecs[pcodec]: the test extra has it, 3.11+)
        pytest.importorskip("pcodec", reason="pcodec is not installed: numcodecs has no pcodec codec")
    got = _zarrc_read(rel, fmt)
    if case in EXPECTED:
        assert _values_equal(got, EXPECTED[case]()), rel
        return
    if case in ZARRC_ONLY:
        meta = zarrc.open_array(str(CORPUS / rel), mode="r", zarr_format=fmt)
        assert got.shape == meta.shape and got.dtype == meta.dtype
        return
    zarr = pytest.importorskip("zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = zarr.open_array(str(CORPUS / rel), mode="r", zarr_format=fmt)[...]
    assert _values_equal(got, want), f"{rel}: zarrc {got.dtype} {got.shape}, zarr-python {want.dtype} {want.shape}"


def test_the_lists_name_only_arrays_of_the_corpus():
    if not ARRAYS:
        pytest.skip("no arrays found")
    listed = set(DAMAGED) | set(UNSUPPORTED) | set(EXPECTED) | set(ZARRC_ONLY)
    assert listed <= set(ARRAYS), sorted(listed - set(ARRAYS))
    assert not set(DAMAGED) & set(UNSUPPORTED)
