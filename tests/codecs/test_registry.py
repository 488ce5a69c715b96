"""The codec registry (name -> class), building codecs from specs, each codec's spec
kind (the class, registered with the spec parser), and each codec's native step (the
typed record the kernels' prepared Chain is built from)."""

from __future__ import annotations

import ast
import importlib.util
import pathlib

import numpy as np
import pytest

import zarrc.codecs  # noqa: F401  (registers every codec)
from zarrc._kernels.chain import Chain
from zarrc.codecs import (BitRound, Blosc, Bytes, CastValue, Codec, Crc32c, Gzip, PackBits, ScaleOffset, Transpose,
                          VLenBytes, VLenUTF8, Zfp, Zlib, Zstd)
from zarrc.codecs.blosc import BloscStep
from zarrc.codecs.chain import CodecChain, native_chain
from zarrc.codecs.crc32c import Crc32cStep
from zarrc.codecs.gzip import GzipStep
from zarrc.codecs.numcodecs_compat import native_steps
from zarrc.codecs.registry import CODECS, codec_class, codec_from_spec, register
from zarrc.codecs.sharding import ShardingIndexed
from zarrc.errors import ArgumentError, ArgumentTypeError, CodecError, MetadataError, ZarrcError
from zarrc.codecs.zlib import ZlibStep
from zarrc.codecs.zstd import ZstdStep
from zarrc.metadata.codecs import KINDS, category_of, parse_codecs
from zarrc.metadata.dtypes import CORE_TYPES


def test_every_codec_is_registered_under_its_name():
    assert CODECS == {
        "blosc": Blosc, "bytes": Bytes, "crc32c": Crc32c, "gzip": Gzip, "sharding_indexed": ShardingIndexed,
        "transpose": Transpose, "vlen-utf8": VLenUTF8, "vlen-bytes": VLenBytes, "zlib": Zlib, "zstd": Zstd,
        "packbits": PackBits, "scale_offset": ScaleOffset, "cast_value": CastValue, "bitround": BitRound,
        "zfp": Zfp}
    for name, cls in CODECS.items():
        assert codec_class(name) is cls and cls.name == name


def test_each_v3_codec_class_is_the_spec_parsers_kind_of_its_name():
    """The metadata layer knows a v3 codec name through its class, registered with it:
    one home for its category and its configuration's checks (zlib is a v2 compressor
    only, unknown to the v3 parser)."""
    assert KINDS == {name: cls for name, cls in CODECS.items() if name != "zlib"}
    for name, cls in KINDS.items():
        assert category_of(name) == cls.category, name
    assert category_of("zlib") is None and category_of("numcodecs.zlib") is None
    assert {n for n, c in KINDS.items() if c.fixed_size} == {"transpose", "bytes", "crc32c", "scale_offset",
                                                             "cast_value", "bitround"}
    assert {n for n, c in KINDS.items() if c.written_empty} == {"vlen-utf8", "vlen-bytes"}
    # the numcodecs compressors zarrc runs itself (v2 arrays, numcodecs.<id>), by their class
    assert {n for n, c in CODECS.items() if c.numcodecs_keys} == {"blosc", "zstd", "gzip", "zlib"}


def test_unknown_name_is_a_metadata_error():
    with pytest.raises(MetadataError, match="unknown codec 'lzma-9000'"):
        codec_class("lzma-9000")
    with pytest.raises(MetadataError, match="unknown codec 'lzma-9000'"):
        codec_from_spec({"name": "lzma-9000"})


def test_a_name_cannot_be_taken_twice():
    class Other(Codec):
        name = "zstd"
        codec_id = "zstd"

    with pytest.raises(ArgumentError, match="'zstd' is taken by Zstd"):
        register(Other)
    assert CODECS["zstd"] is Zstd
    assert register(Zstd) is Zstd              # registering the same class again is harmless


@pytest.mark.parametrize("spec", [
    "crc32c", {"name": "zstd", "configuration": {"level": 3}}, Zstd(level=3),
    {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "bitshuffle"}},
])
def test_codec_from_spec_forms(spec):
    codec = codec_from_spec(spec)
    assert isinstance(codec, Codec)
    if isinstance(spec, Codec):
        assert codec is spec
    assert codec_from_spec(codec.to_dict()) == codec


def test_codec_from_spec_rejects_objects_and_bad_configurations():
    with pytest.raises(ArgumentTypeError, match="is not a codec object") as info:
        codec_from_spec(5)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ZarrcError)
    with pytest.raises(MetadataError, match="codec 'zstd': bad configuration"):
        codec_from_spec({"name": "zstd", "configuration": {"speed": 9}})
    with pytest.raises(CodecError, match="zstd: level must be an integer"):
        codec_from_spec({"name": "zstd", "configuration": {"level": 99}})


