#!/bin/bash
# The oracle: max-closure by min-cut (SciPy max-flow) on a minimal generator set of the slope cone.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/upl.py" /task/inputs /task/output
