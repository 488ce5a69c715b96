"""The Zarr object model of ZEP 6: a hierarchy as a tree of JSON-serialisable node
descriptions, validated as zarrc validates metadata, read from a store and created
in one step.

An :class:`ArraySpec` is an array's metadata document, its user attributes under
``attributes`` (v3: the fields of its ``zarr.json``; v2: those of its ``.zarray``);
a :class:`GroupSpec` is a group's (``zarr_format``, v3's ``node_type``,
``attributes``) with ``members``: {name: ArraySpec or GroupSpec}, or None where
the members are not described (below a ``depth`` limit, or in a flat form).  Both
Zarr formats; the nodes of one hierarchy share one.  Their dicts are the JSON
pydantic-zarr's ``v2`` / ``v3`` models read and write (``model_dump`` /
``model_validate``)::

    from zarrc.model import GroupSpec
    spec = GroupSpec.from_store("data.zarr")          # metadata only; consolidated if there
    text = spec.to_json(indent=2)                      # (``zarrc model``'s output)
    GroupSpec.from_json(text).to_store("copy.zarr")   # every node's metadata, one call

Each node's fields are parsed by ``zarrc.metadata`` (one parser: what opens in
zarrc is what validates here); an invalid one raises :class:`~zarrc.errors.SpecError`
(a MetadataError) naming the node's path and the field.  :func:`json_schema` is
the model as a JSON Schema (draft 2020-12).  No pydantic: plain classes, so
``import zarrc.model`` costs what ``import zarrc`` does.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from zarrc.api.synchronous import check_storage_options, store_and_path
from zarrc.core import node_metadata
from zarrc.core.consolidate import read_group
from zarrc.core.create import array_metadata, node_path
from zarrc.core.group import make_node
from zarrc.core.hierarchy import write_hierarchy
from zarrc.core.node import Node
from zarrc.errors import (
    ArgumentError,
    ArgumentTypeError,
    ExpectedArrayError,
    ExpectedGroupError,
    MetadataError,
    NodeNotFoundError,
    SpecError,
    ZarrcUserWarning,
)
from zarrc.metadata.common import describe, json_default, thaw
from zarrc.metadata.names import check_node_name, join_path, key_prefix, normalize_path
from zarrc.metadata.v2 import ARRAY_KEYS as V2_ARRAY_KEYS
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, GroupMetadataV3
from zarrc.stores import Store, make_store

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["ArraySpec", "GroupSpec", "Spec", "from_dict", "from_flat", "from_json", "from_store",
           "json_schema"]

NO_MEMBERS: Mapping[str, Any] = MappingProxyType({})
_FIELD = re.compile(r'"([^"]+)"')
# the metadata parser's names of parts of a field -> the field
_FIELDS_WITHIN = {"chunk_shape": "chunk_grid", "separator": "chunk_key_encoding"}
_V3_ARRAY_REQUIRED = ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs")


# ------------------------------------------------------------------ errors


def _error(kind: str, path: str, message: str, field: str | None) -> SpecError:
    return SpecError(f"{kind} {path}: {message}", path, field)


def _parsed(kind: str, path: str, parse: Any) -> Any:
    """``parse()``, its MetadataError reworded as a SpecError naming the node and the
    field (the metadata parser's message, without its document prefix)."""
    try:
        return parse()
    except SpecError:
        raise
    except MetadataError as exc:
        message = str(exc)
        rel = path.strip("/")
        for document in ("zarr.json", ".zarray", ".zattrs", ".zgroup"):
            message = message.removeprefix(f"{document} of /{rel}: ")
        found = _FIELD.match(message)
        field = found.group(1) if found else None
        raise _error(kind, path, message, _FIELDS_WITHIN.get(field, field) if field else None) from exc


def _child(path: str, name: str) -> str:
    return f"/{name}" if path == "/" else f"{path}/{name}"


# ------------------------------------------------------------------ the nodes


class _SpecBase:
    """What ArraySpec and GroupSpec share: reading and writing their forms."""

    __slots__ = ()
    node_type: ClassVar[str]
    _metadata: Any        # (each class's slot: its parsed metadata)

    @property
    def zarr_format(self) -> int:
        return self._metadata.zarr_format

    @property
    def attributes(self) -> Mapping[str, Any]:
        return self._metadata.attributes

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def metadata(self) -> Any:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, doc: Any) -> Self:
        """The node a dict describes (:func:`from_dict`); ExpectedArrayError /
        ExpectedGroupError if it describes the other kind."""
        return _kind(_parse(doc, "/"), cls)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """The node of a JSON document (:func:`from_json`)."""
        return _kind(from_json(text), cls)

    @classmethod
    def from_flat(cls, flat: Mapping[str, Any]) -> Self:
        """The node of a flat form (:func:`from_flat`)."""
        return _kind(from_flat(flat), cls)

    @classmethod
    def from_store(cls, store: Any, path: str = "", *, depth: int | None = None,
                   storage_options: dict | None = None) -> Self:
        """The node at ``path`` of ``store`` and its members down to ``depth``
        (:func:`from_store`); ExpectedArrayError / ExpectedGroupError if the node
        there is of the other kind."""
        spec = from_store(store, path, depth=depth, storage_options=storage_options)
        return _kind(spec, cls, node_path(path) if isinstance(path, str) else "/")

    def to_json(self, indent: int | None = None) -> str:
        """The node as a JSON document (``to_dict``'s; NaN and infinities in
        attributes written as JavaScript's names, as zarr-python writes them)."""
        return json.dumps(self.to_dict(), indent=indent, default=json_default)

    def to_flat(self, root_path: str = "") -> dict[str, Spec]:
        """{path: node} of every node, parents first: "" (or ``root_path``) for this
        one, "/a/b" below it (pydantic-zarr's flat form); groups with ``members`` None."""
        root = _flat_key(root_path)
        out: dict[str, Spec] = {}
        queue: deque[tuple[str, Any]] = deque([(root, self)])
        while queue:
            key, node = queue.popleft()
            if isinstance(node, GroupSpec):
                out[key] = GroupSpec._make(node.metadata, None)
                queue.extend((f"{key}/{name}", m) for name, m in (node.members or {}).items())
            else:
                out[key] = node
        return out

    def to_store(self, store: Any, path: str = "", *, overwrite: bool = False,
                 storage_options: dict | None = None) -> Any:
        """Write the metadata of this node and of every node below it at ``path`` of
        ``store`` (what ``zarrc.create_array`` takes), and of the groups missing
        above ``path``, in one call (``zarrc.create_hierarchy``'s): everything is
        checked before anything is written.  ContainsNodeError if a node is at one
        of the paths, unless ``overwrite`` (which replaces what is below them).
        Returns the node at ``path`` (a zarrc Array or Group).  Groups with
        ``members`` None are written without members."""
        check_storage_options(store, storage_options)
        store, path = store_and_path(store, path)
        where = node_path(path or "")
        s = store if isinstance(store, Store) and not storage_options else \
            make_store(store, mode="a", storage_options=storage_options)
        base = "" if where == "/" else where
        nodes = {(base + key) or "/": node.metadata for key, node in self.to_flat().items()}
        written = dict(write_hierarchy(s, nodes, overwrite))
        return make_node(s, where, written[where.strip("/")])

    def like(self, other: Any, *, include: Any = None, exclude: Any = None) -> bool:
        """True if ``other`` (a spec, its dict or JSON-ready data, a pydantic-zarr
        model, a zarrc Array or Group, read with :func:`from_store`) has the same dict
        as this node, given pydantic's ``include`` / ``exclude``: a set of field names
        (``{"attributes"}``: this node's), or nested dicts ({"members": {"a":
        {"attributes"}}}, "__all__" for every member)."""
        inc, exc = _selection(include, "include"), _selection(exclude, "exclude")
        return _select(self.to_dict(), inc, exc) == _select(_as_spec(other).to_dict(), inc, exc)

    def replace(self, **changes: Any) -> Self:
        """A copy with the fields ``changes`` names replaced (checked as :func:`from_dict`)."""
        return _kind(_parse({**self.to_dict(), **changes}, "/"), type(self))


