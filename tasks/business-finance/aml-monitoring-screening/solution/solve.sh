#!/bin/bash
# Oracle for aml-monitoring-screening: DuckDB SQL for the ledger, scenarios and screening.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/monitor.py" /task/output
