"""The ``zarrc`` command line (zarrc/cli/), run as a subprocess (``python -m zarrc``,
what the ``zarrc`` console script runs): every command's --help, info / tree / ls /
validate / consolidate, convert (rechunk, reshard, recompress, v2 <-> v3, groups,
attributes, resuming after SIGKILL, peak memory against the bound its help states),
and errors as one line on stderr with a non-zero exit status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import zarrc

COMMANDS = ("info", "tree", "ls", "validate", "convert", "consolidate", "model", "overviews")


def run(*args: str, check: int | None = 0, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("ZARRC_TRACEBACK", None)
    proc = subprocess.run([sys.executable, "-m", "zarrc", *map(str, args)], check=False, capture_output=True,
                          text=True, timeout=timeout, env=env)
    if check is not None:
        assert proc.returncode == check, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def assert_one_line_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("zarrc "), lines
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture
def v2_blosc(tmp_path: Path) -> tuple[Path, np.ndarray]:
    import numcodecs

    data = (np.arange(120 * 90, dtype="f4").reshape(120, 90) % 1000) / 7
    path = tmp_path / "v2.zarr"
    a = zarrc.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=(25, 20), zarr_format=2,
                           compressors=numcodecs.Blosc("lz4", 5),
                           attributes={"_ARRAY_DIMENSIONS": ["y", "x"], "units": "K"})
    a[...] = data
    return path, data


GDAL_ATTRS = {
    "_CRS": {"wkt": 'GEOGCRS["WGS 84",DATUM["World Geodetic System 1984"]]', "url": "http://www.opengis.net/def/crs/EPSG/0/4326"},
    "spatial:dimensions": ["y", "x"], "spatial:transform": [0.5, 0.0, 10.0, 0.0, -0.5, 50.0],
    "proj:code": "EPSG:4326",
    "zarr_conventions": [{"name": "spatial:", "uuid": "689b58e2-cf7b-45e0-9fff-9cfc0883d6b4"},
                         {"name": "proj:", "uuid": "f17cb550-5864-4468-aeb7-f3180cfb622f"}],
    "units": "K", "add_offset": 273.15, "scale_factor": 0.01, "_FillValue": -9999,
}


@pytest.fixture
def group_v2(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    path = tmp_path / "g2.zarr"
    g = zarrc.open_group(str(path), mode="w", zarr_format=2, attributes={"title": "t", "Conventions": "CF-1.8"})
    t = np.arange(40 * 30, dtype="i2").reshape(40, 30)
    a = g.create_array("temperature", shape=t.shape, dtype=t.dtype, chunks=(16, 16), fill_value=-9999,
                       attributes=dict(GDAL_ATTRS, _ARRAY_DIMENSIONS=["y", "x"]))
    a[...] = t
    sub = g.create_group("sub", attributes={"kind": "sub"})
    b = sub.create_array("b", shape=(50,), dtype="f8", chunks=(7,))
    b[...] = np.linspace(0, 1, 50)
    zarrc.consolidate_metadata(str(path))
    return path, {"temperature": t, "sub/b": np.linspace(0, 1, 50)}


# -- help and usage ------------------------------------------------------------------------------

@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str) -> None:
    out = run(command, "--help").stdout
    assert out.startswith(f"usage: zarrc {command}")
    assert "--storage-option" in out


def test_convert_help_states_the_memory_bound_and_how_it_resumes() -> None:
    out = " ".join(run("convert", "--help").stdout.split())
    assert "WORKERS x 2 x (unit size)" in out
    assert "one destination shard each" in out
    assert ".zarrc-convert" in out and "Rerun the same command" in out


def test_top_level_help_version_and_no_command() -> None:
    assert all(c in run("--help").stdout for c in COMMANDS)
    assert run("--version").stdout.startswith("zarrc ")
    assert run(check=2).stdout.startswith("usage: zarrc")


def test_the_console_script_is_declared() -> None:
    text = (Path(__file__).parents[1] / "pyproject.toml")
    if not text.exists():
        pytest.skip("pyproject.toml is not beside tests/ here")
    assert 'zarrc = "zarrc.cli.main:main"' in text.read_text()


# -- info, tree, ls, consolidate ----------------------------------------------------------------

def test_info_of_an_array(v2_blosc: tuple[Path, np.ndarray]) -> None:
    path, data = v2_blosc
    out = run("info", path).stdout
    for word in ("Zarr format        : 2", "(120, 90)", "<f4", "(25, 20)", '"cname": "lz4"',
                 "Dimension names    : ['y', 'x']", "Compression ratio", "Chunks initialized : 25 of 25"):
        assert word in out, (word, out)
    info = json.loads(run("info", path, "--json").stdout)
    assert info["shape"] == [120, 90] and info["chunks"] == [25, 20] and info["shards"] is None
    assert info["dtype"] == "<f4" and info["fill_value"] == 0.0 and info["zarr_format"] == 2
    assert info["codecs"][0]["id"] == "blosc" and info["dimension_names"] == ["y", "x"]
    assert info["chunks_initialized"] == info["nchunks"] == 25
    assert info["nbytes"] == data.nbytes and 0 < info["stored_bytes"] < data.nbytes
    assert info["compression_ratio"] == pytest.approx(data.nbytes / info["stored_bytes"], rel=1e-3)


def test_info_of_a_sharded_v3_array(tmp_path: Path) -> None:
    a = zarrc.create_array(str(tmp_path / "s.zarr"), shape=(64, 64), dtype="u1", chunks=(8, 8), shards=(32, 32),
                           dimension_names=["lat", "lon"], fill_value=7)
    a[:32, :] = 1
    info = json.loads(run("info", tmp_path / "s.zarr", "--json").stdout)
    assert info["shards"] == [32, 32] and info["chunks"] == [8, 8] and info["fill_value"] == 7
    assert info["dimension_names"] == ["lat", "lon"] and info["shards_initialized"] == 2
    assert info["codecs"][0]["name"] == "sharding_indexed"
    assert "(in 2 shards)" in run("info", tmp_path / "s.zarr").stdout


def test_info_tree_ls_of_a_group(group_v2: tuple[Path, dict]) -> None:
    path, _ = group_v2
    info = json.loads(run("info", path, "--json").stdout)
    assert info["node_type"] == "group" and info["arrays"] == 2 and info["groups"] == 1
    assert info["consolidated"] is True and info["attributes"]["title"] == "t"
    assert [m["path"] for m in info["members"]] == ["temperature", "sub/b"]
    assert "Members:" in run("info", path).stdout
    tree = run("tree", path).stdout
    assert "temperature (40, 30) int16" in tree and "b (50,) float64" in tree
    assert run("ls", path).stdout.split() == ["sub/", "temperature"]
    assert run("ls", "-r", path).stdout.split() == ["sub/", "temperature", "sub/b"]
    long = run("ls", "-l", path).stdout
    assert "temperature  array  v2 (40, 30) int16 chunks (16, 16)" in long
    assert run("ls", path / "temperature").stdout.strip() == "temperature"


def test_consolidate(tmp_path: Path) -> None:
    g = zarrc.open_group(str(tmp_path / "g.zarr"), mode="w")
    g.create_array("a", shape=(3,), dtype="i4")
    out = run("consolidate", tmp_path / "g.zarr").stdout
    assert "consolidated the metadata of 1 node(s)" in out
    assert zarrc.open_group(str(tmp_path / "g.zarr"), mode="r").consolidated


def test_storage_options_reach_the_store_layer(group_v2: tuple[Path, dict], tmp_path: Path) -> None:
    """A chained fsspec URL with its options: the cache directory they name fills."""
    pytest.importorskip("fsspec")
    path, data = group_v2
    cache = tmp_path / "cache"
    opt = "simplecache=" + json.dumps({"cache_storage": str(cache)})
    assert run("ls", f"simplecache::{path.as_uri()}", "-S", opt).stdout.split() == ["sub/", "temperature"]
    assert any(cache.iterdir())
    run("convert", f"simplecache::{path.as_uri()}/temperature", tmp_path / "t.zarr", "-S", opt, "-q")
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "t.zarr"), mode="r")[...], data["temperature"])


# -- validate ------------------------------------------------------------------------------------

def test_validate_a_valid_hierarchy(group_v2: tuple[Path, dict]) -> None:
    path, _ = group_v2
    out = run("validate", path, "--data").stdout
    assert out.startswith("valid: 4 node(s), 2 array(s)") and "chunk(s)/shard(s) decoded" in out


def test_validate_data_lists_a_damaged_chunk_by_key(v2_blosc: tuple[Path, np.ndarray]) -> None:
    path, _ = v2_blosc
    chunk = path / "1.2"
    chunk.write_bytes(chunk.read_bytes()[:20] + b"\xff" * 40)
    assert run("validate", path).stdout.startswith("valid")      # (the metadata are fine)
    proc = run("validate", path, "--data", check=1)
    errors = [line for line in proc.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "damaged chunk 1.2" in errors[0], proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("invalid: 1 error(s)")


def test_validate_a_damaged_shard_in_a_group(tmp_path: Path) -> None:
    g = zarrc.open_group(str(tmp_path / "g.zarr"), mode="w")
    a = g.create_array("a", shape=(16, 16), dtype="f8", chunks=(4, 4), shards=(8, 8))
    a[...] = np.random.default_rng(0).random((16, 16))
    shard = tmp_path / "g.zarr" / "a" / "c" / "1" / "0"
    raw = bytearray(shard.read_bytes())
    raw[5] ^= 0xFF
    shard.write_bytes(bytes(raw))
    proc = run("validate", tmp_path / "g.zarr", "--data", check=1)
    assert "damaged chunk a/c/1/0" in proc.stdout


def test_validate_reports_unreadable_members_and_stale_consolidated_metadata(group_v2: tuple[Path, dict]) -> None:
    path, _ = group_v2
    zarray = path / "sub" / "b" / ".zarray"
    doc = json.loads(zarray.read_text())
    doc["dtype"] = "<nonsense"
    zarray.write_text(json.dumps(doc))
    proc = run("validate", path, check=1)
    assert "differs from its own document" in proc.stdout or "sub/b" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_validate_metadata_of_a_broken_root(tmp_path: Path) -> None:
    (tmp_path / "bad.zarr").mkdir()
    (tmp_path / "bad.zarr" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array", "shape": [2]}')
    assert_one_line_error(run("validate", tmp_path / "bad.zarr", check=None), "validate")


# -- errors --------------------------------------------------------------------------------------

ERRORS = [   # (arguments, with {src} the v2 array and {tmp} a temporary directory), status, words
    (("info", "{tmp}/missing"), 1, ("does not exist",)),
    (("info", "{tmp}/plain"), 1, ("no array or group",)),
    (("tree", "{tmp}/missing"), 1, ()),
    (("validate", "{tmp}/plain"), 1, ()),
    (("convert", "{src}", "{tmp}/o.zarr", "--chunks", "10,x"), 2, ("--chunks",)),
    (("convert", "{src}", "{tmp}/o.zarr", "--chunks", "10,10,10"), 2, ("2 dimension(s)",)),
    (("convert", "{src}", "{tmp}/o.zarr", "--compressor", "brotli"), 2, ("--compressor",)),
    (("convert", "{src}", "{tmp}/o.zarr", "--compressor", "zstd:99"), 2, ("level 99",)),
    (("convert", "{src}", "{tmp}/o.zarr", "--shards", "10,10"), 2, ("v2",)),
    (("convert", "{src}", "{tmp}/o.zarr", "--zarr-format", "3", "--chunks", "10,10", "--shards", "15,15"), 1,
     ("shard",)),
    (("info", "{src}", "-S", "anon=true"), 2, ("local path",)),
    (("info", "{src}", "-S", "anon"), 2, ("KEY=VALUE",)),
    (("convert", "{src}", "{tmp}/plain", "--overwrite"), 2, ("not Zarr",)),
    (("convert", "{tmp}/refs.json", "{tmp}/r", "--references"), 1, ("no reference file",)),
    (("convert", "{tmp}/refs.json", "{tmp}/r", "--references", "--chunks", "5,5"), 2, ("not with --references",)),
    (("convert", "{src}", "{src}/inside"), 2, ("overlap",)),
    (("convert", "{src}", "{src}", "--overwrite"), 2, ("overlap",)),
]


@pytest.mark.parametrize(("arguments", "status", "words"), ERRORS, ids=[" ".join(e[0][:1] + e[0][3:]) for e in ERRORS])
def test_errors_are_one_line(tmp_path: Path, v2_blosc: tuple[Path, np.ndarray], arguments: tuple,
                             status: int, words: tuple) -> None:
    path, data = v2_blosc
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("hello")
    proc = run(*(a.format(src=path, tmp=tmp_path) for a in arguments), check=status)
    assert_one_line_error(proc, *words)
    assert (tmp_path / "plain" / "notes.txt").read_text() == "hello"
    assert not (tmp_path / "o.zarr").exists() or not any((tmp_path / "o.zarr").glob("*/*"))
    np.testing.assert_array_equal(zarrc.open_array(str(path), mode="r")[...], data)


# -- convert -------------------------------------------------------------------------------------

def test_convert_v2_blosc_to_v3_sharded_zstd_and_back(v2_blosc: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    path, data = v2_blosc
    v3 = tmp_path / "v3.zarr"
    out = run("convert", path, v3, "--zarr-format", "3", "--chunks", "10,15", "--shards", "40,45",
              "--compressor", "zstd:5").stdout
    assert "converted 1 array(s)" in out
    a = zarrc.open_array(str(v3), mode="r")
    assert a.zarr_format == 3 and a.chunks == (10, 15) and a.shards == (40, 45)
    assert a.dimension_names == ("y", "x") and a.attrs.asdict() == {"units": "K"}
    codecs = a.metadata.to_json()["codecs"][0]["configuration"]["codecs"]
    assert codecs[-1] == {"name": "zstd", "configuration": {"level": 5, "checksum": False}}
    np.testing.assert_array_equal(a[...], data)
    assert not (v3 / ".zarrc-convert").exists()
    back = tmp_path / "back.zarr"
    run("convert", v3, back, "--zarr-format", "2", "--shards", "none", "--chunks", "30,30",
        "--compressor", "blosc:zstd:3:bitshuffle", "-j", "3")
    b = zarrc.open_array(str(back), mode="r")
    assert b.zarr_format == 2 and b.chunks == (30, 30)
    assert b.metadata.to_json()["compressor"] == {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2,
                                                  "blocksize": 0}
    assert b.attrs.asdict() == {"units": "K", "_ARRAY_DIMENSIONS": ["y", "x"]}
    np.testing.assert_array_equal(b[...], data)


def test_convert_output_opens_in_zarr_python(v2_blosc: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr")
    path, data = v2_blosc
    run("convert", path, tmp_path / "v3.zarr", "--zarr-format", "3", "--chunks", "10,10", "--shards", "50,30",
        "--compressor", "blosc:lz4:5", "--dimension-names", "lat,lon")
    z = zarr.open_array(str(tmp_path / "v3.zarr"), mode="r")
    assert z.metadata.dimension_names == ("lat", "lon") and z.shards == (50, 30)
    np.testing.assert_array_equal(z[...], data)
    run("convert", tmp_path / "v3.zarr", tmp_path / "again.zarr", "--zarr-format", "2", "--shards", "none",
        "--compressor", "zlib:4")
    z2 = zarr.open_array(str(tmp_path / "again.zarr"), mode="r", zarr_format=2)
    np.testing.assert_array_equal(z2[...], data)
    assert z2.attrs["_ARRAY_DIMENSIONS"] == ["lat", "lon"]


def test_convert_a_group_keeps_attributes_and_consolidation(group_v2: tuple[Path, dict], tmp_path: Path) -> None:
    path, data = group_v2
    dst = tmp_path / "g3.zarr"
    run("convert", path, dst, "--zarr-format", "3", "--compressor", "zstd:3")
    g = zarrc.open_group(str(dst), mode="r")
    assert g.zarr_format == 3 and g.consolidated
    assert g.attrs.asdict() == {"title": "t", "Conventions": "CF-1.8"}
    t = g["temperature"]
    assert t.attrs.asdict() == GDAL_ATTRS and t.dimension_names == ("y", "x") and t.fill_value == -9999
    assert g["sub"].attrs.asdict() == {"kind": "sub"}
    for name, values in data.items():
        np.testing.assert_array_equal(g[name][...], values)
    back = tmp_path / "g2again.zarr"
    run("convert", dst, back, "--zarr-format", "2")
    t2 = zarrc.open_group(str(back), mode="r")["temperature"]
    assert t2.attrs.asdict() == dict(GDAL_ATTRS, _ARRAY_DIMENSIONS=["y", "x"])
    np.testing.assert_array_equal(t2[...], data["temperature"])


def test_convert_refuses_a_destination_that_holds_data(v2_blosc: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    path, data = v2_blosc
    run("convert", path, tmp_path / "o.zarr", "-q")
    assert_one_line_error(run("convert", path, tmp_path / "o.zarr", check=2), "--overwrite")
    run("convert", path, tmp_path / "o.zarr", "--overwrite", "--chunks", "60,45", "-q")
    a = zarrc.open_array(str(tmp_path / "o.zarr"), mode="r")
    assert a.chunks == (60, 45)
    np.testing.assert_array_equal(a[...], data)


def test_convert_resumes_after_sigkill(tmp_path: Path) -> None:
    """Killed mid-run, a rerun skips the verified units and the result is whole."""
    src = tmp_path / "src.zarr"
    data = np.random.default_rng(1).integers(0, 1000, size=(240, 240)).astype("i4")
    zarrc.create_array(str(src), data=data, chunks=(24, 24), zarr_format=2)
    dst = tmp_path / "dst.zarr"
    args = [sys.executable, "-m", "zarrc", "convert", str(src), str(dst), "--zarr-format", "3",
            "--chunks", "4,4", "--shards", "8,8", "--compressor", "gzip:9", "-j", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    markers = dst / ".zarrc-convert" / "units"

    def stored_markers() -> int:
        # the markers a rerun reads ("u.*"), not the temporary file of one being
        # written, which a SIGKILL can leave (".u.*": the atomic write's)
        return len([n for n in os.listdir(markers) if n.startswith("u.")]) if markers.exists() else 0

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if stored_markers() >= 50:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the conversion ended before it could be interrupted"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = stored_markers()
    assert 50 <= written < 900
    # a unit whose stored shard changed since its marker is not trusted
    (dst / "c" / "0" / "0").write_bytes(b"garbage")
    out = run(*args[3:]).stdout
    skipped = int(out.split(", ")[-1].split()[0].replace(",", ""))
    assert written - 1 <= skipped < written + 1 and skipped < 900, out
    assert "skipped (complete and verified)" in out
    np.testing.assert_array_equal(zarrc.open_array(str(dst), mode="r")[...], data)
    assert not (dst / ".zarrc-convert").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status: Linux")
def test_convert_stays_within_its_memory_bound(tmp_path: Path) -> None:
    """Peak RSS of a 160 MiB conversion (the child measures itself) against the
    help's bound: WORKERS x 2 x unit (here a 4 MiB shard) + a source chunk per thread."""
    src = tmp_path / "big.zarr"
    n = 160 << 20
    a = zarrc.create_array(str(src), shape=(n // 4 // 4096, 4096), dtype="f4", chunks=(256, 1024),
                           zarr_format=2)
    rows = 1024
    for start in range(0, a.shape[0], rows):
        a[start:start + rows] = np.arange(start * 4096, (start + rows) * 4096, dtype="f4").reshape(rows, 4096) % 977
    # the child's peak: VmHWM, this process image's high-water mark (ru_maxrss would
    # carry the forking pytest's own size over the exec)
    script = textwrap.dedent(f"""
        import sys
        import numpy, zarrc
        from zarrc.cli.main import main

        def hwm():
            with open("/proc/self/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

        base = hwm()
        status = main(["convert", {str(src)!r}, {str(tmp_path / "out.zarr")!r}, "--zarr-format", "3",
                       "--chunks", "128,512", "--shards", "256,4096", "--compressor", "zstd:1", "-j", "2", "-q"])
        peak = hwm()
        print(base, peak, zarrc.config.threads)
        sys.exit(status)
    """)
    proc = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    base, peak, threads = (int(v) for v in proc.stdout.split())
    grown = (peak - base) * 1024                     # (VmHWM: KiB)
    unit = 256 * 4096 * 4
    bound = 2 * 2 * unit + threads * 256 * 1024 * 4
    print(f"peak RSS grew {grown >> 20} MiB; the bound: {bound >> 20} MiB")
    assert grown <= bound + (32 << 20), (grown >> 20, bound >> 20)
    assert grown < n // 2
    out = zarrc.open_array(str(tmp_path / "out.zarr"), mode="r")
    np.testing.assert_array_equal(out[-300:], a[-300:])


def test_the_console_script_runs() -> None:
    script = Path(sys.executable).parent / ("zarrc.exe" if sys.platform == "win32" else "zarrc")
    if not script.exists():
        pytest.skip("no zarrc console script beside this interpreter")
    proc = subprocess.run([str(script), "ls", "--help"], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: zarrc ls")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal: Linux")
def test_convert_shows_a_progress_bar_on_a_terminal_only(v2_blosc: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    import fcntl
    import pty
    import struct
    import termios

    path, _ = v2_blosc
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        proc = subprocess.run([sys.executable, "-m", "zarrc", "convert", str(path), str(tmp_path / "tty.zarr"),
                               "--chunks", "5,5"], check=False, stdout=subprocess.PIPE, stderr=secondary,
                              timeout=60)
        os.close(secondary)
        seen = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(primary)
    assert proc.returncode == 0
    assert b"convert: 100%" in seen, seen
    quiet = run("convert", path, tmp_path / "pipe.zarr", "--chunks", "5,5")
    assert quiet.stderr == ""          # (stderr a pipe: no bar)


def test_convert_scalars_empty_arrays_and_strings_both_ways(tmp_path: Path) -> None:
    g = zarrc.open_group(str(tmp_path / "g.zarr"), mode="w")
    s = g.create_array("s", shape=(30, 40), dtype="i8", chunks=(5, 5), shards=(10, 20), fill_value=-1,
                       dimension_names=["a", "b"])
    s[...] = np.arange(1200).reshape(30, 40)
    g.create_array("scalar", shape=(), dtype="f8", fill_value=3.5)[()] = 2.0
    g.create_array("empty", shape=(0, 4), dtype="u2", chunks=(2, 2))
    g.create_array("strs", shape=(5,), dtype=str, chunks=(2,))[...] = ["a", "bb", "c", "d", "e"]
    run("convert", tmp_path / "g.zarr", tmp_path / "g2.zarr", "--zarr-format", "2", "-q")
    run("convert", tmp_path / "g2.zarr", tmp_path / "g3.zarr", "--zarr-format", "3", "-q")
    for name in ("g2.zarr", "g3.zarr"):
        out = zarrc.open_group(str(tmp_path / name), mode="r")
        np.testing.assert_array_equal(out["s"][...], np.arange(1200).reshape(30, 40))
        assert out["s"].fill_value == -1 and out["scalar"][()] == 2.0 and out["empty"].shape == (0, 4)
        assert list(out["strs"][...]) == ["a", "bb", "c", "d", "e"]
    assert zarrc.open_array(str(tmp_path / "g3.zarr" / "s"), mode="r").dimension_names == ("a", "b")
    assert run("validate", tmp_path / "g3.zarr", "--data").stdout.startswith("valid")


def test_model_prints_the_zep6_description(group_v2: tuple[Path, dict]) -> None:
    path, _ = group_v2
    doc = json.loads(run("model", path).stdout)
    assert doc["zarr_format"] == 2 and doc["attributes"]["title"] == "t"
    assert set(doc["members"]) == {"temperature", "sub"}
    assert doc["members"]["temperature"]["shape"] == [40, 30]
    assert json.loads(run("model", path, "--depth", "0").stdout).get("members") is None
    from zarrc.model import from_dict

    assert from_dict(doc).to_dict() == doc


def test_overviews_builds_a_pyramid(tmp_path: Path) -> None:
    g = zarrc.open_group(str(tmp_path / "g.zarr"), mode="w")
    a = g.create_array("dem", shape=(64, 64), dtype="f4", chunks=(16, 16), dimension_names=["y", "x"])
    a[...] = np.arange(1, 64 * 64 + 1, dtype="f4").reshape(64, 64)     # (no fill value: nodata)
    assert "built 2 overview level(s)" in run("overviews", tmp_path / "g.zarr", "--factors", "2,4").stdout
    levels = zarrc.overviews(zarrc.open_group(str(tmp_path / "g.zarr"), mode="r")["dem"])
    assert [lvl.shape for lvl in levels] == [(32, 32), (16, 16)]
    np.testing.assert_allclose(levels[0][0, 0], a[0:2, 0:2].mean())
    assert_one_line_error(run("overviews", tmp_path / "g.zarr", "--factors", "two", check=2), "--factors")


def test_convert_moves_v2_byte_filters_after_the_serializer(tmp_path: Path) -> None:
    """kerchunk's v2 metadata of HDF5 data: shuffle and zlib as *filters*, no compressor;
    in v3 they are bytes -> bytes codecs, after ``bytes``."""
    src = tmp_path / "h5like.zarr"
    data = np.arange(600, dtype="<i4").reshape(20, 30) % 97
    a = zarrc.create_array(str(src), shape=data.shape, dtype="<i4", chunks=(8, 16), zarr_format=2, compressors=None,
                           filters=[{"id": "shuffle", "elementsize": 4}, {"id": "zlib", "level": 4}])
    a[...] = data
    run("convert", src, tmp_path / "v3.zarr", "--zarr-format", "3", "-q")
    out = zarrc.open_array(str(tmp_path / "v3.zarr"), mode="r")
    assert [c["name"] for c in out.metadata.to_json()["codecs"]] == ["bytes", "numcodecs.shuffle", "numcodecs.zlib"]
    np.testing.assert_array_equal(out[...], data)
