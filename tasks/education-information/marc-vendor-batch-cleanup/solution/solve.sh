#!/bin/bash
# Oracle: YAZ converts MARC-8 (and relabels UTF-8) records, pymarc applies the cataloguing
# rules, YAZ writes the MARCXML.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
python3 "$here/split.py" /task/inputs/vendor_batch.mrc "$work/marc8.mrc" "$work/utf8.mrc"
yaz-marcdump -i marc -o marc -f MARC-8 -t UTF-8 -l 9=97 "$work/marc8.mrc" > "$work/converted.mrc"
yaz-marcdump -i marc -o marc -f UTF-8 -t UTF-8 -l 9=97 "$work/utf8.mrc" >> "$work/converted.mrc"
python3 "$here/clean.py" "$work/converted.mrc" /task/output
yaz-marcdump -i marc -o marcxml /task/output/clean.mrc > /task/output/clean.xml