class ArraySpec(_SpecBase):
    """A Zarr array as ZEP 6 models it: its metadata document's fields, its user
    attributes under ``attributes``.  ``metadata`` is zarrc's parsed form
    (``ArrayMetadataV3`` / ``ArrayMetadataV2``); ``ArraySpec(doc)`` takes that or a
    dict (:meth:`from_dict`).  Immutable; equal when their dicts are."""

    __slots__ = ("_metadata",)
    node_type = "array"

    def __init__(self, metadata: ArrayMetadataV2 | ArrayMetadataV3 | Mapping[str, Any]) -> None:
        if isinstance(metadata, Mapping):
            metadata = ArraySpec.from_dict(metadata).metadata
        if not isinstance(metadata, (ArrayMetadataV2, ArrayMetadataV3)):
            raise ArgumentTypeError(f"ArraySpec takes array metadata or a dict, not {type(metadata).__name__}")
        self._metadata = metadata

    @classmethod
    def create(cls, *, shape: Any, dtype: Any, **kwargs: Any) -> ArraySpec:
        """The spec of the array ``zarrc.create_array`` would create with these
        keywords (``chunks``, ``shards``, ``filters``, ``compressors``, ``serializer``,
        ``fill_value``, ``order``, ``zarr_format``, ``attributes``,
        ``chunk_key_encoding``, ``dimension_names``, ...); nothing is written."""
        return cls(array_metadata(shape=shape, dtype=dtype, **kwargs))

    @property
    def metadata(self) -> ArrayMetadataV2 | ArrayMetadataV3:
        return self._metadata

    @property
    def shape(self) -> tuple[int, ...]:
        return self._metadata.shape

    @property
    def dtype(self) -> Any:
        """The numpy dtype of the elements."""
        return self._metadata.dtype

    def to_dict(self) -> dict[str, Any]:
        """The node as JSON-ready data: the metadata document's fields with
        ``attributes`` (v3: ``zarr_format``, ``node_type``, ``attributes``, then the
        zarr.json fields; v2: ``zarr_format``, ``attributes``, the .zarray fields)."""
        md = self._metadata
        doc = md.to_json()
        if md.zarr_format == 3:
            head = {"zarr_format": 3, "node_type": "array", "attributes": doc.pop("attributes")}
        else:
            head = {"zarr_format": 2, "attributes": thaw(md.attributes)}
        doc.pop("zarr_format")
        doc.pop("node_type", None)
        return {**head, **doc}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArraySpec):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(_canonical(self))

    def __repr__(self) -> str:
        md = self._metadata
        kind = md.data_type if md.zarr_format == 2 else md.data_type.to_json()
        return (f"ArraySpec(zarr_format={md.zarr_format}, shape={md.shape}, data_type={kind!r}, "
                f"chunks={md.chunk_shape}, attributes={dict(md.attributes)!r})")


