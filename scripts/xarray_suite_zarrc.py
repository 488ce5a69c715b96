"""pytest plugin of scripts/xarray-suite: xarray's zarr backend tests read through zarrc.

xarray's built-in engine "zarr" (``xr.open_dataset(..., engine="zarr")``,
``xr.open_zarr``, ``xr.open_datatree`` / ``open_groups``, and so every
``ZarrBase.roundtrip`` of ``xarray/tests/test_backends.py``) is replaced by
:class:`ReadThroughZarrc`, which opens with zarrc's ``engine="zarrc"``
(``ZarrcBackendEntrypoint``) whenever the call is a read zarrc's engine takes:
mode "r", no ``store=`` of xarray's own, none of the options zarrc's engine does
not have (``chunk_store``, ``synchronizer``, ``zarr_version``, ...), and a target
zarrc opens (a path, a zarr-python store or a zarrc Group; not xarray's
``ZarrStore``).  The rest (writes, appends, region writes, which go through
zarr-python) keep xarray's own engine.  How many reads each engine served is
printed at the end, and the run fails if zarrc served none (a plugin that did not
take effect would otherwise pass).
"""

from __future__ import annotations

from typing import Any

import pytest

READS = {"zarrc": 0, "zarr": 0}

# the options of xarray's zarr engine that zarrc's engine also has (the CF decoders
# are the same in both)
SHARED = {"mask_and_scale", "decode_times", "concat_characters", "decode_coords", "drop_variables",
          "use_cftime", "decode_timedelta", "group", "consolidated", "zarr_format", "storage_options"}
# options that zarrc's engine does without when they have these values
NEUTRAL = {"mode": "r", "store": None, "engine": None, "cache_members": True, "chunk_store": None,
           "synchronizer": None, "zarr_version": None}


def _zarrc_takes(target: Any, options: dict[str, Any]) -> bool:
    """True when zarrc's engine can serve this read."""
    from xarray.backends.zarr import ZarrStore

    if isinstance(target, ZarrStore):
        return False
    for name, value in options.items():
        if name in SHARED or name == "use_zarr_fill_value_as_mask":
            continue
        if name not in NEUTRAL or not (value is NEUTRAL[name] or value == NEUTRAL[name]):
            return False
    return True


def _make_entrypoint() -> type:
    from xarray.backends.zarr import ZarrBackendEntrypoint

    from zarrc.integrations.xarray_backend import ZarrcBackendEntrypoint

    class ReadThroughZarrc(ZarrBackendEntrypoint):
        """xarray's zarr engine, its reads served by zarrc's engine (see the module)."""

        def open_dataset(  # type: ignore[override]  # (xarray's signature, spelled out)
            self, filename_or_obj, *, mask_and_scale=True, decode_times=True, concat_characters=True,
            decode_coords=True, drop_variables=None, use_cftime=None, decode_timedelta=None,
            group=None, mode="r", consolidated=None, storage_options=None, zarr_format=None,
            store=None, engine=None, use_zarr_fill_value_as_mask=None, cache_members=True,
        ):
            options = dict(
                mask_and_scale=mask_and_scale, decode_times=decode_times,
                concat_characters=concat_characters, decode_coords=decode_coords,
                drop_variables=drop_variables, use_cftime=use_cftime, decode_timedelta=decode_timedelta,
                group=group, consolidated=consolidated, storage_options=storage_options,
                zarr_format=zarr_format)
            extra = dict(mode=mode, store=store, engine=engine, cache_members=cache_members)
            if not _zarrc_takes(filename_or_obj, extra):
                READS["zarr"] += 1
                return super().open_dataset(
                    filename_or_obj, **options, **extra,
                    use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
            READS["zarrc"] += 1
            # xarray's zarr engine drops use_zarr_fill_value_as_mask on its way to its
            # ZarrStore (the default, v2 yes and v3 no, always applies); zarrc's engine
            # takes it: dropped here too, for the semantics of engine="zarr"
            return ZarrcBackendEntrypoint().open_dataset(filename_or_obj, **options)

        def open_groups_as_dict(self, filename_or_obj, **kwargs):  # type: ignore[override]
            shared = {k: v for k, v in kwargs.items() if k in SHARED}
            extra = {k: v for k, v in kwargs.items() if k not in SHARED}
            if not _zarrc_takes(filename_or_obj, extra):
                READS["zarr"] += 1
                return super().open_groups_as_dict(filename_or_obj, **kwargs)
            READS["zarrc"] += 1
            return ZarrcBackendEntrypoint().open_groups_as_dict(filename_or_obj, **shared)

    return ReadThroughZarrc


def pytest_configure(config: pytest.Config) -> None:
    import xarray
    import zarr
    from xarray.backends import plugins

    import zarrc

    name, _ = plugins.BACKEND_ENTRYPOINTS["zarr"]
    plugins.BACKEND_ENTRYPOINTS["zarr"] = (name, _make_entrypoint())
    plugins.list_engines.cache_clear()
    print(f"xarray {xarray.__version__}, zarr-python {zarr.__version__}: engine 'zarr' reads through "
          f"zarrc {zarrc.__version__} ({zarrc.__file__})")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(f"reads through zarrc's engine: {READS['zarrc']}, "
                                f"through xarray's zarr engine: {READS['zarr']}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if READS["zarrc"] == 0 and session.testscollected:
        print("\nno read went through zarrc's engine: the plugin did not take effect")
        session.exitstatus = 1
