"""The chunk grids: regular (v3 ``regular``; also Zarr v2's only grid) and
rectilinear (v3 ``rectilinear``: per-dimension edge lists).

Regular: chunk (i, j, ...) covers array elements [i*ci, (i+1)*ci) x [j*cj, (j+1)*cj)
x ..., clipped at the array edge.  The grid has ceil(n / c) chunks along each
dimension; a zero-length dimension has no chunks (and may have chunk length 0).

Rectilinear: along a dimension given by edges (e0, e1, ...), chunk k covers
[o_k, o_k + e_k) with o the cumulative edges; a dimension given by a bare step is
regular.  ``Edges`` is one such dimension (the planner's boundary search:
``zarrc.core.indexing`` takes an ``Edges`` where it takes a chunk length);
``RectilinearChunkGrid`` the whole grid.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from zarrc.errors import MetadataError, SelectionError


class RegularChunkGrid:
    """A regular grid of ``chunk_shape`` chunks over an array of ``shape``.

    Raises MetadataError if the ranks differ, a length is negative, or a chunk
    length is 0 along a non-empty dimension.
    """

    __slots__ = ("_chunks", "_shape", "chunk_shape", "grid_shape", "shape")

    def __init__(self, shape: Sequence[int], chunk_shape: Sequence[int]) -> None:
        self.shape = tuple(int(n) for n in shape)
        self.chunk_shape = tuple(int(c) for c in chunk_shape)
        if len(self.shape) != len(self.chunk_shape):
            raise MetadataError(f"chunk shape {list(self.chunk_shape)} and array shape {list(self.shape)} "
                                f"differ in rank")
        if any(n < 0 for n in self.shape) or any(c < 0 or (c == 0 and n > 0)
                                                 for n, c in zip(self.shape, self.chunk_shape)):
            raise MetadataError(
                f"chunk shape {list(self.chunk_shape)} does not fit array shape {list(self.shape)}")
        self.grid_shape = tuple(-(-n // c) if n else 0 for n, c in zip(self.shape, self.chunk_shape))
        self._shape = np.array(self.shape, dtype=np.int64)
        self._chunks = np.array([max(c, 1) for c in self.chunk_shape], dtype=np.int64)

    @classmethod
    def from_metadata(cls, metadata: Any) -> RegularChunkGrid:
        """The grid of an array's metadata (anything with ``shape`` and ``chunk_shape``)."""
        return cls(metadata.shape, metadata.chunk_shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nchunks(self) -> int:
        """Number of chunks in the grid (1 for a 0-d array, 0 if any dimension is empty)."""
        return math.prod(self.grid_shape)

    def __repr__(self) -> str:
        return f"RegularChunkGrid(shape={self.shape}, chunk_shape={self.chunk_shape})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RegularChunkGrid) and self.shape == other.shape
                and self.chunk_shape == other.chunk_shape)

    def __hash__(self) -> int:
        return hash((self.shape, self.chunk_shape))

    def _check_coords(self, coords: Sequence[int]) -> tuple[int, ...]:
        coords = tuple(int(i) for i in coords)
        inside = all(0 <= i < n for i, n in zip(coords, self.grid_shape))
        if len(coords) != len(self.grid_shape) or not inside:
            raise SelectionError(f"chunk {list(coords)} is outside the chunk grid {list(self.grid_shape)}")
        return coords

    def _rows(self, values: Any) -> np.ndarray:
        rows = np.asarray(values, dtype=np.int64)
        if rows.ndim == 1:
            rows = rows[np.newaxis, :]
        if rows.ndim != 2 or rows.shape[1] != self.ndim:
            raise SelectionError(f"expected an (n, {self.ndim}) array of coordinates, got shape {rows.shape}")
        return rows

    def chunk_extent(self, coords: Sequence[int]) -> tuple[slice, ...]:
        """The region of the array that chunk ``coords`` covers, clipped at the array
        edge, as one ``slice(start, stop)`` per dimension.  Raises SelectionError for
        coordinates outside the grid."""
        coords = self._check_coords(coords)
        return tuple(slice(i * c, min((i + 1) * c, n))
                     for i, c, n in zip(coords, self.chunk_shape, self.shape))

    def chunk_data_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        """The shape of the part of chunk ``coords`` inside the array (equal to
        ``chunk_shape`` except for edge chunks)."""
        return tuple(s.stop - s.start for s in self.chunk_extent(coords))

    def chunk_extents(self, coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised ``chunk_extent``: ``coords`` is an (n, ndim) integer array (or one
        1-d coordinate);
        returns ``(starts, stops)``, two (n, ndim) int64 arrays (stops clipped at
        the array edge).  Raises SelectionError if any coordinate is outside the grid."""
        coords = self._rows(coords)
        if coords.size and ((coords < 0).any() or (coords >= np.array(self.grid_shape)).any()):
            raise SelectionError(f"chunk coordinates outside the chunk grid {list(self.grid_shape)}")
        starts = coords * self._chunks
        stops = np.minimum(starts + self._chunks, self._shape)
        return starts, stops

    def chunk_of(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For element coordinates ``points`` ((n, ndim) integers inside the array; one
        point may be given as a 1-d array),
        the chunk holding each one and its position within that chunk: two (n, ndim)
        int64 arrays."""
        points = self._rows(points)
        return np.divmod(points, self._chunks)

    def all_chunk_coords(self) -> np.ndarray:
        """Every chunk coordinate in C order, as an (nchunks, ndim) int64 array."""
        if self.ndim == 0:
            return np.zeros((1, 0), dtype=np.int64)
        grids = np.indices(self.grid_shape, dtype=np.int64)
        return grids.reshape(self.ndim, -1).T.copy()

    def chunks_in_region(self, starts: Sequence[int], stops: Sequence[int]) -> np.ndarray:
        """Coordinates ((k, ndim) int64, C order) of the chunks that intersect the box
        [starts, stops) of the array (clipped to the array)."""
        if len(starts) != self.ndim or len(stops) != self.ndim:
            raise SelectionError(f"region {list(starts)}..{list(stops)} does not have {self.ndim} dimensions")
        lo, hi = [], []
        for a, b, n, c in zip(starts, stops, self.shape, self.chunk_shape):
            a, b = max(0, int(a)), min(int(b), n)
            if b <= a:
                return np.zeros((0, self.ndim), dtype=np.int64)
            lo.append(a // c)
            hi.append(-(-b // c))
        if self.ndim == 0:
            return np.zeros((1, 0), dtype=np.int64)
        ranges = [np.arange(a, b, dtype=np.int64) for a, b in zip(lo, hi)]
        mesh = np.meshgrid(*ranges, indexing="ij")
        return np.stack([m.ravel() for m in mesh], axis=-1)

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        """Every chunk coordinate, as tuples, in C order."""
        if self.ndim == 0:
            yield ()
            return
        yield from np.ndindex(*self.grid_shape)


class Edges:
    """One dimension of a rectilinear grid over ``size`` elements: chunk k covers
    elements [offsets[k], offsets[k + 1]) (clipped at ``size``).  ``offsets`` is an
    int64 array of the cumulative edges, starting at 0; ``nchunks`` the chunks
    holding some element.  Chunk lookups are binary searches (``chunk_of``)."""

    __slots__ = ("edges", "nchunks", "offsets", "size")

    def __init__(self, edges: Sequence[int] | np.ndarray, size: int) -> None:
        self.edges = np.asarray(edges, dtype=np.int64)
        if self.edges.ndim != 1 or not self.edges.size or (self.edges < 1).any():
            raise MetadataError(f"chunk edges {list(edges)[:20]} must be positive integers")
        self.offsets = np.concatenate(([0], np.cumsum(self.edges)))
        self.size = int(size)
        if self.size > self.offsets[-1]:
            raise MetadataError(f"chunk edges summing to {int(self.offsets[-1])} do not cover "
                                f"a dimension of length {self.size}")
        self.nchunks = int(np.searchsorted(self.offsets, self.size, side="left")) if self.size else 0

    def __repr__(self) -> str:
        return f"Edges({self.edges.tolist()}, size={self.size})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Edges) and self.size == other.size
                and np.array_equal(self.edges, other.edges))

    def __hash__(self) -> int:
        return hash((self.size, self.edges.tobytes()))

    def chunk_of(self, index: Any) -> Any:
        """The chunk holding each element index (an int or an int64 array, inside
        the dimension): a binary search over the offsets."""
        return np.searchsorted(self.offsets, index, side="right") - 1

    def sizes(self) -> tuple[int, ...]:
        """Each chunk's length inside the dimension (dask's ``chunks`` of it)."""
        ends = np.minimum(self.offsets[1:self.nchunks + 1], self.size)
        return tuple(int(n) for n in ends - self.offsets[:self.nchunks])


def dim_edges(spec: int | Sequence[int], size: int) -> int | Edges:
    """A rectilinear grid's dimension for the planner: a bare step stays an int
    (regular), an edge list becomes ``Edges``."""
    return int(spec) if isinstance(spec, (int, np.integer)) else Edges(spec, size)


class RectilinearChunkGrid:
    """A rectilinear grid over an array of ``shape``: ``dims`` one int (a regular
    step) or ``Edges`` per dimension (see ``dim_edges``).  Raises MetadataError for
    edges that are not positive or do not cover the shape."""

    __slots__ = ("dims", "grid_shape", "shape")

    def __init__(self, shape: Sequence[int], edges: Sequence[int | Sequence[int]]) -> None:
        self.shape = tuple(int(n) for n in shape)
        if len(edges) != len(self.shape):
            raise MetadataError(f"chunk edges of {len(edges)} dimensions for an array of shape "
                                f"{list(self.shape)}")
        self.dims = tuple(dim_edges(e, n) for e, n in zip(edges, self.shape))
        if any(isinstance(d, int) and d < 1 for d in self.dims):
            raise MetadataError(f"chunk steps of {list(edges)} must be positive")
        self.grid_shape = tuple(d.nchunks if isinstance(d, Edges) else -(-n // d)
                                for d, n in zip(self.dims, self.shape))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nchunks(self) -> int:
        return math.prod(self.grid_shape)

    def __repr__(self) -> str:
        return f"RectilinearChunkGrid(shape={self.shape}, dims={self.dims})"

    def chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Each dimension's chunk lengths inside the array (dask's ``chunks``)."""
        return tuple(d.sizes() if isinstance(d, Edges)
                     else tuple(min(d, n - i) for i in range(0, n, d))
                     for d, n in zip(self.dims, self.shape))

    def all_chunk_coords(self) -> np.ndarray:
        """Every chunk coordinate in C order, as an (nchunks, ndim) int64 array."""
        if self.ndim == 0:
            return np.zeros((1, 0), dtype=np.int64)
        return np.indices(self.grid_shape, dtype=np.int64).reshape(self.ndim, -1).T.copy()
