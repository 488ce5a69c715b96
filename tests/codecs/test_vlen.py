"""The vlen-utf8 and vlen-bytes codecs: the numcodecs byte layout in both directions
(and zarr-python's chunks), the inputs ``encode`` takes, ``decode`` into ``out``,
clear errors for wrong items and corrupt input, and a seeded mutation fuzz."""

from __future__ import annotations

import json
import random
import struct
import tracemalloc
import warnings

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

from zarrc.codecs import Codec, VLenBytes, VLenUTF8, Zstd, registry
from zarrc.codecs import vlen as vlen_module
from zarrc.codecs.chain import CodecChain
from zarrc.codecs.registry import codec_from_spec
from zarrc.errors import CodecError
from zarrc.metadata.codecs import ARRAY_TO_BYTES

numcodecs = pytest.importorskip("numcodecs")

UTF8, BYTES = VLenUTF8(), VLenBytes()
HAS_STRING_DTYPE = hasattr(np, "dtypes") and hasattr(np.dtypes, "StringDType")


def objects(items, shape=None):
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return arr if shape is None else arr.reshape(shape)


def golden(items: list[bytes]) -> bytes:
    """The layout, written out by hand: u32 LE count, then u32 LE length + bytes."""
    return struct.pack("<I", len(items)) + b"".join(struct.pack("<I", len(b)) + b for b in items)


rng = random.Random(1234)
STRINGS = {
    "empty-array": [],
    "one-empty": [""],
    "ascii": ["a", "bb", "", "hello world"],
    "unicode": ["température", "☃", "𝄞 clef", "日本語テキスト", "e\u0301", "\x00nul\x00", "\U0010ffff"],
    "long": ["x" * 100_000, "é" * 70_000, ""],
    "many": [str(i) * (i % 7) for i in range(20_000)],
    "random": ["".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0xA0, 0xD7FF),
                                       rng.randrange(0xE000, 0x10FFFF)]))
                       for _ in range(rng.randrange(0, 40)))
               for _ in range(500)],
}
BLOBS = {
    "empty-array": [],
    "one-empty": [b""],
    "binary": [b"\x00", b"\xff\xfe\x00\x01", b"", b"abc"],
    "long": [bytes(range(256)) * 1000, b""],
    "many": [bytes([i % 256]) * (i % 5) for i in range(20_000)],
}


# ------------------------------------------------------------------ byte layout


@pytest.mark.parametrize("case", list(STRINGS))
def test_utf8_matches_numcodecs_both_ways(case):
    items = objects(STRINGS[case])
    ours = UTF8.encode(items)
    assert type(ours) is bytes
    assert ours == bytes(numcodecs.VLenUTF8().encode(items))
    assert ours == golden([s.encode("utf-8") for s in STRINGS[case]])
    decoded = UTF8.decode(numcodecs.VLenUTF8().encode(items))
    assert decoded.dtype == np.dtype(object) and decoded.ndim == 1
    assert decoded.tolist() == STRINGS[case]
    assert all(type(s) is str for s in decoded)
    assert numcodecs.VLenUTF8().decode(ours).tolist() == STRINGS[case]


@pytest.mark.parametrize("case", list(BLOBS))
def test_bytes_matches_numcodecs_both_ways(case):
    items = objects(BLOBS[case])
    ours = BYTES.encode(items)
    assert ours == bytes(numcodecs.VLenBytes().encode(items)) == golden(BLOBS[case])
    decoded = BYTES.decode(numcodecs.VLenBytes().encode(items))
    assert decoded.dtype == np.dtype(object) and decoded.tolist() == BLOBS[case]
    assert all(type(b) is bytes for b in decoded)
    assert numcodecs.VLenBytes().decode(ours).tolist() == BLOBS[case]


def test_golden_bytes():
    assert UTF8.encode(["a", "é", ""]) == (b"\x03\x00\x00\x00" b"\x01\x00\x00\x00a"
                                          b"\x02\x00\x00\x00\xc3\xa9" b"\x00\x00\x00\x00")
    assert BYTES.encode([b"\x00\xff"]) == b"\x01\x00\x00\x00\x02\x00\x00\x00\x00\xff"
    assert UTF8.encode([]) == BYTES.encode([]) == b"\x00\x00\x00\x00"
    assert UTF8.decode(b"\x00\x00\x00\x00").shape == (0,)


