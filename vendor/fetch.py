"""Fetch the pinned upstream C sources that zarrc builds (c-blosc, lz4, zlib, zstd).

Usage::

    python vendor/fetch.py            # fetch (if needed), verify, unpack under vendor/src/
    python vendor/fetch.py --check    # exit 1 with a message if vendor/src/ is missing or stale

Each archive in ``vendor/manifest.json`` is downloaded from the Python package
registry with ``pip download`` (so pip's own index configuration applies), its
sha256 is checked against the manifest, and only the listed members are unpacked.
A stamp file records which manifest the unpacked tree came from, so a second run
does nothing.  An sdist of zarrc already carries ``vendor/src/``; building from it
needs no network.  Set ``ZARRC_OFFLINE=1`` to forbid downloads.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
SRC = HERE / "src"
DOWNLOADS = HERE / "downloads"
STAMP = SRC / ".manifest-sha256"
COMMAND = f"{Path(sys.executable).name} vendor/fetch.py"
OFFLINE_HINT = (
    f"a git checkout fetches the C sources once (run `{COMMAND}` with access to the package "
    "registry); without network, build from zarrc's sdist (`pip download --no-binary zarrc "
    "--no-deps zarrc`, or `python -m build --sdist` on a machine that has fetched them), which "
    "contains them, or install a wheel"
)


class FetchError(Exception):
    pass


def manifest_digest() -> str:
    return hashlib.sha256(MANIFEST.read_bytes()).hexdigest()


def is_current() -> bool:
    return STAMP.is_file() and STAMP.read_text().strip() == manifest_digest()


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# set by pyproject_hooks (pip's, build's) for the hook process: PEP517_BUILD_BACKEND,
# PEP517_BACKEND_PATH (newer releases: _PYPROJECT_HOOKS_BUILD_BACKEND, ...)
HOOK_VARIABLES = ("PEP517_", "_PYPROJECT_HOOKS_")


def pip_environment() -> dict[str, str]:
    """This process's environment without the variables of a PEP 517 hook call.
    While pip builds zarrc, they name zarrc's build backend and its backend-path.
    The pip run here would pass them on to the hook it runs to prepare a downloaded
    sdist, and that hook would then refuse to load ("Backend was not loaded from
    backend-path")."""
    return {k: v for k, v in os.environ.items() if not k.startswith(HOOK_VARIABLES)}


def download(archive: dict) -> Path:
    """Return the path of the verified archive, downloading it with pip if needed."""
    DOWNLOADS.mkdir(exist_ok=True)
    target = DOWNLOADS / archive["filename"]
    if target.is_file() and sha256_of(target) == archive["sha256"]:
        return target
    if os.environ.get("ZARRC_OFFLINE"):
        raise FetchError(
            f"{archive['filename']} is not in vendor/downloads/ and ZARRC_OFFLINE is set; "
            f"{OFFLINE_HINT}"
        )
    spec = f"{archive['package']}=={archive['version']}"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps",
            "--no-binary", archive["package"], "--dest", tmp, spec,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=pip_environment())
        got = Path(tmp) / archive["filename"]
        if proc.returncode != 0 or not got.is_file():
            raise FetchError(
                f"could not download {spec} with pip (exit {proc.returncode}):\n"
                f"{proc.stderr.strip()[-2000:]}\n"
                f"{OFFLINE_HINT}"
            )
        digest = sha256_of(got)
        if digest != archive["sha256"]:
            raise FetchError(
                f"{archive['filename']}: sha256 {digest} does not match the pinned "
                f"{archive['sha256']} in vendor/manifest.json"
            )
        shutil.move(str(got), target)
    return target


def unpack(archive: dict, tarball: Path, dest: Path) -> None:
    """Unpack the manifest's members of ``tarball`` into ``dest``, refusing unsafe names."""
    rules = archive["extract"]
    used = {i: 0 for i in range(len(rules))}
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            name = PurePosixPath(member.name)
            if name.is_absolute() or ".." in name.parts:
                raise FetchError(f"{tarball.name}: unsafe member name {member.name!r}")
            for i, (pattern, target) in enumerate(rules):
                rel = match(member.name, pattern, target)
                if rel is None:
                    continue
                used[i] += 1
                out = dest / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                break
    unused = [rules[i][0] for i, n in used.items() if n == 0]
    if unused:
        raise FetchError(f"{tarball.name}: no members match {unused}")


def match(name: str, pattern: str, target: str) -> str | None:
    """Map an archive member to its path under vendor/src/, or None if not selected."""
    if pattern.endswith("/"):
        if name.startswith(pattern):
            return target + name[len(pattern):]
        return None
    if any(c in pattern for c in "*?["):
        parent, _, leaf = pattern.rpartition("/")
        mparent, _, mleaf = name.rpartition("/")
        if mparent == parent and fnmatch.fnmatchcase(mleaf, leaf):
            return target + mleaf
        return None
    return target if name == pattern else None


def fetch() -> None:
    if is_current():
        return
    manifest = json.loads(MANIFEST.read_text())
    staging = Path(tempfile.mkdtemp(prefix="src.", dir=HERE))
    try:
        for archive in manifest["archives"]:
            unpack(archive, download(archive), staging)
        (staging / STAMP.name).write_text(manifest_digest() + "\n")
        if SRC.exists():
            shutil.rmtree(SRC)
        staging.rename(SRC)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def main(argv: list[str]) -> int:
    try:
        if "--check" in argv:
            if not is_current():
                raise FetchError(f"vendor/src/ is missing or stale; run `{COMMAND}`")
            return 0
        fetch()
    except FetchError as exc:
        print(f"zarrc vendor fetch: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
