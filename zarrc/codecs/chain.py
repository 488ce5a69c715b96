"""CodecChain: array->array*, exactly one array->bytes, bytes->bytes*, and its
preparation, for a chunk shape and data type, into a native plan
(:class:`zarrc._kernels.chain.Chain`) that the engine runs without the GIL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

import numpy as np

from zarrc._kernels.chain import Chain
from zarrc.codecs._base import Codec, NativeStep
from zarrc.codecs.registry import codec_from_spec
from zarrc.errors import MetadataError
from zarrc.metadata.codecs import ARRAY_TO_ARRAY, ARRAY_TO_BYTES, CodecSpec, check_complete, check_next
from zarrc.metadata.common import error_context
from zarrc.metadata.dtypes import byte_swap_unit

__all__ = ["CodecChain", "codec_from_spec", "native_chain"]


class Reorders(Protocol):
    """What the chain needs of an array->array codec (transpose, the one there is):
    the permutation the chunk is stored in."""

    order: tuple[int, ...]


class CodesValues(Protocol):
    """What the chain needs of an array->array value codec (scale_offset, cast_value,
    bitround): its kernel arguments and the data type it encodes to."""

    def value_step(self, dtype: np.dtype) -> tuple[tuple[Any, ...], np.dtype]: ...


def is_value_codec(codec: Any) -> bool:
    """Whether ``codec`` is an array->array codec the kernels' Chain runs as a value step."""
    return hasattr(codec, "value_step")


class Serialises(Protocol):
    """What :meth:`CodecChain.prepare` needs of the array->bytes codec of a chain the
    kernels run (bytes, packbits: sharding is prepared as its inner chain, and
    variable-length data is not prepared)."""

    def swaps(self, itemsize: int) -> bool: ...


def check_order(codecs: Sequence[Codec]) -> None:
    """MetadataError unless ``codecs`` are array->array*, one array->bytes,
    bytes->bytes* (the spec parser's rule, ``zarrc.metadata.codecs.check_next``)."""
    names = [c.name for c in codecs]
    with error_context(f"codecs {names}: "):
        seen: str | None = None
        for c in codecs:
            check_next(c.name, c.category, seen)
            if c.category == ARRAY_TO_BYTES:
                seen = c.name
        check_complete(names, seen)


class CodecChain:
    """An ordered codec list: array->array*, exactly one array->bytes, bytes->bytes*.

    ``codecs``: codec objects, spec dicts, names, or CodecSpecs from
    ``zarrc.metadata.codecs.parse_codecs``.  A list of CodecSpecs has been checked
    by the parser and is not checked again; anything else is (MetadataError)."""

    def __init__(self, codecs: Sequence[Any]) -> None:
        # unknown codecs marked "must_understand": false are skipped, as the spec allows
        known = [c for c in codecs if getattr(c, "must_understand", True)]
        objs = [codec_from_spec(c) for c in known]
        if not (known and all(isinstance(c, CodecSpec) for c in known)):
            check_order(objs)
        n_a2a = 0
        while objs[n_a2a].category == ARRAY_TO_ARRAY:
            n_a2a += 1
        self.array_to_array: tuple[Codec, ...] = tuple(objs[:n_a2a])
        self.array_to_bytes: Codec = objs[n_a2a]
        self.bytes_to_bytes: tuple[Codec, ...] = tuple(objs[n_a2a + 1:])

    @property
    def codecs(self) -> tuple[Codec, ...]:
        return self.array_to_array + (self.array_to_bytes,) + self.bytes_to_bytes

    def to_dicts(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.codecs]

    def stored_order(self, ndim: int) -> tuple[int, ...]:
        """The permutation p with stored chunk = chunk.transpose(p) (all transposes composed)."""
        perm = tuple(range(ndim))
        transposes = [c for c in self.array_to_array if not is_value_codec(c)]
        for t in cast("list[Reorders]", transposes):
            if len(t.order) != ndim:
                raise MetadataError(f"transpose order {list(t.order)} does not match {ndim} dimensions")
            perm = tuple(perm[i] for i in t.order)
        return perm

    def prepare(self, chunk_shape: tuple[int, ...], dtype: np.dtype) -> Chain:
        """The native plan for chunks of ``chunk_shape`` and (native-order) ``dtype``."""
        dtype = np.dtype(dtype)
        steps: list[NativeStep] = []
        array_step = getattr(self.array_to_bytes, "array_step", None)   # packbits: the kernels pack
        if array_step is not None:
            step = array_step(dtype)
            if step is None:
                raise MetadataError(f"codec {self.array_to_bytes.name!r} cannot encode {dtype}")
            steps.append(step)
        for c in self.bytes_to_bytes:
            step = c.native_step(dtype.itemsize)
            if step is None:
                raise MetadataError(f"codec {c.name!r} has no native kernel")
            steps.append(step)
        values: list[tuple[Any, ...]] = []
        stored = dtype
        for c in self.array_to_array:
            if is_value_codec(c):
                args, stored = cast(CodesValues, c).value_step(stored)
                values.append(args)
        swap_unit = 0
        if cast(Serialises, self.array_to_bytes).swaps(stored.itemsize):
            unit = byte_swap_unit(stored)
            if unit is None:
                raise MetadataError(f"struct {stored} stored in the other byte order: its fields swap in "
                                    "units of different sizes, which is not supported")
            swap_unit = unit
        order = self.stored_order(len(chunk_shape))
        return native_chain(steps, tuple(int(s) for s in chunk_shape), dtype.itemsize, swap_unit, order, values)


def native_chain(steps: Sequence[NativeStep], chunk_shape: tuple[int, ...], itemsize: int, swap_unit: int,
                 order: tuple[int, ...], values: Sequence[tuple[Any, ...]] = ()) -> Chain:
    """The kernel's prepared Chain for the codecs' native ``steps`` (encode order), each
    handed over as its ``kernel_args()``, after the array->array value codecs' ``values``
    (their ``value_step`` arguments; ``swap_unit`` then swaps the stored items, of the
    last one's type); MetadataError for what it cannot run (more than 32 dimensions or 8
    bytes->bytes codecs, say)."""
    try:
        if values:
            return Chain([s.kernel_args() for s in steps], chunk_shape, itemsize, 0, order, list(values),
                         swap_unit)
        return Chain([s.kernel_args() for s in steps], chunk_shape, itemsize, swap_unit, order)
    except ValueError as exc:
        raise MetadataError(f"the codecs cannot be prepared for chunks of shape {chunk_shape}: {exc}") from None