def test_input_forms_are_flattened_in_c_order():
    c_order = objects(["a", "b", "c", "d", "e", "f"], (2, 3))
    expected = UTF8.encode(["a", "b", "c", "d", "e", "f"])
    assert UTF8.encode(c_order) == expected
    assert UTF8.encode(np.asfortranarray(c_order)) == expected  # numcodecs would take memory order
    assert UTF8.encode(c_order.T.T) == expected
    assert UTF8.encode(c_order.T) == UTF8.encode(["a", "d", "b", "e", "c", "f"])
    assert UTF8.encode(objects(["a", "x", "b", "x", "c"])[::2]) == UTF8.encode(["a", "b", "c"])
    assert UTF8.encode([["a", "b", "c"], ["d", "e", "f"]]) == expected
    assert UTF8.encode(np.array([["a", "b", "c"], ["d", "e", "f"]])) == expected  # <U1
    assert UTF8.encode("single") == UTF8.encode(["single"])
    assert UTF8.encode(objects(["z"], ())) == UTF8.encode(["z"])  # 0-d
    assert UTF8.encode([np.str_("a")]) == UTF8.encode(["a"])
    assert BYTES.encode(np.array([b"ab", b"c"])) == BYTES.encode([b"ab", b"c"])  # |S2
    mixed = [bytearray(b"ab"), memoryview(b"c"), np.bytes_(b"d")]
    assert BYTES.encode(mixed) == BYTES.encode([b"ab", b"c", b"d"])


@pytest.mark.skipif(not HAS_STRING_DTYPE, reason="numpy < 2")
def test_string_dtype_arrays():
    arr = np.array([["é", ""], ["long" * 100, "x"]], dtype=np.dtypes.StringDType())
    assert UTF8.encode(arr) == UTF8.encode(arr.astype(object))
    out = np.empty((2, 2), dtype=np.dtypes.StringDType())
    assert UTF8.decode(UTF8.encode(arr), out=out) is out
    assert (out == arr).all()
    # a missing item is stored as an empty string, as zarr-python stores it
    with_missing = np.array(["a", None], dtype=np.dtypes.StringDType(na_object=None))
    assert UTF8.encode(with_missing) == UTF8.encode(["a", ""])
    with_nan = np.array(["a", np.nan], dtype=np.dtypes.StringDType(na_object=np.nan))
    assert UTF8.encode(with_nan) == UTF8.encode(["a", ""])


# ------------------------------------------------------------------ zarr-python chunks


@pytest.mark.parametrize("kind", ["str", "bytes"])
@pytest.mark.parametrize("compressed", [False, True])
def test_chunks_written_by_zarr_python(tmp_path, kind, compressed):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    if kind == "str":
        dtype, data, codec = str, np.array(["a", "température", "", "☃" * 50, "z", "q"]), UTF8
    else:
        dtype = pytest.importorskip("zarr.core.dtype", reason=NO_ZARR_PYTHON).VariableLengthBytes()
        data, codec = objects([b"\x00", b"", b"\xff" * 90, b"abc", b"d", b"e"]), BYTES
    compressors = [{"name": "zstd", "configuration": {"level": 3}}] if compressed else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        array = zarr.create_array(str(tmp_path / "a"), shape=(2, 3), chunks=(2, 3), dtype=dtype,
                                  compressors=compressors)
        array[:] = data.reshape(2, 3)
    stored = (tmp_path / "a" / "c" / "0" / "0").read_bytes()
    raw = Zstd().decode(stored) if compressed else stored
    assert codec.decode(raw).tolist() == [x if kind == "bytes" else str(x) for x in data]
    assert codec.encode(data.reshape(2, 3)) == bytes(raw)
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert doc["codecs"][0] == codec.to_dict()


# ------------------------------------------------------------------ decode into out


def test_decode_into_out():
    encoded = UTF8.encode(["a", "b", "c", "d", "e", "f"])
    out = np.empty((2, 3), dtype=object)
    assert UTF8.decode(encoded, out=out) is out
    assert out.tolist() == [["a", "b", "c"], ["d", "e", "f"]]
    fortran = np.empty((2, 3), dtype=object, order="F")
    UTF8.decode(encoded, out=fortran)
    assert fortran.tolist() == [["a", "b", "c"], ["d", "e", "f"]]  # logical C order
    strided = np.full(12, None, dtype=object)
    UTF8.decode(encoded, out=strided[::2])
    assert strided[::2].tolist() == ["a", "b", "c", "d", "e", "f"] and set(strided[1::2]) == {None}
    assert UTF8.decode(memoryview(encoded)).tolist() == ["a", "b", "c", "d", "e", "f"]
    assert UTF8.decode(np.frombuffer(encoded, np.uint8)).tolist() == ["a", "b", "c", "d", "e", "f"]
    assert UTF8.decode(bytearray(encoded)).tolist() == ["a", "b", "c", "d", "e", "f"]


