"""Runs metrics.sql in DuckDB and writes cohorts.csv and metrics.json."""

import json
import sys

import duckdb

sql, out = sys.argv[1], sys.argv[2]
con = duckdb.connect()
con.execute(open(sql).read())
con.execute(f"""
COPY (SELECT c.cohort_month, c.month_offset, c.cohort_accounts, c.active_accounts, round(c.mrr, 2) AS mrr,
             round(c.active_accounts / c.cohort_accounts, 6) AS logo_retention,
             round(c.mrr / b.mrr, 6) AS revenue_retention
      FROM cells c JOIN cells b ON b.cohort_month = c.cohort_month AND b.month_offset = 0
      ORDER BY 1, 2) TO '{out}/cohorts.csv' (HEADER)""")
now, ago = "DATE '2025-06-01'", "DATE '2024-06-01'"
mrr, n = con.execute(f"SELECT sum(mrr), count(*) FROM mrr WHERE month = {now}").fetchone()
nrr, grr = con.execute(f"""
SELECT sum(coalesce(n.mrr, 0)) / sum(a.mrr), sum(least(coalesce(n.mrr, 0), a.mrr)) / sum(a.mrr)
FROM mrr a LEFT JOIN mrr n ON n.account_id = a.account_id AND n.month = {now} WHERE a.month = {ago}""").fetchone()
churn = con.execute(f"""
WITH m AS (SELECT DISTINCT month FROM mrr WHERE month > {ago} AND month <= {now})
SELECT avg(lost / base) FROM (
  SELECT m.month, count(*) AS base,
         count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM mrr c WHERE c.account_id = p.account_id AND c.month = m.month)) AS lost
  FROM m JOIN mrr p ON p.month = m.month - INTERVAL 1 MONTH GROUP BY m.month)""").fetchone()[0]
arpa = mrr / n
metrics = {"reporting_month": "2025-06", "mrr": round(mrr, 2), "arr": round(12 * mrr, 2), "active_accounts": n,
           "arpa": round(arpa, 2), "nrr_12m": round(nrr, 6), "grr_12m": round(grr, 6),
           "avg_monthly_logo_churn": round(churn, 6), "ltv": round(arpa * 0.78 / churn, 2)}
with open(f"{out}/metrics.json", "w") as f:
    json.dump(metrics, f, indent=2)
