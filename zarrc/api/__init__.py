"""The public API, as zarr-python's ``zarr.api``: ``synchronous`` (``open``,
``open_array``, ``open_group``, ``group``, ``create_array``, ``create_group``,
``create_hierarchy``, ``from_array``, ``consolidate_metadata``, ...), ``data`` (the
data functions: legacy ``create``, ``zeros`` / ``ones`` / ``full`` / ``empty`` and
their ``*_like``, ``array``, ``save``, ``load``, ...), ``copy`` (zarr-python 2's
``copy``, ``copy_all``, ``copy_store``) and ``asynchronous`` (the same as
coroutines, with ``AsyncArray`` and ``AsyncGroup``).  ``zarrc`` re-exports the
public names; nothing here is imported by the layers below.
"""
