"""Chunk key encodings: chunk grid coordinates <-> store keys.

``default``: "c" followed by separator + index per dimension ("c/1/23/45",
"c.1.23.45"; a 0-d array's only chunk is "c").  ``v2``: the indices joined by the
separator ("1.23.45", "1/23/45"; a 0-d array's only chunk is "0").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrc._kernels.plan import format_keys
from zarrc.errors import ArgumentError, SelectionError, StoreError

DEFAULT_SEPARATORS = {"default": "/", "v2": "."}


class ChunkKeyEncoding:
    """A chunk key encoding: ``name`` "default" or "v2", ``separator`` "/" or "."
    (None picks the encoding's default: "/" for default, "." for v2)."""

    __slots__ = ("_empty", "lead", "name", "separator")

    def __init__(self, name: str = "default", separator: str | None = None) -> None:
        if name not in DEFAULT_SEPARATORS:
            raise ArgumentError(f"unknown chunk key encoding {name!r} (expected 'default' or 'v2')")
        separator = DEFAULT_SEPARATORS[name] if separator is None else separator
        if separator not in ("/", "."):
            raise ArgumentError(f"chunk key separator {separator!r} must be '/' or '.'")
        self.name = name
        self.separator = separator
        self.lead = "c" + separator if name == "default" else ""  # text before the first index
        self._empty = "c" if name == "default" else "0"  # the key of a 0-d array's chunk

    @classmethod
    def from_metadata(cls, spec: Any) -> ChunkKeyEncoding:
        """From a ChunkKeyEncodingSpec, or v3 array metadata holding one
        (``chunk_key_encoding``), or v2 array metadata (the "v2" encoding of its
        ``dimension_separator``), or anything with ``name`` and ``separator``."""
        if getattr(spec, "zarr_format", None) == 2:
            return cls("v2", spec.dimension_separator)
        spec = getattr(spec, "chunk_key_encoding", spec)
        return cls(spec.name, spec.separator)

    def key_parts(self, ndim: int) -> int:
        """How many "/"-separated parts the key of a chunk of an ``ndim``-dimensional
        array has (what comes before them in a store key is the array's prefix)."""
        if ndim == 0 or self.separator == ".":
            return 1
        return ndim + (1 if self.lead else 0)

    def __repr__(self) -> str:
        return f"ChunkKeyEncoding({self.name!r}, {self.separator!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ChunkKeyEncoding) and self.name == other.name
                and self.separator == other.separator)

    def __hash__(self) -> int:
        return hash((self.name, self.separator))

    def encode(self, coords: Sequence[int], prefix: str = "") -> str:
        """The key of the chunk at grid ``coords`` (non-negative integers), after
        ``prefix`` (e.g. "temperature/").  Raises SelectionError for negative indices."""
        if not coords:
            return prefix + self._empty
        parts = []
        for i in coords:
            i = int(i)
            if i < 0:
                raise SelectionError(f"chunk coordinates {list(coords)} must not be negative")
            parts.append(str(i))
        return prefix + self.lead + self.separator.join(parts)

    def encode_many(self, coords: np.ndarray, prefix: str = "") -> list[str]:
        """Keys of many chunks at once: ``coords`` is an (n, ndim) integer array.
        Raises SelectionError for negative indices."""
        coords = np.asarray(coords)
        if coords.ndim != 2:
            raise SelectionError(f"coordinates must be an (n, ndim) array, got shape {coords.shape}")
        n, ndim = coords.shape
        if ndim == 0:
            return [prefix + self._empty] * n
        try:
            return format_keys(np.ascontiguousarray(coords, np.int64), prefix + self.lead,
                               self.separator)
        except ValueError as exc:
            raise SelectionError(str(exc)) from None

    def decode(self, key: str, ndim: int | None = None) -> tuple[int, ...]:
        """The grid coordinates of chunk ``key`` (without the array's prefix).

        ``ndim`` is the array's rank; it is needed to read the v2 key "0" of a 0-d
        array (without it "0" means chunk (0,)).  Raises StoreError for a key this
        encoding does not produce (wrong prefix, separator, rank, non-canonical or
        non-decimal index)."""
        if key == self._empty and (ndim == 0 or (ndim is None and self.name == "default")):
            return ()
        body = key
        if self.lead:
            if not key.startswith(self.lead):
                raise StoreError(f"{key!r} is not a {self.name!r} chunk key (expected {self.lead!r}...)")
            body = key[len(self.lead):]
        parts = body.split(self.separator)
        try:
            coords = tuple(map(int, parts))
        except ValueError:
            coords = None
        # canonical decimal only: rejects "01", "+1", " 1", "1_0", non-ASCII digits
        if coords is None or "-" in body or self.separator.join(map(str, coords)) != body:
            raise StoreError(f"{key!r} is not a {self.name!r} chunk key with separator {self.separator!r}")
        if ndim is not None and len(coords) != ndim:
            raise StoreError(f"{key!r} has {len(coords)} indices, the array has {ndim} dimensions")
        if max(coords) >= 2**63:
            raise StoreError(f"{key!r} has a chunk index beyond 2**63 - 1")
        return coords
