#!/bin/bash
# Oracle: write the CalculiX deck from the inputs, solve it with ccx, post-process the margins.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/model.py" /task/inputs /task/output
