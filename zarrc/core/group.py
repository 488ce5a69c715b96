"""The Group: a node holding arrays and groups; and the building of nodes from
what is in a store (:func:`make_node`, :func:`open_node`, :func:`new_array`,
:func:`new_group`), used
by groups for their members and by the public API (``zarrc.api``) above.

The metadata side of creating and opening (arguments -> metadata, documents read
and written, consolidated metadata) sits below, in ``zarrc.core.create``,
``zarrc.core.node_metadata`` and ``zarrc.core.consolidate``; this module is the one that
knows both node classes.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import numpy as np

from zarrc.core import create, node_metadata
from zarrc.core.array import Array, AsyncArray, array_config, as_store
from zarrc.core.consolidate import entry_of, forget, read_group
from zarrc.core.create import DEFAULT
from zarrc.core.hierarchy import write_hierarchy
from zarrc.core.like import as_data, like_arguments, split_codecs
from zarrc.core.multiscales_levels import Multiscales, of_group
from zarrc.core.node import AsyncNode, Node
from zarrc.errors import (
    ArgumentError,
    ArgumentTypeError,
    CodecError,
    ExpectedGroupError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    NodeTypeError,
    ZarrcUserWarning,
)
from zarrc.metadata.consolidated import ConsolidatedNodes
from zarrc.metadata.dtypes import as_data_type
from zarrc.metadata.names import check_node_name, join_path, key_prefix
from zarrc.runtime.async_calls import run_sync
from zarrc.stores import Store

# What makes a member unreadable (an unknown data type or codec, a malformed
# document): a group's listing skips it with a warning; opening it raises.
UNREADABLE = (MetadataError, CodecError)


def open_node(store: Store, path: str, *, read_only: bool = False,
              use_consolidated: bool | None = False, prepare_now: bool = True,
              zarr_format: int | None = None) -> Array | Group | None:
    """The array or group at ``path`` (normalised), or None if there is no node.  A
    group's consolidated metadata is used if ``use_consolidated`` is None (when
    present and readable: else, with a warning, the store is listed) or True
    (required: MetadataError if absent or unreadable).  ``prepare_now`` False: an
    array is prepared for the engine when first used (a group's listings).
    ``zarr_format`` 2 or 3: only that format's documents are read (a folder holding
    both opens as the format asked for, as zarr-python)."""
    if use_consolidated is False:
        md, nodes = node_metadata.read(store, path, zarr_format), None
    else:
        try:
            md, nodes = read_group(store, path, use_consolidated, zarr_format)
        except UNREADABLE as exc:
            md = node_metadata.read(store, path, zarr_format)
            if use_consolidated or md is None or md.node_type != "group":
                raise
            warnings.warn(f"the consolidated metadata of group {path} is not used, its members are "
                          f"read one by one: {exc}", ZarrcUserWarning, stacklevel=3)
            nodes = None
    if md is None:
        return None
    return make_node(store, path, md, read_only=read_only, consolidated=nodes, prepare_now=prepare_now)


def make_node(store: Store, path: str, metadata: Any, *, read_only: bool = False,
              consolidated: ConsolidatedNodes | None = None, prepare_now: bool = True) -> Array | Group:
    """The node ``metadata`` describes (an Array or a Group, by its ``node_type``) at
    ``path`` (normalised) of ``store``; a group with ``consolidated`` (its consolidated
    metadata: every node below, keyed by relative path) looks its members up there.
    The one place nodes are built from metadata: opened, members of a group, and
    ``api.create_hierarchy``'s."""
    if metadata.node_type == "array":
        # (``prepare_now`` False: a v3 array's codecs were checked with its metadata,
        # so it is prepared when first used; a v2 one's compressor and filters are
        # found only by preparing it, so that a listing skips one it cannot run)
        return Array(store, path, metadata, read_only=read_only,
                     prepare_now=prepare_now or metadata.zarr_format == 2)
    return Group(store, path, metadata, read_only=read_only, consolidated=consolidated)


def new_array(store: Store, path: str, metadata: Any, *, overwrite: bool = False,
              write_empty_chunks: bool | None = None) -> Array:
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


