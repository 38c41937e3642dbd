#!/bin/bash
# Oracle for closed-traverse-plat: reduction, angular balance and compass rule in Python,
# State Plane to NAD83 with PROJ (pyproj), plat drawn with ezdxf.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/traverse.py" /task/inputs /task/output
