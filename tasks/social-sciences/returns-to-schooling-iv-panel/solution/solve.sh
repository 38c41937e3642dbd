#!/bin/bash
# Oracle: OLS/2SLS and pooled/RE/FE panel models with linearmodels.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/analysis.py" /task/inputs /task/output
