"""Seeded generator of aml-monitoring-screening: a bank's year of customers and transactions,
FX rates, a high-risk country list and a sanctions list, with planted typologies and
near-miss decoys. The reference is computed from the data by monitor.py's rules."""

from __future__ import annotations

import argparse
import csv
import json
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from monitor import expected

SEED = 20251
CANARY = "dd27a5a5-9078-4b8f-9cfb-2bde2906d27b"
YEAR = 2025
FIRST = ["James", "Mary", "Robert", "Linda", "Michael", "Susan", "David", "Karen", "Daniel", "Laura",
         "Paul", "Nancy", "Mark", "Emily", "Steven", "Olivia", "Kevin", "Grace", "Brian", "Chloe",
         "Thomas", "Sofia", "Lucas", "Elena", "Mateo", "Camila", "Noah", "Hannah", "Omar", "Leila",
         "Wei", "Mei", "Kenji", "Yuki", "Arjun", "Priya", "Tomasz", "Agnieszka", "Lars", "Ingrid"]
LAST = ["Anderson", "Baker", "Carter", "Dawson", "Ellis", "Fischer", "Garcia", "Hughes", "Iverson",
        "Jensen", "Keller", "Lopez", "Morgan", "Nakamura", "Oliveira", "Patel", "Quinn", "Reyes",
        "Schmidt", "Turner", "Underwood", "Varga", "Walsh", "Young", "Zimmerman", "Brennan", "Castillo",
        "Delgado", "Eriksen", "Fontaine", "Gallagher", "Holm", "Ibarra", "Janssen", "Kowalczyk",
        "Lindqvist", "Moreau", "Novak", "Okafor", "Pereira"]
NATIONS = ["US", "US", "US", "US", "GB", "DE", "FR", "ES", "PL", "IN", "JP", "BR", "MX", "CA"]
HIGH_RISK = ["IR", "KP", "MM", "SY", "YE", "AF"]
OTHER_CTRY = ["GB", "DE", "FR", "CA", "MX", "JP", "IE", "AE", "SG", "CH"]
BRANCHES = [("NYC-05", "-05:00", "-04:00"), ("CHI-02", "-06:00", "-05:00"),
            ("DEN-01", "-07:00", "-06:00"), ("LAX-03", "-08:00", "-07:00")]
DST = (datetime(YEAR, 3, 9, 7, tzinfo=UTC), datetime(YEAR, 11, 2, 6, tzinfo=UTC))


def offset_for(branch: tuple[str, str, str], t: datetime) -> str:
    return branch[2] if DST[0] <= t < DST[1] else branch[1]


def stamp(t: datetime, branch: tuple[str, str, str] | None) -> str:
    """Branch cash is stamped in the branch's local time with its offset; wires in UTC."""
    if branch is None:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    off = offset_for(branch, t)
    sign = -1 if off[0] == "-" else 1
    delta = timedelta(hours=int(off[1:3]), minutes=int(off[4:6])) * sign
    return (t + delta).strftime("%Y-%m-%dT%H:%M:%S") + off


def fx_table(rng: random.Random) -> list[dict]:
    rows, eur, gbp = [], 1.085, 1.270
    d = date(YEAR - 1, 12, 31)
    while d <= date(YEAR, 12, 31):
        if d.weekday() < 5:
            eur += rng.gauss(0, 0.002)
            gbp += rng.gauss(0, 0.0025)
            rows.append({"date": d.isoformat(), "currency": "EUR", "usd_per_unit": f"{eur:.4f}"})
            rows.append({"date": d.isoformat(), "currency": "GBP", "usd_per_unit": f"{gbp:.4f}"})
        d += timedelta(days=1)
    return rows


class Book:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rows: list[dict] = []
        self.n = 0

    def add(self, cust: str, t: datetime, kind: str, amount: float, ccy: str = "USD",
            branch: tuple[str, str, str] | None = None, ctry: str = "", status: str = "POSTED") -> dict:
        self.n += 1
        row = {"txn_id": f"T{self.n:06d}", "customer_id": cust,
               "timestamp": stamp(t, branch), "channel": branch[0] if branch else "SWIFT",
               "txn_type": kind, "amount": f"{amount:.2f}", "currency": ccy,
               "counterparty_country": ctry, "status": status}
        self.rows.append(row)
        return row