class GroupSpec(_SpecBase):
    """A Zarr group as ZEP 6 models it: its metadata's fields (``zarr_format``, v3's
    ``node_type``, ``attributes``) and ``members``, {name: ArraySpec or GroupSpec}
    (dicts are read with :meth:`ArraySpec.from_dict` / :meth:`from_dict`), or None
    where they are not described.  Members are in the group's ``zarr_format``.
    Immutable; equal when their dicts are."""

    __slots__ = ("_members", "_metadata")
    node_type = "group"

    def __init__(self, attributes: Mapping[str, Any] | None = None,
                 members: Mapping[str, Any] | None = NO_MEMBERS, *, zarr_format: int = 3) -> None:
        if zarr_format not in (2, 3) or isinstance(zarr_format, bool):
            raise _error("group", "/", f'"zarr_format" {describe(zarr_format)} must be 2 or 3', "zarr_format")
        if attributes is not None and not isinstance(attributes, Mapping):
            raise _error("group", "/", f'"attributes" {describe(attributes)} must be an object', "attributes")
        cls_ = GroupMetadataV3 if zarr_format == 3 else GroupMetadataV2
        metadata = _parsed("group", "/", lambda: cls_(attributes=dict(attributes or {})))
        self._metadata: GroupMetadataV2 | GroupMetadataV3 = metadata
        self._members = _checked_members(members, zarr_format, "/")

    @classmethod
    def _make(cls, metadata: GroupMetadataV2 | GroupMetadataV3,
              members: Mapping[str, ArraySpec | GroupSpec] | None) -> GroupSpec:
        """A spec of checked parts (no copies, no checks)."""
        self = cls.__new__(cls)
        if isinstance(metadata, GroupMetadataV3) and metadata.consolidated_metadata is not None:
            metadata = dataclasses.replace(metadata, consolidated_metadata=None)
        self._metadata = metadata
        self._members = None if members is None else MappingProxyType(dict(members))
        return self

    @property
    def metadata(self) -> GroupMetadataV2 | GroupMetadataV3:
        """zarrc's parsed group metadata (without consolidated metadata)."""
        return self._metadata

    @property
    def members(self) -> Mapping[str, ArraySpec | GroupSpec] | None:
        """{name: ArraySpec or GroupSpec} (read only), or None: not described."""
        return self._members

    def to_dict(self) -> dict[str, Any]:
        """The node as JSON-ready data: ``zarr_format``, ``node_type`` (v3),
        ``attributes``, the group's other fields (v3 extensions), ``members`` (each
        member's dict, or None)."""
        md = self._metadata
        doc = md.to_json()
        out: dict[str, Any] = {"zarr_format": md.zarr_format}
        if md.zarr_format == 3:
            out["node_type"] = "group"
            doc.pop("consolidated_metadata", None)
        out["attributes"] = thaw(md.attributes)
        out.update((k, v) for k, v in doc.items() if k not in ("zarr_format", "node_type", "attributes"))
        members = self._members
        out["members"] = None if members is None else {name: m.to_dict() for name, m in members.items()}
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupSpec):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(_canonical(self))

    def __repr__(self) -> str:
        members = None if self._members is None else list(self._members)
        return (f"GroupSpec(zarr_format={self.zarr_format}, attributes={dict(self.attributes)!r}, "
                f"members={members!r})")


