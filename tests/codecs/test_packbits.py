"""The packbits codec (zarr-extensions ``packbits``) and its kernel
(``zarrc._kernels.bits``): golden bytes worked out from the spec (the bit sequence
least significant bit first, as zarrs packs it; neither tensorstore 0.1.8x nor
zarr-python has the codec to compare with), every padding encoding, first_bit /
last_bit with sign extension, the spec's checks, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from zarrc._kernels import bits
from zarrc.codecs import PackBits
from zarrc.codecs.packbits import layout
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.dtypes import parse_data_type

ml_dtypes = pytest.importorskip("ml_dtypes", reason="the sub-byte types need ml_dtypes (zarrc[dtypes])")


def ml(name: str, values) -> np.ndarray:
    return np.array(values).astype(getattr(ml_dtypes, name))


# (array, codec arguments, encoded bytes)
GOLDEN = [
    (ml("int4", [1, -3, 2, 0, 1]), {}, "d10201"),
    (np.array([1, 0, 1, 1, 0, 0, 0, 0, 1], dtype=bool), {"padding_encoding": "first_byte"}, "070d01"),
    (ml("uint2", [3, 0, 1, 2]), {"padding_encoding": "last_byte"}, "9300"),
    (ml("uint2", [3, 0, 1]), {"padding_encoding": "last_byte"}, "1302"),
    (ml("int2", [-1, 1, -2]), {}, "27"),
    (np.array([0x3F, 0x01], dtype=np.uint8).view(ml_dtypes.float6_e2m3fn), {}, "7f00"),
    (ml("float4_e2m1fn", [0.5, -6.0]), {"padding_encoding": "first_byte"}, "00f1"),
    (np.array([0x1234, 0xABCD], dtype=np.uint16), {"first_bit": 4, "last_bit": 11}, "23bc"),
    (np.array([7, -8], dtype=np.int16), {"last_bit": 3}, "87"),
    (np.array([1.5, -2.0], dtype=np.float32), {}, np.array([1.5, -2.0], "<f4").tobytes().hex()),
    (np.array([1 + 2j], dtype=np.complex64), {}, np.array([1 + 2j], "<c8").tobytes().hex()),
    (ml("bfloat16", [1.5, -2.0]), {}, "c03f00c0"),
]


@pytest.mark.parametrize(("arr", "kwargs", "hexed"), GOLDEN)
def test_golden_bytes(arr, kwargs, hexed):
    codec = PackBits(**kwargs)
    encoded = codec.pack(arr)
    assert encoded.hex() == hexed
    back = codec.unpack(encoded, arr.shape, arr.dtype)
    assert back.dtype == arr.dtype
    np.testing.assert_array_equal(back.view(np.uint8), np.ascontiguousarray(arr).view(np.uint8)
                                  if not kwargs.get("first_bit") else back.view(np.uint8))


def test_bit_ranges_and_sign_extension():
    codec = PackBits(first_bit=4, last_bit=11)
    back = codec.unpack(codec.pack(np.array([0x1234, 0xABCD], dtype=np.uint16)), (2,), np.dtype(np.uint16))
    assert back.tolist() == [0x0230, 0x0BC0]            # zero-extended, shifted back to first_bit
    signed = PackBits(last_bit=3)
    assert signed.unpack(signed.pack(np.array([7, -8, -1], np.int16)), (3,), np.dtype(np.int16)).tolist() \
        == [7, -8, -1]                                     # sign-extended to 16 bits
    int4 = PackBits(first_bit=1, last_bit=3)
    out = int4.unpack(int4.pack(ml("int4", [-8, 6, -2])), (3,), np.dtype(ml_dtypes.int4))
    assert out.astype(int).tolist() == [-8, 6, -2]
    assert out.view(np.uint8).tolist() == [0x08, 0x06, 0x0E]   # ml_dtypes' form: upper bits zero


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 1000, 4099])
@pytest.mark.parametrize(("first", "last"), [(0, 0), (0, 2), (1, 5), (3, 15), (0, 15)])
def test_kernel_round_trip(n, first, last):
    rng = np.random.default_rng(n)
    values = rng.integers(0, 2**16, n, dtype=np.uint16)
    packed = np.empty(bits.packed_size(n, first, last), np.uint8)
    bits.pack(values.view(np.uint8), 2, first, last, 16, packed)
    out = np.empty(n, np.uint16)
    bits.unpack(packed, 2, first, last, 16, False, out.view(np.uint8))
    mask = ((1 << (last - first + 1)) - 1) << first
    np.testing.assert_array_equal(out, values & mask)
    # the bit sequence, bit by bit
    seq = ((values[:, None] >> np.arange(first, last + 1)) & 1).reshape(-1)
    assert np.unpackbits(packed, bitorder="little")[: seq.size].tolist() == seq.tolist()


@pytest.mark.parametrize("n", [0, 1, 3, 7, 8, 9, 4099])
@pytest.mark.parametrize("width", [1, 2, 4, 8])
@pytest.mark.parametrize("signed", [False, True])
def test_kernel_whole_values_per_byte(n, width, signed):
    """One-byte components from bit 0 (bool, int2, int4, uint8, int8 cut to
    width bits): the unrolled loops agree with the bit sequence of the spec."""
    values = np.random.default_rng(n + width).integers(0, 256, n, dtype=np.uint8)
    packed = np.empty(bits.packed_size(n, 0, width - 1), np.uint8)
    bits.pack(values, 1, 0, width - 1, 8, packed)
    seq = ((values[:, None] >> np.arange(width)) & 1).reshape(-1)
    assert np.unpackbits(packed, bitorder="little")[: seq.size].tolist() == seq.tolist()
    out = np.empty(n, np.uint8)
    bits.unpack(packed, 1, 0, width - 1, 8, signed, out)
    low = values & ((1 << width) - 1)
    expected = (low.astype(np.int16) ^ (1 << (width - 1))) - (1 << (width - 1)) \
        if signed else low
    assert out.tolist() == (np.asarray(expected) & 0xFF).tolist()


def test_layouts():
    assert layout(np.dtype(bool)) == (1, 1, 1, False)
    assert layout(np.dtype(ml_dtypes.int4)) == (1, 1, 4, True)
    assert layout(np.dtype(ml_dtypes.float6_e3m2fn)) == (1, 1, 6, False)
    assert layout(np.dtype(ml_dtypes.bfloat16)) == (1, 2, 16, False)
    assert layout(np.dtype(np.complex128)) == (2, 8, 64, False)
    with pytest.raises(CodecError, match="not supported"):
        layout(np.dtype("U3"))


def test_spec_checks():
    from zarrc.codecs.packbits import PackBits as P
    int4 = parse_data_type("int4")
    assert P.parse_spec({}, (4,), int4) == {}
    assert P.parse_spec({"padding_encoding": "first_byte", "first_bit": None, "last_bit": 2}, (4,), int4) \
        == {"padding_encoding": "first_byte", "last_bit": 2}
    for config, match in [({"padding_encoding": "start"}, "padding_encoding"),
                          ({"first_bit": -1}, "first_bit"), ({"first_bit": 2, "last_bit": 1}, "last_bit"),
                          ({"last_bit": 4}, "not within the 4 bits"), ({"x": 1}, "x")]:
        with pytest.raises(MetadataError, match=match):
            P.parse_spec(config, (4,), int4)
    with pytest.raises(MetadataError, match="cannot encode"):
        P.parse_spec({}, (4,), parse_data_type("string"))
    with pytest.raises(CodecError, match="padding_encoding"):
        PackBits(padding_encoding="middle")
    assert PackBits().to_dict() == {"name": "packbits", "configuration": {"padding_encoding": "none"}}


def test_bad_input():
    codec = PackBits(padding_encoding="first_byte")
    with pytest.raises(CodecError, match="holds 2 bytes, 4 expected"):
        codec.unpack(b"\x04\x00", (5,), np.dtype(ml_dtypes.int4))
    with pytest.raises(CodecError, match="padding byte says 3 bits, 4 expected"):
        codec.unpack(b"\x03\x00\x00\x00", (5,), np.dtype(ml_dtypes.int4))
    with pytest.raises(ValueError, match="do not unpack"):
        bits.unpack(np.zeros(3, np.uint8), 1, 0, 3, 4, True, np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="not within"):
        bits.pack(np.zeros(4, np.uint8), 1, 0, 8, 8, np.zeros(4, np.uint8))
