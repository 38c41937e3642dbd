#!/bin/bash
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# EPANET writes its scratch files (hydraulics, report) in the working directory.
cd "$(mktemp -d)"
python3 "$here/solve.py" /task/inputs /task/output
