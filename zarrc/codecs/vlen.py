"""The variable-length codecs (v3 ``vlen-utf8`` / ``vlen-bytes``, the numcodecs ids
of the same names): array -> bytes codecs for arrays of ``str`` / ``bytes`` items.

The format is numcodecs': a little-endian u32 item count, then for each item (in C
order) a little-endian u32 byte length and the item's bytes (UTF-8 for
``vlen-utf8``).  Encoding and decoding run numcodecs' Cython implementation; this
module checks what numcodecs does not (item types, sizes, a header claiming more
items than the input can hold) so that bad input raises CodecError instead of
being silently altered or exhausting memory.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrc.codecs._base import Codec
from zarrc.codecs.registry import register
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import ARRAY_TO_BYTES, VLEN_CODECS, required_members
from zarrc.metadata.dtypes import DataType

HEADER_BYTES = 4            # u32 item count
LENGTH_BYTES = 4            # u32 length before each item
MAX_ITEMS = 2**32 - 1       # the count is a u32
MAX_ITEM_BYTES = 2**31 - 1  # numcodecs keeps item lengths in a C int


_NO_NA = object()


def _is_na(value: Any, na: Any) -> bool:
    """Whether ``value`` is the missing item ``na`` of a numpy StringDType (NaN-like or not)."""
    return value is na or (isinstance(value, float) and isinstance(na, float) and math.isnan(value))


def _index(i: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index in an array of ``shape`` of its ``i``-th item in C order."""
    return tuple(int(k) for k in np.unravel_index(i, shape)) if shape else ()


