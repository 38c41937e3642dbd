#!/bin/bash
# Oracle: ADaM-style derivation and every SAP analysis in R survival.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
tmp=$(mktemp -d)
Rscript "$here/run.R" /task/inputs/adsl.csv /task/inputs/adtte.csv "$tmp/kv.txt" /task/output/forest.csv
python3 "$here/to_json.py" "$tmp/kv.txt" > /task/output/results.json
