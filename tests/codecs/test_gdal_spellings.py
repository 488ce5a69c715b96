"""GDAL's Zarr driver (3.6) writes two creation options' spellings into ``.zarray``: blosc's
``"shuffle": "NONE" / "BYTE" / "BIT"`` and an lzma compressor's ``"delta"`` key (its
LZMA_DELTA, a delta filter the xz stream records).  zarrc reads them as numcodecs' blosc
shuffle 0 / 1 / 2 and the xz stream (``numcodecs_compat.from_gdal``); the chunks here are
made as GDAL makes them.  (GDAL itself: tests/interop/test_gdal_writes_zarrc_reads.py.)"""

from __future__ import annotations

import json
import lzma

import numcodecs
import numpy as np
import pytest

import zarrc
from zarrc.codecs.numcodecs_compat import from_gdal

DATA = np.arange(24, dtype="<u2").reshape(4, 6) * 37


def write_v2(path, compressor, chunk: bytes) -> None:
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "chunks": [4, 6], "compressor": compressor, "dtype": "<u2", "fill_value": 0, "filters": None,
        "order": "C", "shape": [4, 6], "zarr_format": 2}))
    (path / "0.0").write_bytes(chunk)


@pytest.mark.parametrize("spelling,code", [("NONE", 0), ("BYTE", 1), ("BIT", 2), ("bit", 2)])
def test_blosc_shuffle_names_of_gdal(tmp_path, spelling, code):
    chunk = numcodecs.Blosc(cname="zstd", clevel=3, shuffle=code).encode(DATA.tobytes())
    write_v2(tmp_path / "a", {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": spelling, "blocksize": 0},
             chunk)
    a = zarrc.open_array(str(tmp_path / "a"), mode="r+")
    assert np.array_equal(a[...], DATA)
    a[1, 1] = 9                                      # written back: read again by numcodecs
    written = numcodecs.Blosc().decode((tmp_path / "a" / "0.0").read_bytes())
    assert np.frombuffer(written, "<u2")[7] == 9
    assert from_gdal({"id": "blosc", "shuffle": spelling})["shuffle"] == code


def test_lzma_delta_key_of_gdal(tmp_path):
    filters = [{"id": lzma.FILTER_DELTA, "dist": 1}, {"id": lzma.FILTER_LZMA2, "preset": 1}]
    chunk = lzma.compress(DATA.tobytes(), format=lzma.FORMAT_XZ, filters=filters)
    write_v2(tmp_path / "a", {"id": "lzma", "preset": 1, "delta": 1}, chunk)
    a = zarrc.open_array(str(tmp_path / "a"), mode="r")
    assert np.array_equal(a[...], DATA)
    assert a.compressors[0].codec_id == "lzma"


def test_other_configurations_unchanged():
    for config in ({"id": "blosc", "shuffle": 1}, {"id": "blosc", "shuffle": "weird"},
                   {"id": "lzma", "delta": 1, "format": 3}, {"id": "zstd", "level": 1}):
        assert from_gdal(config) is config
