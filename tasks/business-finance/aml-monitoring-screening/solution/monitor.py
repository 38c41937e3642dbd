"""Oracle driver: runs monitor.sql in DuckDB, then the structuring scan (a deposit counts
toward one alert only, so the scan is sequential), the cases and the CSVs."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import duckdb


def structuring(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    rows = con.execute("SELECT customer_id, txn_id, ts, usd FROM candidates ORDER BY customer_id, ts, txn_id").fetchall()
    found, pool, cust = [], [], None
    for c, txn, ts, usd in rows:
        if c != cust:
            cust, pool = c, []
        pool = [p for p in pool if p[1] >= ts - 48 * 3600] + [(txn, ts, usd)]
        if len(pool) >= 3 and sum(p[2] for p in pool) >= 25000:
            found.append((c, "STRUCTURING", txn, ";".join(sorted(p[0] for p in pool)), sum(p[2] for p in pool)))
            pool = []
    return found


def write(path: Path, header: list[str], rows: list) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main(out: Path) -> None:
    con = duckdb.connect()
    con.execute((Path(__file__).parent / "monitor.sql").read_text())
    alerts = structuring(con) + con.execute("SELECT * FROM rapid UNION ALL SELECT * FROM corridor").fetchall()
    alerts.sort(key=lambda a: (a[0], a[1], a[2]))
    write(out / "alerts.csv", ["alert_id", "customer_id", "scenario", "trigger_txn_id", "txn_ids", "total_usd"],
          [(f"A{i:04d}", c, s, t, ";".join(sorted(ids.split(";"))), f"{usd:.2f}")
           for i, (c, s, t, ids, usd) in enumerate(alerts, 1)])
    hits = con.execute("SELECT customer_id, entry_id, score, confirmed FROM hits ORDER BY 1, 2").fetchall()
    write(out / "screening_hits.csv", ["customer_id", "entry_id", "score", "disposition"],
          [(c, e, f"{s:.4f}", "CONFIRMED" if ok else "DISCOUNTED") for c, e, s, ok in hits])
    scen: dict[str, set[str]] = {}
    count: dict[str, int] = {}
    for a in alerts:
        scen.setdefault(a[0], set()).add(a[1])
        count[a[0]] = count.get(a[0], 0) + 1
    confirmed = {c for c, _, _, ok in hits if ok}
    write(out / "cases.csv", ["customer_id", "alert_count", "scenarios", "sanctions_confirmed", "priority"],
          [(c, count.get(c, 0), ";".join(sorted(scen.get(c, ()))), str(c in confirmed).lower(),
            "HIGH" if c in confirmed or len(scen.get(c, ())) >= 2 else "MEDIUM")
           for c in sorted(set(scen) | confirmed)])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
