"""The demo (zarrc/demo.py, scripts/demo): its figures are the store's."""

from __future__ import annotations

import os
import re

from zarrc import demo


def test_demo_reports_what_the_store_holds(tmp_path, capsys) -> None:
    directory = str(tmp_path / "demo.zarr")
    assert demo.main(["--size", "16", "--dir", directory]) == 0
    out = capsys.readouterr().out
    files = {name: sum(f != "zarr.json" for _, _, fs in os.walk(os.path.join(directory, name)) for f in fs)
             for name in ("temperature", "density")}
    assert files == {"temperature": 64, "density": 64}      # 4^3 chunks; 4^3 shards of 2^3 chunks
    assert re.search(r"in 64 chunk files \(64 chunks\)", out), out
    assert re.search(r"in 64 shard files \(512 chunks\)", out), out
    for name in files:
        stored = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(os.path.join(directory, name))
                     for f in fs)
        assert f"stored {stored / 2**20:.1f} MiB of {16**3 * 4 / 2**20 if name == 'temperature' else 16**3 * 2 / 2**20:.1f} MiB" in out
    assert "bit-exact" in out and "MISMATCH" not in out
    assert demo.stored_objects(os.path.join(directory, "density")) == 64
