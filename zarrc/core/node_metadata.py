"""Node metadata documents in a store, for both formats.

v3: one ``zarr.json`` per node.  v2: ``.zarray`` (arrays) or ``.zgroup`` (groups),
plus ``.zattrs`` for the attributes.  Opening a path detects the format: a
``zarr.json`` wins, then ``.zarray`` / ``.zgroup`` (as zarr-python does).
"""

from __future__ import annotations

import json
from typing import Any

from zarrc.errors import (
    ArgumentTypeError,
    ContainsArrayAndGroupError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    MetadataError,
)
from zarrc.metadata.names import key_prefix
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v3 import metadata_from_json

V2_DOCUMENTS = (".zarray", ".zgroup", ".zattrs")
METADATA_NAMES = ("zarr.json",) + V2_DOCUMENTS


def read(store: Any, path: str, zarr_format: int | None = None) -> Any:
    """The metadata of the node at ``path`` (ArrayMetadataV3 / GroupMetadataV3 /
    ArrayMetadataV2 / GroupMetadataV2), or None if there is none.  A ``zarr.json``
    comes first, unless ``zarr_format`` asks for one format: 2 reads only the v2
    documents (a folder may hold both, as zarrs' test stores do; zarr-python then
    reads the ``.zarray``), 3 only ``zarr.json``.  Raises MetadataError for
    malformed documents, or a path holding both a .zarray and a .zgroup."""
    if zarr_format == 2:
        return read_v2(store, path)
    raw = store.get(key_prefix(path) + "zarr.json")
    if raw is not None:
        return metadata_from_json(raw, path)
    return None if zarr_format == 3 else read_v2(store, path)


def read_v2(store: Any, path: str) -> Any:
    """The v2 metadata of the node at ``path`` (.zarray / .zgroup + .zattrs), or None."""
    prefix = key_prefix(path)
    zarray, zgroup, zattrs = store.get_many([prefix + name for name in V2_DOCUMENTS])
    if zarray is not None and zgroup is not None:
        raise ContainsArrayAndGroupError(f"{path} holds both a .zarray and a .zgroup")
    if zarray is not None:
        return ArrayMetadataV2.from_json(zarray, zattrs, path)
    if zgroup is not None:
        return GroupMetadataV2.from_json(zgroup, zattrs, path)
    return None


def documents(metadata: Any) -> dict[str, bytes]:
    """The documents (name -> bytes) that store ``metadata``."""
    if metadata.zarr_format == 3:
        return {"zarr.json": metadata.to_bytes()}
    name = ".zarray" if metadata.node_type == "array" else ".zgroup"
    return {name: metadata.to_bytes(), ".zattrs": metadata.attributes_to_bytes()}


def encode(path: str, metadata: Any) -> dict[str, bytes]:
    """The documents of ``metadata`` (see :func:`documents`); ArgumentTypeError if a
    value (an attribute, say) is not JSON."""
    try:
        return documents(metadata)
    except TypeError as exc:
        raise ArgumentTypeError(f"the metadata of {path} cannot be written as JSON: {exc}") from None


def write(store: Any, path: str, metadata: Any, docs: dict[str, bytes] | None = None) -> Any:
    """Store ``metadata`` at ``path`` (its documents ``docs`` if already encoded);
    returns it as a reader will see it (JSON turns tuples and numpy arrays into
    lists, non-str keys into str).  Raises ArgumentTypeError, writing nothing, if a
    value (an attribute, say) is not JSON."""
    if docs is None:
        docs = encode(path, metadata)
    prefix = key_prefix(path)
    store.set_many({prefix + name: raw for name, raw in docs.items()})
    return _reparse(metadata, path, docs)


def _reparse(metadata: Any, path: str, docs: dict[str, bytes]) -> Any:
    """``metadata`` after a trip through its JSON documents ``docs``."""
    if metadata.zarr_format == 3:
        return type(metadata).from_json(docs["zarr.json"], path)
    main = docs.get(".zarray", docs.get(".zgroup"))
    assert main is not None      # documents() gives v2 metadata a .zarray or a .zgroup
    return type(metadata).from_json(json.loads(main), json.loads(docs[".zattrs"]), path)


def exists(store: Any, path: str) -> bool:
    """True if a node (either format) is at ``path``."""
    prefix = key_prefix(path)
    return any(store.exists(prefix + name) for name in ("zarr.json", ".zarray", ".zgroup"))


def contains_error(store: Any, path: str, message: str) -> ContainsNodeError:
    """The error for a node found at ``path`` where none may be: ContainsArrayError
    or ContainsGroupError (as zarr-python), by the node's kind (ContainsNodeError if
    its metadata cannot be read)."""
    try:
        md = read(store, path)
    except MetadataError as exc:
        return exc if isinstance(exc, ContainsNodeError) else ContainsNodeError(message)
    if md is None:
        return ContainsNodeError(message)
    return (ContainsArrayError if md.node_type == "array" else ContainsGroupError)(message)
