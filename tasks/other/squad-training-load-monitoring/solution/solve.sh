#!/bin/bash
# Oracle: pandas/NumPy workflow over the raw 1 Hz exports.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/load_report.py" /task/inputs /task/output