Spec = ArraySpec | GroupSpec


def _canonical(spec: Spec) -> str:
    return json.dumps(spec.to_dict(), sort_keys=True, default=json_default)


def _checked_members(members: Any, zarr_format: int, path: str) -> Mapping[str, Spec] | None:
    """``members`` (None, or {name: spec or dict}) checked and read, as a read-only
    mapping; SpecError naming ``path`` (the group's) and "members"."""
    if members is None:
        return None
    if not isinstance(members, Mapping):
        raise _error("group", path, f'"members" {describe(members)} must be an object or null', "members")
    out: dict[str, Spec] = {}
    for name, member in members.items():
        try:
            check_node_name(name, reserved_ok=True)
        except MetadataError as exc:
            raise _error("group", path, f'"members": {exc}', "members") from None
        where = _child(path, name)
        if not isinstance(member, (ArraySpec, GroupSpec)):
            member = _parse(member, where)
        if member.zarr_format != zarr_format:
            raise _error("group", path, f'"members": {name!r} is a Zarr format {member.zarr_format} '
                         f"{member.node_type} in a format {zarr_format} group", "members")
        out[name] = member
    return MappingProxyType(out)


# ------------------------------------------------------------------ dicts and JSON


def _plain(value: Any) -> Any:
    """A JSON-like value with its tuples as lists and its mappings as dicts (pydantic's
    ``model_dump()`` gives tuples)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _document(doc: Any, path: str) -> dict[str, Any]:
    if hasattr(doc, "model_dump") and not isinstance(doc, Mapping):   # a pydantic(-zarr) model
        doc = doc.model_dump(mode="json")
    if not isinstance(doc, Mapping):
        raise _error("node", path, f"must be an object (a dict), not {type(doc).__name__}", None)
    return _plain(doc)


def _parse(doc: Any, path: str) -> Spec:
    """The node ``doc`` describes, at ``path`` ("/" for the root) of its hierarchy."""
    if isinstance(doc, (ArraySpec, GroupSpec)):
        return doc
    doc = _document(doc, path)
    if "zarr_format" not in doc:
        raise _error("node", path, '"zarr_format" is missing', "zarr_format")
    fmt = doc["zarr_format"]
    if fmt not in (2, 3) or isinstance(fmt, bool):
        raise _error("node", path, f'"zarr_format" {describe(fmt)} must be 2 or 3', "zarr_format")
    if "node_type" in doc:
        node_type = doc["node_type"]
        if node_type not in ("array", "group"):
            raise _error("node", path, f'"node_type" {describe(node_type)} must be "array" or "group"',
                         "node_type")
    else:   # (v2 has none; ZEP 6 gives v3's a default)
        node_type = "group" if "members" in doc or "shape" not in doc else "array"
    if not isinstance(doc.get("attributes", {}), Mapping):
        raise _error(node_type, path, f'"attributes" {describe(doc["attributes"])} must be an object',
                     "attributes")
    if node_type == "array":
        return ArraySpec(_array_metadata(doc, path, fmt))
    return _group(doc, path, fmt)


def _array_metadata(doc: dict[str, Any], path: str, fmt: int) -> ArrayMetadataV2 | ArrayMetadataV3:
    if "members" in doc:
        raise _error("array", path, '"members": an array has no members', "members")
    body = dict(doc)
    if fmt == 3:
        for key in _V3_ARRAY_REQUIRED:
            if key not in body:
                raise _error("array", path, f'"{key}" is missing', key)
        body["node_type"] = "array"
        if body.get("storage_transformers", ()) is None:     # (ZEP 6's schema allows null)
            body["storage_transformers"] = []
        if "dimension_names" in body and body["dimension_names"] is None:
            del body["dimension_names"]
        return _parsed("array", path, lambda: ArrayMetadataV3.from_json(body, path))
    attributes = body.pop("attributes", {})
    body.pop("node_type", None)
    for key in body:
        if key not in V2_ARRAY_KEYS:
            raise _error("array", path, f'"{key}" is not a field of a Zarr v2 array', key)
    return _parsed("array", path, lambda: ArrayMetadataV2.from_json(body, attributes, path))


def _group(doc: dict[str, Any], path: str, fmt: int) -> GroupSpec:
    body = dict(doc)
    members = body.pop("members", {})
    body.pop("consolidated_metadata", None)      # (a zarr.json's: the members are ``members``)
    md: GroupMetadataV2 | GroupMetadataV3
    if fmt == 3:
        body["node_type"] = "group"
        md = _parsed("group", path, lambda: GroupMetadataV3.from_json(body, path))
    else:
        attributes = body.pop("attributes", {})
        body.pop("node_type", None)
        for key in body:
            if key != "zarr_format":
                raise _error("group", path, f'"{key}" is not a field of a Zarr v2 group', key)
        md = _parsed("group", path, lambda: GroupMetadataV2(attributes=attributes))
    return GroupSpec._make(md, _checked_members(members, fmt, path))


def from_dict(doc: Any) -> Spec:
    """The ArraySpec or GroupSpec a dict describes (its ``node_type``; without one,
    as v2 documents are, a group if it has ``members`` or no ``shape``).  Takes
    pydantic-zarr's models and their ``model_dump()`` too.  SpecError naming the
    node and the field for anything invalid."""
    return _parse(doc, "/")


def from_json(text: str | bytes) -> Spec:
    """The ArraySpec or GroupSpec of a JSON document (:func:`from_dict`)."""
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _error("node", "/", f"is not valid JSON: {exc}", None) from None
    return _parse(doc, "/")


def _kind(spec: Spec, cls: type, path: str = "/") -> Any:
    if not isinstance(spec, cls):
        error = ExpectedArrayError if cls is ArraySpec else ExpectedGroupError
        raise error(f"{spec.node_type} {path}: is a {spec.node_type}, not a{'n' if cls is ArraySpec else ''} "
                    f"{cls.node_type}")   # type: ignore[attr-defined]
    return spec


# ------------------------------------------------------------------ flat forms


def _flat_key(key: Any) -> str:
    """A flat form's key: "" for the root, else "/a/b" ("a/b" and "/a/b/" too)."""
    if not isinstance(key, str):
        raise _error("node", str(key), f"the path {key!r} must be a str", None)
    try:
        path = normalize_path(key)
    except MetadataError as exc:
        raise _error("node", key, str(exc), None) from None
    return "" if path == "/" else path