def _short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _VLen(Codec):
    """Shared encode / decode; subclasses set the item type and numcodecs codec
    (``_numcodecs_class``, the name of a class in ``numcodecs.vlen``)."""

    category = ARRAY_TO_BYTES
    written_empty = True            # "configuration": {}, as zarr-python writes them
    item_type: ClassVar[type]
    item_name: ClassVar[str]
    _numcodecs_class: ClassVar[str]
    data_type_name: ClassVar[str]   # the data type it encodes (the one)

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """No members; only for its own data type."""
        required_members(config, ())
        if VLEN_CODECS.get(data_type.kind) != cls.name:
            use = VLEN_CODECS.get(data_type.kind, "bytes")
            raise MetadataError(f'encodes only the data type {cls.data_type_name}, not {data_type.name} '
                                f'(use "{use}")')
        return {}

    def __init__(self) -> None:
        # numcodecs is imported here, once per codec object, not by `import zarrc`
        import numcodecs.vlen

        self._numcodecs = getattr(numcodecs.vlen, self._numcodecs_class)()

    def configuration(self) -> dict[str, Any]:
        return {}

    # ------------------------------------------------------------------ encode

    def _items(self, values: Any) -> tuple[np.ndarray, list]:
        """``values`` as a flat (C order) object array of exactly ``item_type`` items,
        and those items as a list (other items converted by ``as_item``)."""
        try:
            arr = np.asarray(values, dtype=object)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{self.name}: cannot read {type(values).__name__} as an array of "
                             f"{self.item_name} items: {exc}") from None
        flat = arr.reshape(-1)
        items = flat.tolist()
        na = getattr(getattr(values, "dtype", None), "na_object", _NO_NA)
        if na is not _NO_NA:       # a StringDType's missing items: "", as zarr-python stores them
            items = ["" if _is_na(v, na) else v for v in items]
        if na is not _NO_NA or set(map(type, items)) - {self.item_type}:  # np.str_, other types
            converted = []
            for i, v in enumerate(items):
                try:
                    converted.append(v if type(v) is self.item_type else self.as_item(v))
                except CodecError as exc:
                    raise CodecError(f"{self.name}: item {_index(i, arr.shape)} {exc}") from None
            items = converted
            flat = np.empty(len(items), dtype=object)
            flat[:] = items
        if flat.size > MAX_ITEMS:
            raise CodecError(f"{self.name}: {flat.size} items, the format holds at most {MAX_ITEMS}")
        return flat, items

    def as_item(self, value: Any) -> Any:
        """``value`` as an item of exactly ``item_type``; CodecError (whose message
        says what is wrong with it, for "item <index> ...") if it cannot be one."""
        raise NotImplementedError

    def item_problem(self, value: Any) -> str | None:
        """What keeps ``value`` from being stored (a message for "item <index> ..."),
        or None."""
        try:
            item = value if type(value) is self.item_type else self.as_item(value)
            self._check_encodable(item)
        except CodecError as exc:
            return str(exc)
        return None

    def first_bad_item(self, items: list, shape: tuple[int, ...]) -> tuple[tuple[int, ...], str] | None:
        """(index in an array of ``shape``, what is wrong) of the first of ``items`` (its
        items in C order) that cannot be stored, or None.  One Python step per item:
        for error messages, after an encode failed."""
        for i, value in enumerate(items):
            problem = self.item_problem(value)
            if problem is not None:
                return _index(i, shape), problem
        return None

    def _check_encodable(self, item: Any) -> None:
        """CodecError if numcodecs cannot encode ``item`` (an exact ``item_type``)."""

    def _check_item_sizes(self, items: list) -> None:
        """Refuse items longer than numcodecs can store (their lengths are C ints)."""
        if items and max(map(len, items)) > self._max_length_unencoded():
            for i, item in enumerate(items):
                size = self._encoded_size(item)
                if size > MAX_ITEM_BYTES:
                    raise CodecError(f"{self.name}: item {i} is {size} bytes long, the limit is "
                                     f"{MAX_ITEM_BYTES}")

    def _max_length_unencoded(self) -> int:
        return MAX_ITEM_BYTES

    def _encoded_size(self, item: Any) -> int:
        return len(item)

    def encode(self, values: Any) -> bytes:
        """Encode an array-like of items (an object array, a numpy StringDType / ``U``
        / ``S`` array, a list; any shape, flattened in C order) to the numcodecs
        byte layout.  vlen-utf8 stores any item as zarr-python does (numpy's cast to
        its string type): ``str`` as it is, ``bytes`` decoded from UTF-8, anything
        else (None, numbers) as ``str(item)``; vlen-bytes takes ``bytes``,
        ``bytearray`` and ``memoryview`` items.  Raises CodecError naming the item
        (its index in ``values``) for items that cannot be stored (vlen-bytes: items of
        other types, None and numbers included, which numcodecs would store as empty
        items; vlen-utf8: bytes that are not UTF-8, strings with lone surrogates) and
        items longer than 2**31 - 1 bytes."""
        flat, items = self._items(values)
        self._check_item_sizes(items)
        try:
            return bytes(self._numcodecs.encode(flat))
        except (TypeError, ValueError) as exc:  # e.g. lone surrogates in a str
            bad = self.first_bad_item(items, np.shape(values))
            if bad is not None:
                raise CodecError(f"{self.name}: item {bad[0]} {bad[1]}") from None
            raise CodecError(f"{self.name}: cannot encode: {exc}") from None

    # ------------------------------------------------------------------ decode

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        """Decode to a 1-D object array of ``str`` (vlen-utf8) or ``bytes``
        (vlen-bytes) items, or into ``out`` (an object ndarray of any shape, or for
        vlen-utf8 a StringDType array, holding exactly as many elements as there are
        items, filled in C order), which is returned.  Raises CodecError for input
        that is empty, truncated, claims more items than it can hold, or (vlen-utf8)
        is not valid UTF-8; ``out`` is left untouched then."""
        view = self._byte_view(buf)
        if view.nbytes < HEADER_BYTES:
            raise CodecError(f"{self.name}: input truncated: holds {view.nbytes} bytes, the header "
                             f"needs {HEADER_BYTES}")
        count = int.from_bytes(view[:HEADER_BYTES], "little")
        room = (view.nbytes - HEADER_BYTES) // LENGTH_BYTES
        if count > room:
            raise CodecError(f"{self.name}: corrupt input: header claims {count} items, {view.nbytes} "
                             f"bytes hold at most {room}")
        if out is not None:
            self._check_out(out, count)
        try:
            items = self._numcodecs.decode(view)
        except UnicodeDecodeError as exc:
            raise CodecError(f"{self.name}: corrupt input: an item is not valid UTF-8 ({exc.reason} "
                             f"at byte {exc.start} of the item)") from None
        except (ValueError, TypeError, BufferError) as exc:
            raise CodecError(f"{self.name}: corrupt input ({view.nbytes} bytes whose header claims "
                             f"{count} items): {exc}") from None
        if out is None:
            return items
        np.copyto(out, items.reshape(out.shape), casting="unsafe")
        return out

    def _byte_view(self, buf: Any) -> memoryview:
        try:
            view = memoryview(buf)
        except TypeError:
            raise CodecError(f"{self.name}: expected a bytes-like object, got {type(buf).__name__}") from None
        if not (view.c_contiguous or view.f_contiguous):
            raise CodecError(f"{self.name}: buffer is not contiguous (shape {view.shape}, "
                             f"strides {view.strides})")
        if view.ndim == 1 and view.format == "B":
            return view
        # any other contiguous buffer: its bytes in memory order, without a copy
        return np.asarray(view).reshape(-1, order="A").view(np.uint8).data

    def _check_out(self, out: Any, count: int) -> None:
        if not isinstance(out, np.ndarray):
            raise CodecError(f"{self.name}: out must be a numpy array, got {type(out).__name__}")
        kinds = ("O", "T") if self.item_type is str else ("O",)
        if out.dtype.kind not in kinds:
            raise CodecError(f"{self.name}: out must have dtype object, not {out.dtype}")
        if out.size != count:
            raise CodecError(f"{self.name}: data holds {count} items, out has {out.size} elements")
        if not out.flags.writeable:
            raise CodecError(f"{self.name}: out is read-only")


