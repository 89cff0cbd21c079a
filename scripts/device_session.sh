#!/usr/bin/env bash
# One device session on the GPU machine (run through the device tool from the repo root):
# GPU tests (recording the samples' sessions as they go), the overhead benchmark, and a
# short table. Sessions land in $OUT/samples; copy them into samples/ to commit them.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:-out}"
mkdir -p "$out/samples"
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"
KINSPECT_RECORD_DIR="$out/samples" timeout "${GPU_TESTS_TIMEOUT:-480}" python3 -m pytest tests/gpu -q -p no:cacheprovider -o addopts="" "$@" 2>&1 | tee "$out/gpu-tests.log" | grep -v "^E[0-9]\{4\} \|^W[0-9]\{4\} " | tail -40
if [ -f benchmarks/recorder_overhead.py ]; then
    python3 benchmarks/recorder_overhead.py 2>&1 | tee "$out/recorder-overhead.txt" | tail -12
fi
python3 scripts/session_table.py "$out"/samples/*.session.json
