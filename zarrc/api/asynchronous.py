"""The asyncio API, as zarr-python's ``zarr.api.asynchronous``: ``AsyncArray``,
``AsyncGroup`` and the async forms of the API functions (``open``,
``open_array``, ``open_group``, ``create_array``, ``group``, ``consolidate_metadata``,
``zeros``, ``load``, ...).  ``AsyncArray`` and ``AsyncGroup`` live beside their
synchronous classes (``zarrc.core.array``, ``zarrc.core.group``), as in zarr-python.

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

import inspect
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from zarrc.api import data as api_data
from zarrc.api import synchronous as api
from zarrc.core.array import AsyncArray
from zarrc.core.group import AsyncGroup, as_async, as_sync, sync_kwargs
from zarrc.runtime.async_calls import run_sync

__all__ = ["AsyncArray", "AsyncGroup", "array", "consolidate_metadata", "create", "create_array",
           "create_group", "create_hierarchy", "empty", "empty_like", "from_array", "full", "full_like",
           "group", "load", "ones", "ones_like", "open", "open_array", "open_consolidated", "open_group",
           "open_like", "save", "save_array", "save_group", "tree", "zeros", "zeros_like"]


def _coroutine_of(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The async form of the API function ``fn``: AsyncArray / AsyncGroup arguments
    passed as the nodes they wrap, the call run by ``run_sync``, an Array / Group
    result wrapped."""
    async def call(*args: Any, **kwargs: Any) -> Any:
        result = await run_sync(fn, *(as_sync(a) for a in args), **sync_kwargs(kwargs))
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