def make_hierarchy(store: Store, nodes: Mapping[str, Any], overwrite: bool) -> list[tuple[str, Array | Group]]:
    """(path, node) of every node ``hierarchy.write_hierarchy`` writes for ``nodes``
    (and the missing groups above them), sorted by path: ``create_hierarchy``."""
    return [(key, make_node(store, "/" + key, md)) for key, md in write_hierarchy(store, nodes, overwrite)]


def open_existing_group(store: Any, zarr_format: int | None = None,
                        use_consolidated: bool | str | None = None) -> Group:
    """The group at the root of ``store`` (a Store, or what ``make_store`` takes,
    opened "r+"), in ``zarr_format`` (None: either): ``AsyncGroup.open``.
    GroupNotFoundError if there is none (or only one of the other format),
    ExpectedGroupError if an array is there."""
    s = as_store(store, "r+")
    node = open_node(s, "/", use_consolidated=use_consolidated)  # type: ignore[arg-type]
    if node is None or (zarr_format is not None and node.metadata.zarr_format != zarr_format):
        raise GroupNotFoundError(f"no group at / in {s!r}" + (f" in Zarr format {zarr_format}" if zarr_format
                                                               else ""))
    if not isinstance(node, Group):
        raise ExpectedGroupError(f"/ in {s!r} is an array, not a group")
    return node


