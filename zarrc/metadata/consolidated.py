"""Consolidated metadata documents <-> node metadata (no I/O).

Consolidated metadata holds the metadata of every node below a group in one
document, so a hierarchy opens with a single read.  Both forms are the ones
zarr-python 3 writes (``zarr.consolidate_metadata``) and reads:

* v2, the ``.zmetadata`` key next to the group's ``.zgroup``::

      {"metadata": {".zgroup": {...}, ".zattrs": {...},
                    "a/.zattrs": {...}, "a/.zarray": {...},
                    "sub/.zattrs": {...}, "sub/.zgroup": {"zarr_format": 2,
                        "consolidated_metadata": {"metadata": {}, "must_understand": false,
                                                  "kind": "inline"}}, ...},
       "zarr_consolidated_format": 1}

* v3, the ``consolidated_metadata`` member of the group's zarr.json::

      {"kind": "inline", "must_understand": false,
       "metadata": {"a": {<a's zarr.json>}, "sub": {<sub's zarr.json, with
                    "consolidated_metadata": {... "metadata": {}}>}, "sub/x": {...}}}

Here both become a flat ``dict`` from the node's path relative to the group
("a", "sub/x"; "" for the group itself, v2 only) to its ArrayMetadataV2 /
GroupMetadataV2 / ArrayMetadataV3 / GroupMetadataV3.  A group's own entries never
carry consolidated metadata (the flat form is the authoritative one);
:func:`subtree` gives the view of a child group.

Keys must be relative paths that stay inside the group: no "." or ".." segment,
no leading "/", no backslash (a path separator in v2), no NUL; runs of "/" and a
trailing "/" are normalised away.  Errors are MetadataError naming the document
and the key, e.g. ``.zmetadata of /grp: key "a/.zarray": "order" "K" must be "C" or "F"``.
"""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from zarrc.errors import ArgumentTypeError, MetadataError, ZarrcUserWarning
from zarrc.metadata.common import describe, error_context, fail, is_int, json_default
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v2 import where as where_v2
from zarrc.metadata.v3 import (
    MAX_NESTING,
    ArrayMetadataV3,
    GroupMetadataV3,
    load_json,
    metadata_from_json,
)
from zarrc.metadata.v3 import where as where_v3

NodeMetadataV2 = ArrayMetadataV2 | GroupMetadataV2
NodeMetadataV3 = ArrayMetadataV3 | GroupMetadataV3
NodeMetadata = NodeMetadataV2 | NodeMetadataV3

V2_DOCUMENTS = (".zarray", ".zgroup", ".zattrs")
CONSOLIDATED_FORMAT = 1
_SLASHES = re.compile(r"/{2,}")


def _empty_member_v2() -> dict[str, Any]:
    # What zarr-python 3 puts in every nested .zgroup entry of a .zmetadata.
    return {"metadata": {}, "must_understand": False, "kind": "inline"}


def _empty_member_v3() -> dict[str, Any]:
    # What zarr-python 3 puts in every nested group entry of a consolidated_metadata.
    return {"kind": "inline", "must_understand": False, "metadata": {}}


def where_v2_consolidated(path: str) -> str:
    """The prefix of error messages about the ``.zmetadata`` of the group at ``path``."""
    return f".zmetadata of /{path.strip('/')}: "


def _join(parent: str, rel: str) -> str:
    parent = parent.strip("/")
    return f"{parent}/{rel}".strip("/") if rel else parent


def relative_path(key: Any) -> str:
    """The normalised form of ``key``, a path relative to a group ("a", "sub/x";
    "" for the group itself): runs of "/" collapsed, a trailing "/" dropped.

    Raises MetadataError if ``key`` is not a str, or would leave the group or make
    a bad store key: a "." or ".." segment, a leading "/", a backslash (the v2
    spec makes it a path separator), a NUL."""
    if not isinstance(key, str):
        raise MetadataError(f"key {key!r} must be a string")
    if "\x00" in key:
        raise MetadataError(f"key {describe(key)} must not contain a NUL character")
    if "\\" in key:
        raise MetadataError(f"key {describe(key)} must not contain a backslash "
                            "(a path separator in Zarr v2)")
    if key.startswith("/"):
        raise MetadataError(f"key {describe(key)} must be a relative path (no leading \"/\")")
    path = (_SLASHES.sub("/", key) if "//" in key else key).rstrip("/")
    if "." in path and any(part in (".", "..") for part in path.split("/")):
        raise MetadataError(f'key {describe(key)} must not have a "." or ".." segment')
    return path


