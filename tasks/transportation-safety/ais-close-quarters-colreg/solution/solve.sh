#!/bin/bash
# Decode with pyais, dead-reckon and screen pairs with pyproj geodesics, classify per COLREG.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/analyse.py" /task/inputs/ais_log.nmea /task/output
