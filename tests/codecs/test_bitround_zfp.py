"""The bitround codec (values as numcodecs' BitRound for floats, zarrs' rounding from
the most significant set bit for integers) and the zfp codec (through zfpy, the
``zarrc[zfp]`` extra: round trips in each mode, chunks as zfpy writes them without a
header, and a CodecError naming the extra where zfpy cannot be imported)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import zarrc
from zarrc.codecs import BitRound, CastValue, Zfp
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import parse_codecs
from zarrc.metadata.dtypes import parse_data_type


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("keepbits", [1, 3, 7, 10])
def test_bitround_floats_as_numcodecs(dtype, keepbits):
    numcodecs = pytest.importorskip("numcodecs")
    rng = np.random.default_rng(keepbits)
    arr = (rng.normal(size=2000) * 1000).astype(dtype)
    arr[:4] = [0.0, -0.0, np.inf, -np.inf]
    expected = numcodecs.BitRound(keepbits=keepbits).encode(arr)
    assert BitRound(keepbits=keepbits).encode(arr).tobytes() == np.asarray(expected).tobytes()


def reference_int_round(v: int, bits: int, keepbits: int, signed: bool) -> int:
    """zarrs' rounding of an integer's bit pattern from its most significant set bit."""
    u = v & ((1 << bits) - 1)
    maxbits = u.bit_length()
    if keepbits >= maxbits:
        return v
    maskbits = maxbits - keepbits
    top = (1 << bits) - 1
    u = min(top, u + ((u >> maskbits) & 1) + (1 << (maskbits - 1)) - 1) & (top >> maskbits << maskbits)
    return u - (1 << bits) if signed and u >> (bits - 1) else u


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16"])
@pytest.mark.parametrize("keepbits", [1, 2, 3, 5])
def test_bitround_integers_from_the_most_significant_bit(dtype, keepbits):
    info = np.iinfo(dtype)
    arr = np.arange(int(info.min), int(info.max) + 1).astype(dtype)
    bits = info.bits
    expected = [reference_int_round(int(v), bits, keepbits, info.min < 0) for v in arr.tolist()]
    assert BitRound(keepbits=keepbits).encode(arr).tolist() == expected
    # 5 = 0b101 at 2 bits: a tie, to even (0b100); 6 = 0b110 is kept
    assert BitRound(keepbits=2).encode(np.array([5, 6, 7], dtype="int16")).tolist() == [4, 6, 8]


def test_bitround_in_an_array(tmp_path):
    z = zarrc.create_array(str(tmp_path / "a"), shape=(100,), chunks=(30,), dtype="float32",
                           filters=[BitRound(keepbits=5)])
    arr = np.linspace(0, 1, 100, dtype="float32")
    z[...] = arr
    assert z[...].tobytes() == BitRound(keepbits=5).encode(arr).tobytes()
    with pytest.raises(MetadataError, match='"keepbits" 0'):
        parse_codecs([{"name": "bitround", "configuration": {"keepbits": 0}}, "bytes"], (4,),
                     parse_data_type("float32"))


def test_cast_value_out_of_range_names_the_chunk(tmp_path):
    z = zarrc.create_array(str(tmp_path / "a"), shape=(30,), chunks=(10,), dtype="float32",
                           filters=[CastValue(data_type="int8")])
    z[:10] = 1.0
    with pytest.raises(CodecError, match=r"chunk c/1 of .*item 3 of the chunk: cast_value: out of the range"):
        z[10:20] = np.where(np.arange(10) == 3, 200.0, 0.0)
    assert z[10:20].tolist() == [0.0] * 10      # nothing written


ZFP_MODES = [{"mode": "reversible"}, {"mode": "fixed_accuracy", "tolerance": 0.05},
             {"mode": "fixed_rate", "rate": 10.5}, {"mode": "fixed_precision", "precision": 19}]


@pytest.mark.parametrize("config", ZFP_MODES, ids=[c["mode"] for c in ZFP_MODES])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int16", "uint8", "float16"])
def test_zfp_round_trip(tmp_path, config, dtype):
    zfpy = pytest.importorskip("zfpy", reason="zfpy (the zarrc[zfp] extra) is not installed")
    if dtype in ("int16", "uint8", "int32", "int64") and config["mode"] == "fixed_accuracy":
        pytest.skip("zfp's fixed_accuracy mode is for floats")
    rng = np.random.default_rng(0)
    arr = (rng.normal(size=(24, 18)) * 40).astype(dtype) if dtype.startswith("f") else \
        rng.integers(0, 100, size=(24, 18)).astype(dtype)
    z = zarrc.create_array(str(tmp_path / "a"), shape=arr.shape, chunks=(12, 9), dtype=dtype,
                           serializer={"name": "zfp", "configuration": config}, compressors=None)
    z[...] = arr
    back = z[...]
    if config["mode"] == "reversible":
        assert back.tobytes() == arr.tobytes()
    if dtype in ("float32", "float64", "int32", "int64"):
        # the chunk as zfpy writes it without a header, and read back as zfpy reads it
        params = {k: v for k, v in config.items() if k != "mode"}
        chunk = np.ascontiguousarray(arr[:12, :9])
        stored = (tmp_path / "a/c/0/0").read_bytes()
        assert stored == zfpy.compress_numpy(chunk, write_header=False, **params)
        theirs = zfpy._decompress(stored, zfpy.dtype_to_ztype(chunk.dtype), chunk.shape, **params)
        assert back[:12, :9].tobytes() == np.asarray(theirs).tobytes()


def test_zfp_bad_metadata():
    with pytest.raises(MetadataError, match='"mode" "lossless"'):
        parse_codecs([{"name": "zfp", "configuration": {"mode": "lossless"}}], (4,), parse_data_type("float32"))
    with pytest.raises(MetadataError, match='"tolerance"'):
        parse_codecs([{"name": "zfp", "configuration": {"mode": "fixed_accuracy"}}], (4,),
                     parse_data_type("float32"))
    with pytest.raises(MetadataError, match="zfp"):
        parse_codecs([{"name": "zfp", "configuration": {"mode": "reversible"}}], (2,) * 5,
                     parse_data_type("float32"))
    assert Zfp(mode="fixed_rate", rate=8).to_dict() == {"name": "zfp",
                                                      "configuration": {"mode": "fixed_rate", "rate": 8}}


def test_zfp_without_zfpy_names_the_extra(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.modules["zfpy"] = None          # blocks the import
        import numpy as np, zarrc
        from zarrc.errors import CodecError
        z = zarrc.create_array({str(tmp_path / "a")!r}, shape=(4,), chunks=(4,), dtype="float64",
                               serializer={{"name": "zfp", "configuration": {{"mode": "reversible"}}}},
                               compressors=None)
        try:
            z[...] = np.arange(4.0)
        except CodecError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "pip install 'zarrc[zfp]'" in out.stdout, out.stdout + out.stderr
