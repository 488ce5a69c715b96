"""The sharding codec (v3 ``sharding_indexed``): many inner chunks in one stored
object (a shard), located through an index of (offset, nbytes) pairs at the start
or end of the shard.  This module holds the codec's configuration (its spec's
checks, the inner chain, the index codecs zarrc supports); the index format
itself is ``codecs.shard_index`` (``ShardingIndexed.index_format``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from zarrc.codecs._base import Codec
from zarrc.codecs.bytes import Bytes
from zarrc.codecs.chain import CodecChain
from zarrc.codecs.enums import plain
from zarrc.codecs.registry import codec_from_spec, register
from zarrc.codecs.shard_index import IndexFormat
from zarrc.errors import MetadataError
from zarrc.metadata.codecs import ARRAY_TO_BYTES, KINDS, default_serializer, parse_codecs, required_members
from zarrc.metadata.common import check_int_list, error_context, fail
from zarrc.metadata.dtypes import CORE_TYPES, DataType

# the index codecs when none are named (zarr-python's default)
DEFAULT_INDEX_CODECS = ({"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"})


@register
class ShardingIndexed(Codec):
    """array -> bytes: the chunk (shard) is cut into inner chunks of ``chunk_shape``,
    each encoded with ``codecs``; ``index_codecs`` (bytes, optionally crc32c)
    encode the index, which sits at ``index_location`` "start" or "end"."""

    name = "sharding_indexed"
    codec_id = "sharding_indexed"
    category = ARRAY_TO_BYTES

    def __init__(self, chunk_shape, codecs=({"name": "bytes"},), index_codecs=DEFAULT_INDEX_CODECS,
                 index_location: str = "end") -> None:
        index_location = plain(index_location)              # (a ShardingCodecIndexLocation member)
        try:
            chunk_shape = tuple(int(c) for c in chunk_shape)
        except (TypeError, ValueError):
            raise MetadataError(f"sharding_indexed: chunk_shape {chunk_shape!r} is not a list of integers") from None
        if any(c < 1 for c in chunk_shape):
            raise MetadataError(f"sharding_indexed: chunk_shape {list(chunk_shape)} must be positive")
        if index_location not in ("start", "end"):
            raise MetadataError(f"sharding_indexed: index_location must be 'start' or 'end', got {index_location!r}")
        self._set(chunk_shape, codecs, index_codecs, index_location)

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """chunk_shape (dividing the shard's), codecs (parsed for the inner chunks;
        default: the data type's serializer), index_codecs (fixed-size codecs only;
        default: bytes little-endian + crc32c), index_location ("end")."""
        required_members(config, ("chunk_shape",), ("codecs", "index_codecs", "index_location"))
        inner = check_int_list("chunk_shape", config["chunk_shape"], minimum=1)
        if len(inner) != len(shape):
            fail("chunk_shape", config["chunk_shape"],
                 f"must have {len(shape)} dimensions like the shard shape {list(shape)}")
        if any(s % c for s, c in zip(shape, inner)):
            fail("chunk_shape", config["chunk_shape"], f"must evenly divide the shard shape {list(shape)}")
        location = config.get("index_location", "end")
        if location not in ("start", "end"):
            fail("index_location", location, 'must be "start" or "end"')
        with error_context('"codecs"'):
            codecs = parse_codecs(config.get("codecs", [default_serializer(data_type, complete=True)]),
                                  inner, data_type)
        index_shape = tuple(s // c for s, c in zip(shape, inner)) + (2,)
        with error_context('"index_codecs"'):
            index_codecs = parse_codecs(config.get("index_codecs", DEFAULT_INDEX_CODECS), index_shape,
                                        CORE_TYPES["uint64"])
            for i, codec in enumerate(index_codecs):
                kind = KINDS.get(codec.name)
                if codec.must_understand and not (kind is not None and kind.fixed_size):
                    raise MetadataError(f'[{i}] "{codec.name}": index codecs must have a fixed-size output')
        return {"chunk_shape": inner, "codecs": codecs, "index_codecs": index_codecs,
                "index_location": location}

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> ShardingIndexed:
        """From a validated spec configuration (its inner codecs CodecSpecs, not checked
        again); only the index codecs zarrc supports are checked."""
        codec = cls.__new__(cls)
        codec._set(tuple(configuration["chunk_shape"]), configuration["codecs"],
                   configuration["index_codecs"], configuration.get("index_location", "end"))
        return codec

    def _set(self, chunk_shape: tuple[int, ...], codecs: Any, index_codecs: Any, index_location: str) -> None:
        self.chunk_shape = chunk_shape
        self.index_location = index_location
        self.inner = CodecChain(codecs)
        index = [codec_from_spec(c) for c in index_codecs]
        names = [c.name for c in index]
        if names not in (["bytes"], ["bytes", "crc32c"]):
            raise MetadataError(f"sharding_indexed: index_codecs {names} not supported "
                                "(expected bytes, optionally followed by crc32c)")
        self.index_codecs = tuple(index)
        # (index[0] is the codec registered as "bytes": a Bytes)
        self.index_format = IndexFormat(at_start=index_location == "start",
                                        big_endian=cast(Bytes, index[0]).endian == "big",
                                        crc=len(index) == 2)

    # ------------------------------------------------------------ the inner chunk grid

    def chunks_per_shard(self, shard_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The inner chunks along each dimension of a shard of ``shard_shape``.
        Raises MetadataError unless the inner chunk shape divides it."""
        if len(shard_shape) != len(self.chunk_shape) or any(
                s % c for s, c in zip(shard_shape, self.chunk_shape)):
            raise MetadataError(f"sharding_indexed: inner chunk shape {list(self.chunk_shape)} does not "
                                f"divide the shard shape {list(shard_shape)}")
        return tuple(s // c for s, c in zip(shard_shape, self.chunk_shape))

    def configuration(self) -> dict[str, Any]:
        return {"chunk_shape": list(self.chunk_shape), "codecs": self.inner.to_dicts(),
                "index_codecs": [c.to_dict() for c in self.index_codecs],
                "index_location": self.index_location}

