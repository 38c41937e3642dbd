#!/bin/bash
# Oracle for fitout-schedule-leveling-evm: CPM passes on the working-day calendar, optimal
# levelling with OR-Tools CP-SAT, earned value at the status date.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 -B "$here/plan.py" /task/inputs /task/output
