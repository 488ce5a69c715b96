"""The Group: a node holding arrays and groups; and the building of nodes from
what is in a store (:func:`open_node`, :func:`new_array`, :func:`new_group`), used
by groups for their members and by the public API (``zarrc.api``) above.

The metadata side of creating and opening (arguments -> metadata, documents read
and written, consolidated metadata) sits below, in ``zarrc.create``,
``zarrc.node_metadata`` and ``zarrc.consolidate``; this module is the one that
knows both node classes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zarrc import create, node_metadata
from zarrc.array import Array
from zarrc.consolidate import read_group
from zarrc.errors import MetadataError, NodeNotFoundError, NodeTypeError
from zarrc.metadata import consolidated as consolidated_docs
from zarrc.metadata.names import join_path, key_prefix
from zarrc.node import Node
from zarrc.stores import Store


def open_node(store: Store, path: str, *, read_only: bool = False,
              use_consolidated: bool | None = False) -> Array | Group | None:
    """The array or group at ``path`` (normalised), or None if there is no node.  A
    group's consolidated metadata is used if ``use_consolidated`` is None (when
    present) or True (required: MetadataError if absent)."""
    if use_consolidated is False:
        md, nodes = node_metadata.read(store, path), None
    else:
        md, nodes = read_group(store, path, use_consolidated)
    if md is None:
        return None
    if md.node_type == "array":
        return Array(store, path, md, read_only=read_only)
    return Group(store, path, md, read_only=read_only, consolidated=nodes)


def new_array(store: Store, path: str, metadata: Any, *, overwrite: bool = False,
              write_empty_chunks: bool = False) -> Array:
    """A new array at ``path`` (normalised) with ``metadata`` (from
    ``create.array_metadata``).  Its codecs are prepared before anything is written;
    ContainsNodeError if a node is there and not ``overwrite``."""
    Array(store, path, metadata)  # validates the codecs before anything is written
    metadata = create.store_node(store, path, metadata, overwrite)
    return Array(store, path, metadata, write_empty_chunks=write_empty_chunks)


def new_group(store: Store, path: str, *, overwrite: bool = False, attributes: Any = None,
              zarr_format: int = 3) -> Group:
    """A new group at ``path`` (normalised), its missing ancestors created;
    ContainsNodeError if a node is there and not ``overwrite``."""
    metadata = create.group_metadata(zarr_format, attributes)
    return Group(store, path, create.store_node(store, path, metadata, overwrite))


class Group(Node):
    """A Zarr group: ``g["name"]`` is a member (array or group; "a/b" paths work),
    ``members()``, ``keys()``, ``arrays()``, ``groups()`` list them,
    ``create_group`` / ``require_group`` / ``create_array`` add them."""

    kind = "group"

    def __init__(self, store: Store, path: str, metadata: Any, *,
                 read_only: bool = False, consolidated: dict | None = None) -> None:
        super().__init__(store, path, metadata, read_only)
        # consolidated metadata: every node below, keyed by relative path
        self._consolidated = consolidated

    @property
    def consolidated(self) -> bool:
        """True if members are looked up in consolidated metadata (read when opened)."""
        return self._consolidated is not None

    def _child_path(self, name: Any) -> str:
        """The path of member ``name``; ArgumentTypeError if it is not a str."""
        return join_path(self._path, create.check_path_type(name))

    def _relative(self, path: str) -> str:
        return path[len(self._path):].lstrip("/")

    def _from_consolidated(self, consolidated: dict, path: str) -> Array | Group | None:
        """The node at ``path`` as ``consolidated`` (this group's consolidated
        metadata) describes it, or None if it has none there."""
        rel = self._relative(path)
        md = consolidated.get(rel)
        if md is None:
            return None
        if md.node_type == "array":
            return Array(self._store, path, md, read_only=self._read_only)
        return Group(self._store, path, md, read_only=self._read_only,
                     consolidated=consolidated_docs.subtree(consolidated, rel))

    # -------------------------------------------------------------- members

    def __getitem__(self, name: str) -> Array | Group:
        path = self._child_path(name)
        if self._consolidated is not None:
            node = self._from_consolidated(self._consolidated, path)
        else:
            node = open_node(self._store, path, read_only=self._read_only)
        if node is None:
            raise NodeNotFoundError(f"no array or group named {name!r} in group {self._path}")
        return node

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            path = join_path(self._path, name)
        except MetadataError:
            return False
        if self._consolidated is not None:
            return self._relative(path) in self._consolidated
        return node_metadata.exists(self._store, path)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def members(self) -> Iterator[tuple[str, Array | Group]]:
        """(name, node) of each direct member, sorted by name."""
        consolidated = self._consolidated     # (the listing's; creating a member drops it)
        if consolidated is not None:
            for child in sorted(k for k in consolidated if "/" not in k):
                node = self._from_consolidated(consolidated, join_path(self._path, child))
                assert node is not None        # (child is a key of consolidated)
                yield child, node
            return
        _, children = self._store.list_dir(key_prefix(self._path))
        for child in sorted(children):
            child = child.rstrip("/")
            node = open_node(self._store, join_path(self._path, child), read_only=self._read_only)
            if node is not None:
                yield child, node

    def keys(self) -> Iterator[str]:
        for name, _ in self.members():
            yield name

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return sum(1 for _ in self.members())

    def arrays(self) -> Iterator[tuple[str, Array]]:
        for name, node in self.members():
            if isinstance(node, Array):
                yield name, node

    def groups(self) -> Iterator[tuple[str, Group]]:
        for name, node in self.members():
            if isinstance(node, Group):
                yield name, node

    def array_keys(self) -> Iterator[str]:
        for name, _ in self.arrays():
            yield name

    def group_keys(self) -> Iterator[str]:
        for name, _ in self.groups():
            yield name

    def create_group(self, name: str, *, overwrite: bool = False,
                     attributes: dict | None = None) -> Group:
        """A new group ``name``, in this group's Zarr format (raises ContainsNodeError
        if a node is there, unless ``overwrite``)."""
        self._check_writable()
        self._consolidated = None          # no longer the whole picture
        return new_group(self._store, self._child_path(name), overwrite=overwrite,
                         attributes=attributes, zarr_format=self.zarr_format)

    def require_group(self, name: str, *, overwrite: bool = False) -> Group:
        """The group ``name``, created if missing (NodeTypeError, a TypeError, if an
        array is there)."""
        if not overwrite and name in self:
            node = self[name]
            if not isinstance(node, Group):
                raise NodeTypeError(f"{join_path(self._path, name)} is an array, not a group")
            return node
        return self.create_group(name, overwrite=overwrite)

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """A new array ``name``; keywords as for :func:`zarrc.create_array`
        (``zarr_format`` defaults to this group's)."""
        self._check_writable()
        self._consolidated = None          # no longer the whole picture
        kwargs.setdefault("zarr_format", self.zarr_format)
        path = self._child_path(name)
        overwrite = kwargs.pop("overwrite", False)
        write_empty_chunks = kwargs.pop("write_empty_chunks", False)
        return new_array(self._store, path, create.array_metadata(**kwargs), overwrite=overwrite,
                         write_empty_chunks=write_empty_chunks)

    def tree(self, level: int | None = None) -> TreeRepr:
        """The hierarchy below this group (``print(g.tree())``)."""
        return TreeRepr(self, level)

    def __repr__(self) -> str:
        return f"<Group {self._store!r}{self._path}>"


class TreeRepr:
    """Text drawing of a hierarchy."""

    def __init__(self, group: Group, level: int | None) -> None:
        self._lines = [group.name]
        self._walk(group, "", level)

    def _walk(self, group: Group, indent: str, level: int | None) -> None:
        if level is not None and level <= 0:
            return
        members = list(group.members())
        for i, (name, node) in enumerate(members):
            last = i == len(members) - 1
            branch = "└── " if last else "├── "
            if isinstance(node, Array):
                self._lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
            else:
                self._lines.append(f"{indent}{branch}{name}")
                self._walk(node, indent + ("    " if last else "│   "),
                           None if level is None else level - 1)

    def __repr__(self) -> str:
        return "\n".join(self._lines)

    __str__ = __repr__
