"""meson dist script: put the fetched vendor/src/ tree into the sdist.

vendor/src/ is git-ignored, so `meson dist` (which archives the git tree) leaves it
out; this copies it into the dist root so a build from the sdist needs no network.
"""

import os
import shutil
import sys
from pathlib import Path

source = Path(os.environ["MESON_PROJECT_SOURCE_ROOT"]) / "vendor" / "src"
dist = Path(os.environ["MESON_PROJECT_DIST_ROOT"]) / "vendor" / "src"
if not (source / ".manifest-sha256").is_file():
    sys.exit(f"zarrc dist: {source} is not fetched; run `python vendor/fetch.py` first")
shutil.copytree(source, dist, dirs_exist_ok=True)