class Group(Node):
    """A Zarr group: ``g["name"]`` is a member (array or group; "a/b" paths work),
    ``members()``, ``keys()``, ``arrays()``, ``groups()`` list them,
    ``create_group`` / ``require_group`` / ``create_array`` add them."""

    kind = "group"

    def __init__(self, store: Store, path: str, metadata: Any, *,
                 read_only: bool = False, consolidated: ConsolidatedNodes | None = None) -> None:
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

    def _from_consolidated(self, consolidated: ConsolidatedNodes, path: str,
                           prepare_now: bool = True) -> Array | Group | None:
        """The node at ``path`` as ``consolidated`` (this group's consolidated
        metadata) describes it, or None if it has none there."""
        rel = self._relative(path)
        md = consolidated.get(rel)
        if md is None:
            return None
        below = None if md.node_type == "array" else consolidated.subtree(rel)
        node = make_node(self._store, path, md, read_only=self._read_only, consolidated=below,
                         prepare_now=prepare_now)
        node._mirrors = self._places(rel)
        return node

    def _places(self, rel: str) -> tuple[tuple[ConsolidatedNodes, str], ...]:
        """(dict, key) of the member at ``rel`` in the in-memory consolidated metadata
        of this group and of the groups it was reached through."""
        own = ((self._consolidated, rel),) if self._consolidated is not None else ()
        if not self._mirrors:
            return own
        return own + tuple((nodes, f"{key}/{rel}") for nodes, key in self._mirrors)

    def _note_member(self, rel: str, metadata: Any) -> None:
        """Keep the in-memory consolidated metadata in step with the store: the
        member at ``rel`` and those below it gone, then ``metadata`` there (None:
        deleted)."""
        for nodes, key in self._places(rel):
            for below in nodes.at_or_below(key):
                del nodes[below]
            if metadata is not None:
                nodes[key] = entry_of(metadata)

    # -------------------------------------------------------------- members

    def __getitem__(self, name: str) -> Array | Group:
        return self._lookup(name, True)

    def _lookup(self, name: str, prepare_now: bool) -> Array | Group:
        path = self._child_path(name)
        if self._consolidated is not None:
            node = self._from_consolidated(self._consolidated, path, prepare_now)
        else:
            node = open_node(self._store, path, read_only=self._read_only, prepare_now=prepare_now)
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

    def get(self, path: str, default: Any = None) -> Any:
        """The member at ``path`` ("a/b" works), or ``default`` if there is none."""
        try:
            return self[path]
        except KeyError:
            return default

    def __setitem__(self, name: str, value: Any) -> None:
        """``g["x"] = values``: a new array ``x`` holding ``values`` (replacing any node
        there), with the default settings, as zarr-python."""
        data = as_data(value)
        self.create_array(name, data=data, overwrite=True)

    def __delitem__(self, name: str) -> None:
        """Delete the member ``name`` and everything below it, and their entries in
        the consolidated metadata of this group and the groups above (and in what
        this group was opened with); nothing happens if there is none, as in
        zarr-python.  Raises StoreError if the store cannot delete (zip)."""
        self._check_writable()
        path = self._child_path(name)
        self._store.delete_prefix(key_prefix(path))
        forget(self._store, path)
        self._note_member(self._relative(path), None)
        if self._consolidated is not None and self._metadata.zarr_format == 3:
            self._metadata = node_metadata.read(self._store, self._path) or self._metadata

    def _added(self, node: Array | Group) -> None:
        """A new member ``node`` (at "a/b": with the groups above it it made, read
        back) noted in the in-memory consolidated metadata."""
        rel = self._relative(node._path)
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            above = "/".join(parts[:depth])
            places = [(nodes, key) for nodes, key in self._places(above) if key not in nodes]
            md = node_metadata.read(self._store, join_path(self._path, above)) if places else None
            for nodes, key in places if md is not None else ():
                nodes[key] = entry_of(md)
        self._note_member(rel, node.metadata)
        node._mirrors = self._places(rel)

    def _names(self) -> list[str]:
        """The names of the direct members, sorted: every child with a metadata
        document, whether or not that document can be read."""
        consolidated = self._consolidated
        if consolidated is not None:
            return sorted(consolidated.children())
        return sorted(n for n in self._stored_names() if node_metadata.exists(self._store, join_path(self._path, n)))

    def _stored_names(self) -> list[str]:
        """The names of the children the store lists that a node can have, whether
        or not a node is there."""
        _, children = self._store.list_dir(key_prefix(self._path))
        found = []
        for child in children:
            name = child.rstrip("/")
            try:
                check_node_name(name, reserved_ok=True)
            except MetadataError:
                continue
            found.append(name)
        return sorted(found)

    def _member(self, name: str, stacklevel: int = 4) -> Array | Group | None:
        """The member ``name``, or None: if there is no node there (a child the store
        lists without one), or (with a warning naming it and why) if its metadata
        cannot be read.  An array is prepared for the engine when first used, not
        here: a listing of thousands of arrays reads their metadata only."""
        try:
            return self._lookup(name, False)
        except NodeNotFoundError:
            return None
        except UNREADABLE as exc:
            self._skipped(name, exc, stacklevel + 1)
            return None

    def _skipped(self, name: str, exc: Exception, stacklevel: int) -> None:
        """Warn that member ``name`` is skipped, and why (``exc``)."""
        warnings.warn(f"group {self._path}: member {name!r} is skipped: {exc}", ZarrcUserWarning,
                      stacklevel=stacklevel)

    def members(self, max_depth: int | None = 0, *,
                use_consolidated_for_children: bool = True) -> tuple[tuple[str, Array | Group], ...]:
        """(name, node) of each member: the direct ones (sorted by name) for
        ``max_depth`` 0, then those of the groups among them down to ``max_depth``
        more levels (None: all), named by their path below this group ("a/b").
        A member whose metadata cannot be read (an unknown data type or codec) is
        skipped with a warning naming it and why; opening it raises the error.
        ArgumentError for a negative ``max_depth``.  (``use_consolidated_for_children``
        is taken as zarr-python takes it; child groups are read from the store here
        unless this group was opened with consolidated metadata, so it changes
        nothing.)"""
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 0):
            raise ArgumentError(f"max_depth must be None or an integer >= 0, got {max_depth!r}")
        found: list[tuple[str, Array | Group]] = []
        self._gather(max_depth, found, "")
        return tuple(found)

    def _gather(self, max_depth: int | None, found: list, prefix: str) -> None:
        """``members(max_depth)``, each name after ``prefix``, appended to ``found``."""
        start = len(found)
        consolidated = self._consolidated
        if consolidated is not None:
            below = self._path + "/" if self._path != "/" else "/"
            for name in self._names():
                node = self._listed_member(consolidated, below, name)
                if node is not None:
                    found.append((prefix + name, node))
        else:
            # (from the store: each child read once, those without a node skipped, no
            # separate check that a document is there)
            for name in self._stored_names():
                node = self._member(name, 5)
                if node is not None:
                    found.append((prefix + name, node))
        if max_depth is None or max_depth > 0:
            deeper = None if max_depth is None else max_depth - 1
            for i in range(start, len(found)):
                name, node = found[i]
                if isinstance(node, Group):
                    node._gather(deeper, found, name + "/")

    def _listed_member(self, consolidated: ConsolidatedNodes, below: str, name: str) -> Array | Group | None:
        """``_member(name)`` of a name the consolidated metadata lists (``below``: this
        group's path and "/"), without checking it again as a path."""
        if not name.strip("."):
            return self._member(name, 6)        # (refused as a path: as _member words it)
        try:
            md = consolidated[name]
        except KeyError:
            return None
        except UNREADABLE as exc:
            self._skipped(name, exc, 6)
            return None
        node = make_node(self._store, below + name, md, read_only=self._read_only, prepare_now=False,
                         consolidated=None if md.node_type == "array" else consolidated.subtree(name))
        node._mirrors = self._places(name)
        return node

    def nmembers(self, max_depth: int | None = 0) -> int:
        """How many members ``members(max_depth)`` gives."""
        return len(self.members(max_depth))

    def keys(self) -> Iterator[str]:
        """The names of the direct members, sorted (those that cannot be opened too)."""
        return iter(self._names())

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return len(self._names())

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

    def array_values(self) -> Iterator[Array]:
        for _, node in self.arrays():
            yield node

    def group_values(self) -> Iterator[Group]:
        for _, node in self.groups():
            yield node

    @property
    def info(self) -> GroupInfo:
        """A summary of the group (``print(g.info)``)."""
        return GroupInfo(self)

    @property
    def multiscales(self) -> Multiscales | None:
        """The pyramid this group's attributes lay out (the multiscales convention, as
        GDAL 3.13 reads it: a ``zarr_conventions`` entry and a ``multiscales`` layout),
        or None: its ``levels`` in the layout's order, each with its ``node`` and
        ``array`` (a level that is a group: its array named as the base level's),
        ``arrays`` largest first.  Metadata only.  For an array's pyramid, or a group
        level's other arrays, use ``zarrc.multiscales(node, name)``."""
        return of_group(self)

    def info_complete(self) -> GroupInfo:
        """``info`` with the numbers of members, arrays and groups."""
        return GroupInfo(self, complete=True)

    def create_group(self, name: str, *, overwrite: bool = False,
                     attributes: dict | None = None) -> Group:
        """A new group ``name``, in this group's Zarr format (raises ContainsNodeError
        if a node is there, unless ``overwrite``)."""
        self._check_writable()
        group = new_group(self._store, self._child_path(name), overwrite=overwrite,
                          attributes=attributes, zarr_format=self.zarr_format)
        self._added(group)
        return group

    def require_group(self, name: str, *, overwrite: bool = False) -> Group:
        """The group ``name``, created if missing (NodeTypeError, a TypeError, if an
        array is there)."""
        if not overwrite and name in self:
            node = self[name]
            if not isinstance(node, Group):
                raise NodeTypeError(f"{join_path(self._path, name)} is an array, not a group")
            return node
        return self.create_group(name, overwrite=overwrite)

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        """``require_group`` of each name, in order."""
        return tuple(self.require_group(name) for name in names)

    def create_array(self, name: str, *, shape: Any = None, dtype: Any = None, data: Any = None,
                     config: Any = None, storage_options: Any = None, write_data: bool = True,
                     **kwargs: Any) -> Array:
        """A new array ``name``; keywords as for :func:`zarrc.create_array` (the
        array is in this group's Zarr format; ArgumentError for another
        ``zarr_format``).  ``data``: an array-like giving the shape and dtype (then
        ``shape`` and ``dtype`` must not be given), written unless ``write_data`` is
        False.  ``config``: ``{"write_empty_chunks": ...}`` (see Array.with_config).
        ``storage_options`` must be None (zarrc stores take none)."""
        self._check_writable()
        fmt = kwargs.pop("zarr_format", None)
        if fmt is not None and fmt != self.zarr_format:
            raise ArgumentError(f"cannot create a zarr_format={fmt} array in the zarr_format="
                                f"{self.zarr_format} group {self._path}")
        if storage_options is not None:
            raise ArgumentError("storage_options apply to fsspec URLs; a group's store takes none")
        if data is not None:
            if shape is not None or dtype is not None:
                raise ArgumentError("create_array takes data, or shape and dtype, not both")
            data = as_data(data)
            shape, dtype = data.shape, data.dtype
        elif shape is None or dtype is None:
            raise ArgumentTypeError("create_array needs shape and dtype (or data)")
        write_empty_chunks = array_config(config, kwargs.pop("write_empty_chunks", None))
        overwrite = kwargs.pop("overwrite", False)
        metadata = create.array_metadata(shape=shape, dtype=dtype, zarr_format=self.zarr_format, **kwargs)
        arr = new_array(self._store, self._child_path(name), metadata, overwrite=overwrite,
                        write_empty_chunks=write_empty_chunks)
        self._added(arr)
        if data is not None and write_data:
            arr[...] = data
        return arr

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False,
                      config: Any = None, **kwargs: Any) -> Array:
        """The array ``name``, created (``create_array``'s keywords) if missing.  An
        existing one must have ``shape`` and a dtype that casts to ``dtype`` (default
        float64; ``exact``: equal to it), else NodeTypeError (a TypeError) as for a
        group there.  ``config`` applies to it either way."""
        if name not in self:
            return self.create_array(name, shape=shape, dtype="float64" if dtype is None else dtype,
                                     config=config, **kwargs)
        node = self[name]
        where = join_path(self._path, name)
        if not isinstance(node, Array):
            raise NodeTypeError(f"{where} is a group, not an array")
        want_shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if tuple(int(n) for n in want_shape) != node.shape:
            raise NodeTypeError(f"{where} has shape {node.shape}, not {want_shape}")
        want = as_data_type("float64" if dtype is None else dtype).dtype
        if node.dtype != want if exact else not np.can_cast(node.dtype, want):
            raise NodeTypeError(f"{where} has dtype {node.dtype}, incompatible with {want}")
        return node if config is None else node.with_config(config)

    # ---------------------------------------------- zarr-python's array makers

    def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """A new array ``name`` of ``shape`` filled with zeros (its fill value 0;
        ``dtype`` default float64, other keywords as ``create_array``)."""
        return self._new_filled(name, shape, {**kwargs, "fill_value": 0})

    def ones(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """As ``zeros``, with ones."""
        return self._new_filled(name, shape, {**kwargs, "fill_value": 1})

    def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        """As ``zeros``, with ``fill_value``."""
        return self._new_filled(name, shape, {**kwargs, "fill_value": fill_value})

    def empty(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """As ``zeros``, with the data type's default fill value (nothing is written:
        read, an empty array gives its fill value)."""
        return self._new_filled(name, shape, kwargs)

    def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """``zeros`` like ``data``: its shape, dtype and chunks (and, for a zarrc
        array of this group's format, its codecs), keywords overriding them, as
        ``zarrc.zeros_like`` (``core.like.like_arguments``)."""
        return self.zeros(name=name, **(self._like(data) | kwargs))

    def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """``ones`` like ``data`` (see ``zeros_like``)."""
        return self.ones(name=name, **(self._like(data) | kwargs))

    def full_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """``full`` like ``data`` (see ``zeros_like``); ``fill_value`` defaults to the
        fill value of a zarrc ``data``."""
        return self.full(name=name, **({"fill_value": None} | self._like(data) | kwargs))

    def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """``empty`` like ``data`` (see ``zeros_like``)."""
        return self.empty(name=name, **(self._like(data) | kwargs))

    def _like(self, data: Any) -> dict[str, Any]:
        """like_arguments for a new member (of this group's format)."""
        like = like_arguments(data, self.zarr_format)
        del like["zarr_format"]
        return like

    def array(self, name: str, *, shape: Any = None, dtype: Any = None, data: Any = None,
              **kwargs: Any) -> Array:
        """zarr-python 3.1's deprecated alias of ``create_array``, which also takes
        ``shape`` and ``dtype`` with ``data`` (then ``data`` is written, cast to
        ``dtype``; ArgumentError if its shape is not ``shape``)."""
        if data is None or (shape is None and dtype is None):
            return self.create_array(name, shape=shape, dtype=dtype, data=data, **kwargs)
        data = as_data(data)
        if shape is not None and create.array_metadata(shape=shape, dtype="u1").shape != data.shape:
            raise ArgumentError(f"data of shape {data.shape} given for an array of shape {shape}")
        arr = self.create_array(name, shape=data.shape, dtype=data.dtype if dtype is None else dtype,
                                **kwargs)
        arr[...] = data
        return arr

    def _new_filled(self, name: str, shape: Any, kwargs: dict[str, Any]) -> Array:
        """A new array made as zarr-python's ``zarr.create`` takes its keywords:
        ``chunks`` None or ``chunk_shape`` for the chunk shape, a whole ``codecs``
        list, ``dtype`` default float64."""
        kwargs = dict(kwargs)
        chunk_shape = kwargs.pop("chunk_shape", None)
        chunks = kwargs.pop("chunks", None)
        chunks = chunk_shape if chunks is None else chunks
        kwargs["chunks"] = "auto" if chunks is None or chunks is True else chunks
        if kwargs.get("codecs") is not None:
            kwargs.update(split_codecs(kwargs.pop("codecs")))
        kwargs.pop("codecs", None)
        if kwargs.get("fill_value", DEFAULT) is None and self.zarr_format == 3:
            kwargs.pop("fill_value")            # (v3 has no null fill value: the default)
        kwargs.setdefault("dtype", "float64")
        return self.create_array(name, shape=shape, **kwargs)

    def tree(self, level: int | None = None) -> TreeRepr:
        """The hierarchy below this group (``print(g.tree())``)."""
        return TreeRepr(self, level)

    @property
    def _async_group(self) -> AsyncGroup:
        """This group as an AsyncGroup (sharing it), as zarr-python's."""
        return AsyncGroup(self)

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


class GroupInfo:
    """A summary of a group (``repr`` prints it; ``complete``: with its members
    counted)."""

    def __init__(self, group: Group, complete: bool = False) -> None:
        self.rows: list[tuple[str, Any]] = [
            ("Name", group.path), ("Type", "Group"), ("Zarr format", group.zarr_format),
            ("Read-only", group.read_only), ("Store type", type(group.store).__name__)]
        if complete:
            members = group.members()
            narrays = sum(isinstance(node, Array) for _, node in members)
            self.rows += [("No. members", len(members)), ("No. arrays", narrays),
                          ("No. groups", len(members) - narrays)]

    def __repr__(self) -> str:
        return "\n".join(f"{k:<12}: {v}" for k, v in self.rows)


def as_sync(value: Any) -> Any:
    """The Array / Group an AsyncArray / AsyncGroup wraps; anything else as it is."""
    if isinstance(value, AsyncArray):
        return value._array
    if isinstance(value, AsyncGroup):
        return value._group
    return value


def as_async(value: Any) -> Any:
    """An Array / Group wrapped as an AsyncArray / AsyncGroup; anything else as it is."""
    if isinstance(value, Array):
        return AsyncArray(value)
    if isinstance(value, Group):
        return AsyncGroup(value)
    return value



class AsyncGroup(AsyncNode):
    """A Zarr group with coroutine methods, as zarr-python's AsyncGroup:
    ``await g.getitem("x")``, ``await g.create_array(...)``, ``async for name, node
    in g.members()``; members come as AsyncArray / AsyncGroup.  ``AsyncGroup(grp)``
    wraps a zarrc Group (ArgumentTypeError for anything else)."""

    def __init__(self, group: Group) -> None:
        if not isinstance(group, Group):
            raise ArgumentTypeError(f"AsyncGroup wraps a zarrc Group, got {type(group).__name__} {group!r}")
        self._group = group
        self._node = group

    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = 3,
                   use_consolidated: bool | str | None = None) -> AsyncGroup:
        """The existing group at the root of ``store``, in ``zarr_format`` (None:
        either), as zarr-python's ``AsyncGroup.open`` (``use_consolidated`` as for
        ``open_group``).  NodeNotFoundError if there is none."""
        return cls(await run_sync(open_existing_group, store, zarr_format, use_consolidated))

    @classmethod
    async def from_store(cls, store: Any, *, attributes: dict[str, Any] | None = None,
                         overwrite: bool = False, zarr_format: int = 3) -> AsyncGroup:
        """A new group at the root of ``store`` (ContainsNodeError if a node is there,
        unless ``overwrite``)."""
        def create() -> Group:
            return new_group(as_store(store, "a"), "/", overwrite=overwrite, attributes=attributes,
                             zarr_format=zarr_format)
        return cls(await run_sync(create))

    synchronizer = None     # (zarr-python's, always None)

    # -------------------------------------------------------------- members

    async def getitem(self, key: str) -> AsyncArray | AsyncGroup:
        """The member at ``key`` ("a/b" works); NodeNotFoundError (a KeyError) if none."""
        return as_async(await run_sync(self._group.__getitem__, key))

    async def get(self, key: str, default: Any = None) -> Any:
        """The member at ``key``, or ``default`` if there is none."""
        return as_async(await run_sync(self._group.get, key, default))

    async def contains(self, member: str) -> bool:
        """True if a member ``member`` exists."""
        return await run_sync(self._group.__contains__, member)

    async def delitem(self, key: str) -> None:
        """Delete the member ``key`` and everything below it."""
        await run_sync(self._group.__delitem__, key)

    async def setitem(self, key: str, value: Any) -> None:
        """A new array ``key`` holding ``value`` (replacing any node there)."""
        await run_sync(self._group.__setitem__, key, as_sync(value))

    async def members(self, max_depth: int | None = 0, *,
                      use_consolidated_for_children: bool = True,
                      ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        """(name, node) of each member, down to ``max_depth`` levels (see
        ``Group.members``); an async generator."""
        found = await run_sync(self._group.members, max_depth,
                               use_consolidated_for_children=use_consolidated_for_children)
        for name, node in found:
            yield name, as_async(node)

    async def nmembers(self, max_depth: int | None = 0) -> int:
        """How many members ``members(max_depth)`` gives."""
        return await run_sync(self._group.nmembers, max_depth)

    async def _listed(self, method: Callable[[], Any]) -> list:
        return await run_sync(lambda: list(method()))

    async def keys(self) -> AsyncIterator[str]:
        """The names of the direct members, sorted; an async generator."""
        for name in await self._listed(self._group.keys):
            yield name

    async def arrays(self) -> AsyncIterator[tuple[str, AsyncArray]]:
        """(name, array) of each member array; an async generator."""
        for name, node in await self._listed(self._group.arrays):
            yield name, AsyncArray(node)

    async def groups(self) -> AsyncIterator[tuple[str, AsyncGroup]]:
        """(name, group) of each member group; an async generator."""
        for name, node in await self._listed(self._group.groups):
            yield name, AsyncGroup(node)

    async def array_keys(self) -> AsyncIterator[str]:
        """The names of the member arrays; an async generator."""
        for name in await self._listed(self._group.array_keys):
            yield name

    async def group_keys(self) -> AsyncIterator[str]:
        """The names of the member groups; an async generator."""
        for name in await self._listed(self._group.group_keys):
            yield name

    async def array_values(self) -> AsyncIterator[AsyncArray]:
        """The member arrays; an async generator."""
        for node in await self._listed(self._group.array_values):
            yield AsyncArray(node)

    async def group_values(self) -> AsyncIterator[AsyncGroup]:
        """The member groups; an async generator."""
        for node in await self._listed(self._group.group_values):
            yield AsyncGroup(node)

    async def tree(self, expand: bool | None = None, level: int | None = None, **kwargs: Any) -> Any:
        """The hierarchy below this group (``print(await g.tree())``); ``expand`` and
        zarr-python's other display keywords are taken and ignored."""
        return await run_sync(self._group.tree, level)

    async def create_hierarchy(self, nodes: Any, *, overwrite: bool = False,
                               ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        """Create the nodes of ``nodes`` ({path below this group: metadata}, as
        ``zarrc.create_hierarchy`` takes them) and the groups missing between; an
        async generator of (path below this group, node), all written before the
        first comes."""
        def create() -> list:
            self._group._check_writable()
            below = self.path
            where = {f"{below}/{str(k).strip('/')}" if below else str(k): v for k, v in nodes.items()}
            self._group._consolidated = None          # (no longer the whole picture)
            return make_hierarchy(self.store, where, overwrite)
        skip = len(self.path) + 1 if self.path else 0
        for path, node in await run_sync(create):
            if len(path) >= skip and path != self.path:
                yield path[skip:], as_async(node)

    # -------------------------------------------------------------- new members

    async def create_group(self, name: str, *, overwrite: bool = False,
                           attributes: dict[str, Any] | None = None) -> AsyncGroup:
        """A new group ``name`` (see ``Group.create_group``)."""
        return AsyncGroup(await run_sync(self._group.create_group, name, overwrite=overwrite,
                                         attributes=attributes))

    async def require_group(self, name: str, overwrite: bool = False) -> AsyncGroup:
        """The group ``name``, created if missing (see ``Group.require_group``)."""
        return AsyncGroup(await run_sync(self._group.require_group, name, overwrite=overwrite))

    async def require_groups(self, *names: str) -> tuple[AsyncGroup, ...]:
        """``require_group`` of each name, in order."""
        found = await run_sync(self._group.require_groups, *names)
        return tuple(AsyncGroup(g) for g in found)

    async def create_array(self, name: str, **kwargs: Any) -> AsyncArray:
        """A new array ``name``; keywords as ``Group.create_array`` (``shape``,
        ``dtype``, ``data``, ``chunks``, ``shards``, ``compressors``, ...)."""
        return AsyncArray(await run_sync(self._group.create_array, name, **sync_kwargs(kwargs)))

    async def require_array(self, name: str, *, shape: Any, **kwargs: Any) -> AsyncArray:
        """The array ``name``, created if missing (see ``Group.require_array``)."""
        return AsyncArray(await run_sync(self._group.require_array, name, shape=shape, **kwargs))

    async def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        """A new array of zeros (see ``Group.zeros``)."""
        return AsyncArray(await run_sync(self._group.zeros, name=name, shape=shape, **kwargs))

    async def ones(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        """A new array of ones (see ``Group.ones``)."""
        return AsyncArray(await run_sync(self._group.ones, name=name, shape=shape, **kwargs))

    async def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> AsyncArray:
        """A new array of ``fill_value`` (see ``Group.full``)."""
        return AsyncArray(await run_sync(self._group.full, name=name, shape=shape, fill_value=fill_value,
                                         **kwargs))

    async def empty(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        """A new array with nothing written (see ``Group.empty``)."""
        return AsyncArray(await run_sync(self._group.empty, name=name, shape=shape, **kwargs))

    async def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        """``zeros`` like ``data`` (see ``Group.zeros_like``)."""
        return AsyncArray(await run_sync(self._group.zeros_like, name=name, data=as_sync(data), **kwargs))

    async def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        """``ones`` like ``data`` (see ``Group.ones_like``)."""
        return AsyncArray(await run_sync(self._group.ones_like, name=name, data=as_sync(data), **kwargs))

    async def full_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        """``full`` like ``data`` (see ``Group.full_like``)."""
        return AsyncArray(await run_sync(self._group.full_like, name=name, data=as_sync(data), **kwargs))

    async def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        """``empty`` like ``data`` (see ``Group.empty_like``)."""
        return AsyncArray(await run_sync(self._group.empty_like, name=name, data=as_sync(data), **kwargs))

    def __reduce__(self) -> tuple:
        return AsyncGroup, (self._group,)



def sync_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with each AsyncArray / AsyncGroup value replaced by the node it wraps."""
    return {key: as_sync(value) for key, value in kwargs.items()}