def _plain_keys(entries: dict) -> bool:
    """True if every key of ``entries`` is a str that ``relative_path`` gives back as it
    is and none is "" (checked on the keys joined: no NUL, backslash, "//", leading or
    trailing "/", and no segment starting with "." at all); False: check each."""
    try:
        joined = "\x00" + "\x00".join(entries) + "\x00"
    except TypeError:
        return False
    return (joined.count("\x00") == len(entries) + 1 and "\\" not in joined and "//" not in joined
            and "\x00/" not in joined and "/\x00" not in joined and "\x00\x00" not in joined
            and "\x00." not in joined and "/." not in joined)


def _sort_key(path: str) -> tuple[int, str, str]:
    # zarr-python's order: shallow nodes first, then by NFKC case-folded path.
    return path.count("/"), unicodedata.normalize("NFKC", path).casefold(), path


def _node_type(entry: Any) -> Any:
    """The node type an entry says it has: parsed, pending, or a raw JSON object."""
    if type(entry) is dict:
        return entry.get("node_type")
    return entry.node_type if isinstance(entry, Pending) else getattr(entry, "node_type", None)


def _check_ancestors(nodes: ConsolidatedNodes, key_of: Any) -> None:
    """No node may sit below an array: each path the children index holds members
    of (a group's, or an array's if the document is malformed) looked up among the
    entries (``nodes``: parsed or Pending entries, none deleted yet)."""
    entries = nodes._entries
    for path in nodes._children:
        if path and _node_type(entries.get(path)) == "array":
            for below in nodes.below(path):
                raise MetadataError(f"{key_of(below)}: node {describe(below)} is below {describe(path)}, "
                                    "which is an array")


def _reraise(prefix: str, inner_prefix: str, exc: MetadataError) -> MetadataError:
    message = str(exc)
    message = message.removeprefix(inner_prefix)
    return MetadataError(f"{prefix}{message}")


# ----------------------------------------------------------- nodes parsed lazily


class Pending:
    """An entry of a consolidated document not parsed yet: ``parse(*args)`` gives
    its metadata (a MetadataError it raises is prefixed with ``where``, the
    document); ``node_type`` is what the entry says it is ("array", "group" or
    anything else: checked when parsed)."""

    __slots__ = ("args", "node_type", "parse", "where")

    def __init__(self, node_type: Any, where: str, parse: Any, *args: Any) -> None:
        self.node_type = node_type
        self.where = where
        self.parse = parse
        self.args = args

    def resolve(self) -> NodeMetadata:
        try:
            return self.parse(*self.args)
        except MetadataError as exc:
            raise MetadataError(f"{self.where}{exc}") from None


