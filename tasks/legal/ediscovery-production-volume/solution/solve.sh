#!/bin/bash
# Oracle: parse, deduplicate, search and screen the collection, then render (LibreOffice),
# endorse (ReportLab + pypdf) and load-file (DAT/OPT) production volume PROD002.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
HOME="$work" python3 "$here/produce.py" /task/inputs /task/output "$work"
