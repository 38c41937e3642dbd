#!/bin/bash
# Oracle: poppler's pdftotext splits the brief page by page; resolve.py resolves full citations,
# short forms and "Id." to their authorities and builds the table by printed page; the
# cite-check finding is the reviewer's own reading of the opinions.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
n="$(pdfinfo /task/inputs/brief.pdf | awk '/^Pages:/ {print $2}')"
for i in $(seq 1 "$n"); do
  pdftotext -f "$i" -l "$i" /task/inputs/brief.pdf "$work/page-$(printf %03d "$i").txt"
done
python3 "$here/resolve.py" "$work" /task/output/toa.json
cp "$here/cite_check.json" /task/output/cite_check.json
