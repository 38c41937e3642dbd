#!/bin/bash
# Load sheet, geodesic legs and winds (pyproj), fuel plan and AFM takeoff distance (NumPy).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/dispatch.py" /task/inputs /task/output
