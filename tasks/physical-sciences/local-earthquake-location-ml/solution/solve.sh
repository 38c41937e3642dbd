#!/bin/bash
# QC, clock correction, response removal, picking, TauP grid-search location, Wood-Anderson ML
# and QuakeML, all with ObsPy.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/analyse.py" /task/inputs /task/output
