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

from typing import Any, ClassVar

import numpy as np

from zarrc.codecs._base import Codec
from zarrc.codecs.registry import register
from zarrc.errors import CodecError
from zarrc.metadata.codecs import ARRAY_TO_BYTES

HEADER_BYTES = 4            # u32 item count
LENGTH_BYTES = 4            # u32 length before each item
MAX_ITEMS = 2**32 - 1       # the count is a u32
MAX_ITEM_BYTES = 2**31 - 1  # numcodecs keeps item lengths in a C int


def _short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _VLen(Codec):
    """Shared encode / decode; subclasses set the item type and numcodecs codec
    (``_numcodecs_class``, the name of a class in ``numcodecs.vlen``)."""

    category = ARRAY_TO_BYTES
    item_type: ClassVar[type]
    item_name: ClassVar[str]
    _numcodecs_class: ClassVar[str]

    def __init__(self) -> None:
        # numcodecs is imported here, once per codec object, not by `import zarrc`
        import numcodecs.vlen

        self._numcodecs = getattr(numcodecs.vlen, self._numcodecs_class)()

    def configuration(self) -> dict[str, Any]:
        return {}

    # ------------------------------------------------------------------ encode

    def _items(self, values: Any) -> tuple[np.ndarray, list]:
        """``values`` as a flat (C order) object array of exactly ``item_type`` items,
        and those items as a list."""
        try:
            arr = np.asarray(values, dtype=object)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{self.name}: cannot read {type(values).__name__} as an array of "
                             f"{self.item_name} items: {exc}") from None
        flat = arr.reshape(-1)
        items = flat.tolist()
        types = set(map(type, items))
        if types - {self.item_type}:  # subclasses (np.str_), other types, wrong items
            accepted = self._accepted_types()
            if not all(issubclass(t, accepted) for t in types):
                i = next(i for i, v in enumerate(items) if not isinstance(v, accepted))
                index = tuple(int(k) for k in np.unravel_index(i, arr.shape)) if arr.ndim else ()
                bad = items[i]
                raise CodecError(f"{self.name}: item {index} is {_short_repr(bad)} ({type(bad).__name__}), "
                                 f"expected {self.item_name}")
            # numcodecs takes exactly str / bytes: convert the rest
            exact, convert = self.item_type, self._exact
            items = [v if type(v) is exact else convert(v) for v in items]
            flat = np.empty(len(items), dtype=object)
            flat[:] = items
        if flat.size > MAX_ITEMS:
            raise CodecError(f"{self.name}: {flat.size} items, the format holds at most {MAX_ITEMS}")
        return flat, items

    def _accepted_types(self) -> tuple[type, ...]:
        return (self.item_type,)

    @staticmethod
    def _exact(value: Any) -> Any:
        raise NotImplementedError

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
        byte layout (vlen-bytes also takes bytearray / memoryview items).  Raises
        CodecError for items of the wrong type (None and numbers included: numcodecs
        would store None and 0 as empty items) and items longer than 2**31 - 1 bytes."""
        flat, items = self._items(values)
        self._check_item_sizes(items)
        try:
            return bytes(self._numcodecs.encode(flat))
        except (TypeError, ValueError) as exc:  # e.g. lone surrogates in a str
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
    item_type = str
    item_name = "str"
    _numcodecs_class = "VLenUTF8"

    @staticmethod
    def _exact(value: Any) -> str:
        return str.__str__(value)  # a plain str copy of a str subclass (np.str_)

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
    item_type = bytes
    item_name = "bytes"
    _numcodecs_class = "VLenBytes"

    def _accepted_types(self) -> tuple[type, ...]:
        return (bytes, bytearray, memoryview)

    @staticmethod
    def _exact(value: Any) -> bytes:
        return bytes(value)
