#!/bin/bash
# Oracle: the NCA is computed in R (Rscript) by the rules of the instruction.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
Rscript "$here/nca.R" /task/inputs/theophylline_pk.csv /task/output