def from_flat(flat: Mapping[str, Any]) -> Spec:
    """The hierarchy of a flat form ({path: node or dict}, :meth:`GroupSpec.to_flat`'s):
    an ArraySpec when the only key is "" (the root) and it is an array, else a
    GroupSpec, the groups missing above a path added (with no attributes).  A
    group's own ``members`` are kept beside those the paths give.  SpecError for a
    node below an array, paths named twice, or mixed Zarr formats."""
    if not isinstance(flat, Mapping):
        raise ArgumentTypeError(f"from_flat takes a dict of path -> node, not {type(flat).__name__}")
    nodes: dict[str, Spec] = {}
    for key, value in flat.items():
        path = _flat_key(key)
        if path in nodes:
            raise _error("node", path or "/", f"the path is given twice (as {key!r})", None)
        nodes[path] = _parse(value, path or "/")
    if list(nodes) == [""] and isinstance(nodes[""], ArraySpec):
        return nodes[""]
    formats = sorted({n.zarr_format for n in nodes.values()})
    if len(formats) > 1:
        raise _error("group", "/", f"the nodes mix Zarr formats {formats}", "zarr_format")
    fmt = formats[0] if formats else 3
    children: dict[str, dict[str, str]] = {}
    for path in sorted(nodes, key=lambda p: (p.count("/"), p)):
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent, name = "/".join(parts[:depth]), parts[depth]
            if isinstance(nodes.get(parent), ArraySpec):
                raise _error("node", path, f"is below {parent or '/'}, which is an array", None)
            nodes.setdefault(parent, GroupSpec(zarr_format=fmt, members=None))
            children.setdefault(parent, {})["/".join(parts[:depth + 1])] = name

    def build(path: str) -> Spec:
        node = nodes[path]
        if isinstance(node, ArraySpec):
            return node
        members = dict(node.members or {})
        for child, name in children.get(path, {}).items():
            if name in members:
                raise _error("group", path or "/", f'"members": {name!r} is given both as a member '
                             f"and as the path {child}", "members")
            members[name] = build(child)
        return GroupSpec._make(node.metadata, dict(sorted(members.items())))

    return build("")


