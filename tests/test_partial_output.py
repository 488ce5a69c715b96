"""What a failed read leaves in the caller's ``out=`` (docs/guarantees.md, "Reads").

Chunks decode straight into ``out``: a read that fails on chunk N leaves the
chunks read before it in ``out`` and says so (``destination_partly_written``).
Reads into zarrc's own scratch (``fields=``, a non-contiguous ``out`` of a point
selection, a new result) leave the caller's array untouched and say False."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import zarrc
from zarrc.errors import ArgumentError, CodecError, ZarrcError

SENTINEL = -7


def _array(tmp_path, zarr_format=3, **kwargs):
    data = np.arange(64, dtype="int32").reshape(8, 8)
    a = zarrc.create_array(str(tmp_path / "a"), shape=(8, 8), chunks=(2, 8), dtype="int32",
                           zarr_format=zarr_format, fill_value=0, **kwargs)
    a[...] = data
    return a, data


def _damage(tmp_path, key: str) -> None:
    """The stored file of ``key`` replaced by bytes no codec reads."""
    path = tmp_path / "a" / key
    path.write_bytes(b"\xff" * max(16, os.path.getsize(path)))


def _assert_partly(err: ZarrcError, out: np.ndarray, data: np.ndarray) -> None:
    assert err.destination_partly_written is True
    if sys.version_info >= (3, 11):                # (exception notes are 3.11's)
        assert any("partly written" in note for note in err.__notes__)
    rows = (out != SENTINEL).all(axis=1)
    assert rows[:2].all()                          # chunk 0 was read into out
    np.testing.assert_array_equal(out[rows], data[rows])
    assert (out[~rows] == SENTINEL).all()          # the rest is as it was


@pytest.mark.parametrize("kind", ["blosc", "zstd", "v2-filters", "sharded"])
def test_a_failed_read_into_out_says_out_is_partly_written(tmp_path, kind):
    """One thread reads chunk by chunk: chunks 0..2 land in out, chunk 3 fails."""
    kwargs, key, zf = {}, "c/3/0", 3
    if kind == "blosc":
        kwargs = {"compressors": zarrc.codecs.BloscCodec(cname="lz4")}
    elif kind == "zstd":
        kwargs = {"compressors": zarrc.codecs.ZstdCodec()}
    elif kind == "v2-filters":
        import numcodecs
        kwargs, key, zf = {"filters": [numcodecs.Delta(dtype="int32")],
                           "compressors": numcodecs.Zlib()}, "3.0", 2
    else:
        kwargs = {"shards": (4, 8), "compressors": zarrc.codecs.ZstdCodec()}
        key = "c/1/0"
    a, data = _array(tmp_path, zf, **kwargs)
    if kind == "sharded":      # the second shard's inner chunks: damage its first one's bytes
        path = tmp_path / "a" / key
        raw = bytearray(path.read_bytes())
        raw[:8] = b"\xff" * 8
        path.write_bytes(bytes(raw))
    else:
        _damage(tmp_path, key)
    out = np.full((8, 8), SENTINEL, "int32")
    with zarrc.config.set(threads=1), pytest.raises(ZarrcError) as info:
        a.get_basic_selection(..., out=out)
    _assert_partly(info.value, out, data)


def test_a_failed_orthogonal_read_into_out_says_so(tmp_path):
    a, data = _array(tmp_path, compressors=zarrc.codecs.ZstdCodec())
    _damage(tmp_path, "c/3/0")
    out = np.full((8, 8), SENTINEL, "int32")
    with zarrc.config.set(threads=1), pytest.raises(CodecError) as info:
        a.get_orthogonal_selection((list(range(8)), slice(None)), out=out)
    _assert_partly(info.value, out, data)


def test_a_failed_read_with_fields_leaves_out_untouched(tmp_path):
    dt = np.dtype([("x", "int32"), ("y", "int32")])
    a = zarrc.create_array(str(tmp_path / "a"), shape=(8,), chunks=(2,), dtype=dt,
                           compressors=zarrc.codecs.ZstdCodec())
    a[...] = np.ones(8, dt)
    _damage(tmp_path, "c/3")
    out = np.full(8, SENTINEL, "int32")
    with zarrc.config.set(threads=1), pytest.raises(CodecError) as info:
        a.get_basic_selection(..., out=out, fields="x")
    assert info.value.destination_partly_written is False
    assert (out == SENTINEL).all()


def test_a_failed_point_read_into_a_strided_out_leaves_it_untouched(tmp_path):
    a, _ = _array(tmp_path, compressors=zarrc.codecs.ZstdCodec())
    _damage(tmp_path, "c/3/0")
    rows = np.repeat(np.arange(8), 2).reshape(4, 4)
    cols = np.tile([0, 1], 8).reshape(4, 4)
    backing = np.full((4, 10), SENTINEL, "int32")
    out = backing[:, :8:2]                # 2-d, not contiguous: the points read into scratch
    with zarrc.config.set(threads=1), pytest.raises(CodecError) as info:
        a.get_coordinate_selection((rows, cols), out=out)
    assert info.value.destination_partly_written is False
    assert (backing == SENTINEL).all()


def test_a_read_without_out_fails_without_the_flag(tmp_path):
    a, _ = _array(tmp_path, compressors=zarrc.codecs.ZstdCodec())
    _damage(tmp_path, "c/3/0")
    with pytest.raises(CodecError) as info:
        a[...]
    assert info.value.destination_partly_written is False
    assert "c/3/0" in str(info.value)


def test_a_mismatched_out_is_refused_before_anything_is_read(tmp_path):
    a, _ = _array(tmp_path)
    out = np.full((8, 4), SENTINEL, "int32")
    with pytest.raises(ArgumentError) as info:
        a.get_basic_selection(..., out=out)
    assert info.value.destination_partly_written is False
    assert (out == SENTINEL).all()