@register
class VLenUTF8(_VLen):
    """array -> bytes: ``str`` items as UTF-8, each prefixed by its byte length
    (numcodecs ``VLenUTF8``).  The array->bytes codec of the ``string`` data type."""

    name = "vlen-utf8"
    codec_id = "vlen-utf8"
    data_type_name = "string"
    item_type = str
    item_name = "str"
    _numcodecs_class = "VLenUTF8"

    def as_item(self, value: Any) -> str:
        """As zarr-python (numpy's cast to its string type): a str subclass (np.str_) as
        a plain str, bytes decoded from UTF-8, anything else ``str(value)``."""
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, bytes):       # (np.bytes_ too)
            try:
                return value.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CodecError(f"is {_short_repr(value)} (bytes), not UTF-8 ({exc.reason} at "
                                 f"byte {exc.start})") from None
        return str(value)

    def _check_encodable(self, item: Any) -> None:
        try:
            item.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise CodecError(f"is {_short_repr(item)}, which UTF-8 cannot encode ({exc.reason} at "
                             f"character {exc.start})") from None

    def _max_length_unencoded(self) -> int:
        return MAX_ITEM_BYTES // 4  # a character is at most 4 UTF-8 bytes

    def _encoded_size(self, item: Any) -> int:
        if len(item) <= MAX_ITEM_BYTES // 4:
            return len(item)  # cannot exceed the limit; no need to encode
        return len(item.encode("utf-8", "surrogatepass"))


@register
class VLenBytes(_VLen):
    """array -> bytes: ``bytes`` items, each prefixed by its length (numcodecs
    ``VLenBytes``).  The array->bytes codec of the variable-length bytes data type."""

    name = "vlen-bytes"
    codec_id = "vlen-bytes"
    data_type_name = "variable_length_bytes"
    item_type = bytes
    item_name = "bytes"
    _numcodecs_class = "VLenBytes"

    def as_item(self, value: Any) -> bytes:
        """bytearray, memoryview and bytes subclasses (np.bytes_) as bytes; CodecError
        for anything else (numcodecs would store None and 0 as empty items)."""
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise CodecError(f"is {_short_repr(value)} ({type(value).__name__}), expected bytes")


def find_bad_item(items: np.ndarray, item_type: type) -> tuple[tuple[int, ...], str] | None:
    """The first item (in C order) of the object array ``items`` that the vlen codec of
    ``item_type`` items (``str``: vlen-utf8, ``bytes``: vlen-bytes) cannot store, as
    (its index in ``items``, what is wrong with it), or None.  For error messages
    (one Python step per item): the engine names a bad item by its array index."""
    codec: _VLen = VLenUTF8() if item_type is str else VLenBytes()
    bad = codec.first_bad_item(items.reshape(-1).tolist(), items.shape)
    return None if bad is None else (bad[0], f"{codec.name}: {bad[1]}")