def rand_time(rng: random.Random) -> datetime:
    start = datetime(YEAR, 1, 2, tzinfo=UTC)
    return start + timedelta(minutes=rng.randrange(0, 360 * 24 * 60))


def background(book: Book, custs: list[dict], rng: random.Random) -> None:
    for c in custs:
        home = rng.choice(BRANCHES)
        for _ in range(rng.randint(15, 45)):
            t = rand_time(rng).replace(hour=rng.randint(14, 23))
            r = rng.random()
            if r < 0.35:
                book.add(c["customer_id"], t, "CASH_DEPOSIT", round(rng.uniform(50, 2900), 2), branch=home)
            elif r < 0.55:
                book.add(c["customer_id"], t, "CASH_WITHDRAWAL", round(rng.uniform(40, 1500), 2), branch=home)
            elif r < 0.75:
                book.add(c["customer_id"], t, "WIRE_IN", round(rng.uniform(500, 18000), 2),
                         ctry=rng.choice(OTHER_CTRY + ["US"] * 6))
            else:
                book.add(c["customer_id"], t, "WIRE_OUT", round(rng.uniform(200, 9000), 2),
                         ctry=rng.choice(OTHER_CTRY + ["US"] * 6))


def burst(book: Book, cust: str, t0: datetime, hours: list[float], amounts: list[float],
          branches: list[tuple[str, str, str]], ccy: str = "USD") -> list[dict]:
    return [book.add(cust, t0 + timedelta(hours=h), "CASH_DEPOSIT", a, ccy, b)
            for h, a, b in zip(hours, amounts, branches, strict=True)]


def rate_on(fx: list[dict], ccy: str, day: date) -> float:
    return max((r["date"], float(r["usd_per_unit"])) for r in fx
               if r["currency"] == ccy and r["date"] <= day.isoformat())[1]


