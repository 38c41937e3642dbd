#!/bin/bash
# Oracle for ki67-index-ihc-tiles: colour deconvolution with the lab's stain vectors, watershed nuclei, with scikit-image.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/solve.py" /task/inputs /task/output
