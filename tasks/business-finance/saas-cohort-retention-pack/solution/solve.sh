#!/bin/bash
# The oracle: recognised MRR, cohorts and SaaS metrics in DuckDB SQL (metrics.sql, pack.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/pack.py" "$here/metrics.sql" /task/output
