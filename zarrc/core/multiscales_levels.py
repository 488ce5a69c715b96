"""A group's multiscales layout (zarr-conventions/multiscales v1) read into the levels
of its pyramid, as GDAL 3.13's Zarr driver reads it: below the Group class, which
exposes it as ``Group.multiscales``; ``core.multiscales`` finds an array's pyramid
through its parents and writes layouts.

A group holds the convention when its attributes' ``zarr_conventions`` declare the
multiscales UUID and its ``multiscales`` attribute has a ``layout`` list.  Each layout
entry names an ``asset`` relative to that group: an array, or a group that holds an
array of the same name as the base one (``ovr_2x/data``).  Metadata only: no values
are read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zarrc.core import conventions
from zarrc.core.array import Array
from zarrc.core.node import Node

__all__ = ["Level", "Multiscales", "layout_entries", "of_group"]


@dataclass(frozen=True)
class Level:
    """One level of a pyramid.  ``asset``: the layout's path (relative to the group
    holding the layout); ``node``: the group or array it names (None if absent);
    ``array``: the level's array (for an array's pyramid: the array of the same name in
    a group level), or None; ``scale`` / ``translation``: the layout's transform, relative
    to ``derived_from``; ``spatial_transform`` / ``spatial_shape``: the entry's absolute
    ``spatial:`` position, if given; ``entry``: the layout entry as stored."""

    asset: str
    node: Node | None
    array: Array | None
    derived_from: str | None = None
    scale: tuple[float, ...] | None = None
    translation: tuple[float, ...] | None = None
    resampling_method: str | None = None
    spatial_transform: tuple[float, ...] | None = None
    spatial_shape: tuple[int, ...] | None = None
    entry: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def shape(self) -> tuple[int, ...] | None:
        return None if self.array is None else self.array.shape


@dataclass(frozen=True)
class Multiscales:
    """A group's pyramid: ``group`` holds the layout, ``levels`` in the layout's order
    (the first the full resolution, as GDAL writes them), ``resampling_method`` the
    layout's default, ``name`` the array name the levels were resolved for (or None)."""

    group: Node
    levels: tuple[Level, ...]
    resampling_method: str | None = None
    name: str | None = None

    def __len__(self) -> int:
        return len(self.levels)

    def __iter__(self) -> Any:
        return iter(self.levels)

    def __getitem__(self, i: int) -> Level:
        return self.levels[i]

    @property
    def arrays(self) -> list[Array]:
        """The levels' arrays, largest first (GDAL's order: the base, then its overviews)."""
        found = [lv.array for lv in self.levels if lv.array is not None]
        return sorted(found, key=lambda a: -math.prod(a.shape))


def _floats(value: Any) -> tuple[float, ...] | None:
    if isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return tuple(float(v) for v in value)
    return None


def layout_entries(attributes: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The ``multiscales`` layout entries of a group's attributes, or None when the
    group does not hold the convention (no ``zarr_conventions`` entry with its UUID,
    or no ``layout`` list).  Entries without a string ``asset`` are left out."""
    if not conventions.has_convention(attributes, conventions.MULTISCALES):
        return None
    found = attributes.get("multiscales")
    layout = found.get("layout") if isinstance(found, Mapping) else None
    if not isinstance(layout, list):
        return None
    return [e for e in layout if isinstance(e, Mapping) and isinstance(e.get("asset"), str)]


def _child(group: Any, path: str) -> Node | None:
    parts = [p for p in path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None              # (the convention: relative paths, never above the group)
    return group.get("/".join(parts))


def _resolve(group: Any, asset: str, name: str | None) -> tuple[Node | None, Array | None]:
    node = _child(group, asset)
    if isinstance(node, Array):
        return node, node
    if node is not None and name is not None:     # (a group: its array ``name``)
        inner = _child(group, f"{asset}/{name}")
        return node, inner if isinstance(inner, Array) else None
    return node, None


def _levels(group: Any, entries: list[Mapping[str, Any]], name: str | None) -> tuple[Level, ...]:
    out = []
    for e in entries:
        node, array = _resolve(group, e["asset"], name)
        found = e.get("transform")
        transform: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        shape = e.get("spatial:shape")
        out.append(Level(
            asset=e["asset"], node=node, array=array,
            derived_from=e.get("derived_from") if isinstance(e.get("derived_from"), str) else None,
            scale=_floats(transform.get("scale")), translation=_floats(transform.get("translation")),
            resampling_method=e.get("resampling_method") if isinstance(e.get("resampling_method"), str) else None,
            spatial_transform=_floats(e.get("spatial:transform")),
            spatial_shape=tuple(int(s) for s in shape) if isinstance(shape, list) and _floats(shape) else None,
            entry=e))
    return tuple(out)


def of_group(group: Any, name: str | None = None) -> Multiscales | None:
    """The pyramid whose layout the Group ``group`` holds, or None if it holds none.
    A level that is a group gives its array ``name`` as ``Level.array``; without
    ``name``, the base level's (the first entry's) when that is an array, as GDAL
    writes layouts (``data`` beside ``ovr_2x/data``)."""
    entries = layout_entries(group.attrs)
    if entries is None:
        return None
    if name is None and entries:
        base = _child(group, entries[0]["asset"])
        name = base.basename if isinstance(base, Array) else None
    found = group.attrs["multiscales"]
    default = found.get("resampling_method")
    return Multiscales(group, _levels(group, entries, name),
                       default if isinstance(default, str) else None, name)
