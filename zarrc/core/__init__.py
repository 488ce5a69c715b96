"""The Zarr model over stores, above the metadata documents and beside the engine.

Below the engine: ``chunk_grid`` (the regular and rectilinear grids), ``chunk_key`` (chunk
coordinates <-> store keys), ``indexing`` (selections -> per-dimension chunk
projections).  Above it: ``node_metadata`` (node documents read and written),
``create`` / ``create_v2`` (arguments -> metadata, room made at a path),
``conventions`` (other writers' attribute conventions: dimension names, georeferencing),
``consolidate`` (consolidated metadata read, written, kept in step), ``hierarchy``
(``create_hierarchy``'s documents), ``resize``,
``node`` (the base of the nodes), ``array`` (``Array``, ``AsyncArray``), ``group``
(``Group``, ``AsyncGroup``, and the building of nodes from metadata); above the nodes:
``multiscales`` (the multiscales convention read, a layout written) and ``overviews``
(a pyramid built).
"""
