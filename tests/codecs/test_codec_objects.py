"""The codec objects: v3 and numcodecs forms, equality, repr, parameter validation,
and the buffers they accept."""

import re

import numpy as np
import pytest

from zarrc._kernels import blosc as kblosc
from zarrc._kernels import errors as kerrors
from zarrc._kernels import zstd as kzstd
from zarrc.codecs import Blosc, Crc32c, Gzip, Zlib, Zstd
from zarrc.errors import CodecError

CODECS = [Blosc("lz4", 1, "shuffle", typesize=4), Blosc("zstd", 9, "bitshuffle", blocksize=4096),
          Zstd(3, True), Zstd(-5), Gzip(5), Zlib(1), Crc32c()]


def test_v3_forms():
    # the example in the v3 blosc spec
    assert Blosc(cname="lz4", clevel=1, shuffle="shuffle", typesize=4, blocksize=0).to_dict() == {
        "name": "blosc",
        "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}
    assert Blosc("zstd", 9, 2, typesize=8, blocksize=4096).to_dict()["configuration"] == {
        "cname": "zstd", "clevel": 9, "shuffle": "bitshuffle", "typesize": 8, "blocksize": 4096}
    assert Zstd(level=3, checksum=True).to_dict() == {
        "name": "zstd", "configuration": {"level": 3, "checksum": True}}
    assert Zstd().to_dict() == {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
    assert Gzip(level=7).to_dict() == {"name": "gzip", "configuration": {"level": 7}}
    assert Gzip().to_dict() == {"name": "gzip", "configuration": {"level": 5}}
    assert Crc32c().to_dict() == {"name": "crc32c"}


def test_numcodecs_forms():
    assert Blosc("lz4", 1, "shuffle", typesize=4).get_config() == {
        "id": "blosc", "cname": "lz4", "clevel": 1, "shuffle": 1, "blocksize": 0}
    assert Blosc(shuffle="bitshuffle").get_config()["shuffle"] == 2
    assert Blosc(shuffle="noshuffle").get_config()["shuffle"] == 0
    assert Zstd(3, True).get_config() == {"id": "zstd", "level": 3, "checksum": True}
    assert Gzip(5).get_config() == {"id": "gzip", "level": 5}
    assert Zlib(1).get_config() == {"id": "zlib", "level": 1}
    assert Crc32c().get_config() == {"id": "crc32c"}


@pytest.mark.parametrize("codec", CODECS, ids=repr)
def test_forms_round_trip(codec, request):
    assert type(codec).from_config(codec.to_dict().get("configuration", {})) == codec
    numcodecs = pytest.importorskip("numcodecs")
    if isinstance(codec, Crc32c):
        request.getfixturevalue("numcodecs_crc32c")          # skips without a backend
    theirs = numcodecs.get_codec(codec.get_config())
    assert theirs.codec_id == codec.codec_id
    data = np.arange(1000, dtype="<i4")
    assert bytes(memoryview(theirs.decode(codec.encode(data))).cast("B")) == data.tobytes()


@pytest.mark.parametrize("codec", CODECS, ids=repr)
def test_repr_evaluates_to_an_equal_codec(codec):
    namespace = {"Blosc": Blosc, "Zstd": Zstd, "Gzip": Gzip, "Zlib": Zlib, "Crc32c": Crc32c}
    assert repr(codec).startswith(type(codec).__name__ + "(")
    assert eval(repr(codec), namespace) == codec


def test_equality_and_hash():
    assert Blosc(shuffle=1) == Blosc(shuffle="shuffle")
    assert hash(Blosc(shuffle=1)) == hash(Blosc(shuffle="shuffle"))
    assert Blosc(clevel=5) != Blosc(clevel=6)
    assert Blosc(typesize=4) != Blosc()
    assert Zstd(3) != Zstd(3, checksum=True)
    assert Gzip(5) != Zlib(5)                       # same configuration, different codec
    assert Crc32c() == Crc32c()
    assert len({Zstd(1), Zstd(1), Zstd(2)}) == 2


@pytest.mark.parametrize("make, value", [
    (lambda: Blosc(cname="lz5"), "'lz5'"),
    (lambda: Blosc(cname="LZ4"), "'LZ4'"),
    (lambda: Blosc(clevel=10), "10"),
    (lambda: Blosc(clevel=-1), "-1"),
    (lambda: Blosc(clevel=True), "True"),
    (lambda: Blosc(shuffle="x"), "'x'"),
    (lambda: Blosc(shuffle=3), "3"),
    (lambda: Blosc(shuffle=-2), "-2"),
    (lambda: Blosc(typesize=0), "0"),
    (lambda: Blosc(blocksize=-1), "-1"),
    (lambda: Zstd(level=23), "23"),
    (lambda: Zstd(level=kzstd.zstd_levels()[0] - 1), str(kzstd.zstd_levels()[0] - 1)),
    (lambda: Zstd(level=2.5), "2.5"),
    (lambda: Zstd(checksum="yes"), "'yes'"),
    (lambda: Gzip(level=10), "10"),
    (lambda: Gzip(level=-1), "-1"),
    (lambda: Zlib(level=10), "10"),
])
def test_parameter_validation(make, value):
    with pytest.raises(CodecError) as info:
        make()
    message = str(info.value)
    assert re.match(r"(blosc|zstd|gzip|zlib): ", message), message
    assert re.search(rf"(got|unknown \w+) {re.escape(value)}(?![\w.])", message), message
    assert isinstance(info.value, ValueError)


def test_snappy_is_not_built():
    assert "snappy" not in kblosc.blosc_compressors()
    with pytest.raises(CodecError, match="'snappy' is not built into this blosc"):
        Blosc(cname="snappy")
    with pytest.raises(kerrors.KernelError, match="'snappy' is not available in this build"):
        kblosc.blosc_compress(b"abcd", 5, 1, 1, "snappy")


@pytest.mark.parametrize("codec", CODECS, ids=repr)
def test_accepted_buffers(codec):
    a = np.arange(24, dtype="<f8").reshape(4, 6)
    raw = a.tobytes()
    for buf in (raw, bytearray(raw), memoryview(raw), a, a.ravel(), memoryview(a),
                np.frombuffer(raw, np.uint8), np.float64(7.0)):
        expected = bytes(memoryview(buf).cast("B")) if not isinstance(buf, np.generic) else buf.tobytes()
        enc = codec.encode(buf)
        for src in (enc, bytearray(enc), memoryview(enc), np.frombuffer(enc, np.uint8)):
            assert bytes(codec.decode(src)) == expected


@pytest.mark.parametrize("codec", CODECS, ids=repr)
def test_fortran_ordered_arrays(codec):
    a = np.asfortranarray(np.arange(60, dtype="<i4").reshape(3, 4, 5))
    enc = codec.encode(a)
    assert bytes(codec.decode(enc)) == a.tobytes(order="F")       # memory order
    out = np.zeros((3, 4, 5), "<i4", order="F")
    assert codec.decode(enc, out=out) is out
    np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("codec", CODECS, ids=repr)
def test_non_contiguous_buffers_are_refused(codec):
    a = np.arange(48, dtype="<i4").reshape(6, 8)
    strided = a[:, ::2]
    with pytest.raises((BufferError, ValueError), match="contiguous"):
        codec.encode(strided)
    enc = codec.encode(np.ascontiguousarray(strided))
    with pytest.raises((BufferError, ValueError), match="contiguous"):
        codec.decode(enc, out=np.zeros((6, 8), "<i4")[:, ::2])
    big = np.frombuffer(enc * 2, np.uint8)[::2]
    with pytest.raises((BufferError, ValueError), match="contiguous"):
        codec.decode(big)


@pytest.mark.parametrize("codec", CODECS, ids=repr)
def test_decode_into_a_read_only_out_is_refused(codec):
    enc = codec.encode(b"abcd" * 10)
    with pytest.raises((BufferError, TypeError), match="writable|read-only"):
        codec.decode(enc, out=bytes(40))
