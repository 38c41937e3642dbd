#!/bin/bash
# Oracle for reverse-tuck-carton-dieline: ezdxf draws the blank to the house standard.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/dieline.py" /task/inputs/job_ticket.json /task/output/dieline.dxf
