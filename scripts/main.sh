#!/bin/bash
# The main job, from a fresh Debian machine (as root): install everything the public suite
# needs, run it with the built-in calibration agents (oracle and nop), print the results.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
lx=.venv/bin/lastexam

$lx env install --all
# The computer-use MCP server that desktop (GUI) trials mount at /opt/desktop.
$lx agents install computer
stamp="$(date +%Y%m%d-%H%M%S)"
out="runs/quickstart-$stamp"
$lx run tasks --agent oracle --concurrency 2 --out "$out/oracle"
$lx run tasks --agent nop --concurrency 2 --out "$out/nop"
$lx compare "$out/oracle" "$out/nop"
$lx report "$out/oracle" "$out/nop" --html "$out/report.html" --csv "$out/leaderboard.csv"
echo "report (opens offline): $out/report.html"
