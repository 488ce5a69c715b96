"""GDAL as a peer of the interop tests: its Zarr driver, run through its Python bindings
in another interpreter.

The bindings are those of the Python that has them: ``ZARRC_GDAL_PYTHON`` if set, else
this interpreter if it imports ``osgeo``, else the system's ``/usr/bin/python3`` (Debian's
python3-gdal, which ``scripts/test`` installs: ``ensure_gdal`` in scripts/_common.sh).
A test hands ``run`` a piece of code to run there with ``gdal`` (exceptions on), ``np``
and ``args`` (the keyword arguments, through JSON) bound; the code fills the dict ``out``,
which comes back through JSON.  Arrays cross as ``.npy`` files the code saves or loads.
``available()`` is None or the reason GDAL cannot be had, for a skip."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from typing import Any

import pytest

PRELUDE = """
import json, sys
import numpy as np
from osgeo import gdal
gdal.UseExceptions()
args = json.loads(sys.argv[1])
out = {}
"""
EPILOGUE = """
sys.stdout.write("\\n@@GDAL@@" + json.dumps(out, default=repr))
"""


@functools.cache
def interpreter() -> tuple[str | None, str]:
    """(a Python that imports ``osgeo.gdal``, GDAL's version) or (None, why not)."""
    given = os.environ.get("ZARRC_GDAL_PYTHON")
    candidates = [given] if given else [sys.executable, "/usr/bin/python3"]
    tried = []
    for python in candidates:
        if not python or not os.path.exists(python):
            tried.append(f"{python}: absent")
            continue
        try:
            done = subprocess.run([python, "-c", "from osgeo import gdal; print(gdal.__version__)"],
                                  capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            tried.append(f"{python}: {exc}")
            continue
        if done.returncode == 0:
            return python, done.stdout.strip()
        tried.append(f"{python}: no osgeo.gdal")
    return None, ("GDAL's Python bindings are not installed (" + "; ".join(tried)
                  + "; scripts/test installs Debian's python3-gdal where it may)")


def available() -> str | None:
    """None if GDAL can be run, else the reason it cannot."""
    python, why = interpreter()
    return None if python else why


def require() -> str:
    """GDAL's version; skips the test where GDAL cannot be had."""
    python, version = interpreter()
    if python is None:
        pytest.skip(version)
    return version


def version_tuple() -> tuple[int, int]:
    major, minor = require().split(".")[:2]
    return int(major), int(minor)


def run(code: str, **args: Any) -> dict[str, Any]:
    """Run ``code`` in GDAL's Python (see the module docstring); its ``out`` dict.  A
    failure of the code fails the test with GDAL's Python's stderr."""
    require()
    python, _ = interpreter()
    assert python is not None
    done = subprocess.run([python, "-c", PRELUDE + code + EPILOGUE, json.dumps(args)],
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or "@@GDAL@@" not in done.stdout:
        pytest.fail(f"GDAL's side failed ({python}, exit {done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.rsplit("@@GDAL@@", 1)[1])


# Code for ``run``: describe every array of a multidimensional dataset ``args["path"]``
# (recursively), saving each one's values as ``args["npy"]/<n>.npy``; out["arrays"] maps
# its full name to {dims, type, nodata, epsg, unit, attrs, npy}, or {open_error} / a
# read_error where GDAL refuses the array; out["refused"]: why GDAL does not open the
# dataset, or None.
DESCRIBE = """
import os

def attr_value(a):
    try:
        return a.Read()
    except Exception as exc:
        return "<unreadable: %s>" % exc

def describe_one(path, npy_dir):
    found = {"arrays": {}, "refused": None}
    try:
        ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER)
    except Exception as exc:
        ds, found["refused"] = None, str(exc)
    if ds is None:
        found["refused"] = found["refused"] or "not opened"
        return found

    def walk(group):
        for name in group.GetMDArrayNames() or []:
            try:
                arr = group.OpenMDArray(name)
            except Exception as exc:
                found["arrays"][group.GetFullName().rstrip("/") + "/" + name] = {"open_error": str(exc)}
                continue
            full = arr.GetFullName()
            info = {"dims": [d.GetName() for d in arr.GetDimensions()],
                    "shape": [d.GetSize() for d in arr.GetDimensions()],
                    "attrs": {a.GetName(): attr_value(a) for a in arr.GetAttributes()}}
            dt = arr.GetDataType()
            info["class"] = dt.GetClass()
            info["type"] = gdal.GetDataTypeName(dt.GetNumericDataType())
            try:
                nodata = arr.GetNoDataValueAsDouble()
                info["nodata"] = None if nodata is None else ("nan" if nodata != nodata else nodata)
            except Exception:
                info["nodata"] = "<unreadable>"
            info["unit"] = arr.GetUnit()
            srs = arr.GetSpatialRef()
            info["epsg"] = srs.GetAuthorityCode(None) if srs is not None else None
            if dt.GetClass() == gdal.GEDTC_NUMERIC:
                try:
                    npy = os.path.join(npy_dir, "%d.npy" % describe_one.count)
                    describe_one.count += 1
                    np.save(npy, arr.ReadAsArray())
                    info["npy"] = npy
                except Exception as exc:
                    info["read_error"] = str(exc)
            found["arrays"][full] = info
        for name in group.GetGroupNames() or []:
            try:
                sub = group.OpenGroup(name)
            except Exception as exc:
                found["arrays"][group.GetFullName().rstrip("/") + "/" + name + "/"] = {"open_error": str(exc)}
                continue
            walk(sub)

    try:
        walk(ds.GetRootGroup())
    except Exception as exc:
        found["refused"] = "while listing: %s" % exc
    return found

describe_one.count = 0
if "paths" in args:
    out["stores"] = {p: describe_one(p, args["npy"]) for p in args["paths"]}
else:
    out.update(describe_one(args["path"], args["npy"]))
"""


def describe(path: str, npy_dir: str) -> dict[str, Any]:
    """What GDAL's multidimensional API reports of the dataset at ``path`` (``DESCRIBE``)."""
    os.makedirs(npy_dir, exist_ok=True)
    return run(DESCRIBE, path=str(path), npy=str(npy_dir))


def describe_many(paths: list[str], npy_dir: str) -> dict[str, dict[str, Any]]:
    """``describe`` of each of ``paths``, in one run of GDAL: path -> its description."""
    os.makedirs(npy_dir, exist_ok=True)
    return run(DESCRIBE, paths=[str(p) for p in paths], npy=str(npy_dir))["stores"]


def sample(dtype: str, shape: tuple[int, ...], seed: int, scale: float, specials: list[float]) -> Any:
    """Seeded values of ``dtype`` over its whole range (ints), normal around 0 with
    ``scale`` (floats, the first row starting with ``specials``), or complex."""
    import numpy as np

    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        out = rng.normal(0, scale, shape).astype(dt)
        out[(0,) * (len(shape) - 1) + (slice(0, len(specials)),)] = specials
        return out
    if dt.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt.newbyteorder("="), endpoint=True).astype(dt)