def plant(book: Book, ids: list[str], fx: list[dict]) -> None:
    ny, chi, den, la = BRANCHES
    u = UTC
    # Structuring, true: a plain burst; a 5-deposit burst (one alert, the last two too few);
    # one spanning 3 calendar days inside 48 h.
    burst(book, ids[0], datetime(YEAR, 2, 11, 15, tzinfo=u), [0, 20, 41], [9400, 9150, 9800], [ny] * 3)
    burst(book, ids[1], datetime(YEAR, 4, 14, 14, tzinfo=u), [0, 9, 26, 40, 44],
          [9900, 9200, 8700, 9600, 9950], [chi] * 5)
    burst(book, ids[2], datetime(YEAR, 6, 2, 22, tzinfo=u), [0, 23, 46], [9500, 8900, 9700], [den] * 3)
    # Time zones: wall clocks say 47 h (inside) but UTC says 50 h (outside) ... and the reverse.
    burst(book, ids[3], datetime(YEAR, 7, 8, 13, tzinfo=u), [0, 22, 50], [9300, 9450, 9650], [ny, ny, la])
    burst(book, ids[4], datetime(YEAR, 9, 16, 20, tzinfo=u), [0, 20, 46.5], [9100, 9800, 9350], [la, la, ny])
    # Re-sent duplicate: two deposits and a copy of the second.
    rows = burst(book, ids[5], datetime(YEAR, 3, 18, 16, tzinfo=u), [0, 30], [9600, 9700], [chi] * 2)
    book.rows.append(dict(rows[1]))
    # Reversed deposit inside a burst.
    rows = burst(book, ids[6], datetime(YEAR, 10, 6, 15, tzinfo=u), [0, 12, 30], [9200, 9900, 9400], [ny] * 3)
    rows[1]["status"] = "REVERSED"
    # Currency: EUR 9,400 is over USD 10,000 (no pattern); GBP 7,500 x 3 is over USD 25,000.
    eur = rate_on(fx, "EUR", date(YEAR, 5, 21))
    burst(book, ids[7], datetime(YEAR, 5, 20, 15, tzinfo=u), [0, 18, 40],
          [round(x / eur) for x in (10150, 10110, 10190)], [ny] * 3, "EUR")
    gbp = rate_on(fx, "GBP", date(YEAR, 8, 8))  # a Friday: the weekend deposits use its rate
    burst(book, ids[8], datetime(YEAR, 8, 8, 16, tzinfo=u), [0, 25, 44],
          [round(x / gbp) for x in (9560, 9610, 9490)], [chi] * 3, "GBP")
    # Near-miss on the sum: USD 24,900.
    burst(book, ids[9], datetime(YEAR, 11, 12, 15, tzinfo=u), [0, 10, 30], [8300, 8300, 8300], [den] * 3)
    # Rapid movement: true (two), late (75 h), short (70 %), EUR in.
    for k, (cust, when, amt_in, outs, ccy) in enumerate([
            (ids[10], datetime(YEAR, 3, 3, 10, tzinfo=u), 60000, [(20, 30000), (61, 25500)], "USD"),
            (ids[11], datetime(YEAR, 6, 23, 9, tzinfo=u), 145000, [(5, 120000)], "USD"),
            (ids[12], datetime(YEAR, 8, 25, 12, tzinfo=u), 50000, [(30, 20000), (75, 25000)], "USD"),
            (ids[13], datetime(YEAR, 10, 13, 8, tzinfo=u), 80000, [(12, 36000), (48, 20000)], "USD"),
            (ids[14], datetime(YEAR, 12, 1, 14, tzinfo=u), 42000, [(40, 0.77 * 42000 * rate_on(
                fx, "EUR", date(YEAR, 12, 1)))], "EUR")]):
        book.add(cust, when, "WIRE_IN", amt_in, ccy, ctry=OTHER_CTRY[k])
        for h, a in outs:
            book.add(cust, when + timedelta(hours=h), "WIRE_OUT", round(a), ctry=OTHER_CTRY[k + 3])
    # High-risk corridors: messy codes count; under the threshold and a lookalike code do not.
    book.add(ids[15], datetime(YEAR, 4, 2, 11, tzinfo=u), "WIRE_OUT", 15000, ctry=" ir")
    book.add(ids[16], datetime(YEAR, 7, 21, 11, tzinfo=u), "WIRE_IN", 12000, "EUR", ctry="Sy")
    book.add(ids[17], datetime(YEAR, 9, 1, 11, tzinfo=u), "WIRE_OUT", 9500, ctry="KP")
    book.add(ids[18], datetime(YEAR, 2, 27, 11, tzinfo=u), "WIRE_OUT", 30000, ctry="IE")
    book.add(ids[0], datetime(YEAR, 2, 20, 11, tzinfo=u), "WIRE_OUT", 26000, ctry="AE")
    book.add(ids[10], datetime(YEAR, 3, 7, 11, tzinfo=u), "WIRE_OUT", 11000, ctry="MM")
    book.add(ids[19], datetime(YEAR, 11, 28, 11, tzinfo=u), "WIRE_OUT", 10400, "GBP", ctry="YE",
             status="REVERSED")


