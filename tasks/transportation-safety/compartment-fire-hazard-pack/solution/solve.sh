#!/bin/bash
# Oracle for compartment-fire-hazard-pack: the hand calculations scripted with SciPy (ODE events, root finding).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/fire_pack.py" /task/inputs /task/output