class ConsolidatedNodes(MutableMapping):
    """The nodes of consolidated metadata: {path relative to the group: node
    metadata}, each entry parsed when it is first looked up (then kept), so a
    hierarchy of thousands of nodes opens at the cost of its JSON and of the
    nodes it touches.  A malformed entry raises MetadataError naming the document
    and the key when it is looked up; its document's structure (keys, entries
    that are objects, nodes below arrays) was checked when it was read.

    :meth:`subtree` is the view of the nodes below one group, sharing the entries
    (what it parses, sets or deletes, its parent sees).  :meth:`children` lists a
    group's direct members from an index kept with the entries, so listing a
    hierarchy group by group is linear in its size.  Iteration gives the keys in
    the document's order (zarr-python's), new ones last; a view's, its group's
    subtree, each group's members together.

    An entry is held as its metadata once parsed; before, as a :class:`Pending`
    one, or as the document's JSON object itself (a dict), which ``parse(key,
    raw)`` turns into metadata (one object less per node of a large document)."""

    __slots__ = ("_base", "_children", "_entries", "_parse", "_sorted")

    def __init__(self, entries: Mapping[str, Any] | None = None, *, _share: ConsolidatedNodes | None = None,
                 _base: str = "", parse: Any = None) -> None:
        if _share is not None:
            self._entries: dict[str, Any] = _share._entries
            self._children: dict[str, dict[str, None]] = _share._children
            self._sorted: list[bool] = _share._sorted
            self._parse: Any = _share._parse
        else:
            self._parse = parse
            self._entries = dict(entries or {})
            self._children = {}
            self._sorted = [False]      # (zarr-python's order made when first iterated)
            children = self._children
            for rel in self._entries:
                parent, _, name = rel.rpartition("/")
                names = children.get(parent)
                if names is None:
                    children[parent] = names = {}
                names[name] = None
            for parent in list(children):       # (groups above with no entry of their own)
                if parent:
                    self._index(parent)
        self._base = _base

    def _index(self, full: str) -> None:
        while True:
            parent, _, name = full.rpartition("/")
            names = self._children.setdefault(parent, {})
            if name in names:
                return
            names[name] = None
            if not parent:
                return
            full = parent

    def __getitem__(self, rel: str) -> NodeMetadata:
        full = self._base + rel if self._base else rel
        value = self._entries[full]
        if type(value) is Pending:
            value = value.resolve()
            self._entries[full] = value
        elif type(value) is dict:
            value = self._parse(full, value)
            self._entries[full] = value
        return value

    def get(self, rel: str, default: Any = None) -> Any:
        try:
            return self[rel]
        except KeyError:
            return default

    def __contains__(self, rel: object) -> bool:
        if not isinstance(rel, str) or (self._base and not rel):
            return False
        return self._base + rel in self._entries

    def __setitem__(self, rel: str, metadata: Any) -> None:
        full = self._base + rel
        if full not in self._entries:
            self._index(full)
        self._entries[full] = metadata

    def __delitem__(self, rel: str) -> None:
        del self._entries[self._base + rel]       # (the index keeps the name: lookups check entries)

    def __iter__(self) -> Iterator[str]:
        if not self._base:
            if not self._sorted[0]:
                ordered = sorted(self._entries.items(), key=lambda item: _sort_key(item[0]))
                self._entries.clear()
                self._entries.update(ordered)
                self._sorted[0] = True
            return iter(list(self._entries))
        return iter(list(self._below(self._base[:-1])))

    def __len__(self) -> int:
        return len(self._entries) if not self._base else sum(1 for _ in self._below(self._base[:-1]))

    def _below(self, full: str) -> Iterator[str]:
        """The keys (relative to this view) of the nodes strictly below ``full``."""
        cut = len(self._base)
        stack = [full]
        while stack:
            at = stack.pop()
            prefix = at + "/" if at else ""
            names = self._children.get(at, ())
            for name in names:
                key = prefix + name
                if key in self._entries:
                    yield key[cut:]
            stack.extend(prefix + name for name in reversed(names))

    def children(self, rel: str = "") -> list[str]:
        """The names of the nodes directly below ``rel`` ("": this view's group)."""
        full = self._base + rel if rel else self._base[:-1]
        prefix = full + "/" if full else ""
        return [n for n in self._children.get(full, ()) if prefix + n in self._entries]

    def at_or_below(self, rel: str) -> list[str]:
        """The keys of the node at ``rel`` (if any) and of every node below it."""
        full = self._base + rel
        found = [rel] if full in self._entries else []
        return found + list(self._below(full))

    def subtree(self, rel: str) -> ConsolidatedNodes:
        """The view of the nodes below ``rel`` (a normalised relative path, not ""),
        keyed relative to it."""
        return ConsolidatedNodes(_share=self, _base=f"{self._base}{rel}/")

    def below(self, rel: str) -> list[str]:
        """The keys of the nodes strictly below ``rel``."""
        return list(self._below(self._base + rel))

    def raw_items(self, ordered: bool = True) -> Iterator[tuple[str, Any]]:
        """(key, entry as held: metadata, a Pending one or a raw JSON object) of each
        node, none parsed (``ordered`` False: the root's in the order held, not
        sorted first)."""
        if not ordered and not self._base:
            yield from list(self._entries.items())
            return
        for key in self:
            yield key, self._entries[self._base + key]

    def pending_items(self) -> Iterator[tuple[str, Any]]:
        """``raw_items``, each raw JSON object as a Pending entry that parses it as
        this document's (for entries moved into another document's nodes)."""
        for key, entry in self.raw_items():
            if type(entry) is dict:
                entry = Pending(entry.get("node_type"), "", self._parse, self._base + key, entry)
            yield key, entry

    def parsed(self) -> int:
        """How many of the entries this view sees have been parsed (a test's probe)."""
        return sum(type(self._entries[self._base + k]) not in (Pending, dict) for k in self)

    def __repr__(self) -> str:
        return f"ConsolidatedNodes({len(self)} nodes, {self.parsed()} parsed)"