# ------------------------------------------------------------------ stores


def _read_node(store: Store, path: str, depth: int | None) -> Spec | None:
    """The spec of the node at ``path`` and of its members down to ``depth`` more
    levels (None: all), read from the group's consolidated metadata where it has some;
    None if there is no node."""
    try:
        md, flat = read_group(store, path, None)
    except MetadataError as exc:       # (unreadable consolidated metadata: as open_group, read the nodes)
        md, flat = node_metadata.read(store, path), None
        if md is None or md.node_type != "group":
            raise
        warnings.warn(f"the consolidated metadata of group {path} is not used, its members are read "
                      f"one by one: {exc}", ZarrcUserWarning, stacklevel=3)
    if md is None:
        return None
    if md.node_type == "array":
        return ArraySpec(md)
    if depth == 0:
        return GroupSpec._make(md, None)
    if flat is not None:
        return _from_consolidated(md, flat, depth, lambda rel, exc: _own_document(store, path, rel, exc))
    members: dict[str, Spec] = {}
    _, names = store.list_dir(key_prefix(path))
    for name in sorted(n.rstrip("/") for n in names):
        try:
            child = join_path(path, name)
        except MetadataError:     # (a directory no node can have: not a member)
            continue
        spec = _read_node(store, child, None if depth is None else depth - 1)
        if spec is not None:
            members[name] = spec
    return GroupSpec._make(md, members)


def _own_document(store: Store, path: str, rel: str, exc: MetadataError) -> Any:
    """The metadata of the member ``rel`` of the group at ``path`` read from its own
    document, with a warning, when its consolidated entry is malformed (``exc``): the
    consolidated metadata is a copy of the nodes' documents.  ``exc`` itself if the
    node has no document of its own; a MetadataError naming that document if it is
    malformed too."""
    own = node_metadata.read(store, join_path(path, rel))
    if own is None:
        raise exc
    warnings.warn(f"{exc}; node {join_path(path, rel)} is read from its own document instead",
                  ZarrcUserWarning, stacklevel=2)
    return own


def _from_consolidated(md: Any, flat: Mapping[str, Any], depth: int | None,
                       fallback: Callable[[str, MetadataError], Any]) -> GroupSpec:
    """The group ``md`` with the nodes of its consolidated metadata ``flat`` ({relative
    path: metadata}) down to ``depth`` levels; a malformed entry's node from
    ``fallback(rel, error)``."""
    tree: dict[str, tuple[Any, dict[str, str]]] = {"": (md, {})}
    for rel in sorted(flat, key=lambda p: (p.count("/"), p)):
        level = rel.count("/") + 1
        parent, _, name = rel.rpartition("/")
        if (depth is not None and level > depth) or parent not in tree:
            continue
        try:
            node = flat[rel]
        except MetadataError as exc:
            node = fallback(rel, exc)
        tree[parent][1][name] = rel
        tree[rel] = (node, {})

    def build(rel: str) -> Spec:
        node, below = tree[rel]
        if node.node_type == "array":
            return ArraySpec(node)
        level = rel.count("/") + 1 if rel else 0
        if depth is not None and level == depth:
            return GroupSpec._make(node, None)
        return GroupSpec._make(node, {name: build(child) for name, child in sorted(below.items())})

    out = build("")
    assert isinstance(out, GroupSpec)
    return out


