"""Every rank of an MPI job writes its rows of one sharded array, with zarrc's
collective writer (docs/parallel-writing.md).  Run it with, for example:

    mpiexec -n 4 python docs/examples/mpi_write.py /scratch/run1.zarr

(as root, Open MPI also wants --allow-run-as-root; more ranks than cores, --oversubscribe)
"""

import sys

import numpy as np
from mpi4py import MPI

import zarrc
import zarrc.mpi

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
path = sys.argv[1] if len(sys.argv) > 1 else "run1.zarr"
shape = (1000, 720)


def field(rows: slice) -> np.ndarray:
    """This rank's part of the result (a stand-in for a simulation's output)."""
    y = np.arange(rows.start, rows.stop)[:, None]
    x = np.arange(shape[1])[None, :]
    return (280 + 10 * np.sin(y / 50) * np.cos(x / 40)).astype("float32")


# Rank 0 writes the metadata (and consolidates the group's); the others receive it
# by broadcast and open the same array, with no file-system polling.
temperature = zarrc.mpi.create_array(
    comm, path, name="temperature", shape=shape, dtype="float32",
    chunks=(50, 60), shards=(200, 240), fill_value=0, overwrite=True, consolidate=True)

# Each rank's rows: 1000 / size rows, not aligned to the shards (200 rows), so
# neighbouring ranks share shards.  zarrc.mpi.write sends each part to the rank that
# owns its shard; every shard is then written once, whole, by one rank.
cuts = np.linspace(0, shape[0], size + 1).astype(int)
mine = slice(int(cuts[rank]), int(cuts[rank + 1]))
zarrc.mpi.write(comm, temperature, (mine, slice(None)), field(mine))

if rank == 0:                       # write() returns once every rank's rows are stored
    stored = zarrc.open_consolidated(path)["temperature"][...]
    lost = int((stored != field(slice(0, shape[0]))).sum())
    print(f"{size} ranks wrote {stored.shape} in shards of {temperature.shards}: lost {lost} values")
