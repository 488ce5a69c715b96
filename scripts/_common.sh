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
  "$dir/bin/python" -m pip install -q $("$dir/bin/python" scripts/build_requires.py)
}
