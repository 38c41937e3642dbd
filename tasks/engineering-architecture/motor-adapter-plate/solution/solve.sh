#!/bin/bash
# Oracle: LibreCAD on the trial's desktop ($DISPLAY), driven only through the screen by
# drive.py (xdotool keystrokes and clicks, screenshots); LibreCAD itself writes plate.dxf.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${TASK_ROOT:-/task}"
: "${DISPLAY:?the oracle needs the desktop: DISPLAY is not set}"
mkdir -p "$root/output"
[ -d /run/lastexam/desktop ] && mkdir -p /run/lastexam/desktop/screens

# LibreCAD's settings, as its first-run dialog would leave them (millimetres, English), and a
# fixed 1280x720 main window so that its docks sit where drive.py clicks.
mkdir -p "$HOME/.config/LibreCAD"
cat > "$HOME/.config/LibreCAD/LibreCAD.conf" <<'CONF'
[Appearance]
Language=en
LanguageCmd=en

[Defaults]
Unit=Millimeter
UseQtFileOpenDialog=1

[Geometry]
WindowHeight=720
WindowWidth=1280
WindowX=0
WindowY=0

[Startup]
FirstLoad=0

[WindowOptions]
SubWindowMode=0
CONF

cd "${TMPDIR:-/tmp}"
librecad > "${TMPDIR:-/tmp}/librecad.log" 2>&1 &
cad=$!
TASK_ROOT="$root" LIBRECAD_PID="$cad" python3 "$here/drive.py"
xdotool key ctrl+q || true
for _ in $(seq 50); do kill -0 "$cad" 2>/dev/null || break; sleep 0.1; done
kill "$cad" 2>/dev/null || true
test -s "$root/output/plate.dxf"
