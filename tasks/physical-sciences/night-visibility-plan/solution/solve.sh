#!/bin/bash
# The oracle: astropy AltAz (no refraction), twilight and airmass-2 crossings bisected to 0.1 s.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/plan.py" /task/inputs /task/output
