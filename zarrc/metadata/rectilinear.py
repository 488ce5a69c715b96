"""The ``rectilinear`` chunk grid's JSON (chunk-grids/rectilinear): parsed into one
entry per dimension, a bare int (a regular step repeated to cover the dimension)
or a tuple of explicit edge lengths (run-length pairs ``[value, count]``
expanded), and written back as zarr-python 3.4 writes it (bare ints as they
are; an edge list run-length encoded where that is shorter).  No I/O; the grid's
geometry (boundary search, runs) is ``zarrc.core.chunk_grid``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zarrc.metadata.common import check_members, fail, is_int

# one dimension's edges: a bare step, or the explicit edge lengths
DimEdges = int | tuple[int, ...]
MAX_EDGES = 1 << 24      # edges in one dimension, run-length pairs expanded


def _edge(key: str, value: Any, where: str) -> int:
    if not is_int(value) or not 1 <= value < 2**63:
        fail(key, value, f"has {where} that is not a positive integer")
    return int(value)


def parse_dim(value: Any, dim: int) -> DimEdges:
    """One dimension's entry of ``chunk_shapes``.  Raises MetadataError naming
    ``chunk_shapes`` and the dimension."""
    key = f"chunk_grid.configuration.chunk_shapes[{dim}]"
    if is_int(value):
        return _edge(key, value, "an edge length")
    if not isinstance(value, (list, tuple)) or not value:
        fail(key, value, "must be a positive integer or a non-empty array of edge lengths "
                         "and [length, count] pairs")
    edges: list[int] = []
    for item in value:
        if isinstance(item, (list, tuple)):
            if len(item) != 2:
                fail(key, value, f"has a run-length entry {list(item)} that is not [length, count]")
            length = _edge(key, item[0], "a run-length edge")
            count = _edge(key, item[1], "a run-length count")
            if len(edges) + count > MAX_EDGES:
                fail(key, value, f"has more than {MAX_EDGES} edges")
            edges.extend([length] * count)
        else:
            edges.append(_edge(key, item, "an edge length"))
    return tuple(edges)


def parse(value: Any, shape: Sequence[int]) -> tuple[DimEdges, ...]:
    """The ``configuration`` of a ``rectilinear`` chunk grid over an array of
    ``shape``: one DimEdges per dimension.  Raises MetadataError for a kind other
    than "inline", a wrong number of dimensions, an edge that is not a positive
    integer, or edges that do not cover the array."""
    check_members("chunk_grid", value, ("kind", "chunk_shapes"))
    if value.get("kind") != "inline":
        fail("chunk_grid.configuration.kind", value.get("kind"), 'must be "inline"')
    shapes = value.get("chunk_shapes")
    if not isinstance(shapes, (list, tuple)):
        fail("chunk_grid.configuration.chunk_shapes", shapes, "must be an array (one entry per dimension)")
    if len(shapes) != len(shape):
        fail("chunk_grid.configuration.chunk_shapes", shapes,
             f"has {len(shapes)} dimensions but shape {list(shape)} has {len(shape)}")
    return check_cover(tuple(parse_dim(v, d) for d, v in enumerate(shapes)), shape)


def check_cover(edges: tuple[DimEdges, ...], shape: Sequence[int]) -> tuple[DimEdges, ...]:
    """``edges`` if each explicit edge list sums to at least its dimension's length."""
    for d, (e, n) in enumerate(zip(edges, shape)):
        if not isinstance(e, int) and sum(e) < n:
            fail(f"chunk_grid.configuration.chunk_shapes[{d}]", list(e),
                 f"sums to {sum(e)}, less than the array's length {n} in dimension {d}")
    return edges


def run_length(edges: Sequence[int]) -> list[Any]:
    """``edges`` with runs of two or more as ``[value, count]`` (zarr-python's form)."""
    out: list[Any] = []
    i, n = 0, len(edges)
    while i < n:
        j = i
        while j + 1 < n and edges[j + 1] == edges[i]:
            j += 1
        out.append([edges[i], j - i + 1] if j > i else edges[i])
        i = j + 1
    return out


def to_json(edges: tuple[DimEdges, ...]) -> dict[str, Any]:
    """The chunk grid object as zarr-python 3.4 writes it."""
    dims: list[Any] = []
    for e in edges:
        if isinstance(e, int):
            dims.append(e)
        else:
            rle = run_length(e)
            dims.append(rle if len(rle) < len(e) else list(e))
    return {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": dims}}


def resized(edges: tuple[DimEdges, ...], shape: Sequence[int]) -> tuple[DimEdges, ...]:
    """The edges after a resize to ``shape``, as zarr-python 3.4: a bare step stays;
    an edge list that no longer covers its dimension gets one edge of the
    difference; shrinking keeps every edge (the spec allows edges beyond the end)."""
    out: list[DimEdges] = []
    for e, n in zip(edges, shape):
        if isinstance(e, int) or sum(e) >= n:
            out.append(e)
        else:
            out.append((*e, n - sum(e)))
    return tuple(out)


def representative(edges: tuple[DimEdges, ...]) -> tuple[int, ...]:
    """A chunk shape standing for the grid where one shape is asked for: the first
    chunk's (``chunk_shape`` of the metadata of a rectilinear array)."""
    return tuple(e if isinstance(e, int) else e[0] for e in edges)


def unique_edges(e: DimEdges) -> list[int]:
    """The distinct edge lengths of one dimension, in order of appearance."""
    return [e] if isinstance(e, int) else list(dict.fromkeys(e))