SPECS = [
    ("bytes", {"endian": "little"}, Bytes("little")),
    ("transpose", {"order": [1, 0]}, Transpose((1, 0))),
    ("blosc", {"cname": "zstd", "clevel": 3, "shuffle": "shuffle", "typesize": 4, "blocksize": 0},
     Blosc("zstd", 3, "shuffle", typesize=4)),
    ("zstd", {"level": -5, "checksum": True}, Zstd(-5, True)),
    ("gzip", {"level": 6}, Gzip(6)),
    ("crc32c", {}, Crc32c()),
]


@pytest.mark.parametrize(("name", "config", "expected"), SPECS, ids=[s[0] for s in SPECS])
def test_parsed_specs_build_the_same_codec_as_the_constructor(name, config, expected):
    """A CodecSpec from the parser is built by ``from_spec`` (no second check), and
    gives the codec the constructor gives."""
    chain = [{"name": name, "configuration": config}]
    if name == "transpose":
        chain.append({"name": "bytes", "configuration": {"endian": "little"}})
    elif name not in ("bytes",):
        chain.insert(0, {"name": "bytes", "configuration": {"endian": "little"}})
    specs = parse_codecs(chain, (4, 4), CORE_TYPES["int32"])
    spec = next(s for s in specs if s.name == name)
    codec = codec_from_spec(spec)
    assert type(codec) is type(expected) and codec == expected
    assert codec.to_dict() == expected.to_dict()


def test_blosc_from_spec_still_checks_that_the_compressor_is_built():
    spec = parse_codecs([{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "blosc", "configuration": {"cname": "snappy", "clevel": 1,
                                                             "shuffle": "noshuffle"}}],
                        (4,), CORE_TYPES["int32"])[1]
    with pytest.raises(CodecError, match="'snappy' is not built into this blosc"):
        codec_from_spec(spec)


def test_chain_order_is_checked_for_codec_objects():
    with pytest.raises(MetadataError, match='bytes -> bytes codec "zstd" comes before'):
        CodecChain([Zstd(), Bytes()])
    with pytest.raises(MetadataError, match='"bytes" is a second array -> bytes codec'):
        CodecChain([Bytes(), Bytes()])
    with pytest.raises(MetadataError, match='array -> array codec "transpose" comes after'):
        CodecChain([Bytes(), Transpose((0,))])
    with pytest.raises(MetadataError, match="has no array -> bytes codec"):
        CodecChain([Transpose((0,))])
    with pytest.raises(MetadataError, match="has no array -> bytes codec"):
        CodecChain([])
    chain = CodecChain([Transpose((1, 0)), Bytes(), Zstd(), Crc32c()])
    assert chain.array_to_array == (Transpose((1, 0)),) and chain.array_to_bytes == Bytes()
    assert chain.bytes_to_bytes == (Zstd(), Crc32c())


# ------------------------------------------------------------------ native steps

@pytest.mark.parametrize(("codec", "itemsize", "step", "args"), [
    (Blosc("lz4", 5, "shuffle"), 8, BloscStep("lz4", 5, 1, 8, 0), ("blosc", "lz4", 5, 1, 8, 0)),
    (Blosc("zstd", 1, "bitshuffle", typesize=2, blocksize=4096), 8,
     BloscStep(cname="zstd", clevel=1, shuffle=2, typesize=2, blocksize=4096), ("blosc", "zstd", 1, 2, 2, 4096)),
    (Blosc("blosclz", 0, "noshuffle"), 1, BloscStep("blosclz", 0, 0, 1, 0), ("blosc", "blosclz", 0, 0, 1, 0)),
    (Zstd(7, True), 4, ZstdStep(level=7, checksum=True), ("zstd", 7, True)),
    (Gzip(9), 4, GzipStep(level=9), ("gzip", 9)),
    (Zlib(2), 4, ZlibStep(level=2), ("zlib", 2)),
    (Crc32c(), 4, Crc32cStep(), ("crc32c",)),
], ids=repr)
def test_native_step_of_each_bytes_codec(codec, itemsize, step, args):
    """A typed record per step kind (named fields, frozen); the kernel's argument is
    made from it in one place (``kernel_args``), which the kernels take."""
    assert codec.native_step(itemsize) == step
    assert step != args and step.kernel_args() == args
    with pytest.raises(AttributeError):
        step.kind = "other"     # (frozen)
    Chain([step.kernel_args()], (16,), itemsize, 0, (0,))
    assert isinstance(native_chain([step], (16,), itemsize, 0, (0,)), Chain)


