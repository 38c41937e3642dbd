"""Seeded generator of inputs/ and reference/ for saas-cohort-retention-pack.

python3 generate.py --out DIR writes DIR/inputs/ and DIR/reference/.

Subscriptions are simulated month by month in each account's local calendar; every service
period starts at local midnight on the 1st, which the billing export writes in UTC (so for
accounts east of Greenwich it falls on the previous UTC day and month). Planted: annual
plans invoiced up front, free first months, one-time setup fees, fully refunded invoices,
churned accounts that come back, and internal test accounts.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

SEED = 6_2025
CANARY = "4556f652-db95-491e-9d32-a7bb08e2730c"
START, END = (2023, 1), (2025, 6)  # END is the reporting month
SIM_END = (2025, 7)  # the billing export already holds the invoices of the month after
TZS = ["America/Los_Angeles", "America/Chicago", "America/New_York", "America/Sao_Paulo", "Europe/London",
       "Europe/Berlin", "Asia/Kolkata", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney"]
MONTHLY_SEAT, ANNUAL_SEAT = 30.0, 290.0  # USD per seat per month / per year
SETUP_FEE = 500.0
COMPANY_DOMAIN = "tallyloop.io"
WORDS = ["Apex", "Birch", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper", "Kestrel",
         "Lumen", "Meridian", "Nimbus", "Orchid", "Pioneer", "Quartz", "Redwood", "Summit", "Tundra", "Umber", "Vertex"]
KINDS = ["Labs", "Logistics", "Health", "Studio", "Partners", "Foods", "Robotics", "Legal", "Energy", "Retail"]


def months() -> list[tuple[int, int]]:
    out, (y, m) = [], START
    while (y, m) <= SIM_END:
        out.append((y, m))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def add(ym: tuple[int, int], k: int) -> tuple[int, int]:
    i = ym[0] * 12 + ym[1] - 1 + k
    return (i // 12, i % 12 + 1)


def label(ym: tuple[int, int]) -> str:
    return f"{ym[0]:04d}-{ym[1]:02d}"


def local_first_utc(ym: tuple[int, int], tz: str) -> str:
    t = datetime(ym[0], ym[1], 1, tzinfo=ZoneInfo(tz)).astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def csv_text(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def simulate(rng: random.Random):
    cal = months()
    accounts, lines, refunds = [], [], []
    mrr: dict[str, dict[tuple[int, int], float]] = {}
    inv_no = 70000
    n = 0
    for ym in cal:
        for _ in range(rng.randint(18, 28)):
            n += 1
            aid = f"A{n:04d}"
            test = rng.random() < 0.02
            tz = rng.choice(TZS)
            name = f"{rng.choice(WORDS)} {rng.choice(KINDS)}"
            dom = COMPANY_DOMAIN if test else f"{name.split()[0].lower()}{n}.example"
            email = f"{'qa' if test else 'billing'}+{n}@{dom}" if test else f"billing@{dom}"
            created = datetime(ym[0], ym[1], 1, tzinfo=ZoneInfo(tz)).astimezone(UTC)
            accounts.append([aid, name, email, tz, created.strftime("%Y-%m-%dT%H:%M:%SZ")])
            annual = rng.random() < 0.3
            seats = rng.choice([1, 2, 3, 5, 5, 8, 10, 15, 20, 40]) * (5 if test else 1)
            state = {"active": True, "seats": seats, "annual": annual, "paid_until": None, "first": True}
            mrr[aid] = {}
            free_first = (not annual) and rng.random() < 0.2
            for cur in [c for c in cal if c >= ym]:
                st = state
                if not st["active"]:
                    if rng.random() < 0.04:  # a churned account comes back
                        st.update(active=True, seats=rng.choice([1, 2, 3, 5, 8]), paid_until=None)
                    else:
                        continue
                if st["paid_until"] is not None and cur < st["paid_until"]:
                    continue  # inside a paid annual term
                if st["paid_until"] is not None and cur == st["paid_until"]:  # annual renewal
                    if rng.random() < 0.15:
                        st["active"] = False
                        st["paid_until"] = None
                        continue
                    if rng.random() < 0.25:
                        st["seats"] = max(1, st["seats"] + rng.choice([-3, -2, -1, 2, 4, 6]))
                inv_no += rng.randint(1, 3)
                inv = f"INV-{inv_no}"
                start = local_first_utc(cur, tz)
                if st["annual"]:
                    amount = round(st["seats"] * ANNUAL_SEAT, 2)
                    end = local_first_utc(add(cur, 12), tz)
                    st["paid_until"] = add(cur, 12)
                    plan = "annual"
                else:
                    amount = 0.0 if (st["first"] and free_first) else round(st["seats"] * MONTHLY_SEAT, 2)
                    end = local_first_utc(add(cur, 1), tz)
                    plan = "monthly"
                lines.append([inv, aid, "subscription", plan, st["seats"], start, end, f"{amount:.2f}"])
                if st["first"] and rng.random() < 0.4:
                    lines.append([inv, aid, "setup_fee", "", "", start, start, f"{SETUP_FEE:.2f}"])
                refunded = amount > 0 and rng.random() < 0.025
                if refunded:
                    refunds.append([f"RF-{inv_no}", inv, f"{amount:.2f}", start])
                st["first"] = False
                if amount > 0 and not refunded and not test:
                    share = amount / 12 if st["annual"] else amount
                    for k in range(12 if st["annual"] else 1):
                        m = add(cur, k)
                        if m <= END:
                            mrr[aid][m] = mrr[aid].get(m, 0.0) + share
                if not st["annual"]:
                    u = rng.random()
                    if u < 0.025:
                        st["active"] = False
                    elif u < 0.08:
                        st["seats"] = max(1, st["seats"] + rng.choice([-2, -1, 1, 2, 3, 5]))
            if test:
                del mrr[aid]
    return accounts, lines, refunds, mrr


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    accounts, lines, refunds, mrr = simulate(rng)
    (out / "inputs" / "accounts.csv").write_text(csv_text(["account_id", "company_name", "billing_email", "timezone", "created_at"], accounts))
    lines.sort(key=lambda r: (r[5], r[0], r[2]))
    (out / "inputs" / "invoice_lines.csv").write_text(csv_text(
        ["invoice_id", "account_id", "line_type", "plan", "seats", "period_start", "period_end", "amount_usd"], lines))
    (out / "inputs" / "refunds.csv").write_text(csv_text(["refund_id", "invoice_id", "amount_usd", "refunded_at"], refunds))

    cal = [m for m in months() if m <= END]
    cohort = {a: min(m for m, v in ms.items() if v > 0) for a, ms in mrr.items() if any(v > 0 for v in ms.values())}
    cells = []
    for c in cal:
        members = sorted(a for a, co in cohort.items() if co == c)
        if not members:
            continue
        base = sum(mrr[a].get(c, 0.0) for a in members)
        for k in range(len([m for m in cal if m >= c])):
            m = add(c, k)
            active = sum(1 for a in members if mrr[a].get(m, 0.0) > 0)
            value = sum(mrr[a].get(m, 0.0) for a in members)
            cells.append({"cohort_month": label(c), "month_offset": k, "cohort_accounts": len(members),
                          "active_accounts": active, "mrr": round(value, 6),
                          "logo_retention": round(active / len(members), 8), "revenue_retention": round(value / base, 8)})
    def active_in(m):
        return {a for a, ms in mrr.items() if ms.get(m, 0.0) > 0}
    now, year_ago = END, add(END, -12)
    base_accts = active_in(year_ago)
    base = sum(mrr[a][year_ago] for a in base_accts)
    nrr = sum(mrr[a].get(now, 0.0) for a in base_accts) / base
    grr = sum(min(mrr[a].get(now, 0.0), mrr[a][year_ago]) for a in base_accts) / base
    churn_rates = []
    for k in range(-11, 1):
        m, prev = add(END, k), add(END, k - 1)
        a_prev = active_in(prev)
        churn_rates.append(len(a_prev - active_in(m)) / len(a_prev))
    total = sum(ms.get(now, 0.0) for ms in mrr.values())
    n_active = len(active_in(now))
    churn = sum(churn_rates) / 12
    arpa = total / n_active
    metrics = {"reporting_month": label(now), "mrr": round(total, 6), "arr": round(12 * total, 6), "active_accounts": n_active,
               "arpa": round(arpa, 6), "nrr_12m": round(nrr, 8), "grr_12m": round(grr, 8),
               "avg_monthly_logo_churn": round(churn, 8), "ltv": round(arpa * 0.78 / churn, 6)}
    excluded = sorted(a[0] for a in accounts if a[2].endswith("@" + COMPANY_DOMAIN))
    ref = {"canary": CANARY, "metrics": metrics, "cells": cells, "test_accounts": excluded}
    (out / "reference" / "expected.json").write_text(json.dumps(ref, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
