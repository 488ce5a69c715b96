"""The ml_dtypes data types (zarrc.metadata.dtypes_ml): names, numpy dtypes, the
bytes codec's endian, fill values in every JSON form of each type's spec (numbers,
"NaN", "Infinity", hex), what is written for them, and the error without ml_dtypes."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from zarrc.errors import MetadataError
from zarrc.metadata.dtypes import as_data_type, byte_swap_unit, parse_data_type
from zarrc.metadata.dtypes_ml import ML_KINDS, NAN_BITS
from zarrc.metadata.fill_value import cast_fill_value, encode_fill_value, parse_fill_value

ml_dtypes = pytest.importorskip("ml_dtypes", reason="the ml_dtypes types need ml_dtypes (zarrc[dtypes])")

NAMES = sorted(ML_KINDS)


def bits(value, dtype) -> int:
    return int(np.asarray(value, dtype=dtype).reshape(1).view(f"u{np.dtype(dtype).itemsize}")[0])


@pytest.mark.parametrize("name", NAMES)
def test_names_round_trip(name):
    data_type = parse_data_type(name)
    assert data_type.dtype == np.dtype(getattr(ml_dtypes, name))
    assert data_type.to_json() == name
    assert as_data_type(name) == data_type
    assert as_data_type(getattr(ml_dtypes, name)) == data_type
    assert as_data_type(np.dtype(getattr(ml_dtypes, name))) == data_type
    assert data_type.has_endianness == (name == "bfloat16")
    assert byte_swap_unit(data_type.dtype) == (2 if name == "bfloat16" else 0)


def test_configuration_is_refused():
    with pytest.raises(MetadataError, match="takes no configuration"):
        parse_data_type({"name": "bfloat16", "configuration": {"x": 1}})


# (type, JSON fill value, bits it means)
FILLS = [
    ("bfloat16", "NaN", 0x7FC0), ("bfloat16", "0x7fc1", 0x7FC1), ("bfloat16", "Infinity", 0x7F80),
    ("bfloat16", "-Infinity", 0xFF80), ("bfloat16", 1.5, 0x3FC0), ("bfloat16", -0.0, 0x8000),
    ("bfloat16", "0xFFFF", 0xFFFF),
    ("float8_e4m3", "NaN", 0x7C), ("float8_e4m3", "Infinity", 0x78), ("float8_e3m4", "NaN", 0x78),
    ("float8_e4m3fn", "NaN", 0x7F), ("float8_e4m3fn", 1.0, 0x38), ("float8_e4m3fnuz", "NaN", 0x80),
    ("float8_e4m3b11fnuz", "NaN", 0x80), ("float8_e5m2", "NaN", 0x7E), ("float8_e5m2", "-Infinity", 0xFC),
    ("float8_e5m2fnuz", "NaN", 0x80), ("float8_e8m0fnu", "NaN", 0xFF), ("float8_e8m0fnu", 1.0, 0x7F),
    ("float8_e8m0fnu", "0x7f", 0x7F), ("float4_e2m1fn", 6.0, 0x07), ("float4_e2m1fn", "0x0f", 0x0F),
    ("float6_e2m3fn", -1.0, 0x28), ("float6_e3m2fn", 0.25, 0x04),
    ("int4", -8, 0x08), ("int4", 7, 0x07), ("uint4", 15, 0x0F), ("int2", -1, 0x03), ("uint2", 3, 0x03),
]


@pytest.mark.parametrize(("name", "value", "expected"), FILLS)
def test_fill_values(name, value, expected):
    data_type = parse_data_type(name)
    fill = parse_fill_value(value, data_type)
    assert fill.dtype == data_type.dtype
    assert bits(fill, data_type.dtype) == expected
    written = encode_fill_value(fill, data_type)
    # written as zarr-python and tensorstore write them: numbers, "NaN", "Infinity",
    # other NaNs as hex; read back bit for bit
    assert bits(parse_fill_value(written, data_type), data_type.dtype) == expected
    if isinstance(value, str) and value.startswith("0x") and expected != NAN_BITS.get(name):
        f = float(fill)
        assert written == (value.lower() if math.isnan(f) or name == "float8_e8m0fnu" else f)


def test_e8m0fnu_fill_values():
    """float8_e8m0fnu (no zero, no sign): written in hex (tensorstore reads its
    numbers otherwise); 0.0, tensorstore's default, is the smallest value 0x00."""
    data_type = parse_data_type("float8_e8m0fnu")
    assert encode_fill_value(parse_fill_value(1.0, data_type), data_type) == "0x7f"
    assert encode_fill_value(cast_fill_value(None, data_type), data_type) == "0x00"
    assert bits(parse_fill_value(0.0, data_type), data_type.dtype) == 0
    assert encode_fill_value(parse_fill_value("NaN", data_type), data_type) == "NaN"


