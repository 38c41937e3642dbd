#!/bin/bash
# Oracle for oats-split-plot-eonr: the analysis in R (aov with Error strata, lm for the N response).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
Rscript "$here/analysis.R" /task/inputs/oats_field_book.csv /task/output