SANCTIONS = [
    # entry, primary name, aliases, dob, nationality
    ("SDN-1041", "MUELLER, Hans Dieter", ["Hans D. Muller"], "1961-05-14", "DE"),
    ("SDN-1187", "ORLOV, Viktor", ["Victor Orloff"], "1958", "RU"),
    ("SDN-1203", "PETROV, Ivan Sergeyevich", [], "1975-09-02", "RU"),
    ("SDN-1266", "AL-RASHID, Karim", ["Kareem Al Rashid", "Abu Yusuf"], "", "SY"),
    ("SDN-1302", "KOWALSKI, Anna", [], "1980-01-30", "PL"),
    ("SDN-1355", "CHEN, Wei Ming", ["Willy Chen"], "1969", "CN"),
    ("SDN-1410", "SANTOS, Maria Fernanda", [], "1972-11-23", "BR"),
    ("SDN-1478", "NASSER, Omar Khalil", ["Omar K. Nasser"], "", "YE"),
]
DECOY_NAMES = ["VOLKOV, Dmitri", "HADDAD, Samir", "KIM, Jong Su", "RAHIMI, Farid", "OKONKWO, Emeka",
               "IBRAHIM, Tariq", "MORALES, Hector Luis", "TANAKA, Hiroshi", "BAKR, Yasin",
               "SOKOLOV, Pavel", "GRUBER, Anton", "DURAN, Esteban", "FARAH, Abdi", "LEE, Sung Ho",
               "NOVIKOV, Artem", "ZAYED, Khalid"]
# customers planted against the list: name, dob, nationality (hit expected on the entry noted)
LISTED_CUSTOMERS = [
    ("Hans-Dieter Müller", "1961-05-14", "DE"),      # diacritics + hyphen + order: confirmed
    ("Dr. Viktor Orlov", "1958-07-30", "RU"),        # title + year-only DOB: confirmed
    ("Ivan Sergeyevich Petrov", "1983-02-11", "RU"),          # potential, DOB differs: discounted
    ("Kareem Al-Rashid", "1979-03-03", "SY"),        # alias, list has no DOB, nationality: confirmed
    ("Anna Kowalska", "1980-01-30", "PL"),           # potential, same DOB: confirmed
    ("Weiming Cheng", "1990-06-06", "US"),           # below threshold: no hit
    ("María Fernanda Santos", "1972-11-23", "BR"),   # diacritics: confirmed
    ("Omar K Nasser", "1985-12-01", "GB"),             # alias-only, nationality differs: discounted
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    out = Path(ap.parse_args().out)
    rng = random.Random(SEED)
    custs = []
    names = set()
    while len(custs) < 232:
        n = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if n in names:
            continue
        names.add(n)
        dob = date(1945, 1, 1) + timedelta(days=rng.randrange(0, 20000))
        custs.append({"customer_id": "", "full_name": n, "date_of_birth": dob.isoformat(),
                      "nationality": rng.choice(NATIONS)})
    for n, dob, nat in LISTED_CUSTOMERS:
        custs.append({"customer_id": "", "full_name": n, "date_of_birth": dob, "nationality": nat})
    rng.shuffle(custs)
    for i, c in enumerate(custs):
        c["customer_id"] = f"C{10000 + 7 * i}"
    fx = fx_table(rng)
    book = Book(rng)
    background(book, custs, rng)
    ids = [c["customer_id"] for c in custs]
    plant(book, rng.sample(ids, 20), fx)
    order = sorted(range(len(book.rows)), key=lambda i: (book.rows[i]["timestamp"][:10], i))
    txns = [book.rows[i] for i in order]
    sanctions = [{"entry_id": e, "name": n, "aliases": ";".join(a), "date_of_birth": d, "nationality": c}
                 for e, n, a, d, c in SANCTIONS]
    for k, n in enumerate(DECOY_NAMES):
        sanctions.append({"entry_id": f"SDN-{1500 + 17 * k}", "name": n, "aliases": "",
                          "date_of_birth": str(1950 + k) if k % 2 else "", "nationality": "XX"})
    sanctions.sort(key=lambda s: s["entry_id"])
    inputs, ref = out / "inputs", out / "reference"
    inputs.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    for name, rows in (("customers.csv", sorted(custs, key=lambda c: c["customer_id"])),
                       ("transactions.csv", txns), ("sanctions_list.csv", sanctions),
                       ("fx_rates.csv", fx),
                       ("high_risk_countries.csv", [{"iso2": c} for c in HIGH_RISK])):
        with (inputs / name).open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    exp = expected(custs, txns, sanctions, fx, HIGH_RISK)
    exp["canary"] = CANARY
    (ref / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
