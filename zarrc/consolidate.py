"""Consolidated metadata in a store: writing it (:func:`consolidate`, under the
public ``zarrc.consolidate_metadata``) and finding it when a group is opened
(:func:`read_group`).  Below the node classes: these read and write metadata, and
``zarrc.group`` builds the nodes.

v2 keeps it in the group's ``.zmetadata`` key, v3 inline in the group's
zarr.json (``consolidated_metadata``); the documents are zarrc.metadata.consolidated's.
A group opened with consolidated metadata answers member lookups and listings
from it, without touching the store.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from zarrc import node_metadata
from zarrc.errors import GroupNotFoundError, MetadataError
from zarrc.metadata import consolidated as docs
from zarrc.metadata.names import join_path, key_prefix
from zarrc.metadata.v3 import GroupMetadataV3, metadata_from_json

ZMETADATA = ".zmetadata"


def read_group(store: Any, path: str, use_consolidated: bool | None) -> tuple[Any, dict | None]:
    """(metadata, consolidated nodes or None) of the node at ``path``: the nodes below
    it keyed by relative path, when it is a group with consolidated metadata and
    ``use_consolidated`` is not False.  (None, None) if there is no node.  Raises
    MetadataError if ``use_consolidated`` is True and there is none."""
    prefix = key_prefix(path)
    md: docs.NodeMetadata | None = None
    nodes: dict[str, Any] | None = None
    raw = store.get(prefix + "zarr.json")
    if raw is not None:
        md = metadata_from_json(raw, path)
        if isinstance(md, GroupMetadataV3) and use_consolidated is not False:
            nodes = docs.parse_v3(md.consolidated_metadata, path)
    else:
        if use_consolidated is not False:
            zmetadata = store.get(prefix + ZMETADATA)
            if zmetadata is not None:
                nodes = docs.parse_v2(zmetadata, path)
                md = nodes.pop("", None)
        if md is None:
            md = node_metadata.read_v2(store, path)
    if md is not None and md.node_type != "group":
        nodes = None
    if use_consolidated and nodes is None:
        raise MetadataError(f"no consolidated metadata for {path} in {store!r}")
    return md, nodes


def _walk(store: Any, path: str, rel: str, nodes: dict) -> None:
    _, children = store.list_dir(key_prefix(path))
    for child in sorted(c.rstrip("/") for c in children):
        child_path = join_path(path, child)
        md = node_metadata.read(store, child_path)
        if md is None:
            continue
        child_rel = f"{rel}/{child}" if rel else child
        if md.node_type == "group" and md.zarr_format == 3 and md.consolidated_metadata is not None:
            md = dataclasses.replace(md, consolidated_metadata=None)
        nodes[child_rel] = md
        if md.node_type == "group":
            _walk(store, child_path, child_rel, nodes)


def consolidate(store: Any, path: str, zarr_format: int | None = None) -> tuple[Any, dict[str, Any]]:
    """Gather the metadata of every node below the group at ``path`` (normalised) into
    consolidated metadata, in the group's format (v2: ``.zmetadata``; v3: its
    zarr.json), and write it.  Returns (the group's metadata as stored, the nodes
    below it keyed by relative path).  Raises NodeNotFoundError if there is no group
    at ``path``, MetadataError if ``zarr_format`` is not the group's."""
    md = node_metadata.read(store, path)
    if md is None or md.node_type != "group":
        raise GroupNotFoundError(f"no group at {path} in {store!r}")
    if zarr_format is not None and zarr_format != md.zarr_format:
        raise MetadataError(f"the group at {path} is Zarr v{md.zarr_format}, not v{zarr_format}")
    nodes: dict[str, Any] = {}
    _walk(store, path, "", nodes)
    if md.zarr_format == 2:
        store.set(key_prefix(path) + ZMETADATA, docs.to_bytes_v2({"": md, **nodes}))
    else:
        md = node_metadata.write(store, path, dataclasses.replace(
            md, consolidated_metadata=docs.to_json_v3(nodes)))
    return md, nodes
