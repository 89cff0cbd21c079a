#!/usr/bin/env bash
# Run on the GPU machine (device tool): record every sample's session into $OUT (or ./out),
# then print a one-line summary per sample. Copy the results into samples/ afterwards.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:-out}"
mkdir -p "$out"
for model in "$@"; do
    name="$(basename "$model" .py)"
    if python3 -m kinspect record "$model" -o "$out/$name.session.json" 2>"$out/$name.log"; then
        tail -1 "$out/$name.log"
    else
        echo "FAILED $model"; tail -5 "$out/$name.log"
    fi
done
