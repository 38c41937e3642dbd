#!/bin/bash
# Oracle for screening-library-triage: RDKit standardisation, filters and Butina clustering.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/triage.py" /task/inputs /task/output
