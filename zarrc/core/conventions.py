"""The attribute conventions other Zarr writers use that zarrc reads and keeps (GDAL's
Zarr driver, xarray, netCDF-C's NCZarr): dimension names in their three forms, the
georeferencing attributes, and the ``zarr_conventions`` entries (their UUIDs) of the
``multiscales``, ``spatial:`` and ``proj:`` conventions.  Metadata only, no I/O."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from zarrc.errors import MetadataError

__all__ = [
    "DIMENSIONS_ATTRIBUTE",
    "MULTISCALES",
    "PROJ",
    "SPATIAL",
    "convention_entry",
    "dimension_names",
    "georeferencing",
    "has_convention",
    "nczarr_dimrefs",
    "v2_dimension_attributes",
]

DIMENSIONS_ATTRIBUTE = "_ARRAY_DIMENSIONS"     # xarray's (and GDAL's) v2 dimension names

# The zarr_conventions entries GDAL 3.13 writes: uuid, schema_url, spec_url, name, description.
MULTISCALES = {
    "uuid": "d35379db-88df-4056-af3a-620245f8e347",
    "schema_url": "https://raw.githubusercontent.com/zarr-conventions/multiscales/refs/tags/v1/schema.json",
    "spec_url": "https://github.com/zarr-conventions/multiscales/blob/v1/README.md",
    "name": "multiscales",
    "description": "Multiscale layout of zarr datasets",
}
SPATIAL = {
    "uuid": "689b58e2-cf7b-45e0-9fff-9cfc0883d6b4",
    "schema_url": "https://raw.githubusercontent.com/zarr-conventions/spatial/refs/tags/v1/schema.json",
    "spec_url": "https://github.com/zarr-conventions/spatial/blob/v1/README.md",
    "name": "spatial:",
    "description": "Spatial coordinate and transformation information",
}
PROJ = {
    "uuid": "f17cb550-5864-4468-aeb7-f3180cfb622f",
    "schema_url": "https://raw.githubusercontent.com/zarr-experimental/geo-proj/refs/tags/v1/schema.json",
    "spec_url": "https://github.com/zarr-experimental/geo-proj/blob/v1/README.md",
    "name": "proj:",
    "description": "Coordinate reference system information for geospatial data",
}

# GDAL's georeferencing and value attributes (besides the prefixed ones below).
GEOREF_KEYS = ("_CRS", "zarr_conventions", "units", "add_offset", "scale_factor", "_FillValue",
               "grid_mapping", "crs_wkt", "spatial_ref")
GEOREF_PREFIXES = ("spatial:", "proj:")


def nczarr_dimrefs(doc: Any) -> tuple[str, ...] | None:
    """The dimension names in an NCZarr ``_NCZARR_ARRAY`` / ``_nczarr_array`` object
    (``.zarray``'s key in netCDF-C 4.8, an attribute from 4.9): the last path
    component of each of its ``dimrefs``; None if ``doc`` holds none."""
    if not isinstance(doc, Mapping):
        return None
    refs = doc.get("dimrefs", doc.get("dimension_references"))
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        return None
    return tuple(posixpath.basename(r.rstrip("/")) for r in refs)


def _v2_names(attributes: Mapping[str, Any], ndim: int) -> tuple[str, ...] | None:
    found = attributes.get(DIMENSIONS_ATTRIBUTE)
    if isinstance(found, list) and len(found) == ndim and all(isinstance(n, str) for n in found):
        return tuple(found)
    for key in ("_nczarr_array", "_NCZARR_ARRAY"):
        refs = nczarr_dimrefs(attributes.get(key))
        if refs is not None and len(refs) == ndim:
            return refs
    return None


def dimension_names(metadata: Any) -> tuple[str | None, ...] | None:
    """An array's dimension names whichever way they are stored: v3's
    ``dimension_names``; for v2, xarray's ``_ARRAY_DIMENSIONS`` attribute, else
    NCZarr's dimension references (the ``_nczarr_array`` attribute, or the
    ``_NCZARR_ARRAY`` key of ``.zarray`` that netCDF-C 4.8 writes); None if none
    (or if they do not match the array's rank)."""
    if metadata.zarr_format == 3:
        return metadata.dimension_names
    found = _v2_names(metadata.attributes, len(metadata.shape))
    if found is None:
        refs = nczarr_dimrefs({"dimrefs": list(getattr(metadata, "nczarr_dimrefs", None) or ())})
        if refs and len(refs) == len(metadata.shape):
            found = refs
    return found


def v2_dimension_attributes(dimension_names: Sequence[Any] | None, ndim: int,
                            attributes: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A new v2 array's attributes with ``dimension_names`` written as
    ``_ARRAY_DIMENSIONS`` (as xarray and GDAL write them).  MetadataError if there is
    not one string per dimension (v2 has no unnamed dimension)."""
    if dimension_names is None:
        return None if attributes is None else dict(attributes)
    if isinstance(dimension_names, str):
        dimension_names = [dimension_names]
    names = list(dimension_names)
    if len(names) != ndim or not all(isinstance(n, str) for n in names):
        raise MetadataError(f"dimension_names {names!r}: a Zarr v2 array stores them as the attribute "
                            f"{DIMENSIONS_ATTRIBUTE}, one string for each of its {ndim} dimensions")
    out = dict(attributes or {})
    given = out.get(DIMENSIONS_ATTRIBUTE)
    if given is not None and list(given) != names:
        raise MetadataError(f"dimension_names {names!r} differ from the attribute "
                            f"{DIMENSIONS_ATTRIBUTE} {list(given)!r}")
    out[DIMENSIONS_ATTRIBUTE] = names
    return out


def georeferencing(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The georeferencing attributes among ``attributes``, as GDAL reads them: ``_CRS``,
    the ``spatial:`` and ``proj:`` attributes and the ``zarr_conventions`` that declare
    them, CF's ``grid_mapping`` / ``units`` / ``add_offset`` / ``scale_factor`` /
    ``_FillValue``."""
    return {k: v for k, v in attributes.items() if k in GEOREF_KEYS or k.startswith(GEOREF_PREFIXES)}


def has_convention(attributes: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """True if ``attributes``' ``zarr_conventions`` declare the convention ``entry``
    (by its UUID, or by its name where an entry has no UUID)."""
    found = attributes.get("zarr_conventions")
    if not isinstance(found, list):
        return False
    for item in found:
        if isinstance(item, Mapping) and (item.get("uuid") == entry["uuid"] or (
                "uuid" not in item and item.get("name") == entry["name"])):
            return True
    return False


def convention_entry(attributes: Mapping[str, Any], entry: Mapping[str, Any],
                     present: bool = True) -> list[Any]:
    """``attributes``' ``zarr_conventions`` list with ``entry`` added (at the end, if
    not there) or, ``present=False``, removed; other entries kept as they are."""
    found = attributes.get("zarr_conventions")
    kept = [item for item in (found if isinstance(found, list) else [])
            if not (isinstance(item, Mapping) and item.get("uuid") == entry["uuid"])]
    return kept + [dict(entry)] if present else kept
