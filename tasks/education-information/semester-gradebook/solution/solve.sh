#!/bin/bash
# Oracle for semester-gradebook, through the desktop only: Gnumeric opens (a copy of) the LMS
# export, then xdotool renames the sheet and appends Grades from the Edit > Sheet menu, moves with
# ctrl+Home and the arrow keys, types the headers, a letter table and one formula per column
# (entered into the whole column range at once with ctrl+Return), and saves with the Save As
# dialog. It never writes the workbook itself.
# Paths can be moved for a host test: TASK_DIR, OUT, SCREENS (default /task, /task/output and the
# desktop's screens folder when it exists).
set -euo pipefail
TASK_DIR="${TASK_DIR:-/task}"
OUT="${OUT:-$TASK_DIR/output}"
SCREENS="${SCREENS:-/run/lastexam/desktop/screens}"
: "${DISPLAY:?the oracle needs the desktop (DISPLAY)}"
N=56                         # students: Scores rows 3..58, Grades rows 2..57
LAST=$((N + 1))
mkdir -p "$OUT"
work="$(mktemp -d)"
cp "$TASK_DIR/inputs/scores.csv" "$work/scores.csv"   # Gnumeric works on a copy: inputs stay untouched

shot=0
screenshot() {
    [ -d "$SCREENS" ] && [ -w "$SCREENS" ] || return 0
    shot=$((shot + 1))
    local n
    n=$(printf '%04d' $(( $(find "$SCREENS" -maxdepth 1 -name '[0-9][0-9][0-9][0-9].png' | wc -l) + 1 )))
    ffmpeg -loglevel error -y -f x11grab -i "$DISPLAY" -frames:v 1 "$SCREENS/$n.png" || true
}

# Wait (up to $2 s) for a visible Gnumeric window whose title matches $1; print its id.
wait_window() {
    local i id
    for ((i = 0; i < ${2:-30} * 10; i++)); do
        id=$(xdotool search --onlyvisible --name "$1" 2>/dev/null | head -1 || true)
        if [ -n "$id" ]; then echo "$id"; return 0; fi
        sleep 0.1
    done
    echo "timed out waiting for a window named '$1'" >&2
    return 1
}

# Wait until no visible window matches $1.
wait_gone() {
    local i
    for ((i = 0; i < 300; i++)); do
        xdotool search --onlyvisible --name "$1" >/dev/null 2>&1 || return 0
        sleep 0.1
    done
    echo "window '$1' did not close" >&2
    return 1
}

main_window() { wait_window 'scores\.csv - Gnumeric$|gradebook\.gnumeric - Gnumeric$' 60; }
focus_main() { xdotool windowactivate --sync "$(main_window)" >/dev/null 2>&1 || true; sleep 0.2; }
keys() { xdotool key --clearmodifiers --delay 40 "$@"; }
text() { xdotool type --clearmodifiers --delay 8 "$1"; }

# Edit > Sheet > (mnemonic $1): a = Append, n = Rename.
sheet_menu() {
    focus_main
    keys alt+e
    sleep 0.4
    keys h
    sleep 0.4
    keys "$1"
}

rename_sheet() {  # the menu can lose a key under load: try again from a closed menu
    local try
    for try in 1 2 3; do
        sheet_menu n
        wait_window '^Rename Sheet$' 10 >/dev/null && break
        keys Escape Escape Escape
        [ "$try" = 3 ] && return 1
    done
    keys ctrl+a
    text "$1"
    keys Return
    wait_gone '^Rename Sheet$'
}

goto() {  # move the cursor to cell $1 (e.g. J2): ctrl+Home to A1, then arrow keys
    local col="${1%%[0-9]*}" row="${1##*[A-Z]}" c
    c=$(( $(printf '%d' "'$col") - 65 ))
    focus_main
    keys ctrl+Home
    [ "$c" -gt 0 ] && xdotool key --clearmodifiers --repeat "$c" --delay 5 Right
    [ "$row" -gt 1 ] && xdotool key --clearmodifiers --repeat $((row - 1)) --delay 5 Down
    sleep 0.2
}

fill_column() {  # $1 column letter, $2 formula for row 2, entered into rows 2..LAST at once
    goto "${1}2"
    xdotool key --clearmodifiers --repeat $((LAST - 2)) --delay 5 shift+Down
    text "$2"
    keys ctrl+Return
    sleep 0.3
}

gnumeric "$work/scores.csv" >"$work/gnumeric.log" 2>&1 &
gpid=$!
trap 'kill "$gpid" 2>/dev/null || true; rm -rf "$work"' EXIT
main_window >/dev/null
sleep 1
screenshot

rename_sheet Scores
sheet_menu a                  # append a sheet after Scores, then move to it
sleep 0.5
focus_main
keys ctrl+Next
sleep 0.3
rename_sheet Grades
screenshot

# Headers of Grades, row 1.
goto A1
for h in student_id homework_pct quiz_pct final_pct midterm_pct project_pct course_pct letter; do
    text "$h"
    keys Tab
done
# The letter table (lowest whole percentage of each grade), J1:K13; letters entered as formulas
# so that Gnumeric's autocomplete cannot turn "B" into the "B+" above it.
goto J1
text "min_percent"; keys Tab; text "grade"; keys Return
goto J2
for pair in 0:F 60:D- 63:D 67:D+ 70:C- 73:C 77:C+ 80:B- 83:B 87:B+ 90:A- 93:A; do
    text "${pair%%:*}"; keys Tab; text "=\"${pair#*:}\""; keys Return
done
keys Escape

hw='Scores!C3:J3'
qz='Scores!K3:T3'
fill_column A '=Scores!A3'
fill_column B "=(SUM($hw)-SMALL($hw,1)-SMALL($hw,2))/(COUNT($hw)-2)/Scores!C\$2*100"
fill_column C "=(SUM($qz)-SMALL($qz,1))/(COUNT($qz)-1)/Scores!K\$2*100"
fill_column D '=Scores!W3/Scores!W$2*100'
fill_column E '=IF(ISNUMBER(Scores!U3),MAX(Scores!U3/Scores!U$2*100,D2),D2)'
fill_column F '=Scores!V3/Scores!V$2*100'
fill_column G '=0.2*B2+0.15*C2+0.2*E2+0.15*F2+0.3*D2'
fill_column H '=IF(D2<40,"F",VLOOKUP(ROUND(G2,0),$J$2:$K$13,2,TRUE))'
goto A1
screenshot

# File > Save As (ctrl+shift+S): the file chooser's name field takes a full path; the file type
# stays "Gnumeric XML (*.gnumeric)", the chooser's default.
focus_main
keys ctrl+shift+s
wait_window '^Save the current workbook as$' 30 >/dev/null
sleep 0.5
keys ctrl+a
text "$OUT/gradebook.gnumeric"
sleep 0.2
screenshot
keys Return
wait_window 'gradebook\.gnumeric - Gnumeric$' 60 >/dev/null
for ((i = 0; i < 100; i++)); do
    [ -s "$OUT/gradebook.gnumeric" ] && break
    sleep 0.1
done
screenshot
focus_main
keys ctrl+q
for ((i = 0; i < 100; i++)); do
    kill -0 "$gpid" 2>/dev/null || break
    sleep 0.1
done
test -s "$OUT/gradebook.gnumeric"
