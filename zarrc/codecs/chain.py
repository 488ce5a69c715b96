"""CodecChain: array->array*, exactly one array->bytes, bytes->bytes*, and its
preparation, for a chunk shape and data type, into a native plan
(:class:`zarrc._kernels.chain.Chain`) that the engine runs without the GIL."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrc._kernels.chain import Chain
from zarrc.codecs._base import Codec
from zarrc.codecs.blosc import Blosc
from zarrc.codecs.bytes import Bytes
from zarrc.codecs.crc32c import Crc32c
from zarrc.codecs.gzip import Gzip
from zarrc.codecs.transpose import Transpose
from zarrc.codecs.vlen import VLenBytes, VLenUTF8
from zarrc.codecs.zlib import Zlib
from zarrc.codecs.zstd import Zstd
from zarrc.errors import MetadataError

CODECS: dict[str, type[Codec]] = {
    "blosc": Blosc, "bytes": Bytes, "crc32c": Crc32c, "gzip": Gzip,
    "transpose": Transpose, "zlib": Zlib, "zstd": Zstd,
    "vlen-utf8": VLenUTF8, "vlen-bytes": VLenBytes,
}
ARRAY_TO_ARRAY = (Transpose,)
ARRAY_TO_BYTES = (Bytes, VLenUTF8, VLenBytes)


def codec_from_spec(spec: Any) -> Codec:
    """A codec object from a codec object, a v3 spec dict / CodecSpec, or a name."""
    if isinstance(spec, Codec):
        return spec
    if isinstance(spec, str):
        name, conf = spec, {}
    elif isinstance(spec, Mapping):
        name, conf = spec.get("name"), spec.get("configuration", {})
    elif hasattr(spec, "name") and hasattr(spec, "configuration"):
        name, conf = spec.name, spec.configuration
    else:
        raise MetadataError(f"codec {spec!r} is not a codec object, a spec dict or a name")
    if name == "sharding_indexed":
        from zarrc.codecs.sharding import ShardingIndexed
        cls = ShardingIndexed
    else:
        cls = CODECS.get(name)
    if cls is None:
        raise MetadataError(f"unknown codec {name!r}")
    try:
        return cls(**dict(conf))
    except TypeError as exc:
        raise MetadataError(f"codec {name!r}: bad configuration {dict(conf)!r} ({exc})") from None


class CodecChain:
    """An ordered codec list, checked for v3's array->array*, array->bytes,
    bytes->bytes* structure."""

    def __init__(self, codecs: Sequence[Any]) -> None:
        # unknown codecs marked "must_understand": false are skipped, as the spec allows
        objs = [codec_from_spec(c) for c in codecs if getattr(c, "must_understand", True)]
        n_a2a = 0
        while n_a2a < len(objs) and isinstance(objs[n_a2a], ARRAY_TO_ARRAY):
            n_a2a += 1
        from zarrc.codecs.sharding import ShardingIndexed
        array_to_bytes = ARRAY_TO_BYTES + (ShardingIndexed,)
        if n_a2a == len(objs) or not isinstance(objs[n_a2a], array_to_bytes):
            raise MetadataError(f"codecs {[c.name for c in objs]}: the chain needs exactly one "
                                "array->bytes codec (e.g. 'bytes') after the array->array codecs")
        rest = objs[n_a2a + 1:]
        for c in rest:
            if isinstance(c, ARRAY_TO_ARRAY + array_to_bytes):
                raise MetadataError(f"codecs {[c.name for c in objs]}: {c.name!r} cannot follow "
                                    "the array->bytes codec")
        self.array_to_array: tuple[Codec, ...] = tuple(objs[:n_a2a])
        self.array_to_bytes: Codec = objs[n_a2a]
        self.bytes_to_bytes: tuple[Codec, ...] = tuple(rest)

    @property
    def codecs(self) -> tuple[Codec, ...]:
        return self.array_to_array + (self.array_to_bytes,) + self.bytes_to_bytes

    def to_dicts(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.codecs]

    def stored_order(self, ndim: int) -> tuple[int, ...]:
        """The permutation p with stored chunk = chunk.transpose(p) (all transposes composed)."""
        perm = tuple(range(ndim))
        for t in self.array_to_array:
            if len(t.order) != ndim:
                raise MetadataError(f"transpose order {list(t.order)} does not match {ndim} dimensions")
            perm = tuple(perm[i] for i in t.order)
        return perm

    def prepare(self, chunk_shape: tuple[int, ...], dtype: np.dtype) -> Chain:
        """The native plan for chunks of ``chunk_shape`` and (native-order) ``dtype``."""
        dtype = np.dtype(dtype)
        steps = []
        for c in self.bytes_to_bytes:
            if isinstance(c, Blosc):
                typesize = c.typesize if c.typesize is not None else dtype.itemsize
                steps.append(("blosc", c.cname, c.clevel, c._shuffle, typesize, c.blocksize))
            elif isinstance(c, Zstd):
                steps.append(("zstd", c.level, c.checksum))
            elif isinstance(c, (Gzip, Zlib)):
                steps.append((c.name, c.level))
            elif isinstance(c, Crc32c):
                steps.append(("crc32c",))
            else:
                raise MetadataError(f"codec {c.name!r} has no native kernel")
        swap_unit = 0
        if self.array_to_bytes.swaps(dtype.itemsize):
            swap_unit = dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
        if dtype.kind == "V" or dtype.kind == "b":
            swap_unit = 0
        order = self.stored_order(len(chunk_shape))
        return native_chain(steps, tuple(int(s) for s in chunk_shape), dtype.itemsize, swap_unit, order)


def native_chain(steps: list, chunk_shape: tuple[int, ...], itemsize: int, swap_unit: int,
                 order: tuple[int, ...]) -> Chain:
    """The kernel's prepared Chain; MetadataError for what it cannot run (more than
    32 dimensions or 8 bytes->bytes codecs, say)."""
    try:
        return Chain(steps, chunk_shape, itemsize, swap_unit, order)
    except ValueError as exc:
        raise MetadataError(f"the codecs cannot be prepared for chunks of shape {chunk_shape}: {exc}") from None
