#!/bin/bash
# The oracle: uproot/awkward selection and an iminuit binned extended likelihood fit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/analyze.py" /task/inputs /task/output