@pytest.mark.parametrize(
    ("out", "match"),
    [
        (np.empty(5, dtype=object), "data holds 6 items, out has 5 elements"),
        (np.empty(7, dtype=object), "data holds 6 items, out has 7 elements"),
        (np.empty(6, dtype="U3"), "out must have dtype object, not <U3"),
        (np.empty(6, dtype=np.int64), "out must have dtype object"),
        ([None] * 6, "out must be a numpy array, got list"),
    ],
)
def test_decode_out_mismatch(out, match):
    encoded = UTF8.encode(["a", "b", "c", "d", "e", "f"])
    before = np.array(out, copy=True) if isinstance(out, np.ndarray) else list(out)
    with pytest.raises(CodecError, match=match):
        UTF8.decode(encoded, out=out)
    if isinstance(out, np.ndarray):
        assert np.array_equal(out, before) or out.dtype.kind == "O"


def test_corrupt_input_leaves_out_untouched():
    out = objects(["keep"] * 2)
    bad = b"\x02\x00\x00\x00\x01\x00\x00\x00a\x05\x00\x00\x00b"  # second item truncated
    with pytest.raises(CodecError, match="truncated"):
        UTF8.decode(bad, out=out)
    assert out.tolist() == ["keep", "keep"]
    read_only = np.empty(2, dtype=object)
    read_only.flags.writeable = False
    with pytest.raises(CodecError, match="read-only"):
        UTF8.decode(UTF8.encode(["a", "b"]), out=read_only)


# ------------------------------------------------------------------ encode errors


@pytest.mark.parametrize(
    ("codec", "values", "match"),
    [
        (UTF8, [["a", "b"], ["c", b"\xff"]], r"vlen-utf8: item \(1, 1\) is b'\\xff' \(bytes\), not UTF-8"),
        (UTF8, ["x" * 100 + "\ud800"], r"item \(0,\) is 'x+\.\.\., which UTF-8 cannot encode \(surrogates"),
        (UTF8, [["a", "b"], ["c", "\udfff"]], r"item \(1, 1\) is '\\udfff', which UTF-8 cannot encode"),
        (BYTES, ["text"], r"vlen-bytes: item \(0,\) is 'text' \(str\), expected bytes"),
        (BYTES, [b"a", None], r"item \(1,\) is None"),
        (BYTES, [0], r"is 0 \(int\)"),
        (BYTES, [np.zeros(2, np.uint8)], r"item \(0, 0\) is 0 \(int\), expected bytes"),
        (BYTES, objects([np.zeros(2, np.uint8)]),
         r"item \(0,\) is array\(\[0, 0\], dtype=uint8\) \(ndarray\)"),
    ],
)
def test_encode_refuses_wrong_items(codec, values, match):
    with pytest.raises(CodecError, match=match):
        codec.encode(values)


@pytest.mark.parametrize(("values", "stored"), [
    # as zarr-python stores them (numpy's cast to its string type): str(item), bytes decoded
    ([None], ["None"]),
    (["a", 0], ["a", "0"]),
    ([["a", "b"], ["c", 7]], ["a", "b", "c", "7"]),
    ([1.5, float("nan"), True], ["1.5", "nan", "True"]),
    ([b"bytes", "\u00e9".encode()], ["bytes", "\u00e9"]),
    (np.arange(3), ["0", "1", "2"]),
    ([["a"], ["b", "c"]], ["['a']", "['b', 'c']"]),
    ([np.str_("s"), np.bytes_(b"b"), np.float32(2.5)], ["s", "b", "2.5"]),
])
def test_utf8_stores_other_items_as_zarr_python(values, stored):
    assert UTF8.encode(values) == UTF8.encode(stored)


def test_encode_refuses_items_too_long(monkeypatch):
    # numcodecs keeps item lengths in a C int; the real limit (2**31 - 1) is lowered here
    monkeypatch.setattr(vlen_module, "MAX_ITEM_BYTES", 40)
    assert BYTES.encode([b"x" * 40])
    with pytest.raises(CodecError, match="vlen-bytes: item 1 is 41 bytes long, the limit is 40"):
        BYTES.encode([b"", b"x" * 41])
    assert UTF8.encode(["é" * 20])  # 40 bytes
    with pytest.raises(CodecError, match="vlen-utf8: item 0 is 42 bytes long, the limit is 40"):
        UTF8.encode(["é" * 21])


# ------------------------------------------------------------------ decode errors