def test_steps_of_different_kinds_with_equal_fields_differ():
    assert GzipStep(3) != ZlibStep(3) and GzipStep(3).kernel_args() != ZlibStep(3).kernel_args()


@pytest.mark.parametrize("codec", [Bytes(), Transpose((0,)), VLenUTF8(), VLenBytes(),
                                   ShardingIndexed(chunk_shape=(2,))], ids=repr)
def test_codecs_without_a_native_step(codec):
    assert codec.native_step(4) is None


def test_v3_and_v2_preparation_ask_the_codec_for_its_step():
    """The v3 chain and a v2 compressor of the same codec give the same native steps."""
    blosc = Blosc("lz4", 4, "bitshuffle")
    steps = native_steps(blosc.get_config(), None, np.dtype("<f8"))
    assert steps == [blosc.native_step(8)]
    assert native_steps({"id": "zstd", "level": 2}, None, np.dtype("u2")) == [ZstdStep(2, False)]
    assert native_steps({"id": "blosc", "cname": "lz4", "clevel": 1, "shuffle": -1}, None,
                        np.dtype("u1")) == [BloscStep("lz4", 1, 2, 1, 0)]   # auto shuffle: bit for bytes
    assert native_steps(None, None, np.dtype("u2")) == []
    assert native_steps({"id": "lzma"}, None, np.dtype("u2")) is None
    assert native_steps({"id": "zstd", "level": 2}, [{"id": "delta", "dtype": "<u2"}], np.dtype("u2")) is None
    chain = CodecChain([Bytes(), blosc, Crc32c()])
    assert isinstance(chain.prepare((16,), np.dtype("f8")), Chain)


def test_codec_modules_import_nothing_above_them():
    """registry <- each codec <- chain <- sharding: chain and the registry never
    import the sharding codec, no codec module imports the chain but sharding."""
    def imports(module):
        tree = ast.parse(pathlib.Path(importlib.util.find_spec(module).origin).read_text())
        return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}

    assert "zarrc.codecs.sharding" not in imports("zarrc.codecs.chain")
    for module in ("registry", "_base", "blosc", "bytes", "crc32c", "gzip", "transpose", "vlen", "zlib", "zstd"):
        found = imports(f"zarrc.codecs.{module}")
        assert not found & {"zarrc.codecs.chain", "zarrc.codecs.sharding", "zarrc.codecs"}, module


