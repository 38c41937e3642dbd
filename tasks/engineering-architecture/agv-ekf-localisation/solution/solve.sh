#!/bin/bash
# Oracle for agv-ekf-localisation: an EKF in NumPy over the AGV's logs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/ekf.py" /task/inputs /task/output
