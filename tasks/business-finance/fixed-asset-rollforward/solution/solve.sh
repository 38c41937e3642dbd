#!/bin/bash
# Oracle: write the model as formulas, let LibreOffice Calc compute it, summarise its values.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
python3 "$here/build_model.py" /task/inputs/asset_register.csv "$work/fixed_assets_fy2025.xlsx"
HOME="$work" soffice --headless --calc --convert-to xlsx --outdir /task/output "$work/fixed_assets_fy2025.xlsx"
python3 "$here/summarize.py" /task/output/fixed_assets_fy2025.xlsx > /task/output/summary.json
