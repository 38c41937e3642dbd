"""Grader for cdc-scd2-customer-warehouse: SQL on the agent's warehouse.duckdb against the truth.

The truth is the generator's timeline, not a rerun of the oracle. Timestamps are compared to
the second (the source has whole seconds; any valid load keeps them); money to the cent (the
source prices are whole cents, so any valid load is exact); the revenue roll-up to 1 cent
(a sum of exact cents).
"""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, match_rows, rows_by

DIM_COLS = ["customer_sk", "customer_id", "name", "email", "region", "segment", "valid_from", "valid_to", "is_current"]
FCT_COLS = ["order_id", "customer_sk", "customer_id", "product_id", "order_ts", "quantity", "unit_price", "revenue"]
OPEN_FROM = 253370764800  # 9999-01-01: a far-future sentinel counts as an open validity
MAX_ROWS = 200_000
# The crux gate: orders attributed to the customer's attributes in force at order time. Measured
# on these inputs: a type-1 dimension (current attributes only) 61 %, versions on extract time
# 80.7 %, the Chicago offset applied the wrong way 82.8 %, an as-of join on the order date 85.0 %,
# the Chicago clock read as UTC 87.3 %, a valid load 100 %. The line sits between the designs
# that mistake the time axis and those that slip boundaries by hours, not on any of them.
CRUX_SHARE = 0.84
QUERY_SECONDS = 240  # reading a few thousand rows takes well under a second


def _iso(epoch) -> str | None:
    if epoch is None:
        return None
    if epoch >= OPEN_FROM:
        return None
    e = float(epoch)
    if e != int(e):
        return f"{datetime.fromtimestamp(int(e), UTC):%Y-%m-%d %H:%M:%S}+{e - int(e):.3f}s"
    return f"{datetime.fromtimestamp(int(e), UTC):%Y-%m-%d %H:%M:%S}"


def _ts(col: str) -> str:
    return f"epoch(CAST({col} AS TIMESTAMPTZ))"