@pytest.mark.parametrize(("name", "value", "match"), [
    ("float8_e4m3fnuz", "Infinity", "no infinity"),
    ("float4_e2m1fn", "NaN", "no NaN"),
    ("float6_e3m2fn", "-Infinity", "no infinity"),
    ("float8_e8m0fnu", "Infinity", "no infinity"),
    ("bfloat16", "0x7fc", "4 digits"),
    ("float8_e5m2", "0x07e", "2 digits"),
    ("bfloat16", "0xzz00", "not hexadecimal"),
    ("bfloat16", "nan", "expected a number"),
    ("bfloat16", [1, 2], "expected a number"),
    ("int4", 8, "out of range -8..7"),
    ("uint2", -1, "out of range 0..3"),
    ("int2", 1.5, "expected an integer"),
    ("uint4", "0x01", "expected an integer"),
])
def test_bad_fill_values(name, value, match):
    with pytest.raises(MetadataError, match=match):
        parse_fill_value(value, parse_data_type(name))


def test_cast_fill_values():
    bf16 = parse_data_type("bfloat16")
    assert bits(cast_fill_value(None, bf16), bf16.dtype) == 0
    assert bits(cast_fill_value(2, bf16), bf16.dtype) == 0x4000
    assert bits(cast_fill_value(np.float32(1.5), bf16), bf16.dtype) == 0x3FC0
    assert bits(cast_fill_value(float("nan"), bf16), bf16.dtype) == 0x7FC0
    assert bits(cast_fill_value("0x7fc1", bf16), bf16.dtype) == 0x7FC1
    payload = np.array([0x7FC1], dtype=np.uint16).view(ml_dtypes.bfloat16)[0]
    assert bits(cast_fill_value(payload, bf16), bf16.dtype) == 0x7FC1      # NaN payload kept
    assert encode_fill_value(cast_fill_value(payload, bf16), bf16) == "0x7fc1"
    int4 = parse_data_type("int4")
    assert int(cast_fill_value(np.int8(-3), int4)) == -3
    assert int(cast_fill_value(True, int4)) == 1
    assert encode_fill_value(cast_fill_value(-3, int4), int4) == -3
    with pytest.raises(MetadataError, match="out of range"):
        cast_fill_value(100, int4)
    with pytest.raises(MetadataError, match="has no NaN"):
        cast_fill_value(float("nan"), parse_data_type("float4_e2m1fn"))


def test_without_ml_dtypes_the_error_names_the_extra():
    """ml_dtypes blocked by a meta_path finder in a fresh interpreter: ``import zarrc``
    works and does not import it; a bfloat16 array (opened or created) raises
    MissingDependencyError naming ml_dtypes and zarrc[dtypes]."""
    code = (
        "import sys, json\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ml_dtypes' or name.startswith('ml_dtypes.'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Block())\n"
        "import zarrc\n"
        "from zarrc.errors import MissingDependencyError\n"
        "assert 'ml_dtypes' not in sys.modules\n"
        "a = zarrc.create_array({}, shape=(4,), chunks=(2,), dtype='int16')\n"
        "meta = {'zarr_format': 3, 'node_type': 'array', 'shape': [4], 'data_type': 'bfloat16',\n"
        "        'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': [2]}},\n"
        "        'chunk_key_encoding': {'name': 'default'}, 'fill_value': 0.0,\n"
        "        'codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}]}\n"
        "store = {'zarr.json': json.dumps(meta).encode()}\n"
        "for attempt in (lambda: zarrc.open_array(store, mode='r'),\n"
        "                lambda: zarrc.create_array({}, shape=(4,), chunks=(2,), dtype='bfloat16'),\n"
        "                lambda: zarrc.create_array({}, shape=(4,), chunks=(2,), dtype='int4')):\n"
        "    try:\n"
        "        attempt()\n"
        "    except MissingDependencyError as e:\n"
        "        assert 'ml_dtypes' in str(e) and 'zarrc[dtypes]' in str(e), e\n"
        "        assert isinstance(e, ImportError)\n"
        "    else:\n"
        "        raise AssertionError('no error')\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
