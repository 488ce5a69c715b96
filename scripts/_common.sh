# Shared by scripts/*: locate interpreters and make a virtual environment with the
# build dependencies that pyproject.toml's [build-system] lists.

# find_python VERSION: print the path of a Python VERSION (e.g. 3.12) interpreter, or nothing.
find_python() {
  local v=$1 cand
  for cand in "python$v" "$(pyenv root 2>/dev/null)/versions/$v"*/bin/"python$v" /usr/bin/"python$v" /usr/local/bin/"python$v"; do
    if [ -n "$cand" ] && "$cand" -c 'import sys' >/dev/null 2>&1; then
      command -v "$cand"
      return 0
    fi
  done
  return 0
}

# make_venv DIR PYTHON: create DIR (if missing) and install the build dependencies into it.
make_venv() {
  local dir=$1 py=$2
  [ -x "$dir/bin/python" ] || "$py" -m venv "$dir"
  pip_install "$dir/bin/python" $("$dir/bin/python" scripts/build_requires.py)
}

# pip_install PYTHON ARGS...: `pip install -q ARGS` into PYTHON's environment, done by uv
# (from PyPI, installed once into build/uv) where it installs here, else by pip.  uv
# resolves and installs the test extra's ~130 packages in ~6 s where pip takes ~65 s:
# .ci/run makes five such environments.  ZARRC_NO_UV=1 uses pip.
pip_install() {
  local py=$1 uv=
  shift
  [ -n "${ZARRC_NO_UV:-}" ] || uv=$(find_uv)
  if [ -n "$uv" ]; then
    "$uv" pip install -q --python "$py" "$@"
  else
    "$py" -m pip install -q "$@"
  fi
}

# find_uv: print the path of the uv that pip_install uses, installing it into build/uv
# first; nothing when it cannot be installed (pip_install then uses pip).
find_uv() {
  local tools
  tools=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/uv
  if [ ! -x "$tools/bin/uv" ]; then
    { "${PYTHON:-python3}" -m venv "$tools" && "$tools/bin/python" -m pip install -q uv; } \
      >/dev/null 2>&1 || { echo "note: uv cannot be installed: installing with pip" >&2; rm -rf "$tools"; return 0; }
  fi
  echo "$tools/bin/uv"
}

# apt_ensure WHAT TESTS PACKAGES...: install Debian's PACKAGES with apt-get (when we are
# root or may use sudo without a password; `apt-get update` first if the plain install
# fails) for WHAT, with $APT_EXTRA's options too; when that cannot be done, say so: TESTS
# then skip, naming the reason.
apt_ensure() {
  local what=$1 tests=$2 sudo=
  shift 2
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      echo "note: no $what, and $* cannot be installed (not root, no sudo): $tests will skip" >&2
      return 0
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "note: no $what, and no apt-get to install $* with: $tests will skip" >&2
    return 0
  fi
  echo "installing $what ($*) with apt-get" >&2
  local apt="$sudo env DEBIAN_FRONTEND=noninteractive apt-get -y -q ${APT_EXTRA:-}"
  $apt install "$@" >/dev/null 2>&1 \
    || { $apt update >/dev/null && $apt install "$@" >/dev/null; } \
    || echo "note: installing $* failed: $tests will skip" >&2
}

# ensure_mpi: Open MPI (Debian's openmpi-bin and libopenmpi-dev: mpiexec, and the library
# and mpicc that mpi4py, in the test extra, needs) where mpiexec is missing.
ensure_mpi() {
  command -v mpiexec >/dev/null 2>&1 && return 0
  apt_ensure "Open MPI" "the MPI tests" openmpi-bin libopenmpi-dev
}

# ensure_gdal: GDAL with its Zarr driver and Python bindings for the GDAL interop tests
# (tests/interop/test_gdal_*.py): Debian's python3-gdal (bookworm: GDAL 3.6, the
# multidimensional API included), built for the system's /usr/bin/python3, which the tests
# run GDAL in (a subprocess: the venv's Python cannot import it); ~30 s, 36 MB.
ensure_gdal() {
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "from osgeo import gdal" >/dev/null 2>&1 && return 0
  APT_EXTRA=--no-install-recommends apt_ensure "GDAL Python bindings" "the GDAL interop tests" python3-gdal
}

# lower_bound_pins PYTHON: print "name==X" for each ">=X" of pyproject.toml's [project]
# dependencies (the oldest releases zarrc says it works with), for pip.
lower_bound_pins() {
  "$1" - <<'PYEOF'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
for dep in deps:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][^,;\s]*)\s*", dep)
    if not m:
        raise SystemExit(f"lower bounds: {dep!r} is not of the form name>=version")
    print(f"{m[1]}=={m[2]}")
PYEOF
}

# What the suite needs beside zarrc at the lower bounds: zarr-python and tensorstore are
# left out (their releases need newer numpy / numcodecs: the interop tests skip); dask and
# distributed are the newest releases that take the pins (tests/test_dask_writes.py).
LOWER_BOUND_TEST_DEPS="pytest pytest-xdist hypothesis crc32c mpi4py>=4.0 dask[array] distributed"
