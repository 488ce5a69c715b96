"""The cast_value codec: the spec's examples, its metadata checks, and its values
against zarr-python 3.4's (cast-value-rs) for every int8 / uint8 / int16 value and
float edge cases (+-0, +-inf, NaN, halfway values, out-of-range values) in each
rounding and out_of_range mode, with and without a scalar map."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import values_peer
from values_peer import peer_cast

from zarrc.codecs import CastValue
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import parse_codecs
from zarrc.metadata.dtypes import parse_data_type

ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]
OUT_OF_RANGE = [None, "clamp", "wrap"]
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
needs_peer = pytest.mark.skipif(values_peer.REASON is not None, reason=values_peer.REASON or "")


def zarrc_cast(arr, target, rounding="nearest-even", out_of_range=None, scalar_map=None, decode=False):
    """zarrc's cast (None: it raised CodecError)."""
    try:
        if decode:
            codec = CastValue(data_type=str(arr.dtype), rounding=rounding, out_of_range=out_of_range,
                              scalar_map=scalar_map)
            return codec.decode_array(arr, np.dtype(target))
        codec = CastValue(data_type=target, rounding=rounding, out_of_range=out_of_range, scalar_map=scalar_map)
        return codec.encode(arr)
    except CodecError:
        return None


def float_edges(dtype: str) -> np.ndarray:
    """+-0, +-inf, NaN, halfway values, values near and beyond every target's range."""
    base = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, 0.50000006,
            126.5, 127.4, 127.5, 127.6, 128.0, -128.5, -129.0, 255.5, 256.0, -0.3, 32767.5, 32768.0, -32768.5,
            65504.0, 65519.0, 65520.0, 70000.0, 2147483647.5, 2147483648.0, -2147483649.0, 4294967296.0,
            9.2233720368547758e18, -9.2233720368547758e18, 1.8446744073709552e19, 1e30, -1e30, 3.4028235e38,
            1e-8, -1e-8, 6e-8, 3e-5, 1e-40, 1e-300, 5e-324, 1.7976931348623157e308]
    with np.errstate(all="ignore"):
        return np.array(base, dtype=np.float64).astype(dtype)


def all_values(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.arange(int(info.min), int(info.max) + 1).astype(dtype)


def int_edges(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    vals = {int(info.min), int(info.max), 0, 1, 2, 127, 128, 255, 256, 32767, 32768, 65504, 65505, 65519, 65520,
            65535, 65536, 70000, 2**24 + 1, 2**31 - 1, 2**31, 2**32 - 1, 2**53 + 1, 2**53 + 3, 2**63 - 1,
            int(info.min) + 1, int(info.max) - 1}
    vals |= {-v for v in vals}
    return np.array(sorted(v for v in vals if info.min <= v <= info.max), dtype=dtype)


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_spec_out_of_range_examples():
    x = np.array([128.0])
    assert zarrc_cast(x, "int8") is None
    assert zarrc_cast(x, "int8", out_of_range="clamp").tolist() == [127]
    assert zarrc_cast(x, "int8", out_of_range="wrap").tolist() == [-128]
    y = np.array([32768, 32769, -32769], dtype="int32")
    assert zarrc_cast(y, "int16", out_of_range="wrap").tolist() == [-32768, -32767, 32767]


def test_spec_nan_scalar_map_round_trip():
    codec = CastValue(data_type="uint8", scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]})
    enc = codec.encode(np.array([np.nan, 1.0, 255.0]))
    assert enc.tolist() == [0, 1, 255]
    dec = codec.decode_array(enc, np.dtype("float64"))
    assert np.isnan(dec[0]) and dec[1:].tolist() == [1.0, 255.0]


def test_nan_and_inf_to_integers_fail_naming_the_item():
    with pytest.raises(CodecError, match=r"cast_value: item 1 is nan"):
        CastValue(data_type="int16", out_of_range="clamp").encode(np.array([1.0, np.nan]))
    with pytest.raises(CodecError, match=r"item 0 \(300\) is out of the range of int8"):
        CastValue(data_type="int8").encode(np.array([300], dtype="int16"))


def test_signed_zero_and_nan_carry_between_floats():
    out = zarrc_cast(np.array([-0.0, np.nan, -np.inf]), "float32")
    assert np.signbit(out[0]) and np.isnan(out[1]) and out[2] == -np.inf


@pytest.mark.parametrize("config, member", [
    ({"data_type": "uint8", "rounding": "nearest"}, "rounding"),
    ({"data_type": "uint8", "out_of_range": "saturate"}, "out_of_range"),
    ({"data_type": "float32", "out_of_range": "wrap"}, "out_of_range"),
    ({"data_type": "string"}, "data_type"),
    ({"data_type": 8}, "data_type"),
    ({"data_type": "uint8", "scalar_map": {"encode": [["NaN"]]}}, "scalar_map.encode"),
    ({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 256]]}}, "scalar_map.encode value"),
    ({"data_type": "uint8", "scalar_map": {"decode": [["x", 1.0]]}}, "scalar_map.decode key"),
    ({"data_type": "uint8", "scalar_map": {"other": []}}, "scalar_map"),
    ({"data_type": "uint8", "extra": 1}, "extra"),
    ({"data_type": "uint8", "scalar_map": {"encode": [[i + 0.5, 0] for i in range(65)]}}, "scalar_map.encode"),
])
def test_bad_metadata_names_codec_and_member(config, member):
    with pytest.raises(MetadataError, match=r"cast_value") as info:
        parse_codecs([{"name": "cast_value", "configuration": config}, "bytes"], (4,),
                     parse_data_type("float64"))
    assert member.split()[0].split(".")[0] in str(info.value)


