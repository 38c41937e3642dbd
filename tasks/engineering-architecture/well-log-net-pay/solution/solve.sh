#!/bin/bash
# The oracle: lasio reads and writes the logs; NumPy applies the field's interpretation rules.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/petro.py" /task/inputs /task/output
