#!/bin/bash
# Oracle: derive the topology from the IPAM export (build_dia.topology). On a desktop, draw it in
# Dia's GUI with xdotool (draw_gui.py: Flowchart boxes typed in place, lines glued centre to centre,
# File > Save); without one, write it as Dia XML and have Dia load and save it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
if [[ -n "${DISPLAY:-}" ]] && command -v xdotool >/dev/null && command -v xwininfo >/dev/null; then
    TMPDIR="$work" python3 "$here/draw_gui.py" /task/inputs /task/output/network.dia
else
    python3 "$here/build_dia.py" /task/inputs "$work/draft.dia"
    HOME="$work" dia --nosplash --export=/task/output/network.dia --filter=dia "$work/draft.dia"
fi