def test_bad_constructor_arguments():
    with pytest.raises(CodecError, match="cast_value: rounding"):
        CastValue(data_type="uint8", rounding="up")
    with pytest.raises(CodecError, match="cast_value: out_of_range"):
        CastValue(data_type="float32", out_of_range="wrap")


def test_chain_hands_on_the_target_type():
    specs = parse_codecs([{"name": "cast_value", "configuration": {"data_type": "uint8"}}, {"name": "bytes"}],
                         (4,), parse_data_type("float32"))
    assert [s.name for s in specs] == ["cast_value", "bytes"]
    assert dict(specs[1].configuration) == {}


def test_to_dict_as_zarr_python():
    assert CastValue(data_type="int16").to_dict() == {"name": "cast_value", "configuration": {"data_type": "int16"}}
    d = CastValue(data_type="uint8", rounding="towards-zero", out_of_range="wrap",
                  scalar_map={"encode": [("NaN", 0)]}).to_dict()
    assert d["configuration"] == {"data_type": "uint8", "rounding": "towards-zero", "out_of_range": "wrap",
                                  "scalar_map": {"encode": [["NaN", 0]]}}


# ---------------------------------------------------------------- against zarr-python 3.4

def _compare(src: np.ndarray, target: str, scalar_map=None, decode=False):
    bad = []
    for rounding, oor in itertools.product(ROUNDINGS, OUT_OF_RANGE):
        if oor == "wrap" and target in FLOATS:
            continue
        # each element alone (the peer fails a whole array for one element), then the
        # elements that cast as a whole array
        ok = []
        for i in range(src.size):
            one = src[i:i + 1]
            mine = zarrc_cast(one, target, rounding, oor, scalar_map, decode)
            theirs = peer_cast(one, target, rounding, oor, scalar_map, decode)
            if not same(mine, theirs):
                bad.append((rounding, oor, one[0], None if mine is None else mine[0],
                            None if theirs is None else theirs[0]))
            elif mine is not None:
                ok.append(i)
        if ok:
            sub = src[ok]
            assert same(zarrc_cast(sub, target, rounding, oor, scalar_map, decode),
                        peer_cast(sub, target, rounding, oor, scalar_map, decode))
    assert not bad, f"{len(bad)} differences, first: {bad[:8]}"


def _compare_whole(src: np.ndarray, target: str):
    """Every value of a small type at once (the peer's whole-array answer per mode)."""
    for rounding, oor in itertools.product(ROUNDINGS, OUT_OF_RANGE):
        if oor == "wrap" and target in FLOATS:
            continue
        mine = zarrc_cast(src, target, rounding, oor)
        theirs = peer_cast(src, target, rounding, oor)
        assert same(mine, theirs), (rounding, oor)


@needs_peer
@pytest.mark.parametrize("source", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("target", INTS + FLOATS)
def test_every_small_integer_as_zarr_python(source, target):
    vals = all_values(source)
    _compare_whole(vals, target)
    # values that fail: compared one by one where the target is narrower
    if np.iinfo(source).bits > (np.dtype(target).itemsize * 8) or (target.startswith("u") != source.startswith("u")):
        info = np.iinfo(target) if target not in FLOATS else None
        edges = vals if info is None else vals[(vals.astype(np.int64) < info.min) | (vals.astype(np.int64) > info.max)]
        _compare(edges[:: max(1, edges.size // 300)], target)


@needs_peer
@pytest.mark.parametrize("source", FLOATS)
@pytest.mark.parametrize("target", INTS + FLOATS)
def test_float_edge_cases_as_zarr_python(source, target):
    _compare(float_edges(source), target)


@needs_peer
@pytest.mark.parametrize("source", ["int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("target", INTS + FLOATS)
def test_wide_integer_edges_as_zarr_python(source, target):
    _compare(int_edges(source), target)


@needs_peer
@pytest.mark.parametrize("source, target, scalar_map", [
    ("float64", "uint8", {"encode": [["NaN", 0], ["Infinity", 255], ["-Infinity", 1]]}),
    ("float32", "int16", {"encode": [[0.5, 7], [-0.0, 3]]}),
    ("float64", "float32", {"encode": [["NaN", 0.0], [1.5, "NaN"]]}),
    ("int16", "uint8", {"encode": [[-1, 255], [300, 0]]}),
])
def test_scalar_map_as_zarr_python(source, target, scalar_map):
    _compare(float_edges(source) if source in FLOATS else int_edges(source), target, scalar_map)


@needs_peer
@pytest.mark.parametrize("stored, array", [("uint8", "float64"), ("int16", "float32"), ("int8", "float16")])
def test_decode_with_scalar_map_as_zarr_python(stored, array):
    scalar_map = {"decode": [[0, "NaN"], [1, "-Infinity"]]}
    _compare(all_values(stored)[:: 3], array, scalar_map, decode=True)
