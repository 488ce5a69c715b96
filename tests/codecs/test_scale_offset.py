"""The scale_offset codec: metadata checks, and its values against zarr-python 3.4's
bit for bit (the arithmetic in the data type: float32 stays float32, float16 through
float32, integers range-checked, int64 wrapping, inexact integer division an error)."""

from __future__ import annotations

import numpy as np
import pytest
import values_peer
from values_peer import peer_scale_offset

from zarrc.codecs import ScaleOffset
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import parse_codecs
from zarrc.metadata.dtypes import parse_data_type

needs_peer = pytest.mark.skipif(values_peer.REASON is not None, reason=values_peer.REASON or "")


def zarrc_run(arr, offset, scale, decode):
    codec = ScaleOffset(offset=offset, scale=scale)
    try:
        return codec.decode(arr) if decode else codec.encode(arr)
    except CodecError:
        return None


def values(dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        base = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 3.14159, 1e-3, 1e3, 65504.0, 1e-7, 2.5e4, np.inf, -np.inf,
                np.nan, 1e30, -7.25]
        with np.errstate(all="ignore"):
            return np.concatenate([np.array(base).astype(dt),
                                   np.random.default_rng(1).normal(size=500).astype(dt) * dt.type(100)])
    info = np.iinfo(dt)
    if dt.itemsize <= 2:
        return np.arange(int(info.min), int(info.max) + 1).astype(dt)
    edges = [int(info.min), int(info.min) + 1, -1000, -7, -1, 0, 1, 7, 12, 1000, int(info.max) - 1, int(info.max)]
    return np.array([e for e in edges if info.min <= e <= info.max], dtype=dt)


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


FLOAT_PARAMS = [(0, 1), (5, 0.1), (-10, 0.1), ("NaN", 2), (1.5, -3.0), (0.25, 1e-3), ("Infinity", 1), (2, 1e5)]
INT_PARAMS = [(0, 1), (1000, 1), (-5, 2), (7, -3), (0, 4), (100, 10)]


@needs_peer
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("offset, scale", FLOAT_PARAMS)
@pytest.mark.parametrize("decode", [False, True])
def test_floats_as_zarr_python(dtype, offset, scale, decode):
    arr = values(dtype)
    assert same(zarrc_run(arr, offset, scale, decode), peer_scale_offset(arr, offset, scale, decode))


@needs_peer
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("offset, scale", INT_PARAMS)
@pytest.mark.parametrize("decode", [False, True])
def test_integers_as_zarr_python(dtype, offset, scale, decode):
    info = np.iinfo(dtype)
    if not (info.min <= offset <= info.max and info.min <= scale <= info.max):
        pytest.skip("offset or scale not representable")
    arr = values(dtype)
    theirs = peer_scale_offset(arr, offset, scale, decode)
    mine = zarrc_run(arr, offset, scale, decode)
    assert same(mine, theirs)
    if theirs is None:          # some item fails: every one alone, as zarr-python does
        for i in range(0, arr.size, max(1, arr.size // 200)):
            one = arr[i:i + 1]
            assert same(zarrc_run(one, offset, scale, decode), peer_scale_offset(one, offset, scale, decode)), one


def test_errors_name_the_item():
    with pytest.raises(CodecError, match=r"scale_offset: item 1 \(127\) encodes to a value outside"):
        ScaleOffset(offset=-1, scale=1).encode(np.array([0, 127], dtype="int8"))
    with pytest.raises(CodecError, match=r"item 0 \(3\) is not divisible by scale=2"):
        ScaleOffset(scale=2).decode(np.array([3], dtype="int16"))


@pytest.mark.parametrize("config, dtype, member", [
    ({"scale": 0}, "float32", "scale"),
    ({"scale": "0"}, "int16", "scale"),
    ({"offset": 0.5}, "int16", "offset"),
    ({"offset": [1]}, "float32", "offset"),
    ({"offset": 300}, "uint8", "offset"),
    ({"scale": 2, "extra": 1}, "float32", "extra"),
])
def test_bad_metadata_names_codec_and_member(config, dtype, member):
    with pytest.raises(MetadataError, match=r"scale_offset") as info:
        parse_codecs([{"name": "scale_offset", "configuration": config}, "bytes"], (4,), parse_data_type(dtype))
    assert member in str(info.value)


def test_no_configuration_and_to_dict():
    specs = parse_codecs([{"name": "scale_offset"}, "bytes"], (4,), parse_data_type("uint8"))
    assert specs[0].name == "scale_offset"
    assert ScaleOffset().to_dict() == {"name": "scale_offset"}
    assert ScaleOffset(offset=5, scale=0.1).to_dict() == {"name": "scale_offset",
                                                          "configuration": {"offset": 5, "scale": 0.1}}
    with pytest.raises(CodecError, match="scale_offset: offset"):
        ScaleOffset(offset=[1])
