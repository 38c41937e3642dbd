#!/bin/bash
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/characterise.py" /task/inputs /task/output
