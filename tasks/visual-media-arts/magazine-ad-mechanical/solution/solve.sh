#!/bin/bash
# Oracle: lay out the ad from the job ticket as an SVG (grid arithmetic in build_ad.py), then let
# Inkscape open it and save it as an Inkscape SVG.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
python3 "$here/build_ad.py" /task/inputs "$work/draft.svg"
HOME="$work" inkscape "$work/draft.svg" --export-type=svg --export-filename=/task/output/ad.svg
