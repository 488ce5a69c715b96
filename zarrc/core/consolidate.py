"""Consolidated metadata in a store: writing it (:func:`consolidate`, under the
public ``zarrc.consolidate_metadata``) and finding it when a group is opened
(:func:`read_group`).  Below the node classes: these read and write metadata, and
``zarrc.core.group`` builds the nodes.

v2 keeps it in the group's ``.zmetadata`` key, v3 inline in the group's
zarr.json (``consolidated_metadata``); the documents are zarrc.metadata.consolidated's.
A group opened with consolidated metadata answers member lookups and listings
from it, without touching the store.

Kept in step (:func:`write_node`, :func:`forget`): every node document zarrc
writes or deletes also changes that node's entry in the consolidated metadata of
the groups above it that have some (v2: their ``.zmetadata``, which also holds a
group's own attributes; v3: their zarr.json), reading only those groups'
documents.  Nothing is added where there was no consolidated metadata.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from zarrc.core import node_metadata
from zarrc.errors import GroupNotFoundError, MetadataError
from zarrc.metadata import consolidated as docs
from zarrc.metadata.names import join_path, key_prefix
from zarrc.metadata.v3 import GroupMetadataV3, dump_json, metadata_from_json

ZMETADATA = ".zmetadata"


def read_group(store: Any, path: str, use_consolidated: bool | None, zarr_format: int | None = None
               ) -> tuple[Any, docs.ConsolidatedNodes | None]:
    """(metadata, consolidated nodes or None) of the node at ``path``: the nodes below
    it keyed by relative path (each parsed when first looked up: ``ConsolidatedNodes``),
    when it is a group with consolidated metadata and
    ``use_consolidated`` is not False.  (None, None) if there is no node.  Raises
    MetadataError if ``use_consolidated`` is True and there is none.  ``zarr_format``
    2 or 3 reads only that format's documents (``node_metadata.read``)."""
    prefix = key_prefix(path)
    md: docs.NodeMetadata | None = None
    nodes: docs.ConsolidatedNodes | None = None
    raw = None if zarr_format == 2 else store.get(prefix + "zarr.json")
    if raw is not None:
        md = metadata_from_json(raw, path)
        if isinstance(md, GroupMetadataV3) and use_consolidated is not False:
            nodes = docs.parse_v3(md.consolidated_metadata, path)
    elif zarr_format != 3:
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


def consolidate(store: Any, path: str, zarr_format: int | None = None) -> tuple[Any, docs.ConsolidatedNodes]:
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
    return md, docs.ConsolidatedNodes(nodes)


# ------------------------------------------------------------------ kept in step


def write_node(store: Any, path: str, metadata: Any, docs_: dict[str, bytes] | None = None, *,
               new: bool = False) -> Any:
    """Write the metadata of the node at ``path`` (normalised; its documents
    ``docs_`` if already encoded) and keep the consolidated metadata of the groups
    above it in step (:func:`update_ancestors`); returns the metadata as stored.
    ``new``: the node replaces whatever was at ``path`` (entries below it go).  A
    v3 group that is not new keeps the consolidated metadata its stored zarr.json
    holds (kept in step by others' writes), not the copy in ``metadata``.  Raises
    ArgumentTypeError, writing nothing, if a value is not JSON."""
    if not new and metadata.zarr_format == 3 and metadata.node_type == "group":
        metadata = dataclasses.replace(metadata, consolidated_metadata=_stored_member(store, path, metadata))
        docs_ = None
    stored = node_metadata.write(store, path, metadata, docs_)
    update_ancestors(store, path, stored, below=new)
    return stored


def entry_of(metadata: Any) -> Any:
    """``metadata`` as an entry of consolidated metadata (a v3 group without its own
    consolidated member)."""
    if getattr(metadata, "consolidated_metadata", None) is not None:
        return dataclasses.replace(metadata, consolidated_metadata=None)
    return metadata


def forget(store: Any, path: str) -> None:
    """Remove the node at ``path`` (deleted) and those below it from the
    consolidated metadata of the groups above it."""
    update_ancestors(store, path, None, below=True)


def _stored_member(store: Any, path: str, metadata: Any) -> Any:
    """The ``consolidated_metadata`` member of the group's stored zarr.json (None if
    it has none), or ``metadata``'s if that document cannot be read."""
    raw = store.get(key_prefix(path) + "zarr.json")
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        return metadata.consolidated_metadata
    return doc.get("consolidated_metadata") if isinstance(doc, dict) else metadata.consolidated_metadata


def update_ancestors(store: Any, path: str, metadata: Any, *, below: bool = False) -> None:
    """Set the entry of the node at ``path`` (normalised) to ``metadata`` (None: the
    node was deleted) in the consolidated metadata of each group above it that has
    some in the node's format (v2: also the group's own ``.zmetadata`` when the
    node is a v2 group), and if ``below`` drop the entries below it.  One batched
    read of those groups' documents; each one that holds consolidated metadata is
    rewritten.  A document that cannot be read is left as it is (opening that
    group falls back to listing the store, with a warning)."""
    parts = [p for p in path.split("/") if p]
    groups = ["/" + "/".join(parts[:i]) for i in range(len(parts))]
    fmt = None if metadata is None else metadata.zarr_format
    v2_groups = [] if fmt == 3 else groups + (["/" + "/".join(parts)] if metadata is not None
                                              and metadata.node_type == "group" else [])
    v3_groups = [] if fmt == 2 else groups
    keys = [key_prefix(g) + ZMETADATA for g in v2_groups] + [key_prefix(g) + "zarr.json" for g in v3_groups]
    if not keys:
        return
    found = store.get_many(keys)
    rel_of = {group: "/".join(parts[i:]) for i, group in enumerate(groups)}
    rel_of["/" + "/".join(parts)] = ""           # (a v2 group's own .zmetadata)
    for group, key, raw in zip(v2_groups + v3_groups, keys, found):
        if raw is None:
            continue
        try:
            doc = json.loads(raw)
            if key.endswith(ZMETADATA):
                out = docs.dump_v2(docs.edit_v2(doc, rel_of[group], metadata, below))
            else:
                if not isinstance(doc, dict) or doc.get("node_type") != "group" \
                        or doc.get("consolidated_metadata") is None:
                    continue
                doc["consolidated_metadata"] = docs.edit_v3(doc["consolidated_metadata"], rel_of[group],
                                                            metadata, below)
                out = dump_json(doc)
        except (ValueError, MetadataError):
            continue
        store.set(key, out)
