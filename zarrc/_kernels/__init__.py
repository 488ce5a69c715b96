"""Compiled kernels (Cython).  Nothing in here imports zarrc's Python modules."""
