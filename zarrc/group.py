"""The Group: a node holding arrays and groups."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zarrc import hierarchy, node_metadata
from zarrc.array import Array
from zarrc.errors import MetadataError, NodeNotFoundError
from zarrc.metadata.names import join_path, key_prefix
from zarrc.node import Node
from zarrc.stores import Store


class Group(Node):
    """A Zarr group: ``g["name"]`` is a member (array or group; "a/b" paths work),
    ``members()``, ``keys()``, ``arrays()``, ``groups()`` list them,
    ``create_group`` / ``require_group`` / ``create_array`` add them."""

    kind = "group"

    def __init__(self, store: Store, path: str, metadata: Any, *,
                 read_only: bool = False) -> None:
        super().__init__(store, path, metadata, read_only)

    # -------------------------------------------------------------- members

    def __getitem__(self, name: str) -> Array | Group:
        path = join_path(self._path, name)
        node = hierarchy.open_node(self._store, path, read_only=self._read_only)
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
        return node_metadata.exists(self._store, path)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def members(self) -> Iterator[tuple[str, Array | Group]]:
        """(name, node) of each direct member, sorted by name."""
        _, children = self._store.list_dir(key_prefix(self._path))
        for child in sorted(children):
            child = child.rstrip("/")
            node = hierarchy.open_node(self._store, join_path(self._path, child),
                                       read_only=self._read_only)
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
        return hierarchy.create_group(self._store, join_path(self._path, name),
                                      overwrite=overwrite, attributes=attributes,
                                      zarr_format=self.zarr_format)

    def require_group(self, name: str, *, overwrite: bool = False) -> Group:
        """The group ``name``, created if missing (TypeError if an array is there)."""
        if not overwrite and name in self:
            node = self[name]
            if not isinstance(node, Group):
                raise TypeError(f"{join_path(self._path, name)} is an array, not a group")
            return node
        return self.create_group(name, overwrite=overwrite)

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """A new array ``name``; keywords as for :func:`zarrc.create_array`
        (``zarr_format`` defaults to this group's)."""
        self._check_writable()
        kwargs.setdefault("zarr_format", self.zarr_format)
        return hierarchy.create_array(self._store, path=join_path(self._path, name), **kwargs)

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
