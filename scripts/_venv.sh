# Sourced by scripts/kinspect and scripts/test: make .venv once, with kinspect and its
# test extras, taking the CPU torch 2.13.0 wheel (from local disk where the machine has it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.kinspect-ready" ] || [ "$root/pyproject.toml" -nt "$venv/.kinspect-ready" ]; then
    echo "kinspect: setting up $venv (first run only)" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
    if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
        "$venv/bin/python" -m pip install -q "torch==2.13.0"
    fi
    "$venv/bin/python" -m pip install -q -e "$root[test]"
    touch "$venv/.kinspect-ready"
fi
