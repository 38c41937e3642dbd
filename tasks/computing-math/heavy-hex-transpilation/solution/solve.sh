#!/bin/bash
# Oracle for heavy-hex-transpilation: Qiskit's transpiler with a Target built from the calibration.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/compile.py" /task/inputs /task/output
