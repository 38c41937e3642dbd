#!/bin/bash
# Oracle. On a desktop: build the ad in Inkscape's GUI with xdotool (draw_gui.py: Document
# Properties, Layer menu, rectangle tool with Fill and Stroke and the X/Y/W/H fields, File > Import,
# text tool, XML editor, Save As). Without one: lay it out as an SVG (build_ad.py) and let Inkscape
# open it and save it as an Inkscape SVG.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
if [[ -n "${DISPLAY:-}" ]] && command -v xdotool >/dev/null && command -v xwininfo >/dev/null; then
    TMPDIR="$work" python3 "$here/draw_gui.py" /task/inputs /task/output/ad.svg
else
    python3 "$here/build_ad.py" /task/inputs "$work/draft.svg"
    HOME="$work" inkscape "$work/draft.svg" --export-type=svg --export-filename=/task/output/ad.svg
fi
