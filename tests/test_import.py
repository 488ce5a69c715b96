"""`import zarrc` stays cheap: optional and heavy modules are imported when first
needed (numcodecs by the v2 numcodecs bridge and the vlen codecs, zipfile by the zip
store, concurrent.futures by the worker pool, asyncio by the async API's coroutines,
ml_dtypes by the low-precision data types),
never by the import itself.
bench/bench_import.py measures the time."""

import subprocess
import sys

import pytest

LAZY = ["numcodecs", "zipfile", "concurrent.futures", "importlib.metadata", "asyncio", "ml_dtypes"]


def modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_import_zarrc_does_not_import_optional_modules():
    loaded = modules_after("import zarrc")
    assert "zarrc.codecs.vlen" in loaded     # the codecs are registered ...
    assert [m for m in LAZY if m in loaded] == []   # ... without these


@pytest.mark.parametrize("name, module", [("__version__", "importlib.metadata"),
                                          ("stores.ZipStore", "zipfile")])
def test_lazy_attributes_import_their_module_on_use(name, module):
    loaded = modules_after(f"import zarrc, zarrc.stores\nassert zarrc.{name}")
    assert module in loaded


def test_ml_dtypes_is_imported_by_its_data_types_only():
    pytest.importorskip("ml_dtypes", reason="the low-precision data types need ml_dtypes")
    make = "import zarrc\nzarrc.create_array({{}}, shape=(2,), chunks=(2,), dtype={!r})"
    assert "ml_dtypes" not in modules_after(make.format("float32"))
    assert "ml_dtypes" in modules_after(make.format("bfloat16"))


def test_version_is_the_installed_distributions():
    from importlib.metadata import version

    import zarrc

    assert zarrc.__version__ == version("zarrc")
    assert "__version__" in zarrc.__all__
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        zarrc.nope  # noqa: B018


def test_vlen_codec_builds_its_numcodecs_codec_when_constructed():
    loaded = modules_after("import zarrc\nzarrc.codecs.VLenUTF8().decode(zarrc.codecs.VLenUTF8().encode(['a']))")
    assert "numcodecs" in loaded
