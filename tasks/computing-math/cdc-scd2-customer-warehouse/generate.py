"""Seeded generator of inputs/ and reference/ for cdc-scd2-customer-warehouse.

python3 generate.py --out DIR writes DIR/inputs/ and DIR/reference/.

The truth is a per-customer timeline of full after-images on business-effective time (CRM
wall clock, America/Chicago). CDC rows are cut from it by commit day, with planted problems:
backdated changes committed days later (late arrivals, some before a change already
delivered), corrections at the same second as the change they fix, rows re-sent by the
overlapping extract window, type-1-only changes, deletes, orders re-delivered, and the
webshop export switching to integer minor units from 2026-03-10.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

SEED = 14_2026
CANARY = "aad3f822-3364-4cbf-aa13-5e2ffc306d16"
CHI = ZoneInfo("America/Chicago")
REGIONS = ["Northeast", "Southeast", "Midwest", "Southwest", "West"]
SEGMENTS = ["Consumer", "Small Business", "Mid-Market", "Enterprise"]
FIRST = ["Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kira", "Luis",
         "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tariq", "Uma", "Vik", "Wen", "Yara", "Zoe"]
LAST = ["Adams", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen", "Khan",
        "Lopez", "Moreau", "Nguyen", "Okafor", "Patel", "Quist", "Rossi", "Silva", "Tanaka", "Usman", "Vogel"]
DOMAINS = ["example.com", "mail.example", "corp.example", "inbox.example"]
N_INITIAL = 480
FIRST_DAY = datetime(2026, 3, 1)  # local CRM day of the snapshot; changes from 2026-03-01 to 03-14
N_DAYS = 14
MINOR_UNITS_FROM = 9  # day index (0 = 2026-03-02 extract) from which orders carry unit_price_minor
README = """# Source feeds for the customer warehouse

## crm/ : CDC extracts of the CRM `customers` table

Produced by the replication tool, which runs every morning at about 08:00 UTC.

- `customers_snapshot_2026-03-01.csv`: the initial full extract, one `I` row per customer
  that existed when replication was switched on.
- `customers_cdc_YYYY-MM-DD.csv`: the changes committed in the CRM since the previous run.
  To be safe against gaps, each run re-reads a short overlap of the previous run's window.

| column | meaning |
|---|---|
| `op` | `I` insert, `U` update, `D` delete |
| `customer_id` | business key |
| `name`, `email`, `region`, `segment` | the full after-image of the row; empty on `D` rows |
| `updated_at` | business-effective time of the change, as recorded by the CRM application. Account managers may enter a change with an earlier effective time than the day they key it in. The CRM server keeps local time at the Chicago office and writes its timestamps without an offset. |
| `_lsn` | replication log sequence number: unique per committed change, increasing in commit order |
| `_extracted_at` | when the extract ran (UTC) |

## orders/ : webshop order exports

