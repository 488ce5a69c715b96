"""The asyncio API, as zarr-python's ``zarr.api.asynchronous``: ``AsyncArray``,
``AsyncGroup`` and the async forms of the API functions (``open``,
``open_array``, ``open_group``, ``create_array``, ``group``, ``consolidate_metadata``,
``zeros``, ``load``, ...).  Also importable as ``zarrc.api.asynchronous``.

Each coroutine runs the synchronous zarrc call (the same engine, the same native
kernels) on a worker thread of a small executor of its own (``config.threads``
threads) and awaits it: the kernels run without the GIL, so the event loop goes on
running other tasks while a read or write is in progress, and calls gathered with
``asyncio.gather`` run at once.  The wrappers add nothing per chunk: one thread
hand-off per call.  A cancelled call stops being awaited; the thread finishes the
read or write it started.

``AsyncArray`` and ``AsyncGroup`` wrap an ``Array`` / a ``Group`` (``AsyncArray(arr)``,
``arr.async_array``; the wrapped node is shared, so a resize through one is seen by
the other).  Listings (``members``, ``keys``, ``arrays``, ...) are async generators,
as in zarr-python; ``prototype=`` arguments (zarr-python's buffer classes) are taken
and ignored: results are numpy arrays.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from zarrc import api, api_data
from zarrc.array import Array
from zarrc.config import config
from zarrc.errors import ArgumentError, ArgumentTypeError
from zarrc.group import Group

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["AsyncArray", "AsyncGroup", "array", "consolidate_metadata", "create", "create_array",
           "create_group", "create_hierarchy", "empty", "empty_like", "from_array", "full", "full_like",
           "group", "load", "ones", "ones_like", "open", "open_array", "open_consolidated", "open_group",
           "open_like", "save", "save_array", "save_group", "tree", "zeros", "zeros_like"]

_executor: ThreadPoolExecutor | None = None
_executor_size = 0
_executor_lock = threading.Lock()


def call_executor() -> ThreadPoolExecutor:
    """The executor the coroutines run their synchronous calls on: ``config.threads``
    threads (made on first use, made again when the setting grows).  Its own, not
    zarrc's worker pool (a call waiting there for pool threads could hold them all)
    nor the event loop's default executor (left to the application)."""
    global _executor, _executor_size
    workers = max(1, config.threads)
    with _executor_lock:
        if _executor is None or _executor_size < workers:
            # (concurrent.futures is imported here, not by `import zarrc`; a replaced
            # executor is dropped, not shut down: a call may be about to submit to it)
            from concurrent.futures import ThreadPoolExecutor

            _executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zarrc-async")
            _executor_size = workers
        return _executor


