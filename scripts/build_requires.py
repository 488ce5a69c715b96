"""Print the [build-system] requires of pyproject.toml, one per line (for pip install)."""

import re
import sys
from pathlib import Path

text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
try:
    import tomllib

    requires = tomllib.loads(text)["build-system"]["requires"]
except ModuleNotFoundError:  # Python 3.10
    block = re.search(r"\[build-system\].*?requires\s*=\s*\[(.*?)\]", text, re.S).group(1)
    requires = re.findall(r'"([^"]+)"', block)
sys.stdout.write("\n".join(requires) + "\n")