def read_warehouse(ctx: GradeContext):
    """(dim rows, fact rows) as dicts, or an Outcome saying why the warehouse cannot be read."""
    path = ctx.out("warehouse.duckdb")
    if not path.is_file():
        return None, Outcome(False, "warehouse.duckdb is missing or not a file")
    copy = ctx.scratch / "warehouse.duckdb"
    shutil.copyfile(path, copy)
    wal = ctx.out("warehouse.duckdb.wal")  # changes not yet checkpointed: DuckDB replays them on open
    if wal.is_file():
        shutil.copyfile(wal, ctx.scratch / "warehouse.duckdb.wal")
    try:
        import duckdb

        # The tables may be views: no file access (a view could read the hidden reference), bounded memory.
        con = duckdb.connect(str(copy), read_only=True,
                             config={"enable_external_access": False, "memory_limit": "2GB", "threads": 1})
    except Exception as e:  # duckdb raises several types on a file that is not a database
        return None, Outcome(False, f"warehouse.duckdb does not open in DuckDB: {type(e).__name__}: {e}"[:300])
    timer = threading.Timer(QUERY_SECONDS, con.interrupt)  # a view can compute for ever
    timer.start()
    try:
        con.execute("SET TimeZone = 'UTC'")
        have = {}
        for table, cols in (("dim_customer", DIM_COLS), ("fct_orders", FCT_COLS)):
            found = {r[0].lower() for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE lower(table_name) = ?", [table]).fetchall()}
            have[table] = sorted(set(cols) - found)
        if any(have.values()):
            return None, Outcome(False, "tables or columns missing", expected={"dim_customer": DIM_COLS, "fct_orders": FCT_COLS},
                                 seen={"missing": have})
        dim = con.execute(f"""SELECT CAST(customer_sk AS VARCHAR), CAST(customer_id AS VARCHAR), CAST(name AS VARCHAR),
                CAST(email AS VARCHAR), CAST(region AS VARCHAR), CAST(segment AS VARCHAR), {_ts('valid_from')},
                {_ts('valid_to')}, CAST(is_current AS BOOLEAN) FROM dim_customer LIMIT {MAX_ROWS}""").fetchall()
        fct = con.execute(f"""SELECT CAST(order_id AS VARCHAR), CAST(customer_sk AS VARCHAR), CAST(customer_id AS VARCHAR),
                CAST(product_id AS VARCHAR), {_ts('order_ts')}, CAST(quantity AS DOUBLE), CAST(unit_price AS DOUBLE),
                CAST(revenue AS DOUBLE) FROM fct_orders LIMIT {MAX_ROWS}""").fetchall()
    except Exception as e:  # a column of a type that does not cast, a corrupt table
        return None, Outcome(False, f"the tables cannot be read with the required types: {type(e).__name__}: {e}"[:300])
    finally:
        timer.cancel()
        con.close()
    dim_rows = [dict(zip(["sk", "customer_id", "name", "email", "region", "segment", "valid_from", "valid_to", "is_current"],
                         (r[0], r[1], r[2], r[3], r[4], r[5], _iso(r[6]), _iso(r[7]), r[8]), strict=True)) for r in dim]
    fct_rows = [dict(zip(["order_id", "sk", "customer_id", "product_id", "order_ts", "quantity", "unit_price", "revenue"],
                         (r[0], r[1], r[2], r[3], _iso(r[4]), r[5], r[6], r[7]), strict=True)) for r in fct]
    return (dim_rows, fct_rows), Outcome(True, f"{len(dim_rows)} dimension rows, {len(fct_rows)} fact rows")


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    tables, ok = read_warehouse(ctx)
    r.gate("warehouse.duckdb opens and holds dim_customer and fct_orders with the required columns", ok)
    dim_rows, fct_rows = tables if tables else ([], [])

    ref_versions = {(cid, _iso(vf)): {"valid_to": _iso(vt), "region": rg, "segment": sg, "is_current": vt is None and cid not in ref["deleted"],
                                      "name": ref["type1"][cid][0], "email": ref["type1"][cid][1]}
                    for cid, vf, vt, rg, sg in ref["versions"]}
    by_cust: dict[str, list] = {}
    for cid, vf, _vt, rg, sg in ref["versions"]:
        by_cust.setdefault(cid, []).append((vf, rg, sg))
    ref_orders = {}
    for oid, cid, vf, ts, pid, qty, cents in ref["orders"]:
        attrs = next((rg, sg) for f, rg, sg in by_cust[cid] if f == vf)
        ref_orders[oid] = {"customer_id": cid, "version_from": _iso(vf), "attrs": "|".join(attrs), "order_ts": _iso(ts),
                           "product_id": pid, "quantity": qty, "unit_price": cents / 100, "revenue": qty * cents / 100}

    dim = rows_by(dim_rows, lambda row: (row["customer_id"], row["valid_from"]))
    by_sk = rows_by(dim_rows, "sk")
    fct = rows_by(fct_rows, "order_id")
    seen_orders = {}
    for oid, row in fct.items():
        v = by_sk.get(row["sk"]) or {}
        seen_orders[oid] = {**row, "version_from": v.get("valid_from"),
                            "attrs": f"{v.get('region')}|{v.get('segment')}" if v else None}

    right = sum(1 for oid, want in ref_orders.items()
                if (seen_orders.get(oid) or {}).get("attrs") == want["attrs"]
                and seen_orders[oid].get("customer_id") == want["customer_id"])
    share = right / len(ref_orders)
    r.gate("orders carry the customer attributes in force at order time (>= 84 % of orders)",
           Outcome(share >= CRUX_SHARE, f"{right} of {len(ref_orders)} orders ({share:.1%}) joined to a version with the true region and segment",
                   expected=f">= {CRUX_SHARE:.0%}", seen=round(share, 4)))

    r.check("dim_customer holds exactly the SCD-2 versions (customer, valid_from) with their region and segment", 3,
            all_of([("one row per version", dim.coverage(ref_versions)),
                    ("type-2 attributes", match_rows(dim, ref_versions, ["region", "segment"]))]))
    r.check("validity intervals: valid_to is the next version's valid_from, the delete time, or open", 2,
            match_rows(dim, ref_versions, ["valid_to"]))
    r.check("is_current true on exactly the open version of each live customer", 1,
            match_rows(dim, ref_versions, ["is_current"], only=True))
    r.check("type-1 attributes (name, email) from the latest after-image on every version", 1,
            match_rows(dim, ref_versions, ["name", "email"]))
    r.check("customer_sk is a unique, non-empty surrogate key", 1,
            Outcome(bool(dim_rows) and not by_sk.duplicates and not by_sk.unkeyed,
                    f"{len(by_sk)} keys, {len(set(by_sk.duplicates))} repeated, {by_sk.unkeyed} empty",
                    expected="unique and non-empty", seen={"repeated": sorted(set(by_sk.duplicates))[:5], "empty": by_sk.unkeyed}))
    r.check("fct_orders has exactly one row per order", 2, fct.coverage(ref_orders))
    r.check("every order points (customer_sk) to the version valid at order time", 3,
            match_rows(seen_orders, ref_orders, ["customer_id", "version_from"]))
    # Whole cents in the source: a valid load is exact; 0.005 absorbs binary floating point.
    r.check("unit_price in dollars and revenue = quantity x unit_price, to the cent", 2,
            match_rows(fct, ref_orders, ["unit_price", "revenue"], abs=0.005))
    r.check("order_ts in UTC, product and quantity as delivered", 1,
            match_rows(fct, ref_orders, ["order_ts", "product_id", "quantity"]))

    roll: dict[str, dict[str, float]] = {}  # as a report would sum it: every fact row
    for row in fct_rows:
        v = by_sk.get(row["sk"])
        if v is not None and isinstance(row["revenue"], float):
            roll.setdefault(f"{v['region']}|{v['segment']}", {"revenue": 0.0})["revenue"] += row["revenue"]
    ref_roll = {k: {"revenue": v / 100} for k, v in ref["revenue_cents_by_region_segment"].items()}
    # A sum of exact cents: 1 cent absorbs floating-point summation only.
    r.check("revenue by region x segment as of order time ties out to the cent", 1,
            match_rows(roll, ref_roll, ["revenue"], abs=0.01, only=True))
    return r
