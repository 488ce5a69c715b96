"""Fill values: JSON forms of every core type, bit-exact NaN payloads, user input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrc.errors import MetadataError
from zarrc.metadata.fill_value import fill_bytes
from zarrc.metadata import (
    cast_fill_value,
    default_fill_value,
    encode_fill_value,
    parse_data_type,
    parse_fill_value,
)

FLOATS = ["float16", "float32", "float64"]
NUMERIC = (
    ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    + FLOATS
    + ["complex64", "complex128"]
)


def bits(value) -> bytes:
    return np.asarray(value).tobytes()


def parse(value, name):
    return parse_fill_value(value, parse_data_type(name))


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("bool", True, np.True_),
        ("bool", False, np.False_),
        ("int8", -128, np.int8(-128)),
        ("uint64", 2**64 - 1, np.uint64(2**64 - 1)),
        ("int64", -(2**63), np.int64(-(2**63))),
        ("float32", 1.5, np.float32(1.5)),
        ("float32", 3, np.float32(3)),
        ("float32", 0.1, np.float32(0.1)),
        ("float64", -0.0, np.float64(-0.0)),
        ("float16", 1e10, np.float16(np.inf)),  # rounds to the nearest representable value
        pytest.param("float64", 10**400, np.float64(np.inf), id="float64-10**400"),
        ("float32", "Infinity", np.float32(np.inf)),
        ("float64", "-Infinity", np.float64(-np.inf)),
        ("float32", "0x3f800000", np.float32(1.0)),
        ("float16", "0x3C00", np.float16(1.0)),
        ("complex64", [1, -2.5], np.complex64(1 - 2.5j)),
        ("complex128", ["Infinity", "-Infinity"], np.complex128(complex(np.inf, -np.inf))),
        ("r8", [7], np.frombuffer(b"\x07", "V1")[0]),
        ("r24", [0, 255, 16], np.frombuffer(b"\x00\xff\x10", "V3")[0]),
    ],
)
def test_parse(name, value, expected):
    got = parse(value, name)
    assert isinstance(got, np.generic)
    assert got.dtype == parse_data_type(name).dtype
    assert bits(got) == bits(expected)


@pytest.mark.parametrize(
    ("name", "nan_bits"), [("float16", "7e00"), ("float32", "7fc00000"), ("float64", "7ff8000000000000")]
)
def test_canonical_nan(name, nan_bits):
    nan = parse("NaN", name)
    assert bits(nan) == bytes.fromhex(nan_bits)[::-1]
    assert bits(parse(f"0x{nan_bits}", name)) == bits(nan)
    assert encode_fill_value(nan, parse_data_type(name)) == "NaN"
    assert encode_fill_value(np.array(np.nan, dtype=name)[()], parse_data_type(name)) == "NaN"


@pytest.mark.parametrize(
    ("name", "hex_value"),
    [
        ("float16", "0x7e01"),
        ("float16", "0xfe00"),
        ("float32", "0x7fc00001"),
        ("float32", "0xffc00000"),
        ("float32", "0x7f800001"),
        ("float64", "0x7ff0000000000001"),
        ("float64", "0xfff8000000000000"),
    ],
)
def test_non_canonical_nan_round_trips_through_hex(name, hex_value):
    data_type = parse_data_type(name)
    value = parse(hex_value, name)
    assert np.isnan(value)
    assert bits(value) == int(hex_value, 16).to_bytes(data_type.itemsize, "little")
    assert encode_fill_value(value, data_type) == hex_value
    complex_type = parse_data_type({"float32": "complex64", "float64": "complex128"}.get(name, "complex64"))
    if complex_type.itemsize == 2 * data_type.itemsize:
        pair = parse([hex_value, "NaN"], complex_type.name)
        assert encode_fill_value(pair, complex_type) == [hex_value, "NaN"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("float64", 1.5),
        ("float64", -0.0),
        ("float64", 0.0),
        ("float64", 5e-324),
        ("float64", "Infinity"),
        ("float32", 0.10000000149011612),
        ("float16", 65504.0),
        ("float16", "-Infinity"),
        ("complex64", [0.0, -0.0]),
        ("complex128", ["NaN", 1e300]),
        ("int16", -7),
        ("uint32", 2**32 - 1),
        ("bool", True),
        ("r16", [1, 2]),
    ],
)
def test_encode_round_trip_is_identity(name, value):
    data_type = parse_data_type(name)
    encoded = encode_fill_value(parse(value, name), data_type)
    assert repr(encoded) == repr(value)


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("bool", [0], "expected true or false"),
        ("bool", "true", "expected true or false"),
        ("bool", None, "expected true or false"),
        ("int8", 128, "out of range -128..127"),
        ("uint8", -1, "out of range 0..255"),
        ("uint64", 2**64, "out of range"),
        ("int64", 2**63, "out of range"),
        ("int32", 1.5, "expected an integer"),
        ("int32", True, "integer"),
        ("int32", "1.5", "expected an integer"),
        ("int32", None, "expected an integer"),
        ("float32", "nan", "expected a number"),
        ("float32", "inf", "expected a number"),
        ("float32", "infinity", "expected a number"),
        ("float32", "+Infinity", "expected a number"),
        ("float32", "0x7fc0", "needs 8 digits"),
        ("float32", "0x7fc0000000", "needs 8 digits"),
        ("float64", "0x7fc00000", "needs 16 digits"),
        ("float16", "0x7fc00000", "needs 4 digits"),
        ("float32", "0X7fc00000", "expected a number"),
        ("float32", "0x7fc0000g", "expected a number"),
        ("float32", "1.5x", "expected a number"),
        ("float32", True, "float32"),
        ("float32", None, "float32"),
        ("float32", [1.0], "float32"),
        ("float64", math.nan, "float64"),
        ("complex64", 1.0, "two-element array"),
        ("complex64", [1.0], "two-element array"),
        ("complex64", [1.0, 2.0, 3.0], "two-element array"),
        ("complex64", [1.0, "nan"], "expected a number"),
        ("complex128", ["0x7fc00000", 0], "needs 16 digits"),
        ("r16", [1], "2 integers 0..255"),
        ("r16", [1, 256], "2 integers"),
        ("r16", "AQ==", "2 integers"),
        ("r8", [True], "1 integers"),
    ],
)
def test_invalid(name, value, match):
    with pytest.raises(MetadataError, match=match) as info:
        parse(value, name)
    assert str(info.value).startswith('"fill_value"')
    assert f"for data type {name}" in str(info.value)


@pytest.mark.parametrize("name", ["bool", "r32"] + NUMERIC)
def test_default_fill_value(name):
    data_type = parse_data_type(name)
    value = default_fill_value(data_type)
    assert value.dtype == data_type.dtype and bits(value) == bytes(data_type.itemsize)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("int16", 5, np.int16(5)),
        ("int16", np.int64(-3), np.int16(-3)),
        ("uint8", 7.0, np.uint8(7)),
        ("float32", np.nan, np.float32(np.nan)),
        ("float32", 2, np.float32(2)),
        ("float32", np.float64(0.1), np.float32(0.1)),
        ("float64", "NaN", np.float64(np.nan)),
        ("float16", -np.inf, np.float16(-np.inf)),
        ("complex64", 1 + 2j, np.complex64(1 + 2j)),
        ("complex128", 3.0, np.complex128(3)),
        ("complex128", (1, "NaN"), np.complex128(complex(1, np.nan))),
        ("complex64", np.complex128(1 - 1j), np.complex64(1 - 1j)),
        ("bool", True, np.True_),
        ("bool", np.False_, np.False_),
        ("r16", b"\x01\x02", np.frombuffer(b"\x01\x02", "V2")[0]),
        ("r16", [1, 2], np.frombuffer(b"\x01\x02", "V2")[0]),
        ("int8", np.array(-4), np.int8(-4)),
    ],
)
def test_cast_user_values(name, value, expected):
    got = cast_fill_value(value, parse_data_type(name))
    assert got.dtype == parse_data_type(name).dtype
    assert bits(got) == bits(expected) or (np.isnan(got) and np.isnan(expected))


def test_cast_keeps_nan_payload_of_numpy_scalars():
    payload = np.frombuffer(b"\x01\x00\xc0\xff", "<f4")[0]
    data_type = parse_data_type("float32")
    assert bits(cast_fill_value(payload, data_type)) == b"\x01\x00\xc0\xff"
    assert encode_fill_value(cast_fill_value(payload, data_type), data_type) == "0xffc00001"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("int8", 200),
        ("int8", float("nan")),
        ("int8", "1.5"),
        ("uint8", -1),
        ("bool", "yes"),
        ("bool", None.__class__),
        ("float32", 1j),
        ("float32", "nan"),
        ("r16", b"\x01"),
        ("int32", object()),
    ],
)
def test_cast_rejects(name, value):
    with pytest.raises(MetadataError, match="fill_value"):
        cast_fill_value(value, parse_data_type(name))


@given(st.sampled_from(FLOATS + ["complex64", "complex128"]), st.data())
def test_any_bit_pattern_round_trips_bit_exactly(name, data):
    data_type = parse_data_type(name)
    raw = data.draw(st.binary(min_size=data_type.itemsize, max_size=data_type.itemsize))
    value = np.frombuffer(raw, dtype=data_type.dtype)[0]
    encoded = encode_fill_value(value, data_type)
    assert bits(parse_fill_value(encoded, data_type)) == raw


@given(st.sampled_from(NUMERIC + ["bool", "r8", "r40"]), st.data())
def test_json_round_trip(name, data):
    data_type = parse_data_type(name)
    raw = data.draw(st.binary(min_size=data_type.itemsize, max_size=data_type.itemsize))
    if name == "bool":
        raw = bytes([raw[0] & 1])
    value = np.frombuffer(raw, dtype=data_type.dtype)[0]
    import json

    encoded = json.loads(json.dumps(encode_fill_value(value, data_type)))
    assert bits(parse_fill_value(encoded, data_type)) == raw


@given(st.floats(allow_nan=False, width=64))
def test_float_numbers_round_to_the_type(number):
    for name in FLOATS:
        got = parse(number, name)
        with np.errstate(over="ignore"):
            assert bits(got) == bits(np.array(number).astype(name))


@pytest.mark.parametrize(("value", "dtype", "expected"), [
    (np.float64(1.5), "<f8", np.float64(1.5).tobytes()),
    (-1, "int16", np.int16(-1).tobytes()),
    (None, "int32", bytes(4)),                                  # v2 null: zeros
    (None, "M8[s]", np.array("NaT", "M8[s]").tobytes()),        # v2 null: NaT
    (b"ab", "S4", b"ab\0\0"),                                   # short bytes: padded
    (np.void(b"\x01\x02"), "V2", b"\x01\x02"),
    ("x", "O", b""),                                            # variable-length items
])
def test_fill_bytes_is_one_item_in_native_order(value, dtype, expected):
    assert fill_bytes(value, np.dtype(dtype)) == expected


def test_fill_bytes_keeps_nan_payloads():
    nan = np.frombuffer((0x7FF8000000000123).to_bytes(8, "little"), "<f8")[0]
    assert fill_bytes(nan, np.dtype("<f8")) == (0x7FF8000000000123).to_bytes(8, "little")