# ---------------------------------------------------------------------------- v2


def parse_v2(doc: Mapping | bytes | str, path: str = "") -> ConsolidatedNodes:
    """The nodes in the ``.zmetadata`` document (bytes, str or parsed dict) of the
    group at ``path``, keyed by path relative to that group ("" for the group
    itself when its ``.zgroup`` is included, "a", "sub/x"), each built from its
    ``.zarray`` or ``.zgroup`` entry and its ``.zattrs`` entry (absent: no
    attributes).  The ``consolidated_metadata`` member zarr-python 3 writes into
    nested ``.zgroup`` entries is dropped.

    Raises MetadataError (naming ``.zmetadata of /path`` and the key) for: invalid
    JSON or a non-object; ``zarr_consolidated_format`` missing or not 1;
    ``metadata`` missing or not an object; a key not ending in ``.zarray``,
    ``.zgroup`` or ``.zattrs``, or not a relative path inside the group (see
    :func:`relative_path`); two keys for the same document; a node with both
    ``.zarray`` and ``.zgroup``; a node below an array; any invalid entry.  A
    ``.zattrs`` without either is ignored with a ZarrcUserWarning.  The
    document's structure is checked here, each entry when it is first looked up
    (:class:`ConsolidatedNodes`)."""
    prefix = where_v2_consolidated(path)
    with error_context(prefix):
        doc = load_json(doc)
        if "zarr_consolidated_format" not in doc:
            raise MetadataError('"zarr_consolidated_format" is missing')
        version = doc["zarr_consolidated_format"]
        if not is_int(version) or version != CONSOLIDATED_FORMAT:
            fail("zarr_consolidated_format", version, f"is not supported (must be {CONSOLIDATED_FORMAT})")
        if "metadata" not in doc:
            raise MetadataError('"metadata" is missing')
        entries = doc["metadata"]
        if not isinstance(entries, Mapping):
            fail("metadata", entries, "must be an object")
        documents = _split_v2_keys(entries)
        nodes = ConsolidatedNodes({
            rel: Pending("array" if ".zarray" in found else "group", prefix, _node_v2, found, _join(path, rel))
            for rel, found in documents.items()})
        _check_ancestors(nodes, lambda rel: f"key {describe(_key_v2(documents[rel]))}")
    return nodes


def _key_v2(found: Mapping[str, tuple[str, Any]]) -> str:
    """The key of a node's .zarray / .zgroup entry (else its .zattrs)."""
    for name in (".zarray", ".zgroup", ".zattrs"):
        if name in found:
            return found[name][0]
    raise AssertionError(found)


def _split_v2_keys(entries: Mapping) -> dict[str, dict[str, tuple[str, Any]]]:
    """{node path: {".zarray" / ".zgroup" / ".zattrs": (original key, entry)}}."""
    documents: dict[str, dict[str, tuple[str, Any]]] = {}
    for key, value in entries.items():
        rel = relative_path(key)
        node, _, name = rel.rpartition("/")
        if name not in V2_DOCUMENTS:
            raise MetadataError(f"key {describe(key)} is not a v2 metadata key "
                                f'(it must end in {", ".join(V2_DOCUMENTS)})')
        found = documents.setdefault(node, {})
        if name in found:
            raise MetadataError(f"keys {describe(found[name][0])} and {describe(key)} "
                                "name the same document")
        found[name] = (key, value)
    for node, found in list(documents.items()):
        if ".zarray" in found and ".zgroup" in found:
            raise MetadataError(f'keys {describe(found[".zarray"][0])} and {describe(found[".zgroup"][0])}: '
                                "a node cannot be both an array and a group")
        if ".zarray" not in found and ".zgroup" not in found:
            # an orphan .zattrs (a node deleted without its attributes): ignored, as
            # zarr-python and GDAL read such hierarchies
            key = describe(found[".zattrs"][0])
            warnings.warn(f".zmetadata: ignoring key {key}: attributes without a .zarray or .zgroup "
                          "for their node", ZarrcUserWarning, stacklevel=5)
            del documents[node]
    return documents


