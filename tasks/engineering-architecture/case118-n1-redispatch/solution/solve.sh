#!/bin/bash
# Oracle: N-1 screening of the schedule in pandapower, then the preventive redispatch: a convex
# linearised N-1 SCOPF solved exactly (HiGHS), re-linearised at its AC operating point until it
# stops moving, verified by a full AC screening (solution/scopf.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/solve.py" /task/inputs /task/output
