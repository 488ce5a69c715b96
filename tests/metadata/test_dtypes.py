"""Data types: v3 identifiers, raw bits, and numpy dtypes from user arguments."""

from __future__ import annotations

import numpy as np
import pytest

from zarrc.errors import MetadataError
from zarrc.metadata import DataType, as_data_type, parse_data_type

CORE = {
    "bool": ("bool", 1),
    "int8": ("int", 1),
    "int16": ("int", 2),
    "int32": ("int", 4),
    "int64": ("int", 8),
    "uint8": ("uint", 1),
    "uint16": ("uint", 2),
    "uint32": ("uint", 4),
    "uint64": ("uint", 8),
    "float16": ("float", 2),
    "float32": ("float", 4),
    "float64": ("float", 8),
    "complex64": ("complex", 8),
    "complex128": ("complex", 16),
}


@pytest.mark.parametrize("name", list(CORE))
def test_core_types(name):
    data_type = parse_data_type(name)
    assert (data_type.kind, data_type.itemsize) == CORE[name]
    assert data_type.dtype == np.dtype(name) and data_type.dtype.isnative
    assert data_type.to_json() == name and str(data_type) == name
    assert parse_data_type({"name": name}) is data_type
    assert data_type.has_endianness == (CORE[name][0] != "bool" and CORE[name][1] > 1)


@pytest.mark.parametrize(("name", "size"), [("r8", 1), ("r16", 2), ("r24", 3), ("r1024", 128)])
def test_raw_types(name, size):
    data_type = parse_data_type(name)
    assert data_type == DataType(name, np.dtype(f"V{size}"), "raw")
    assert not data_type.has_endianness and data_type.to_json() == name


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("r0", "not a supported data type"),
        ("r12", "multiple of 8"),
        ("r-8", "not a supported"),
        ("r08", "not a supported"),
        ("R8", "not a supported"),
        ("Float32", "not a supported"),
        ("<f4", "not a supported"),
        ("String", "not a supported"),
        ("complex_bfloat16", "not a supported"),
        ({"name": "float32", "configuration": {"endian": "big"}}, "takes no configuration"),
        ({"name": "numpy.datetime65", "configuration": {"unit": "s", "scale_factor": 1}}, "not a supported"),
        ({"name": "raw_bits", "configuration": {"length_bytes": 2}}, "not a supported"),
        ({"configuration": {}}, 'must have a string "name"'),
        (None, "must be a name or an object"),
        (["int32"], "must be a name or an object"),
        ({"name": "int32", "x": 1}, 'unknown member "x"'),
    ],
)
def test_invalid_data_types(value, match):
    with pytest.raises(MetadataError, match=match) as info:
        parse_data_type(value)
    assert str(info.value).startswith('"data_type"')


@pytest.mark.parametrize(
    ("dtype", "name"),
    [
        ("uint16", "uint16"),
        ("<f4", "float32"),
        (">f4", "float32"),
        (">i8", "int64"),
        ("f8", "float64"),
        (np.float32, "float32"),
        (np.dtype(">c16"), "complex128"),
        (float, "float64"),
        (bool, "bool"),
        ("?", "bool"),
        ("b", "int8"),
        ("u1", "uint8"),
        ("e", "float16"),
        ("V3", "raw_bytes"),       # (tests/test_dtypes_ext.py: the extension types)
        (np.dtype("V1"), "raw_bytes"),
        ("r16", "r16"),
        ("complex64", "complex64"),
        ({"name": "int8"}, "int8"),
    ],
)
def test_numpy_dtypes_map_to_v3_names(dtype, name):
    assert as_data_type(dtype).name == name
    assert as_data_type(as_data_type(dtype)) is as_data_type(dtype) or name.startswith("r")


@pytest.mark.parametrize(
    "dtype",
    [
        "U",
        "S",
        "O",
        "V0",
        "float128",
        "not-a-dtype",
        np.dtype(("i4", (2,))),
    ],
)
def test_numpy_dtypes_without_v3_equivalent(dtype):
    try:
        np.dtype(dtype)
    except TypeError:
        pass
    with pytest.raises(MetadataError):
        as_data_type(dtype)
