#!/bin/bash
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/build_bundle.py" /task/inputs/feed.hl7 /task/inputs/lab_code_map.csv /task/output/bundle.json
