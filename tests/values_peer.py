"""zarr-python 3.4's scale_offset and cast_value (the peer of test_cast_value.py and
test_scale_offset.py): imported when it is installed with its cast_value backend
(cast-value-rs), else a reason to skip.  zarr-python 3.1 (the 3.11 test venv) has
neither codec."""

from __future__ import annotations

from typing import Any

import numpy as np

REASON: str | None = None
zarr: Any = None
try:
    import zarr
    from zarr.codecs import cast_value as zcast
    from zarr.codecs import scale_offset as zscale
except ImportError as exc:       # zarr-python < 3.4, or none (Python 3.10)
    REASON = f"zarr-python 3.4+ (scale_offset, cast_value) is not installed: {exc}"
else:
    if zcast._BACKEND_ERROR is not None:
        REASON = f"zarr-python's cast_value has no backend: {zcast._BACKEND_ERROR}"


def peer_cast(arr: np.ndarray, target: str, rounding: str, out_of_range: str | None,
              scalar_map: dict | None = None, decode: bool = False) -> np.ndarray | None:
    """zarr-python's cast of ``arr`` to ``target`` (None: it raised)."""
    codec = zcast.CastValue(data_type=target if not decode else str(arr.dtype), rounding=rounding,
                            out_of_range=out_of_range, scalar_map=scalar_map)
    try:
        return codec._do_cast(arr, target_dtype=np.dtype(target),
                              scalar_map=codec._get_scalar_map("decode" if decode else "encode"))
    except (ValueError, OverflowError):
        return None


def peer_scale_offset(arr: np.ndarray, offset: Any, scale: Any, decode: bool) -> np.ndarray | None:
    """zarr-python's scale_offset of ``arr`` (None: it raised)."""
    from zarr.core.dtype import get_data_type_from_native_dtype
    zdtype = get_data_type_from_native_dtype(arr.dtype)
    o = zdtype.from_json_scalar(offset, zarr_format=3)
    s = zdtype.from_json_scalar(scale, zarr_format=3)
    try:
        with np.errstate(all="ignore"):
            if decode:
                return zscale._decode(arr, o, s, scale_repr=scale)
            return zscale._encode(arr, o, s)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