def from_store(store: Any, path: str = "", *, depth: int | None = None,
               storage_options: dict | None = None) -> Spec:
    """The spec of the array or group at ``path`` of ``store`` (a path, a URL with
    ``storage_options``, a dict, a Store, what ``zarrc.open`` takes; or a zarrc
    Array / Group, ``path`` then below it), read from the metadata only: a group's
    consolidated metadata when it has some, else every member's documents.  ``depth``:
    the levels of members described (None: all; 0: none, ``members`` None; 1: the
    direct members, their own ``members`` None).  NodeNotFoundError if nothing is
    there; MetadataError for a document zarrc cannot read."""
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 0):
        raise ArgumentError(f"depth must be None or an integer >= 0, got {depth!r}")
    if isinstance(store, Node):
        path = "/".join(p for p in (store.path, node_path(path).strip("/")) if p)
        store = store.store
    check_storage_options(store, storage_options)
    store, path = store_and_path(store, path)
    where = node_path(path or "")
    s = store if isinstance(store, Store) and not storage_options else \
        make_store(store, mode="r", storage_options=storage_options)
    try:
        spec = _read_node(s, where, depth)
    finally:
        if isinstance(store, (str, os.PathLike)):    # (a store opened here on a path or URL)
            s.close()
    if spec is None:
        raise NodeNotFoundError(f"no array or group at {where} in {s!r}")
    return spec


# ------------------------------------------------------------------ comparison


def _selection(spec: Any, what: str) -> dict[str, Any] | None:
    """pydantic's include / exclude forms: None, a set (list, tuple) of field names,
    or {field: True | set | dict} ("__all__" for every key of a mapping)."""
    if spec is None:
        return None
    if isinstance(spec, str):
        return {spec: True}
    if isinstance(spec, Mapping):
        return {k: True if v is True or v is Ellipsis else _selection(v, what) for k, v in spec.items()}
    if isinstance(spec, Iterable):
        return dict.fromkeys(spec, True)
    raise ArgumentTypeError(f"{what} must be a set of field names or a dict of them, not {spec!r}")


def _select(value: Any, include: dict[str, Any] | None, exclude: dict[str, Any] | None) -> Any:
    if not isinstance(value, dict) or (include is None and exclude is None):
        return value
    out = {}
    for key, item in value.items():
        inner_include = inner_exclude = None
        if include is not None:
            if key not in include and "__all__" not in include:
                continue
            chosen = include.get(key, include.get("__all__"))
            inner_include = None if chosen is True else chosen
        if exclude is not None:
            dropped = exclude.get(key, exclude.get("__all__"))
            if dropped is True:
                continue
            inner_exclude = dropped
        out[key] = _select(item, inner_include, inner_exclude)
    return out


def _as_spec(other: Any) -> Spec:
    if isinstance(other, (ArraySpec, GroupSpec)):
        return other
    if isinstance(other, Node):
        return from_store(other)
    return _parse(other, "/")


# ------------------------------------------------------------------ JSON Schema


def _named(description: str) -> dict[str, Any]:
    return {"description": description, "$ref": "#/$defs/NamedConfig"}


_NOT_MUST_UNDERSTAND = {
    "description": 'an extension field zarrc may ignore: an object with "must_understand": false',
    "type": "object", "required": ["must_understand"], "properties": {"must_understand": {"const": False}},
}
_NAME = {"type": "string", "minLength": 1, "pattern": "^[^/]*$", "not": {"pattern": r"^\.*$"}}


