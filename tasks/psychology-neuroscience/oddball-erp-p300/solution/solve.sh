#!/bin/bash
# Oracle for oddball-erp-p300: the ERP pipeline with MNE-Python.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/erp.py" /task/inputs /task/output
