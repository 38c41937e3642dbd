#!/bin/bash
# The oracle: the staging, SCD-2 and as-of fact models in DuckDB SQL.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
rm -f /task/output/warehouse.duckdb
python3 - "$here/warehouse.sql" /task/output/warehouse.duckdb <<'PY'
import sys

import duckdb

con = duckdb.connect(sys.argv[2])
con.execute("SET TimeZone = 'UTC'")
con.execute(open(sys.argv[1]).read())
con.close()
PY
