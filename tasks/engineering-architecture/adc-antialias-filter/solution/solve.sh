#!/bin/bash
# Oracle: stage candidates from the stock list, ngspice simulations of every candidate with the
# AX2172 macromodel, ngspice verification of the chosen filter in the spec's test bench.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/design_filter.py"
