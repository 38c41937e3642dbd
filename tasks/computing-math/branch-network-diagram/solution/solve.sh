#!/bin/bash
# Oracle: derive the topology from the IPAM export (build_dia.py), draw it as Dia XML, then let Dia
# load the draft and save it as a native Dia diagram.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output
python3 "$here/build_dia.py" /task/inputs "$work/draft.dia"
HOME="$work" dia --nosplash --export=/task/output/network.dia --filter=dia "$work/draft.dia"
