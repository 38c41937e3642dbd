#!/bin/bash
# Oracle for item-analysis-miskey-moodle: pandas scoring and item statistics, key review
# against the stems, Moodle XML written with ElementTree.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/analyse.py" /task/inputs /task/output
