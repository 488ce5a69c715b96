"""Metadata documents (zarr.json, .zarray, ...) <-> frozen dataclasses.  No I/O."""
