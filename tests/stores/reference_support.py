"""Helpers of the reference tests: an HDF5 file (h5py) and a netCDF4 file (netCDF4)
with known contents, for kerchunk and VirtualiZarr to translate.  (The HTTP server
that serves them is servers.py's.)"""

from __future__ import annotations

import numpy as np


def write_hdf5(path: str) -> dict[str, np.ndarray]:
    """An HDF5 file (as netCDF4 writes them: chunked and gzip-compressed, contiguous,
    tiny, attributes) at ``path``; returns {dataset name: its data}."""
    import h5py

    rng = np.random.default_rng(42)
    data = {
        "temperature": (rng.standard_normal((120, 90)) * 10 + 280).astype("<f4"),
        "counts": np.arange(1000, dtype="<i8"),
        "flags": np.arange(6, dtype="<i2"),
        "grid/elevation": rng.integers(-500, 4000, (40, 30, 7)).astype("<i4"),
    }
    with h5py.File(path, "w") as f:
        f.attrs["title"] = "zarrc reference test"
        t = f.create_dataset("temperature", data=data["temperature"], chunks=(32, 40),
                             compression="gzip", compression_opts=4)
        t.attrs["units"] = "K"
        f.create_dataset("counts", data=data["counts"])  # contiguous
        f.create_dataset("flags", data=data["flags"])    # small: inlined by kerchunk
        g = f.create_group("grid")
        g.attrs["kind"] = "regular"
        g.create_dataset("elevation", data=data["grid/elevation"], chunks=(16, 16, 7),
                         compression="gzip", shuffle=True)
    return data


def write_netcdf4(path: str) -> None:
    """A netCDF4 file at ``path`` (written by the netCDF4 package, so netCDF-C's HDF5
    layout: dimension scales, _Netcdf4Dimid...): a chunked, zlib- and
    shuffle-compressed 3-d float variable with a fill value and attributes, a
    contiguous 2-d int variable, coordinate variables, a group with a variable."""
    import netCDF4

    rng = np.random.default_rng(3)
    with netCDF4.Dataset(path, "w") as ds:
        ds.title = "zarrc netCDF4 test"
        ds.createDimension("time", 12)
        ds.createDimension("y", 30)
        ds.createDimension("x", 25)
        t = ds.createVariable("time", "i8", ("time",))
        t[:] = np.arange(12) * 3600
        t.units = "seconds since 2000-01-01"
        ds.createVariable("y", "f8", ("y",))[:] = np.linspace(-10, 10, 30)
        ds.createVariable("x", "f8", ("x",))[:] = np.linspace(0, 50, 25)
        temp = ds.createVariable("temp", "f4", ("time", "y", "x"), zlib=True, shuffle=True, complevel=4,
                                 chunksizes=(4, 16, 10), fill_value=np.float32(-999.0))
        temp[:] = (rng.standard_normal((12, 30, 25)) * 10 + 280).astype("f4")
        temp.units = "K"
        temp.long_name = "air temperature"
        mask = ds.createVariable("mask", "i4", ("y", "x"), contiguous=True)
        mask[:] = rng.integers(0, 5, (30, 25)).astype("i4")
        g = ds.createGroup("extra")
        g.createDimension("n", 7)
        g.createVariable("v", "i2", ("n",))[:] = np.arange(7, dtype="i2") - 3


# the variables of write_netcdf4's file, as paths in the hierarchy
NETCDF_VARIABLES = ["time", "y", "x", "temp", "mask", "extra/v"]


def netcdf4_file(tmp_path_factory) -> tuple:
    """(path of a new write_netcdf4 file, {variable: its stored values as netCDF4
    reads them, no masking or scaling})."""
    import netCDF4

    path = tmp_path_factory.mktemp("nc") / "f.nc"
    write_netcdf4(str(path))
    with netCDF4.Dataset(str(path)) as ds:
        ds.set_auto_maskandscale(False)      # the stored values, as zarrc reads them
        expected = {name: np.asarray(ds[name][...]) for name in NETCDF_VARIABLES}
    return path, expected
