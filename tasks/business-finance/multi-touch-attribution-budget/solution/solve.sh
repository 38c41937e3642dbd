#!/bin/bash
# Oracle for multi-touch-attribution-budget: pandas/NumPy journeys, heuristic and Markov
# attribution, then the budget by the KKT condition (equal marginal return, bisection on it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/attribution.py" /task/inputs /task/output
