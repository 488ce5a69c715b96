"""``create_hierarchy``'s store work, below the node classes: every node's metadata
parsed and checked, then the documents written, missing groups above them
included (``write_hierarchy``); ``core.group.make_hierarchy`` builds the nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrc.core import node_metadata
from zarrc.core.consolidate import write_node
from zarrc.core.create import group_metadata, node_path
from zarrc.errors import ContainsArrayError, MetadataError
from zarrc.metadata.names import key_prefix
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, GroupMetadataV3, metadata_from_json
from zarrc.stores import Store


def write_hierarchy(s: Store, nodes: Mapping[str, Any], overwrite: bool) -> list[tuple[str, Any]]:
    """Write the metadata of every node of ``nodes`` ({path: metadata}, as
    ``zarrc.create_hierarchy`` takes them) and of the missing groups above them;
    (path, stored metadata) of each, sorted by path.  Everything is checked before
    anything is written: ContainsNodeError for an existing node unless
    ``overwrite``, ContainsArrayError for an array above a node, MetadataError for
    invalid metadata or mixed formats."""
    parsed = {node_path(str(k)).strip("/"): as_metadata(v, str(k)) for k, v in nodes.items()}
    formats = {md.zarr_format for md in parsed.values()}
    if len(formats) > 1:
        raise MetadataError(f"create_hierarchy: the nodes mix zarr formats {sorted(formats)}")
    if not parsed:
        return []
    fmt = formats.pop()
    ancestors = {"/".join(key.split("/")[:i]) for key in parsed if key for i in range(key.count("/") + 1)}
    for parent in sorted(ancestors - set(parsed)):
        md = node_metadata.read(s, "/" + parent)
        if md is not None and md.node_type == "array":
            raise ContainsArrayError(f"create_hierarchy: {parent!r} in {s!r} is an array, not a group")
    for key in parsed:
        if any(a in parsed and parsed[a].node_type == "array" for a in ancestors if key.startswith(a)
               and a != key and (a == "" or key[len(a)] == "/")):
            raise MetadataError(f"create_hierarchy: {key!r} is below an array in nodes")
        if not overwrite and node_metadata.exists(s, "/" + key):
            raise node_metadata.contains_error(s, "/" + key, f"create_hierarchy: a node already exists at {key!r} "
                                               f"in {s!r}")
    docs = {key: node_metadata.encode("/" + key, md) for key, md in parsed.items()}
    if overwrite:
        for key in parsed:
            s.delete_prefix(key_prefix("/" + key))
    implicit = {a: group_metadata(fmt) for a in ancestors - set(parsed)
                if not node_metadata.exists(s, "/" + a)}
    return [(key, write_node(s, "/" + key, md, docs.get(key), new=True))
            for key, md in sorted({**implicit, **parsed}.items())]


def as_metadata(value: Any, where: str) -> Any:
    """Node metadata from a zarrc metadata object, a zarr-json dict (v3 zarr.json;
    v2 .zarray / .zgroup with its attributes under "attributes"), or an object with
    ``to_dict()`` (zarr-python's metadata).  MetadataError otherwise."""
    if isinstance(value, (ArrayMetadataV3, GroupMetadataV3, ArrayMetadataV2, GroupMetadataV2)):
        return value
    if hasattr(value, "to_dict") and not isinstance(value, Mapping):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise MetadataError(f"create_hierarchy: the metadata of {where!r} must be a metadata object "
                            f"or a zarr-json dict, got {value!r}")
    doc = dict(value)
    if doc.get("zarr_format") == 3:
        return metadata_from_json(doc, "/" + where)
    if doc.get("zarr_format") != 2:
        raise MetadataError(f"create_hierarchy: the metadata of {where!r} has no zarr_format 2 or 3: {doc!r}")
    attributes = doc.pop("attributes", None) or {}
    is_array = doc.pop("node_type", "array" if "shape" in doc else "group") == "array"
    if not is_array:
        return GroupMetadataV2.from_json({"zarr_format": 2}, attributes, "/" + where)
    return ArrayMetadataV2.from_json(doc, attributes, "/" + where)
