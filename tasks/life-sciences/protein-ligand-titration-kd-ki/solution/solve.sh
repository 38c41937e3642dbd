#!/bin/bash
# Oracle: exact ligand-depletion fits (SciPy least_squares) of both titrations.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/binding_fit.py" /task/inputs /task/output