@pytest.mark.parametrize("codec", [UTF8, BYTES], ids=lambda c: c.name)
@pytest.mark.parametrize(
    ("buf", "match"),
    [
        (b"", "input truncated: holds 0 bytes, the header needs 4"),
        (b"\x01\x00\x00", "input truncated: holds 3 bytes"),
        (b"\x01\x00\x00\x00", "header claims 1 items, 4 bytes hold at most 0"),
        (b"\xff\xff\xff\xff" + bytes(8), "header claims 4294967295 items, 12 bytes hold at most 2"),
        (b"\x01\x00\x00\x00\x02\x00", "header claims 1 items, 6 bytes hold at most 0"),
        (b"\x01\x00\x00\x00\x05\x00\x00\x00abcd", r"corrupt input \(12 bytes whose header claims 1 items\)"),
        (b"\x02\x00\x00\x00\x01\x00\x00\x00a\xff\xff\xff\xff", "corrupt input"),
        (b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00", "corrupt input"),
    ],
)
def test_decode_refuses_corrupt_input(codec, buf, match):
    with pytest.raises(CodecError, match=f"^{codec.name}: .*{match}"):
        codec.decode(buf)


@pytest.mark.parametrize("item", [b"\xff", b"\xc3", b"a\xed\xa0\x80", b"\xf4\x90\x80\x80"])
def test_decode_refuses_invalid_utf8(item):
    with pytest.raises(CodecError, match="vlen-utf8: corrupt input: an item is not valid UTF-8"):
        UTF8.decode(golden([b"ok", item]))
    assert BYTES.decode(golden([b"ok", item])).tolist() == [b"ok", item]


@pytest.mark.parametrize("buf", ["text", 5, None, [1, 2]], ids=repr)
def test_decode_refuses_non_buffers(buf):
    with pytest.raises(CodecError, match="expected a bytes-like object"):
        UTF8.decode(buf)


def test_huge_item_count_allocates_nothing_big():
    # a 4-byte header may claim 2**32 - 1 items: refused before numcodecs allocates
    buf = b"\xff\xff\xff\xff" + bytes(64)
    tracemalloc.start()
    try:
        with pytest.raises(CodecError):
            UTF8.decode(buf)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# ------------------------------------------------------------------ fuzz


@pytest.mark.parametrize("codec", [UTF8, BYTES], ids=lambda c: c.name)
def test_fuzz_truncated_and_mutated(codec):
    rnd = random.Random(20240607)
    if codec is UTF8:
        items = [rnd.choice(["", "a", "é", "☃☃", "𝄞", "text " * 5]) for _ in range(60)]
    else:
        items = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(12))) for _ in range(60)]
    valid = codec.encode(items)
    ok = errors = 0
    cases = [valid[:n] for n in range(len(valid))]  # every truncation
    for _ in range(4000):
        buf = bytearray(valid)
        for _ in range(rnd.choice([1, 1, 2, 4, 16])):
            op = rnd.randrange(4)
            pos = rnd.randrange(len(buf)) if buf else 0
            if op == 0 and buf:
                buf[pos] = rnd.randrange(256)
            elif op == 1 and buf:
                del buf[pos:pos + rnd.randrange(1, 9)]
            elif op == 2:
                buf[pos:pos] = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 9)))
            else:  # a length or count field set to something large
                buf[pos:pos + 4] = struct.pack("<I", rnd.choice([2**32 - 1, 2**31, 2**31 - 1, 10**6, 61]))
        cases.append(bytes(buf))
    for buf in cases:
        out = objects([None] * (int.from_bytes(buf[:4], "little") if len(buf) >= 4 and
                                int.from_bytes(buf[:4], "little") < 10_000 else 1))
        for target in (None, out):
            try:
                result = codec.decode(buf, out=target)
            except CodecError:
                errors += 1
                continue
            ok += 1
            flat = result.reshape(-1)
            assert result.dtype == np.dtype(object)
            assert all(type(x) is codec.item_type for x in flat)
    assert errors > 1000 and ok > 10


# ------------------------------------------------------------------ codec objects


@pytest.mark.parametrize("codec", [UTF8, BYTES], ids=lambda c: c.name)
def test_codec_object_forms(codec):
    cls = type(codec)
    assert isinstance(codec, Codec)
    assert codec.to_dict() == {"name": codec.name, "configuration": {}}
    assert codec.get_config() == {"id": codec.codec_id}
    assert codec.configuration() == {}
    assert cls.from_config({}) == codec and hash(cls()) == hash(codec)
    assert codec != (VLenBytes() if cls is VLenUTF8 else VLenUTF8())
    assert repr(codec) == f"{cls.__name__}()"
    assert eval(repr(codec), {cls.__name__: cls}) == codec
    theirs = numcodecs.get_codec(codec.get_config())
    assert theirs.codec_id == codec.codec_id
    assert registry.CODECS[codec.name] is cls and cls.category == ARRAY_TO_BYTES
    assert codec_from_spec(codec.name) == codec == codec_from_spec(codec.to_dict())
    chain = CodecChain([codec.to_dict(), {"name": "zstd", "configuration": {"level": 1}}])
    assert chain.array_to_bytes == codec and [c.name for c in chain.bytes_to_bytes] == ["zstd"]
    with pytest.raises(TypeError):
        cls(1)