def _node_v2(found: Mapping[str, tuple[str, Any]], node_path: str) -> NodeMetadataV2:
    attrs_key, zattrs = found.get(".zattrs", (None, None))
    if attrs_key is not None and not isinstance(zattrs, Mapping):
        raise MetadataError(f"key {describe(attrs_key)}: {describe(zattrs)} must be an object")
    if ".zarray" in found:
        key, zarray = found[".zarray"]
        try:
            return ArrayMetadataV2.from_json(_entry_object(key, zarray), zattrs, node_path)
        except MetadataError as exc:
            raise _reraise(f"key {describe(key)}: ", where_v2(".zarray", node_path), exc) from None
    key, zgroup = found[".zgroup"]
    zgroup = dict(_entry_object(key, zgroup))
    zgroup.pop("consolidated_metadata", None)
    try:
        return GroupMetadataV2.from_json(zgroup, zattrs, node_path)
    except MetadataError as exc:
        raise _reraise(f"key {describe(key)}: ", where_v2(".zgroup", node_path), exc) from None


def _entry_object(key: str, value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        raise MetadataError(f"key {describe(key)}: {describe(value)} must be an object")
    return value


def to_json_v2(nodes: Mapping[str, NodeMetadataV2]) -> dict[str, Any]:
    """The ``.zmetadata`` document (a dict) for ``nodes``, keyed like the result of
    :func:`parse_v2`, as zarr-python 3 writes it: the group's own ``.zgroup`` and
    ``.zattrs`` first (when ``nodes`` has ""), then each node, shallow ones first
    and by case-folded path, as its ``.zattrs`` (written even when empty) followed
    by its ``.zarray``, or ``.zgroup`` with an empty ``consolidated_metadata``
    member.  Raises MetadataError for a bad key (see :func:`relative_path`) and
    TypeError for a value that is not v2 metadata."""
    checked = _normalised(nodes, (ArrayMetadataV2, GroupMetadataV2), allow_root=True)
    metadata: dict[str, Any] = {}
    for rel in sorted(checked, key=_sort_key):
        metadata.update(entries_v2(rel, checked[rel]))
    return {"metadata": metadata, "zarr_consolidated_format": CONSOLIDATED_FORMAT}


def to_bytes_v2(nodes: Mapping[str, NodeMetadataV2]) -> bytes:
    """:func:`to_json_v2` as UTF-8 JSON bytes, compact as zarr-python writes it."""
    return dump_v2(to_json_v2(nodes))


def dump_v2(doc: Mapping[str, Any]) -> bytes:
    """A ``.zmetadata`` document as UTF-8 JSON bytes, compact as zarr-python writes it."""
    return json.dumps(doc, allow_nan=True, default=json_default).encode()


# ---------------------------------------------------------------------------- v3


def parse_v3(consolidated: Mapping | None, path: str = "") -> ConsolidatedNodes | None:
    """The nodes in the ``consolidated_metadata`` member (``None``: absent -> None)
    of the zarr.json of the group at ``path``, keyed by path relative to that group
    ("a", "sub/x"), each parsed like its own zarr.json.  A group entry's own
    ``consolidated_metadata`` member is checked like this one and dropped, its
    nodes only filling in paths the flat form lacks (zarr-python writes it empty
    and, reading, replaces it with the flat form's nodes).

    Raises MetadataError (naming ``zarr.json of /path`` and the key) if the member
    is not an object, ``kind`` is not "inline", ``metadata`` is missing or not an
    object, a key is not a relative path inside the group (see
    :func:`relative_path`; "" is refused too), two keys name the same node, a node
    sits below an array; an entry that is invalid, when it is first looked up
    (:class:`ConsolidatedNodes`)."""
    if consolidated is None:
        return None
    with error_context(where_v3(path)):
        if not isinstance(consolidated, Mapping):
            fail("consolidated_metadata", consolidated, "must be an object")
        return _parse_v3(consolidated, path.strip("/"), "consolidated_metadata", where_v3(path))


def _parse_v3(member: Mapping, group: str, label: str, doc: str, depth: int = 1) -> ConsolidatedNodes:
    """``label`` names ``member`` in errors.  The document's structure is checked
    here; each entry is parsed when first looked up (:class:`ConsolidatedNodes`)."""
    if depth > MAX_NESTING:
        raise MetadataError(f"consolidated_metadata is nested too deeply (more than {MAX_NESTING} levels)")
    kind = member.get("kind")
    if kind != "inline":
        raise MetadataError(f'{label} "kind" {describe(kind)} is not supported (only "inline" is)')
    if "metadata" not in member:
        raise MetadataError(f'{label} "metadata" is missing')
    entries = member["metadata"]
    if not isinstance(entries, Mapping):
        raise MetadataError(f'{label} "metadata" {describe(entries)} must be an object')
    pending: dict[str, Any] = {}
    keys: dict[str, str] = {}          # (the keys that differ from their paths)
    nested: dict[str, Any] = {}
    held = False
    if type(entries) is dict and _plain_keys(entries) \
            and all(type(value) is dict for value in entries.values()):
        # (the usual document: every key a normalised path, every entry an object;
        # only the groups' own members looked at)
        pending = entries                # (copied by ConsolidatedNodes, or below)
        entries = {key: value for key, value in entries.items() if value.get("node_type") == "group"
                   and value.get("consolidated_metadata") is not None}
        held = True
    for key, value in entries.items():
        if held:
            rel = key
        else:
            try:
                rel = relative_path(key)
                if not rel:
                    raise MetadataError(f"key {describe(key)} must name a node below the group")
                if rel in pending:
                    raise MetadataError(f"keys {describe(keys.get(rel, rel))} and {describe(key)} "
                                        "name the same node")
            except MetadataError as exc:
                raise MetadataError(f"{label} {exc}") from None
            if rel != key:
                keys[rel] = key
            if type(value) is dict:      # (held raw, parsed by ``parse`` below when looked up)
                pending[rel] = value
            elif isinstance(value, Mapping):
                pending[rel] = Pending(value.get("node_type"), doc, _entry_v3, value, group, rel, label, key)
            else:
                raise MetadataError(f"{label} key {describe(key)}: {describe(value)} must be an object")
        node_type = value.get("node_type")
        inner = value.get("consolidated_metadata") if node_type == "group" else None
        if inner is not None and not _empty_inline(inner):
            node_path = _join(group, rel)
            where_key = f"{label} key {describe(key)}"
            if not isinstance(inner, Mapping):
                raise MetadataError(f'{where_key}: "consolidated_metadata" {describe(inner)} '
                                    "must be an object")
            sub_nodes = _parse_v3(inner, node_path, f"{where_key} consolidated_metadata", doc, depth + 1)
            for sub, entry in sub_nodes.pending_items():
                nested.setdefault(f"{rel}/{sub}", entry)
    if nested and held:
        pending = dict(pending)
    for rel, entry in nested.items():
        pending.setdefault(rel, entry)

    nodes = ConsolidatedNodes(pending, parse=_EntryParserV3(group, label, doc, keys))
    _check_ancestors(nodes, lambda rel: f"{label} key {describe(keys.get(rel, rel))}")
    return nodes


class _EntryParserV3:
    """``parse(rel, raw)`` of a v3 document's raw entries (a class, not a closure,
    so that nodes holding it pickle, as xarray pickles opened datasets)."""

    __slots__ = ("doc", "group", "keys", "label")

    def __init__(self, group: str, label: str, doc: str, keys: dict[str, str]) -> None:
        self.group, self.label, self.doc, self.keys = group, label, doc, keys

    def __call__(self, rel: str, raw: dict) -> NodeMetadataV3:
        try:
            return _entry_v3(raw, self.group, rel, self.label, self.keys.get(rel, rel))
        except MetadataError as exc:
            raise MetadataError(f"{self.doc}{exc}") from None


def _empty_inline(member: Any) -> bool:
    """Whether a group entry's own ``consolidated_metadata`` is the empty inline one
    zarr-python writes (nothing to check or add)."""
    return type(member) is dict and member.get("kind") == "inline" and member.get("metadata") == {}


def _entry_v3(value: Mapping, group: str, rel: str, label: str, key: str) -> NodeMetadataV3:
    """The metadata of the entry ``key`` of the ``consolidated_metadata`` member
    ``label`` names (a group's own member dropped: the flat form is the
    authoritative one) of the node at ``rel`` below the group at ``group``."""
    node_path = _join(group, rel)
    if value.get("node_type") == "group" and "consolidated_metadata" in value:
        value = {k: v for k, v in value.items() if k != "consolidated_metadata"}
    try:
        return metadata_from_json(value, node_path)
    except MetadataError as exc:
        raise _reraise(f"{label} key {describe(key)}: ", where_v3(node_path), exc) from None


def to_json_v3(nodes: Mapping[str, NodeMetadataV3]) -> dict[str, Any]:
    """The ``consolidated_metadata`` member (a dict) for ``nodes``, keyed like the
    result of :func:`parse_v3`, as zarr-python 3 writes it: ``kind``,
    ``must_understand`` (false), and ``metadata`` with each node's zarr.json,
    shallow ones first and by case-folded path; group entries carry
    ``"consolidated_metadata": {"kind": "inline", "must_understand": false,
    "metadata": {}}``.  Raises MetadataError for a bad key ("" included: the
    group itself is not part of its consolidated metadata) and TypeError for a
    value that is not v3 metadata."""
    checked = _normalised(nodes, (ArrayMetadataV3, GroupMetadataV3), allow_root=False)
    metadata = {rel: entry_v3(checked[rel]) for rel in sorted(checked, key=_sort_key)}
    return {"kind": "inline", "must_understand": False, "metadata": metadata}


# ------------------------------------------------------------------------ shared


def _normalised(nodes: Mapping[str, Any], types: tuple[type, ...], allow_root: bool) -> dict[str, Any]:
    """``nodes`` keyed by normalised path, checked."""
    out: dict[str, Any] = {}
    original: dict[str, str] = {}
    for key, node in nodes.items():
        rel = relative_path(key)
        if not rel and not allow_root:
            raise MetadataError(f"key {describe(key)} must name a node below the group")
        if rel in out:
            raise MetadataError(f"keys {describe(original[rel])} and {describe(key)} name the same node")
        if not isinstance(node, types):
            names = " or ".join(t.__name__ for t in types)
            raise ArgumentTypeError(f"node {key!r} is a {type(node).__name__}, not {names}")
        out[rel] = node
        original[rel] = key
    return out


def subtree(nodes: Mapping[str, NodeMetadata], path: str) -> dict[str, NodeMetadata]:
    """The nodes strictly below ``path`` (a group's path relative to the same group
    as the keys of ``nodes``, e.g. "sub"; "" or "/" for that group), keyed by path
    relative to ``path``, in the same order: the consolidated view of the group at
    ``path``.  The group's own metadata is ``nodes[path]``.  An absent ``path``
    gives ``{}``.  Raises MetadataError for a bad ``path`` (see :func:`relative_path`,
    a leading "/" is allowed here).  (A copy; ``ConsolidatedNodes.subtree`` is a view.)"""
    rel = relative_path(path.lstrip("/") if isinstance(path, str) else path)
    if not rel:
        return {k: v for k, v in nodes.items() if k}
    prefix = rel + "/"
    return {k[len(prefix):]: v for k, v in nodes.items() if k.startswith(prefix)}


# ------------------------------------------------------ editing stored documents
#
# Kept in step: when one node's metadata is written or deleted, the consolidated
# documents of the groups above it change that node's entry only.  These work on
# the raw JSON (a dict from json.loads), so an edit costs one parse and one dump
# of the document, not a parse of every entry in it.


def entry_v3(node: NodeMetadataV3) -> dict[str, Any]:
    """The entry of ``node`` in a ``consolidated_metadata`` member (its zarr.json;
    a group with an empty member of its own, as zarr-python writes it)."""
    doc = node.to_json()
    if isinstance(node, GroupMetadataV3):
        doc.pop("consolidated_metadata", None)
        doc["consolidated_metadata"] = _empty_member_v3()
    return doc


def _flat_entries_v3(member: Mapping, label: str) -> dict[str, Any]:
    """{normalised relative path: raw entry} of a ``consolidated_metadata`` member,
    the nodes of nested group members folded in where the flat form lacks them (as
    :func:`parse_v3` reads them) and those members emptied."""
    if not isinstance(member, Mapping) or member.get("kind") != "inline":
        raise MetadataError(f"{label} is not an inline consolidated_metadata member")
    entries = member.get("metadata")
    if not isinstance(entries, Mapping):
        raise MetadataError(f'{label} "metadata" {describe(entries)} must be an object')
    flat: dict[str, Any] = {}
    nested: dict[str, Any] = {}
    for key, value in entries.items():
        rel = relative_path(key)
        if not rel or not isinstance(value, Mapping):
            raise MetadataError(f"{label} key {describe(key)} is not a node entry")
        value = dict(value)
        inner = value.get("consolidated_metadata") if value.get("node_type") == "group" else None
        if inner is not None:
            value["consolidated_metadata"] = _empty_member_v3()
            if isinstance(inner, Mapping) and inner.get("metadata"):
                for sub, doc in _flat_entries_v3(inner, f"{label} key {describe(key)}").items():
                    nested.setdefault(f"{rel}/{sub}", doc)
        flat[rel] = value
    for rel, doc in nested.items():
        flat.setdefault(rel, doc)
    return flat


def _is_at_or_below(node_rel: str, rel: str) -> bool:
    return node_rel == rel or node_rel.startswith(rel + "/")


def edit_v3(member: Mapping, rel: str, node: NodeMetadataV3 | None, below: bool) -> dict[str, Any]:
    """The ``consolidated_metadata`` member ``member`` (raw JSON) with the entry of
    the node at ``rel`` (a path relative to the group, not "") set to ``node`` (None:
    removed, with the entries below it), and if ``below`` the entries below ``rel``
    removed (a new node replaced whatever was there).  Flat form, zarr-python's
    order.  Raises MetadataError if ``member`` is malformed."""
    entries = _flat_entries_v3(member, "consolidated_metadata")
    if node is None or below:
        entries = {k: v for k, v in entries.items() if not _is_at_or_below(k, rel)}
    if node is not None:
        entries[rel] = entry_v3(node)
    return {"kind": "inline", "must_understand": False,
            "metadata": {k: entries[k] for k in sorted(entries, key=_sort_key)}}


def entries_v2(rel: str, node: NodeMetadataV2) -> dict[str, Any]:
    """The ``.zmetadata`` entries of ``node`` at ``rel`` ("" for the group holding
    the document), as :func:`to_json_v2` writes them."""
    pre = f"{rel}/" if rel else ""
    if isinstance(node, GroupMetadataV2):
        zgroup = node.to_json()
        if not rel:
            return {".zgroup": zgroup, ".zattrs": node.attributes_to_json()}
        zgroup["consolidated_metadata"] = _empty_member_v2()
        return {f"{pre}.zattrs": node.attributes_to_json(), f"{pre}.zgroup": zgroup}
    return {f"{pre}.zattrs": node.attributes_to_json(), f"{pre}.zarray": node.to_json()}


def _v2_order(key: str) -> tuple[tuple[int, str, str], int]:
    node_rel, _, name = relative_path(key).rpartition("/")
    rank = (name != ".zgroup") if not node_rel else (name != ".zattrs")
    return _sort_key(node_rel), int(rank)


def edit_v2(doc: Mapping, rel: str, node: NodeMetadataV2 | None, below: bool) -> dict[str, Any]:
    """The ``.zmetadata`` document ``doc`` (raw JSON) with the entries of the node at
    ``rel`` ("" for the group holding it) replaced by ``node``'s (None: removed, with
    those below it), and if ``below`` the entries below ``rel`` removed.  Raises
    MetadataError if ``doc`` is malformed."""
    if not isinstance(doc, Mapping) or doc.get("zarr_consolidated_format") != CONSOLIDATED_FORMAT:
        raise MetadataError(".zmetadata is not a consolidated metadata document of format 1")
    entries = doc.get("metadata")
    if not isinstance(entries, Mapping):
        raise MetadataError(f'.zmetadata "metadata" {describe(entries)} must be an object')
    drop_below = node is None or below
    kept = {}
    for key, value in entries.items():
        node_rel = relative_path(key).rpartition("/")[0]
        if node_rel == rel or (drop_below and rel and node_rel.startswith(rel + "/")) \
                or (drop_below and not rel and node_rel):
            continue
        kept[key] = value
    if node is not None:
        kept.update(entries_v2(rel, node))
    return {"metadata": {k: kept[k] for k in sorted(kept, key=_v2_order)},
            "zarr_consolidated_format": CONSOLIDATED_FORMAT}
