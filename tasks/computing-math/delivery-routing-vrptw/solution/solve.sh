#!/bin/bash
# Oracle: heterogeneous-fleet VRPTW with OR-Tools routing (guided local search).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/solve.py" /task/inputs /task/output