One file per morning with the orders of the previous UTC day. Delivery is at-least-once,
and an order that reached the export late is in the next morning's file.
`order_ts` is the time the order was placed, ISO 8601 in UTC.
"""
PRODUCTS = {f"P{i:03d}": round(random.Random(i).uniform(4, 180), 2) for i in range(1, 41)}


def to_utc(local: datetime) -> datetime:
    return local.replace(tzinfo=CHI).astimezone(UTC).replace(tzinfo=None)


def valid_local(t: datetime) -> bool:
    """A wall-clock time that exists exactly once in America/Chicago."""
    a = t.replace(tzinfo=CHI, fold=0).astimezone(UTC)
    b = t.replace(tzinfo=CHI, fold=1).astimezone(UTC)
    return a == b and a.astimezone(CHI).replace(tzinfo=None) == t


def rand_local(rng: random.Random, start: datetime, end: datetime) -> datetime:
    span = int((end - start).total_seconds())
    while True:
        t = start + timedelta(seconds=rng.randrange(span))
        if valid_local(t):
            return t


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def person(rng: random.Random) -> tuple[str, str]:
    f, ln = rng.choice(FIRST), rng.choice(LAST)
    return f"{f} {ln}", f"{f.lower()}.{ln.lower()}{rng.randrange(1, 99)}@{rng.choice(DOMAINS)}"


def build_timelines(rng: random.Random):
    """customer_id -> list of events (eff_local, commit_local, op, image) in effective order."""
    timelines: dict[str, list[dict]] = {}
    snapshot_at = FIRST_DAY - timedelta(seconds=1)
    for i in range(1, N_INITIAL + 1):
        cid = f"C{i:05d}"
        name, email = person(rng)
        eff = rand_local(rng, datetime(2024, 1, 3), datetime(2026, 2, 27))
        image = {"name": name, "email": email, "region": rng.choice(REGIONS), "segment": rng.choice(SEGMENTS)}
        timelines[cid] = [{"eff": eff, "commit": snapshot_at, "op": "I", "image": image, "snap": True}]
    next_id = N_INITIAL + 1
    for d in range(N_DAYS):
        day0 = FIRST_DAY + timedelta(days=d)
        day1 = day0 + timedelta(days=1)
        for _ in range(rng.randint(1, 4)):
            cid = f"C{next_id:05d}"
            next_id += 1
            name, email = person(rng)
            eff = rand_local(rng, day0, day1)
            late = rng.random() < 0.25 and d + 2 < N_DAYS
            commit = eff + timedelta(days=rng.randint(1, 2)) if late else eff
            image = {"name": name, "email": email, "region": rng.choice(REGIONS), "segment": rng.choice(SEGMENTS)}
            timelines[cid] = [{"eff": eff, "commit": commit, "op": "I", "image": image}]
        active = sorted(c for c, ev in timelines.items()
                        if ev[-1]["op"] != "D" and ev[-1]["eff"] < day0 and ev[0]["commit"] < day0)
        for cid in active:
            u = rng.random()
            if u < 0.003:
                eff = rand_local(rng, day0, day1)
                timelines[cid].append({"eff": eff, "commit": eff, "op": "D", "image": None})
                continue
            if u > 0.075:
                continue
            cur = dict(timelines[cid][-1]["image"])
            kind = rng.random()
            if kind < 0.5:
                cur["segment"] = rng.choice([s for s in SEGMENTS if s != cur["segment"]])
            elif kind < 0.65:
                cur["region"] = rng.choice([r for r in REGIONS if r != cur["region"]])
            elif kind < 0.75:
                cur["segment"] = rng.choice([s for s in SEGMENTS if s != cur["segment"]])
                cur["region"] = rng.choice([r for r in REGIONS if r != cur["region"]])
            elif kind < 0.9:
                cur["email"] = cur["email"].split("@")[0] + "@" + rng.choice([x for x in DOMAINS if not cur["email"].endswith(x)])
            else:
                cur["name"] = cur["name"].split()[0] + " " + rng.choice(LAST)
            eff = rand_local(rng, day0, day1)
            prev = timelines[cid][-1]["eff"]
            commit = eff
            if d >= 2 and rng.random() < 0.12:  # backdated by a clerk, committed on this day
                back = rand_local(rng, max(prev, day0 - timedelta(days=3)) + timedelta(hours=1), day0)
                if back > prev:
                    eff = back
            timelines[cid].append({"eff": eff, "commit": commit, "op": "U", "image": cur})
            if rng.random() < 0.06:  # a typo fixed in the same second: only the later commit counts
                fixed = dict(cur)
                fixed["segment"] = rng.choice([s for s in SEGMENTS if s != cur["segment"]])
                timelines[cid].append({"eff": eff, "commit": commit, "op": "U", "image": fixed, "fix": True})
    plant_out_of_order(rng, timelines)
    return timelines


def plant_out_of_order(rng: random.Random, timelines: dict[str, list[dict]]) -> None:
    """Backdated type-2 changes committed after a later change of the same customer was delivered."""
    cands = sorted(c for c, ev in timelines.items()
                   if ev[-1]["op"] == "U" and not ev[-1].get("fix") and len(ev) >= 2
                   and ev[-1]["eff"] - ev[-2]["eff"] > timedelta(days=2) and ev[-1]["eff"] < FIRST_DAY + timedelta(days=11))
    for cid in rng.sample(cands, min(10, len(cands))):
        ev = timelines[cid]
        later, before = ev[-1], ev[-2]
        lo = max(before["eff"], FIRST_DAY) + timedelta(hours=2)
        eff = rand_local(rng, lo, later["eff"] - timedelta(hours=2))
        mid = dict(before["image"])
        mid["region"] = rng.choice([r for r in REGIONS if r not in (mid["region"], later["image"]["region"])])
        commit = later["commit"] + timedelta(days=rng.randint(1, 2))
        ev.insert(len(ev) - 1, {"eff": eff, "commit": commit, "op": "U", "image": mid})


def truth_versions(events: list[dict]) -> tuple[list[dict], datetime | None]:
    """SCD-2 versions on (region, segment) from events sorted by (eff, lsn)."""
    versions: list[dict] = []
    deleted = None
    evs = sorted(events, key=lambda e: (e["eff"], e["lsn"]))
    collapsed = []
    for e in evs:
        if collapsed and collapsed[-1]["eff"] == e["eff"]:
            collapsed[-1] = e
        else:
            collapsed.append(e)
    for e in collapsed:
        t = to_utc(e["eff"])
        if e["op"] == "D":
            versions[-1]["valid_to"] = t
            deleted = t
            break
        key = (e["image"]["region"], e["image"]["segment"])
        if versions and (versions[-1]["region"], versions[-1]["segment"]) == key:
            continue
        if versions:
            versions[-1]["valid_to"] = t
        versions.append({"valid_from": t, "valid_to": None, "region": key[0], "segment": key[1]})
    return versions, deleted


def csv_text(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def epoch(t: datetime | None) -> int | None:
    return None if t is None else int(t.replace(tzinfo=UTC).timestamp())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    inputs, ref = out / "inputs", out / "reference"
    for sub in ("crm", "orders"):
        (inputs / sub).mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)

    (inputs / "README.md").write_text(README)
    timelines = build_timelines(rng)
    all_events = sorted(((e["commit"], e["eff"], cid, k) for cid, ev in timelines.items() for k, e in enumerate(ev)),
                        key=lambda x: (x[0], x[1], x[2], x[3]))
    lsn = 10_000_000
    for _commit, _eff, cid, k in all_events:
        lsn += rng.randint(1, 40)
        timelines[cid][k]["lsn"] = lsn

    header = ["op", "customer_id", "name", "email", "region", "segment", "updated_at", "_lsn", "_extracted_at"]
    extracts: dict[int, list[list]] = {d: [] for d in range(-1, N_DAYS)}
    for cid, ev in sorted(timelines.items()):
        for e in ev:
            d = -1 if e.get("snap") else (e["commit"] - FIRST_DAY).days
            img = e["image"] or {"name": "", "email": "", "region": "", "segment": ""}
            extracts[d].append([e["op"], cid, img["name"], img["email"], img["region"], img["segment"],
                                stamp(e["eff"]), e["lsn"]])
    carried: list[list] = []
    for d in range(-1, N_DAYS):
        run_at = FIRST_DAY + timedelta(days=d + 1, hours=8, minutes=rng.randint(0, 40))
        rows = sorted(extracts[d] + carried, key=lambda r: r[7])
        carried = [r for r in extracts[d] if rng.random() < 0.04] if d >= 0 else []
        body = [r + [run_at.strftime("%Y-%m-%dT%H:%M:%SZ")] for r in rows]
        name = "customers_snapshot_2026-03-01.csv" if d == -1 else f"customers_cdc_{(FIRST_DAY + timedelta(days=d + 1)):%Y-%m-%d}.csv"
        (inputs / "crm" / name).write_text(csv_text(header, body))

    versions = {cid: truth_versions(ev) for cid, ev in timelines.items()}
    latest = {}
    for cid, ev in timelines.items():
        imgs = sorted((e for e in ev if e["op"] != "D"), key=lambda e: (e["eff"], e["lsn"]))
        latest[cid] = [imgs[-1]["image"]["name"], imgs[-1]["image"]["email"]]

    # Orders: UTC instants, a fifth placed within 7 h of a version boundary of their customer.
    start_utc = FIRST_DAY
    end_utc = FIRST_DAY + timedelta(days=N_DAYS)
    boundary_custs = sorted(c for c, (v, _) in versions.items() if len(v) > 1)
    orders = []
    oid = 500_000
    while len(orders) < 2600:
        if rng.random() < 0.3:
            cid = rng.choice(boundary_custs)
            vs = versions[cid][0]
            b = rng.choice(vs[1:])["valid_from"]
            t = b + timedelta(seconds=rng.randint(-7 * 3600, 7 * 3600))
        else:
            cid = rng.choice(sorted(versions))
            t = start_utc + timedelta(seconds=rng.randrange(int((end_utc - start_utc).total_seconds())))
        vs, deleted = versions[cid]
        if not (start_utc <= t < end_utc) or t < vs[0]["valid_from"] or (deleted is not None and t >= deleted):
            continue
        v = next(x for x in vs if x["valid_from"] <= t and (x["valid_to"] is None or t < x["valid_to"]))
        oid += rng.randint(1, 9)
        pid = rng.choice(sorted(PRODUCTS))
        orders.append({"order_id": f"SO{oid}", "customer_id": cid, "product_id": pid, "t": t,
                       "qty": rng.choice([1, 1, 1, 2, 2, 3, 5, 10]), "cents": round(PRODUCTS[pid] * 100), "v": v})
    orders.sort(key=lambda o: o["t"])
    files: dict[int, list[dict]] = {d: [] for d in range(N_DAYS)}
    for o in orders:
        d = (o["t"] - start_utc).days
        if rng.random() < 0.03 and d + 1 < N_DAYS:
            d += 1
        files[d].append(o)
        if rng.random() < 0.025 and d + 1 < N_DAYS:
            files[d + 1].append(o)
    for d in range(N_DAYS):
        minor = d >= MINOR_UNITS_FROM
        hdr = ["order_id", "customer_id", "product_id", "order_ts", "quantity", "unit_price_minor" if minor else "unit_price"]
        rows = [[o["order_id"], o["customer_id"], o["product_id"], o["t"].strftime("%Y-%m-%dT%H:%M:%SZ"), o["qty"],
                 o["cents"] if minor else f"{o['cents'] / 100:.2f}"] for o in sorted(files[d], key=lambda o: (o["t"], o["order_id"]))]
        (inputs / "orders" / f"orders_{(FIRST_DAY + timedelta(days=d + 1)):%Y-%m-%d}.csv").write_text(csv_text(hdr, rows))

    by_rs: dict[str, int] = {}
    for o in orders:
        k = f"{o['v']['region']}|{o['v']['segment']}"
        by_rs[k] = by_rs.get(k, 0) + o["qty"] * o["cents"]
    reference = {
        "canary": CANARY,
        "versions": [[cid, epoch(v["valid_from"]), epoch(v["valid_to"]), v["region"], v["segment"]]
                     for cid in sorted(versions) for v in versions[cid][0]],
        "deleted": {cid: epoch(dl) for cid, (_, dl) in sorted(versions.items()) if dl is not None},
        "type1": {cid: latest[cid] for cid in sorted(latest)},
        "orders": [[o["order_id"], o["customer_id"], epoch(o["v"]["valid_from"]), epoch(o["t"]), o["product_id"],
                    o["qty"], o["cents"]] for o in orders],
        "revenue_cents_by_region_segment": dict(sorted(by_rs.items())),
    }
    (ref / "expected.json").write_text(json.dumps(reference, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
