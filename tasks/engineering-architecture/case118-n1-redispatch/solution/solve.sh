#!/bin/bash
# Oracle: N-1 screening of the schedule in pandapower, then a successive-linearisation
# security-constrained redispatch verified by full AC screenings (solution/scopf.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/solve.py" /task/inputs /task/output
