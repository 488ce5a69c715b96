"""``zarrc.mpi``: the documented name of :mod:`zarrc.integrations.mpi` (collective
MPI writes over mpi4py; ``docs/parallel-writing.md``), the same functions.  Like that
module, not imported by ``import zarrc``."""

from zarrc.integrations.mpi import *
from zarrc.integrations.mpi import __all__  # noqa: F401
