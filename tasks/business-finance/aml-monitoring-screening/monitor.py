"""The bank's monitoring and screening rules, in plain Python: generate.py computes the
reference with them (the oracle runs the same rules in DuckDB SQL, independently)."""

from __future__ import annotations

import bisect
import unicodedata
from datetime import UTC, datetime, timedelta

STRUCT_LO, STRUCT_HI, STRUCT_SUM, STRUCT_N = 3000.0, 10000.0, 25000.0, 3
RAPID_MIN, RAPID_SHARE = 25000.0, 0.80
CORRIDOR_MIN = 10000.0
JW_MIN = 0.92
TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "sheikh", "hon", "gen", "col"}


def utc(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)


def jaro_winkler(a: str, b: str) -> float:
    if a == b:
        return 1.0
    la, lb = len(a), len(b)
    if not la or not lb:
        return 0.0
    window = max(0, max(la, lb) // 2 - 1)
    used_b = [False] * lb
    match_a = []
    for i, ch in enumerate(a):
        for j in range(max(0, i - window), min(lb, i + window + 1)):
            if not used_b[j] and b[j] == ch:
                used_b[j] = True
                match_a.append(ch)
                break
    m = len(match_a)
    if not m:
        return 0.0
    match_b = [b[j] for j in range(lb) if used_b[j]]
    half_t = sum(x != y for x, y in zip(match_a, match_b, strict=True)) / 2
    jaro = (m / la + m / lb + (m - half_t) / m) / 3
    prefix = 0
    for x, y in zip(a[:4], b[:4], strict=False):
        if x != y:
            break
        prefix += 1
    return jaro + prefix * 0.1 * (1 - jaro)


def normalise(name: str) -> str:
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    cleaned = "".join(ch if "a" <= ch <= "z" else " " for ch in plain.casefold())
    return " ".join(sorted(t for t in cleaned.split() if t not in TITLES))


def clean(txns: list[dict], fx: list[dict]) -> list[dict]:
    rates: dict[str, tuple[list[str], list[float]]] = {}
    for r in sorted(fx, key=lambda r: (r["currency"], r["date"])):
        days, vals = rates.setdefault(r["currency"], ([], []))
        days.append(r["date"])
        vals.append(float(r["usd_per_unit"]))
    seen, out = set(), []
    for t in txns:
        if t["txn_id"] in seen or t["status"] != "POSTED":
            seen.add(t["txn_id"])
            continue
        seen.add(t["txn_id"])
        when = utc(t["timestamp"])
        rate = 1.0
        if t["currency"] != "USD":
            days, vals = rates[t["currency"]]
            rate = vals[bisect.bisect_right(days, when.date().isoformat()) - 1]
        out.append({**t, "utc": when, "usd": float(t["amount"]) * rate,
                    "ctry": t["counterparty_country"].strip().upper()})
    return sorted(out, key=lambda t: (t["utc"], t["txn_id"]))


def alerts(txns: list[dict], high_risk: list[str]) -> list[dict]:
    found = []
    by_cust: dict[str, list[dict]] = {}
    for t in txns:
        by_cust.setdefault(t["customer_id"], []).append(t)
    for cust, rows in sorted(by_cust.items()):
        pool: list[dict] = []
        for t in rows:
            if t["txn_type"] != "CASH_DEPOSIT" or not STRUCT_LO <= t["usd"] < STRUCT_HI:
                continue
            pool = [p for p in pool if p["utc"] >= t["utc"] - timedelta(hours=48)] + [t]
            if len(pool) >= STRUCT_N and sum(p["usd"] for p in pool) >= STRUCT_SUM:
                found.append(alert(cust, "STRUCTURING", t, pool, sum(p["usd"] for p in pool)))
                pool = []
        for t in rows:
            if t["txn_type"] == "WIRE_IN" and t["usd"] >= RAPID_MIN:
                outs = [o for o in rows if o["txn_type"] == "WIRE_OUT"
                        and t["utc"] < o["utc"] <= t["utc"] + timedelta(hours=72)]
                if sum(o["usd"] for o in outs) >= RAPID_SHARE * t["usd"]:
                    found.append(alert(cust, "RAPID_MOVEMENT", t, [t, *outs], t["usd"]))
            if t["txn_type"] in ("WIRE_IN", "WIRE_OUT") and t["ctry"] in high_risk and t["usd"] >= CORRIDOR_MIN:
                found.append(alert(cust, "HIGH_RISK_CORRIDOR", t, [t], t["usd"]))
    return found


def alert(cust: str, scenario: str, trigger: dict, rows: list[dict], total: float) -> dict:
    return {"customer_id": cust, "scenario": scenario, "trigger_txn_id": trigger["txn_id"],
            "txn_ids": sorted(r["txn_id"] for r in rows), "total_usd": round(total, 2)}


def dob_agrees(listed: str, dob: str) -> bool:
    return dob.startswith(listed) if len(listed) == 4 else listed == dob


def screen(custs: list[dict], sanctions: list[dict]) -> list[dict]:
    hits = []
    for c in custs:
        mine = normalise(c["full_name"])
        for s in sanctions:
            names = [s["name"]] + [a for a in s["aliases"].split(";") if a.strip()]
            score = max(jaro_winkler(mine, normalise(n)) for n in names)
            if score < JW_MIN:
                continue
            if s["date_of_birth"]:
                ok = dob_agrees(s["date_of_birth"], c["date_of_birth"])
            else:
                ok = s["nationality"] == c["nationality"]
            hits.append({"customer_id": c["customer_id"], "entry_id": s["entry_id"],
                         "score": round(score, 4), "disposition": "CONFIRMED" if ok else "DISCOUNTED"})
    return sorted(hits, key=lambda h: (h["customer_id"], h["entry_id"]))


def cases(found: list[dict], hits: list[dict]) -> list[dict]:
    per: dict[str, set[str]] = {}
    count: dict[str, int] = {}
    for a in found:
        per.setdefault(a["customer_id"], set()).add(a["scenario"])
        count[a["customer_id"]] = count.get(a["customer_id"], 0) + 1
    confirmed = {h["customer_id"] for h in hits if h["disposition"] == "CONFIRMED"}
    out = []
    for cust in sorted(set(per) | confirmed):
        scen = per.get(cust, set())
        high = cust in confirmed or len(scen) >= 2
        out.append({"customer_id": cust, "alert_count": count.get(cust, 0),
                    "scenarios": ";".join(sorted(scen)), "sanctions_confirmed": cust in confirmed,
                    "priority": "HIGH" if high else "MEDIUM"})
    return out


def expected(custs: list[dict], txns: list[dict], sanctions: list[dict], fx: list[dict],
             high_risk: list[str]) -> dict:
    found = alerts(clean(txns, fx), high_risk)
    hits = screen(custs, sanctions)
    near = sorted({round(jaro_winkler(normalise(c["full_name"]), normalise(n)), 4)
                   for c in custs for s in sanctions
                   for n in [s["name"]] + [a for a in s["aliases"].split(";") if a.strip()]
                   if 0.85 <= jaro_winkler(normalise(c["full_name"]), normalise(n)) < JW_MIN})
    return {"alerts": found, "hits": hits, "cases": cases(found, hits), "closest_misses": near[-5:]}
