#!/bin/bash
# Oracle for dc-network-redesign: single-sourcing facility location solved with OR-Tools CP-SAT.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/plan.py" /task/inputs /task/output