async def run_sync(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` run on ``call_executor()`` (in a copy of the caller's
    context, as ``asyncio.to_thread``), awaited without blocking the event loop."""
    import asyncio  # (imported already wherever a coroutine runs; not by `import zarrc`)

    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(call_executor(), call)


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


def _forward(name: str, doc: str) -> property:
    """A read-only property giving the wrapped node's ``name``."""
    def get(self: Any) -> Any:
        return getattr(self._node, name)
    return property(get, doc=doc)


class _AsyncNode:
    """What AsyncArray and AsyncGroup share: the wrapped node's names, store,
    metadata and attributes."""

    _node: Array | Group

    metadata = _forward("metadata", "The node's metadata (zarrc's metadata classes).")
    store = _forward("store", "The store the node is in.")
    store_path = _forward("store_path", "The node's store and path (``store_path.store``, ``.path``).")
    path = _forward("path", "The node's path in its hierarchy, without the leading '/'.")
    name = _forward("name", "The node's path with the leading '/'.")
    basename = _forward("basename", "The last part of the node's path.")
    read_only = _forward("read_only", "True if the node cannot be written.")
    zarr_format = _forward("zarr_format", "2 or 3.")
    info = _forward("info", "A summary of the node (``print(node.info)``), from its metadata.")

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


class AsyncArray(_AsyncNode):
    """A Zarr array with coroutine methods, as zarr-python's AsyncArray:
    ``await a.getitem(sel)``, ``await a.setitem(sel, value)``,
    ``await a.get_orthogonal_selection(...)``, ``await a.oindex.getitem(...)``,
    ``await a.resize(...)``; properties as the sync Array's.  ``AsyncArray(arr)``
    wraps a zarrc Array (ArgumentTypeError for anything else); ``AsyncArray.open``
    opens one."""

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise ArgumentTypeError(f"AsyncArray wraps a zarrc Array, got {type(array).__name__} {array!r}")
        self._array = array
        self._node = array

    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = 3, *, config: Any = None) -> AsyncArray:
        """The existing array at the root of ``store`` (a path, a dict or a Store), in
        ``zarr_format`` (None: either), as zarr-python's ``AsyncArray.open``.
        NodeNotFoundError if there is none (or only one of the other format)."""
        return cls(await run_sync(api.open_array, store, mode="r+", zarr_format=zarr_format, config=config))

    # -------------------------------------------------------------- properties

    shape = _forward("shape", "The length of each dimension.")
    dtype = _forward("dtype", "The numpy data type of the elements.")
    chunks = _forward("chunks", "The chunk shape (inside shards, for a sharded array).")
    shards = _forward("shards", "The shard shape, or None if the array is not sharded.")
    ndim = _forward("ndim", "The number of dimensions.")
    size = _forward("size", "The number of elements.")
    nbytes = _forward("nbytes", "The bytes of the elements, uncompressed.")
    order = _forward("order", "The memory order of the chunks ('C' or 'F').")
    fill_value = _forward("fill_value", "The value of elements never written.")
    dimension_names = _forward("dimension_names", "The names of the dimensions (v3), or None.")
    cdata_shape = _forward("cdata_shape", "The number of chunks along each dimension.")
    nchunks = _forward("nchunks", "The number of chunks.")
    compressors = _forward("compressors", "The bytes-to-bytes codecs (v2: the compressor).")
    compressor = _forward("compressor", "A v2 array's compressor.")
    filters = _forward("filters", "The array-to-array codecs (v2: the filters).")
    serializer = _forward("serializer", "The array-to-bytes codec (v3).")
    write_empty_chunks = _forward("write_empty_chunks", "True if all-fill chunks are stored.")

    def with_config(self, config: Any) -> AsyncArray:
        """This array with other run-time settings (see ``Array.with_config``)."""
        return AsyncArray(self._array.with_config(config))

    async def nchunks_initialized(self) -> int:
        """How many chunks are in the store (see ``Array.nchunks_initialized``)."""
        return await run_sync(lambda: self._array.nchunks_initialized)

    async def nbytes_stored(self) -> int:
        """The bytes the store holds for this array (chunks and metadata)."""
        return await run_sync(self._array.nbytes_stored)

    # -------------------------------------------------------------- data

    async def getitem(self, selection: Any, *, prototype: Any = None) -> Any:
        """The values at ``selection`` (a basic selection: integers, slices,
        ``...``), a numpy array (or scalar), as ``arr[selection]``."""
        return await run_sync(self._array.__getitem__, selection)

    async def setitem(self, selection: Any, value: Any, prototype: Any = None) -> None:
        """Write ``value`` (broadcast) at ``selection``, as ``arr[selection] = value``."""
        await run_sync(self._array.__setitem__, selection, value)

    async def get_orthogonal_selection(self, selection: Any, *, out: Any = None, fields: Any = None,
                                       prototype: Any = None) -> Any:
        """As ``Array.get_orthogonal_selection``."""
        return await run_sync(self._array.get_orthogonal_selection, selection, out=out, fields=fields)

    async def get_mask_selection(self, mask: Any, *, out: Any = None, fields: Any = None,
                                 prototype: Any = None) -> Any:
        """As ``Array.get_mask_selection``."""
        return await run_sync(self._array.get_mask_selection, mask, out=out, fields=fields)

    async def get_coordinate_selection(self, selection: Any, *, out: Any = None, fields: Any = None,
                                       prototype: Any = None) -> Any:
        """As ``Array.get_coordinate_selection``."""
        return await run_sync(self._array.get_coordinate_selection, selection, out=out, fields=fields)

    @property
    def oindex(self) -> AsyncOIndex:
        """Orthogonal selection: ``await a.oindex.getitem((rows, cols))``."""
        return AsyncOIndex(self)

    @property
    def vindex(self) -> AsyncVIndex:
        """Coordinate or mask selection: ``await a.vindex.getitem((xs, ys))``."""
        return AsyncVIndex(self)

    # -------------------------------------------------------------- shape

    async def resize(self, new_shape: Any, delete_outside_chunks: bool = True) -> None:
        """As ``Array.resize`` (chunks outside the new shape are deleted:
        ``delete_outside_chunks=False`` is refused with ArgumentError, zarrc has
        no resize that keeps them)."""
        if delete_outside_chunks is not True:
            raise ArgumentError(f"resize: delete_outside_chunks={delete_outside_chunks!r} is not supported "
                                "(zarrc always deletes the chunks outside the new shape)")
        await run_sync(self._array.resize, new_shape)

    async def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """As ``Array.append``: grow along ``axis`` and write ``data``; the new shape."""
        return await run_sync(self._array.append, as_sync(data), axis)

    def __reduce__(self) -> tuple:
        return AsyncArray, (self._array,)


class AsyncOIndex:
    """``a.oindex`` of an AsyncArray: ``await a.oindex.getitem(selection)``."""

    def __init__(self, array: AsyncArray) -> None:
        self.array = array

    async def getitem(self, selection: Any) -> Any:
        """The orthogonal selection ``selection`` (as ``arr.oindex[selection]``)."""
        return await run_sync(self.array._array.oindex.__getitem__, selection)


class AsyncVIndex:
    """``a.vindex`` of an AsyncArray: ``await a.vindex.getitem(selection)``."""

    def __init__(self, array: AsyncArray) -> None:
        self.array = array

    async def getitem(self, selection: Any) -> Any:
        """The coordinate or mask selection ``selection`` (as ``arr.vindex[selection]``)."""
        return await run_sync(self.array._array.vindex.__getitem__, selection)


class AsyncGroup(_AsyncNode):
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
        return cls(await run_sync(api.open_group, store, mode="r+", zarr_format=zarr_format,
                                  use_consolidated=use_consolidated))

    @classmethod
    async def from_store(cls, store: Any, *, attributes: dict[str, Any] | None = None,
                         overwrite: bool = False, zarr_format: int = 3) -> AsyncGroup:
        """A new group at the root of ``store`` (ContainsNodeError if a node is there,
        unless ``overwrite``)."""
        return cls(await run_sync(api.create_group, store, attributes=attributes, overwrite=overwrite,
                                  zarr_format=zarr_format))

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
            return list(api.create_hierarchy(store=self.store, nodes=where, overwrite=overwrite))
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
        return AsyncArray(await run_sync(self._group.create_array, name, **_sync_kwargs(kwargs)))

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


def _sync_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {key: as_sync(value) for key, value in kwargs.items()}


def _coroutine_of(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The async form of the API function ``fn``: AsyncArray / AsyncGroup arguments
    passed as the nodes they wrap, the call run by ``run_sync``, an Array / Group
    result wrapped."""
    async def call(*args: Any, **kwargs: Any) -> Any:
        result = await run_sync(fn, *(as_sync(a) for a in args), **_sync_kwargs(kwargs))
        return as_async(result)
    call.__name__ = call.__qualname__ = fn.__name__
    call.__module__ = __name__
    call.__doc__ = (f"The async form of ``zarrc.{fn.__name__}``: awaited, it returns AsyncArray / "
                    f"AsyncGroup where that returns Array / Group (and takes them where it takes those)."
                    f"\n\n{fn.__doc__ or ''}")
    # (inspect.signature shows fn's parameters, and its result's type made async)
    sig = inspect.signature(fn)
    result = sig.return_annotation
    if isinstance(result, str):
        result = re.sub(r"\b(Array|Group)\b", r"Async\1", result)
    call.__signature__ = sig.replace(return_annotation=result)      # type: ignore[attr-defined]
    return call


open = _coroutine_of(api.open)
open_array = _coroutine_of(api.open_array)
open_group = _coroutine_of(api.open_group)
open_consolidated = _coroutine_of(api.open_consolidated)
group = _coroutine_of(api.group)
create_array = _coroutine_of(api.create_array)
create_group = _coroutine_of(api.create_group)
from_array = _coroutine_of(api.from_array)
consolidate_metadata = _coroutine_of(api.consolidate_metadata)
create = _coroutine_of(api_data.create)
array = _coroutine_of(api_data.array)
empty = _coroutine_of(api_data.empty)
zeros = _coroutine_of(api_data.zeros)
ones = _coroutine_of(api_data.ones)
full = _coroutine_of(api_data.full)
empty_like = _coroutine_of(api_data.empty_like)
zeros_like = _coroutine_of(api_data.zeros_like)
ones_like = _coroutine_of(api_data.ones_like)
full_like = _coroutine_of(api_data.full_like)
open_like = _coroutine_of(api_data.open_like)
save = _coroutine_of(api_data.save)
save_array = _coroutine_of(api_data.save_array)
save_group = _coroutine_of(api_data.save_group)
load = _coroutine_of(api_data.load)
tree = _coroutine_of(api.tree)


async def create_hierarchy(*, store: Any, nodes: Any,
                           overwrite: bool = False) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
    """The async form of ``zarrc.create_hierarchy``: an async generator of
    (path, AsyncArray / AsyncGroup), the nodes all written before the first."""
    created = await run_sync(lambda: list(api.create_hierarchy(store=store, nodes=nodes, overwrite=overwrite)))
    for path, node in created:
        yield path, as_async(node)


# The sync nodes' ways to their async forms, as zarr-python's (set here: array.py and
# group.py sit below this module and do not import it).
Array.async_array = property(AsyncArray, doc="This array as an AsyncArray (sharing it).")  # type: ignore[attr-defined]
Array._async_array = Array.async_array                                                   # type: ignore[attr-defined]
Group._async_group = property(AsyncGroup, doc="This group as an AsyncGroup (sharing it).")  # type: ignore[attr-defined]

# zarr-python's module path: `import zarrc.api.asynchronous` (zarrc.api is a module,
# not a package: this module is registered under that name too)
api.asynchronous = sys.modules[__name__]              # type: ignore[attr-defined]
sys.modules.setdefault("zarrc.api.asynchronous", sys.modules[__name__])
