#!/bin/bash
# Oracle: clean the records and make the Phase-I decisions in Python, write the study as
# formulas, let LibreOffice Calc compute it, summarise its values.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
python3 "$here/build.py" /task/inputs "$work/spc_study.xlsx" "$work/decisions.json"
HOME="$work" soffice --headless --calc --convert-to xlsx --outdir /task/output "$work/spc_study.xlsx" >/dev/null
python3 "$here/summarize.py" /task/output/spc_study.xlsx "$work/decisions.json" > /task/output/summary.json
