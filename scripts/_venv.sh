# Sourced by scripts/kinspect, scripts/test and scripts/mutation: make .venv once, with
# kinspect and its test extras, taking the CPU torch 2.13.0 wheel (from local disk where the
# machine has it).
#
# Installing the dependencies (torch above all: 1.2 GB unpacked) is most of the cost, and CI
# makes .venv afresh in a fresh clone every time. So they are installed once per machine
# into a virtualenv outside the clone, keyed by pyproject.toml, this file and the Python
# that runs them, and .venv is a new virtualenv that sees that one's packages (a .pth file)
# and gets kinspect itself installed afresh (editable). A key with no complete build, or a
# build with files missing or packages that no longer import, is built again;
# KINSPECT_DEPS_CACHE moves the cache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"

_kinspect_deps() {
    # The requirements pyproject.toml names for kinspect and its test extra, one a line.
    python3 - "$root/pyproject.toml" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["test"]))
PY
}

_kinspect_build_deps() {
    local deps=$1
    echo "kinspect: installing the dependencies into $deps (once per machine and pyproject.toml)" >&2
    rm -rf "$deps"
    python3 -m venv "$deps"
    "$deps/bin/python" -m pip install -q --upgrade pip >/dev/null
    # torch first, pinned: a bare "torch>=2.11" would take a CUDA build of several GB
    "$deps/bin/python" -m pip install -q "torch==2.13.0"
    "$deps/bin/python" -m pip install -q -r <(_kinspect_deps)
    touch "$deps/.complete"
}

_kinspect_layer() {
    # A fresh .venv over the dependencies: their site-packages through a .pth file, their
    # commands (pytest, ruff, torchrun) run by .venv's Python.
    local deps=$1 site dsite f first
    rm -rf "$venv"
    python3 -m venv --without-pip "$venv"
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    dsite=$("$deps/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    printf 'import site; site.addsitedir(%s)\n' "'$dsite'" >"$site/_kinspect_deps.pth"
    for f in "$deps"/bin/*; do
        case "$(basename "$f")" in python*|activate*|Activate*) continue ;; esac
        [ -e "$venv/bin/$(basename "$f")" ] && continue
        first=$(head -c 2 "$f")
        if [ "$first" = "#!" ] && head -1 "$f" | grep -q python; then
            { echo "#!$venv/bin/python"; tail -n +2 "$f"; } >"$venv/bin/$(basename "$f")"
            chmod +x "$venv/bin/$(basename "$f")"
        else
            ln -s "$f" "$venv/bin/$(basename "$f")"
        fi
    done
    "$venv/bin/python" -m pip install -q -e "$root[test]"
}

_kinspect_valid() {
    # Every requirement met, every file the packages installed still there (a package that
    # lost its __init__.py still imports, as a namespace package), and torch working.
    "$venv/bin/python" -m pip check >/dev/null 2>&1 && "$venv/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as md, os, sys
gone = [f for d in md.distributions() for f in d.files or () if not os.path.exists(f.locate())]
if gone:
    sys.exit(f"{len(gone)} installed files are gone ({gone[0]} first)")
import torch, textual, numpy, sympy, pytest, xdist, hypothesis, kinspect  # noqa
torch.zeros(1)
PY
}

_kinspect_setup() {
    local cache key deps
    cache="${KINSPECT_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kinspect}"
    key=$({ cat "$root/pyproject.toml" "${BASH_SOURCE[0]}"
            python3 -c 'import os, platform, sys; print(os.path.realpath(sys.executable), sys.version, platform.machine())'
          } | sha256sum | cut -c1-16)
    deps="$cache/deps-$key"
    mkdir -p "$cache"
    (
        flock 9  # one build at a time per machine: two clones may set up at once
        if [ -f "$deps/.complete" ] && _kinspect_layer "$deps" && _kinspect_valid; then
            touch "$deps/.complete"  # its age says when a clone last used it
        else
            [ -f "$deps/.complete" ] && echo "kinspect: the dependencies in $deps are incomplete; installing them again" >&2
            _kinspect_build_deps "$deps"
            _kinspect_layer "$deps"
            _kinspect_valid || { echo "kinspect: $venv does not import its dependencies" >&2; exit 1; }
        fi
        for old in "$cache"/deps-*; do  # builds no clone has used for two weeks
            [ "$old" = "$deps" ] || [ -n "$(find "$old/.complete" -mtime -14 2>/dev/null)" ] || rm -rf "$old"
        done
    ) 9>"$cache/.lock"
    echo "$deps" >"$venv/.kinspect-ready"
}

if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.kinspect-ready" ] || [ "$root/pyproject.toml" -nt "$venv/.kinspect-ready" ] ||
        [ ! -f "$(cat "$venv/.kinspect-ready")/.complete" ]; then
    echo "kinspect: setting up $venv (first run only)" >&2
    _kinspect_setup
fi
