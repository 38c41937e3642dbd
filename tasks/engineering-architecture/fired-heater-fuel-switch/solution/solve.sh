#!/bin/bash
# The oracle: Cantera (gri30) equilibrium, stream mixing at constant H and P, root searches.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/burner.py" /task/inputs /task/output
