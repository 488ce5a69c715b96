"""zarrc inside other tools, each a thin adapter over the API and the engine and
each imported only when used (``import zarrc`` imports none of them):
``xarray_backend`` (xarray's ``engine="zarrc"``), ``zarr_pipeline`` (zarr-python's
codec pipeline ``zarrc.ZarrcCodecPipeline``) and ``mpi`` (collective writes over
mpi4py; also ``zarrc.mpi``)."""