def test_codec_constructors_and_the_spec_parser_share_their_facts():
    from zarrc._kernels import zstd as k
    from zarrc.codecs import blosc, zstd
    from zarrc.metadata import codecs as spec

    assert blosc.SHUFFLES == {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
    assert (zstd.MIN_LEVEL, zstd.MAX_LEVEL) == tuple(k.zstd_levels()) == (-131072, 22)
    # the metadata layer holds no codec's facts of its own
    assert not [n for n in vars(spec) if n.startswith(("BLOSC", "ZSTD", "NUMCODECS", "CODEC_CATEGORIES"))]


@pytest.mark.parametrize(("name", "config", "member"), [
    ("blosc", {"cname": "lz5"}, "cname"),
    ("blosc", {"cname": 1}, "cname"),
    ("blosc", {"clevel": 10}, "clevel"),
    ("blosc", {"clevel": -1}, "clevel"),
    ("blosc", {"clevel": True}, "clevel"),
    ("blosc", {"clevel": 5.0}, "clevel"),
    ("blosc", {"shuffle": "bytes"}, "shuffle"),
    ("blosc", {"shuffle": ["shuffle"]}, "shuffle"),
    ("blosc", {"typesize": 0}, "typesize"),
    ("blosc", {"typesize": "4"}, "typesize"),
    ("blosc", {"blocksize": -1}, "blocksize"),
    ("blosc", {"blocksize": 1.5}, "blocksize"),
    ("zstd", {"level": 23}, "level"),
    ("zstd", {"level": -131073}, "level"),
    ("zstd", {"level": False}, "level"),
    ("zstd", {"checksum": 1}, "checksum"),
    ("gzip", {"level": 10}, "level"),
    ("gzip", {"level": "1"}, "level"),
])
def test_the_spec_parser_and_the_constructor_refuse_the_same_options(name, config, member):
    """One check per codec, worded by its caller: MetadataError naming the member when a
    document is parsed, CodecError naming the codec and the member when a codec is made."""
    with pytest.raises(MetadataError, match=f'"{name}": "{member}" '):
        parse_codecs([{"name": "bytes", "configuration": {"endian": "little"}},
                      {"name": name, "configuration": config}], (4,), CORE_TYPES["int16"])
    with pytest.raises(CodecError, match=f"^{name}: {member} .*, got "):
        codec_class(name)(**config)


def test_the_constructor_takes_numcodecs_shuffle_codes_the_spec_does_not():
    assert Blosc(shuffle=2).shuffle == "bitshuffle" and Blosc(shuffle=-1).shuffle is None
    with pytest.raises(MetadataError, match='"shuffle" 1 must be one of'):
        parse_codecs([{"name": "bytes", "configuration": {"endian": "little"}},
                      {"name": "blosc", "configuration": {"shuffle": 1}}], (4,), CORE_TYPES["int16"])
    with pytest.raises(CodecError, match="blosc: shuffle"):
        Blosc(shuffle=3)


def test_numcodecs_names_build_numcodecs_codecs_in_zarr_pythons_categories():
    """``numcodecs.<id>``: a class per name (not in CODECS, built through the prefix),
    with the category of zarr-python's wrapper; the category of ids it does not wrap
    comes from the codec's place in the chain."""
    pytest.importorskip("numcodecs")
    from zarrc.codecs.numcodecs_v3 import NUMCODECS_CATEGORIES, NumcodecsCodec, numcodecs_class

    for codec_id, category in NUMCODECS_CATEGORIES.items():
        cls = codec_class("numcodecs." + codec_id)
        assert issubclass(cls, NumcodecsCodec) and cls.category == category, codec_id
        assert cls.codec_id == codec_id and "numcodecs." + codec_id not in CODECS
    assert numcodecs_class("numcodecs.base64").category == "bytes->bytes"
    specs = parse_codecs([{"name": "numcodecs.base64"}, {"name": "bytes"}, {"name": "numcodecs.base64"}],
                         (4,), CORE_TYPES["uint8"])
    objs = [codec_from_spec(s) for s in specs]
    assert [c.category for c in objs] == ["array->array", "array->bytes", "bytes->bytes"]
    with pytest.raises(MetadataError, match="unknown codec 'numcodecs.'"):
        codec_class("numcodecs.")


def test_numcodecs_categories_are_zarr_pythons():
    pytest.importorskip("zarr")
    try:
        import zarr.codecs.numcodecs as wrappers
    except ImportError:
        wrappers = pytest.importorskip("numcodecs.zarr3")
    from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec

    from zarrc.codecs.numcodecs_v3 import NUMCODECS_CATEGORIES

    kinds = {ArrayArrayCodec: "array->array", ArrayBytesCodec: "array->bytes", BytesBytesCodec: "bytes->bytes"}
    found = {}
    for name in wrappers.__all__:
        cls = getattr(wrappers, name)
        if isinstance(cls, type) and not name.startswith("_") and getattr(cls, "codec_name", None):
            found[cls.codec_name.removeprefix("numcodecs.")] = next(
                v for k, v in kinds.items() if issubclass(cls, k))
    assert found == NUMCODECS_CATEGORIES


@pytest.mark.parametrize("config, step", [
    ({"name": "numcodecs.zlib", "configuration": {"level": 4}}, ZlibStep(4)),
    ({"name": "numcodecs.gzip"}, GzipStep(1)),                     # (numcodecs' default level)
    ({"name": "numcodecs.zstd", "configuration": {"level": 2, "checksum": True}}, ZstdStep(2, True)),
    ({"name": "numcodecs.crc32c"}, Crc32cStep()),
    ({"name": "numcodecs.crc32c", "configuration": {"location": "start"}}, None),
    ({"name": "numcodecs.bz2", "configuration": {"level": 1}}, None),
])
def test_numcodecs_native_steps(config, step):
    """numcodecs' formats zarrc has kernels for are those kernels' steps (with
    numcodecs' defaults); the others have none (the Python path runs them)."""
    numcodecs = pytest.importorskip("numcodecs")
    if config["name"] == "numcodecs.crc32c" and not hasattr(numcodecs, "CRC32C"):
        pytest.skip("this numcodecs has no CRC32C (0.14 on)")
    assert codec_from_spec(config).native_step(8) == step


def test_numcodecs_blosc_step_shuffles_bytes():
    """In a v3 chain blosc sees bytes: numcodecs shuffles items of one byte."""
    pytest.importorskip("numcodecs")
    step = codec_from_spec({"name": "numcodecs.blosc"}).native_step(8)
    assert step == Blosc(cname="lz4", clevel=5, shuffle="shuffle", typesize=1).native_step(8)
