"""Finding a node's pyramid (zarr-conventions/multiscales v1) as GDAL 3.13's Zarr
driver finds it, and writing a group's layout as GDAL's ``BuildOverviews`` does.

A group's own layout is read by ``core.multiscales_levels`` (``Group.multiscales``).
An array's pyramid is found, as GDAL finds it, through its parent group (``data``
beside ``ovr_2x/``) or its grandparent (``level0/data``, ``level1/data``).  Metadata
only: no values are read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from zarrc.core import conventions
from zarrc.core.array import Array
from zarrc.core.group import Group, open_node
from zarrc.core.multiscales_levels import Level, Multiscales, layout_entries, of_group
from zarrc.errors import ArgumentTypeError, MetadataError

__all__ = ["Level", "Multiscales", "layout_entries", "multiscales", "overviews", "write_layout"]

RESAMPLING_NAMES = {"mean": "average", "average": "average", "nearest": "nearest", "mode": "mode"}


def _open_group(array: Array, path: str) -> Group | None:
    node = open_node(array.store, path, read_only=array.read_only, use_consolidated=None)
    return node if isinstance(node, Group) else None


def multiscales(node: Array | Group, name: str | None = None) -> Multiscales | None:
    """The pyramid of ``node``, or None if it has none.

    A Group: its own layout (``multiscales`` and the convention's ``zarr_conventions``
    entry), as ``Group.multiscales``; a level that is a group gives its array ``name``
    as ``Level.array`` (without ``name``: the base level's, when that is an array).
    An Array: as GDAL 3.13 finds its overviews, the layout of its parent group, else of its grandparent, with each level resolved to the array of
    the same name (levels with no such array have ``array`` None); only a layout one
    of whose levels is this array counts."""
    if isinstance(node, Group):
        return of_group(node, name)
    if not isinstance(node, Array):
        raise ArgumentTypeError(f"multiscales: expected a zarrc Array or Group, got {type(node).__name__}")
    parts = node.path.split("/")
    for up in (1, 2):
        if len(parts) < up:
            break
        group = _open_group(node, "/".join(parts[:-up]))
        if group is None:
            continue
        found = of_group(group, node.basename)
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
