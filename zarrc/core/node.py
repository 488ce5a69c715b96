"""What arrays and groups share: a store, a path, metadata and attributes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, ClassVar

from zarrc.core import consolidate
from zarrc.errors import ArgumentError, ArgumentTypeError, ReadOnlyError
from zarrc.metadata.consolidated import ConsolidatedNodes
from zarrc.metadata.names import normalize_path
from zarrc.runtime.async_calls import run_sync


class StorePath:
    """A store and a path in it, as zarr-python's ``StorePath``: ``store``, ``path``
    (no leading "/"), ``sp / "name"`` for a path below; ``str()`` is "<store>/<path>"."""

    def __init__(self, store: Any, path: str = "") -> None:
        self.store = store
        self.path = path.strip("/")

    def __truediv__(self, other: str) -> StorePath:
        return StorePath(self.store, f"{self.path}/{other}".strip("/"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StorePath) and (self.store, self.path) == (other.store, other.path)

    def __hash__(self) -> int:
        return hash((type(self.store), self.path))

    def __str__(self) -> str:
        return f"{self.store!r}/{self.path}"

    def __repr__(self) -> str:
        return f"StorePath({type(self.store).__name__}, {str(self)!r})"


class Attributes(MutableMapping):
    """A node's user attributes; every change is written to the store at once (one
    write per call).  As in zarr-python, a lookup gives the value the node's
    metadata holds (no copy: its cost is the lookup's), and ``asdict`` a shallow copy."""

    def __init__(self, node: Node) -> None:
        self._node = node

    def _data(self) -> Mapping[str, Any]:
        return self._node.metadata.attributes

    def __getitem__(self, key: str) -> Any:
        return self._data()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __delitem__(self, key: str) -> None:
        data = dict(self._data())
        del data[key]
        self.put(data)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())

    def __contains__(self, key: object) -> bool:
        return key in self._data()

    def update(self, *args: Any, **kwargs: Any) -> None:  # one write for many keys
        """As ``dict.update``, in one write; ArgumentTypeError / ArgumentError for
        arguments ``dict.update`` refuses."""
        data = dict(self._data())
        try:
            data.update(*args, **kwargs)
        except TypeError as exc:
            raise ArgumentTypeError(f"attributes update: {exc}") from None
        except ValueError as exc:
            raise ArgumentError(f"attributes update: {exc}") from None
        self.put(data)

    def put(self, data: dict[str, Any]) -> None:
        """Replace all attributes with ``data`` (a mapping of JSON values:
        ArgumentTypeError otherwise)."""
        if not isinstance(data, Mapping):
            raise ArgumentTypeError(f"attributes must be a mapping (dict), got {type(data).__name__} {data!r}")
        self._node._set_metadata(dataclasses.replace(self._node.metadata, attributes=data))

    def asdict(self) -> dict[str, Any]:
        """The attributes as a dict (a shallow copy, as zarr-python's)."""
        return dict(self._data())

    def __repr__(self) -> str:
        return repr(dict(self._data()))


class Node:
    """Base of Array and Group: ``store``, ``path``, ``name``, ``basename``,
    ``metadata``, ``attrs``, ``read_only``, ``zarr_format``."""

    kind: ClassVar[str] = "node"
    # (nodes, key): the in-memory consolidated metadata of the groups this node was
    # reached through, and its key there; kept in step by _set_metadata
    _mirrors: tuple[tuple[ConsolidatedNodes, str], ...] = ()

    def __init__(self, store: Any, path: str, metadata: Any, read_only: bool) -> None:
        self._store = store
        self._path = normalize_path(path)
        self._metadata = metadata
        self._read_only = read_only or bool(getattr(store, "read_only", False))

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self.kind} {self._path} is read-only")

    def _set_metadata(self, metadata: Any) -> None:
        """Write ``metadata`` (consolidated metadata above kept in step) and hold it."""
        self._check_writable()
        self._metadata = consolidate.write_node(self._store, self._path, metadata)
        for nodes, key in self._mirrors:
            nodes[key] = consolidate.entry_of(self._metadata)

    @property
    def metadata(self) -> Any:
        return self._metadata

    @property
    def store(self) -> Any:
        return self._store

    @property
    def path(self) -> str:
        """The node's path in its hierarchy, without the leading "/" ("" for the root)."""
        return self._path.lstrip("/")

    @property
    def name(self) -> str:
        return self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def zarr_format(self) -> int:
        return self._metadata.zarr_format

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    @property
    def store_path(self) -> StorePath:
        """The node's store and path (``store_path.store``, ``store_path.path``)."""
        return StorePath(self._store, self.path)

    def update_attributes(self, new_attributes: Mapping[str, Any]) -> Any:
        """Merge ``new_attributes`` into the attributes (one write); returns the node,
        as zarr-python.  ArgumentTypeError if it is not a mapping."""
        if not isinstance(new_attributes, Mapping):
            raise ArgumentTypeError(f"new_attributes must be a mapping (dict), got "
                                    f"{type(new_attributes).__name__} {new_attributes!r}")
        self.attrs.update(new_attributes)
        return self

    def close(self) -> None:
        """Finish with the node.  A store zarrc opened for it from a path or URL
        (``zarrc.open_group("d.zip", mode="a")``) is closed, which writes a zip
        archive's changes; it is the store of every node reached from this one, and
        they cannot be used afterwards.  A store object passed in by the caller is
        left open: the caller closes (or flushes) it."""
        if getattr(self._store, "opened_by_zarrc", False):
            self._store.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._store == other._store and self._path == other._path

    def __hash__(self) -> int:
        return hash((type(self._store), self._path))


def forward(name: str, doc: str) -> property:
    """A read-only property giving the wrapped node's ``name``."""
    def get(self: Any) -> Any:
        return getattr(self._node, name)
    return property(get, doc=doc)


class AsyncNode:
    """What AsyncArray and AsyncGroup share: the wrapped node's names, store,
    metadata and attributes."""

    _node: Any      # (the Array or Group wrapped)

    metadata = forward("metadata", "The node's metadata (zarrc's metadata classes).")
    store = forward("store", "The store the node is in.")
    store_path = forward("store_path", "The node's store and path (``store_path.store``, ``.path``).")
    path = forward("path", "The node's path in its hierarchy, without the leading '/'.")
    name = forward("name", "The node's path with the leading '/'.")
    basename = forward("basename", "The last part of the node's path.")
    read_only = forward("read_only", "True if the node cannot be written.")
    zarr_format = forward("zarr_format", "2 or 3.")
    info = forward("info", "A summary of the node (``print(node.info)``), from its metadata.")

    @property
    def attrs(self) -> dict[str, Any]:
        """The attributes, as a dict (a copy, as zarr-python's async nodes give:
        change them with ``await update_attributes(...)``)."""
        return self._node.attrs.asdict()

    async def update_attributes(self, new_attributes: dict[str, Any]) -> Any:
        """Merge ``new_attributes`` into the attributes (one write); returns this
        node.  ArgumentTypeError if it is not a mapping, ReadOnlyError if read-only."""
        await run_sync(self._node.update_attributes, new_attributes)
        return self

    async def info_complete(self) -> Any:
        """``info`` with what reading the store tells (see the sync node's)."""
        return await run_sync(self._node.info_complete)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._node == other._node

    def __hash__(self) -> int:
        return hash((type(self), self._node))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._node.store!r}{self._node.name}>"

