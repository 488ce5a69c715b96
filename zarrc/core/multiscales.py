"""Reading the multiscales convention (zarr-conventions/multiscales v1) as GDAL 3.13's
Zarr driver reads it, and writing a group's layout as GDAL's ``BuildOverviews`` does.

A group holds the convention when its attributes' ``zarr_conventions`` declare the
multiscales UUID and its ``multiscales`` attribute has a ``layout`` list.  Each layout
entry names an ``asset`` relative to that group: an array, or a group that holds an
array of the same name as the base one (``ovr_2x/data``).  An array's pyramid is
found, as GDAL finds it, through its parent group (``data`` beside ``ovr_2x/``) or its
grandparent (``level0/data``, ``level1/data``).  Metadata only: no values are read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zarrc.core import conventions
from zarrc.core.array import Array
from zarrc.core.group import Group, open_node
from zarrc.errors import ArgumentTypeError, MetadataError

__all__ = ["Level", "Multiscales", "layout_entries", "multiscales", "overviews", "write_layout"]

RESAMPLING_NAMES = {"mean": "average", "average": "average", "nearest": "nearest", "mode": "mode"}


@dataclass(frozen=True)
class Level:
    """One level of a pyramid.  ``asset``: the layout's path (relative to the group
    holding the layout); ``node``: the group or array it names (None if absent);
    ``array``: the level's array (for an array's pyramid: the array of the same name in
    a group level), or None; ``scale`` / ``translation``: the layout's transform, relative
    to ``derived_from``; ``spatial_transform`` / ``spatial_shape``: the entry's absolute
    ``spatial:`` position, if given; ``entry``: the layout entry as stored."""

    asset: str
    node: Array | Group | None
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

    group: Group
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


def _child(group: Group, path: str) -> Array | Group | None:
    parts = [p for p in path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None              # (the convention: relative paths, never above the group)
    return group.get("/".join(parts))


def _resolve(group: Group, asset: str, name: str | None) -> tuple[Array | Group | None, Array | None]:
    node = _child(group, asset)
    if isinstance(node, Array):
        return node, node
    if isinstance(node, Group) and name is not None:
        inner = node.get(name)
        return node, inner if isinstance(inner, Array) else None
    return node, None


def _levels(group: Group, entries: list[Mapping[str, Any]], name: str | None) -> tuple[Level, ...]:
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


def _open_group(array: Array, path: str) -> Group | None:
    node = open_node(array.store, path, read_only=array.read_only, use_consolidated=None)
    return node if isinstance(node, Group) else None


def _of_group(group: Group, name: str | None) -> Multiscales | None:
    entries = layout_entries(group.attrs)
    if entries is None:
        return None
    found = group.attrs["multiscales"]
    default = found.get("resampling_method")
    return Multiscales(group, _levels(group, entries, name),
                       default if isinstance(default, str) else None, name)


def multiscales(node: Array | Group, name: str | None = None) -> Multiscales | None:
    """The pyramid of ``node``, or None if it has none.

    A Group: its own layout (``multiscales`` and the convention's ``zarr_conventions``
    entry); a level that is a group gives its array ``name`` as ``Level.array`` when
    ``name`` is given.  An Array: as GDAL 3.13 finds its overviews, the layout of its
    parent group, else of its grandparent, with each level resolved to the array of
    the same name (levels with no such array have ``array`` None); only a layout one
    of whose levels is this array counts."""
    if isinstance(node, Group):
        return _of_group(node, name)
    if not isinstance(node, Array):
        raise ArgumentTypeError(f"multiscales: expected a zarrc Array or Group, got {type(node).__name__}")
    parts = node.path.split("/")
    for up in (1, 2):
        if len(parts) < up:
            break
        group = _open_group(node, "/".join(parts[:-up]))
        if group is None:
            continue
        found = _of_group(group, node.basename)
        if found is not None and any(lv.array is not None and lv.array.path == node.path for lv in found.levels):
            return found
    return None


def overviews(array: Array) -> list[Array]:
    """``array``'s overviews, as GDAL's ``GetOverview`` lists them: the arrays of its
    pyramid (``multiscales(array)``) of the same rank and data type with fewer
    elements, largest first; [] without a pyramid, and for 1-d arrays (coordinates,
    which GDAL's layouts leave out)."""
    found = multiscales(array) if array.ndim >= 2 else None
    if found is None:
        return []
    size = math.prod(array.shape)
    out = [a for a in found.arrays if a.path != array.path and a.ndim == array.ndim
           and a.dtype == array.dtype and math.prod(a.shape) < size]
    return sorted(out, key=lambda a: -math.prod(a.shape))


def layout(base_asset: str, levels: Sequence[tuple[str, tuple[int, ...]]], base_shape: tuple[int, ...],
           method: str | None, spatial: Sequence[Mapping[str, Any] | None] | None = None) -> dict[str, Any]:
    """The ``multiscales`` attribute GDAL's BuildOverviews writes: the base entry (its
    array's name, a scale of 1 per dimension), then each level (its group's name,
    ``derived_from`` the previous one, ``transform`` the previous shape over this one
    per dimension with a translation of 0, ``resampling_method``); ``spatial``: per
    level (the base first), ``spatial:transform`` / ``spatial:shape`` added to the entry."""
    entries: list[dict[str, Any]] = [{"asset": base_asset, "transform": {"scale": [1.0] * len(base_shape)}}]
    previous_asset, previous_shape = base_asset, base_shape
    for asset, shape in levels:
        entry: dict[str, Any] = {
            "asset": asset, "derived_from": previous_asset,
            "transform": {"scale": [p / s if s else 0.0 for p, s in zip(previous_shape, shape)],
                          "translation": [0.0] * len(shape)}}
        if method is not None:
            entry["resampling_method"] = method
        entries.append(entry)
        previous_asset, previous_shape = asset, shape
    for entry, extra in zip(entries, spatial or ()):
        entry.update(extra or {})
    return {"layout": entries}


def write_layout(group: Group, value: Mapping[str, Any] | None) -> None:
    """Set (``value``: the ``multiscales`` attribute) or remove (None) a group's pyramid:
    its ``multiscales`` attribute and its ``zarr_conventions`` entry, the other
    conventions' entries kept; one attribute write."""
    attrs = group.attrs.asdict()
    conv = conventions.convention_entry(attrs, conventions.MULTISCALES, present=value is not None)
    if value is None:
        attrs.pop("multiscales", None)
    else:
        if not isinstance(value.get("layout"), list):
            raise MetadataError("a multiscales attribute needs a layout list")
        attrs["multiscales"] = dict(value)
    if conv:
        attrs["zarr_conventions"] = conv
    else:
        attrs.pop("zarr_conventions", None)
    group.attrs.put(attrs)
