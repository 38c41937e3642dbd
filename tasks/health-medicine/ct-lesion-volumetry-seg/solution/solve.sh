#!/bin/bash
# Oracle for ct-lesion-volumetry-seg: pydicom reads and sorts the series, SciPy segments, highdicom writes the SEG.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/solve.py" /task/inputs/series /task/output
