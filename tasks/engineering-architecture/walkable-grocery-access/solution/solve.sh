#!/bin/bash
# Oracle for walkable-grocery-access: GeoPandas layers, NetworkX walk network, exact two-site MCLP.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/access.py" /task/inputs /task/output