def _schema() -> dict[str, Any]:
    ints = {"type": "array", "items": {"type": "integer", "minimum": 0}}
    attributes = {"type": "object", "default": {}, "description": "user attributes"}
    codec_v2 = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "minLength": 1}}}
    v3_members = {"anyOf": [{"type": "null"}, {"type": "object", "propertyNames": _NAME,
                  "additionalProperties": {"anyOf": [{"$ref": "#/$defs/GroupSpecV3"},
                                                     {"$ref": "#/$defs/ArraySpecV3"}]}}],
                  "default": {}}
    v2_members = {"anyOf": [{"type": "null"}, {"type": "object", "propertyNames": _NAME,
                  "additionalProperties": {"anyOf": [{"$ref": "#/$defs/GroupSpecV2"},
                                                     {"$ref": "#/$defs/ArraySpecV2"}]}}],
                  "default": {}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Zarr hierarchy (ZEP 6 object model)",
        "description": "A Zarr array or group and its members, as zarrc.model's to_dict() gives it "
                       "and pydantic-zarr's model_dump() (v2 and v3).",
        "anyOf": [{"$ref": "#/$defs/GroupSpecV3"}, {"$ref": "#/$defs/ArraySpecV3"},
                  {"$ref": "#/$defs/GroupSpecV2"}, {"$ref": "#/$defs/ArraySpecV2"}],
        "$defs": {
            "NamedConfig": {
                "type": "object", "required": ["name"], "additionalProperties": False,
                "properties": {"name": {"type": "string", "minLength": 1},
                               "configuration": {"type": "object"},
                               "must_understand": {"type": "boolean"}},
            },
            "ArraySpecV3": {
                "title": "ArraySpec (Zarr v3)", "type": "object",
                "description": "A Zarr v3 array: its zarr.json's fields",
                "required": ["zarr_format", *_V3_ARRAY_REQUIRED],
                "properties": {
                    "zarr_format": {"const": 3},
                    "node_type": {"const": "array", "default": "array"},
                    "attributes": attributes,
                    "shape": ints,
                    "data_type": {"anyOf": [{"type": "string", "minLength": 1}, {"$ref": "#/$defs/NamedConfig"}]},
                    "chunk_grid": _named("the chunk grid (regular, rectilinear)"),
                    "chunk_key_encoding": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/NamedConfig"}]},
                    "fill_value": {"not": {"type": "null"}},
                    "codecs": {"type": "array", "minItems": 1,
                               "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/NamedConfig"}]}},
                    "storage_transformers": {"anyOf": [{"type": "null"}, {"type": "array",
                                             "items": {"$ref": "#/$defs/NamedConfig"}}], "default": []},
                    "dimension_names": {"anyOf": [{"type": "null"}, {"type": "array",
                                        "items": {"type": ["string", "null"]}}], "default": None},
                    "members": False,
                },
                "additionalProperties": _NOT_MUST_UNDERSTAND,
            },
            "GroupSpecV3": {
                "title": "GroupSpec (Zarr v3)", "type": "object",
                "description": "A Zarr v3 group: its zarr.json's fields and its members",
                "required": ["zarr_format"],
                "properties": {
                    "zarr_format": {"const": 3},
                    "node_type": {"const": "group", "default": "group"},
                    "attributes": attributes,
                    "members": v3_members,
                    "consolidated_metadata": {"type": ["object", "null"]},
                },
                "additionalProperties": _NOT_MUST_UNDERSTAND,
            },
            "ArraySpecV2": {
                "title": "ArraySpec (Zarr v2)", "type": "object",
                "description": "A Zarr v2 array: its .zarray's fields, its .zattrs as attributes",
                "required": ["zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order",
                             "filters"],
                "properties": {
                    "zarr_format": {"const": 2},
                    "node_type": {"const": "array"},
                    "attributes": attributes,
                    "shape": ints,
                    "chunks": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                    "dtype": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "array", "minItems": 1}]},
                    "compressor": {"anyOf": [{"type": "null"}, codec_v2]},
                    "fill_value": {},
                    "order": {"enum": ["C", "F"]},
                    "filters": {"anyOf": [{"type": "null"}, {"type": "array", "items": codec_v2}]},
                    "dimension_separator": {"enum": [".", "/"], "default": "."},
                },
                "additionalProperties": False,
            },
            "GroupSpecV2": {
                "title": "GroupSpec (Zarr v2)", "type": "object",
                "description": "A Zarr v2 group: its .zattrs as attributes, and its members",
                "required": ["zarr_format"],
                "properties": {
                    "zarr_format": {"const": 2},
                    "node_type": {"const": "group"},
                    "attributes": attributes,
                    "members": v2_members,
                },
                "additionalProperties": False,
            },
        },
    }


def json_schema(zarr_format: int | None = None, node_type: str | None = None) -> dict[str, Any]:
    """The model as a JSON Schema (draft 2020-12, a new dict each call): any node of
    either format, or with ``zarr_format`` (2 or 3) and / or ``node_type``
    ("array", "group") the root of the document restricted to those.  Structural:
    the fields and their JSON types, as ZEP 6 writes the model; :func:`from_dict`
    also checks the values (data types, codecs, fill values)."""
    schema = _schema()
    if zarr_format not in (None, 2, 3) or node_type not in (None, "array", "group"):
        raise ArgumentError(f"json_schema: zarr_format must be None, 2 or 3 and node_type None, 'array' or "
                            f"'group', got {zarr_format!r}, {node_type!r}")
    chosen = [ref for ref in schema["anyOf"]
              if (zarr_format is None or ref["$ref"].endswith(f"V{zarr_format}"))
              and (node_type is None or f"/{node_type.capitalize()}Spec" in ref["$ref"])]
    schema["anyOf"] = chosen
    return copy.deepcopy(schema)
