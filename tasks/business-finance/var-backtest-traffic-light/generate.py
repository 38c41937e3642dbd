"""Seeded generator of inputs/ and reference/ for var-backtest-traffic-light: python3 generate.py --out DIR.

An equity book of five names over two years of business days, prices from a common GARCH(1,1)
factor with Student-t shocks (so that exceptions cluster in a stress period). Traps: one name
splits 3-for-1 in the backtest year (raw closes in prices.csv, the split in
corporate_actions.csv); the P&L feed re-sent one day (a duplicate row).

The reference follows the desk's methodology: 99 % one-day historical-simulation VaR as the
3rd-largest loss of the book's current market values revalued over the previous 250 daily
returns (split-adjusted), compared with the next day's hypothetical P&L.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import random
from pathlib import Path

SEED = 8207
CANARY = "69362c39-03ea-45d8-96e3-9a7c62cacd4e"
TICKERS = ["NRTH", "KLMT", "VSTA", "OBRN", "CALD"]
SHARES = [42_000, 18_000, 25_000, -30_000, -12_000]
START_PRICES = [84.20, 212.55, 47.10, 131.75, 63.40]
BETAS = [1.0, 1.3, 0.8, 1.1, 0.6]
IDIO = [0.009, 0.012, 0.010, 0.008, 0.011]
SPLIT = ("KLMT", 3)
WINDOW, BACKTEST, RANK = 250, 250, 3
HOLIDAYS = {"2022-01-17", "2022-02-21", "2022-04-15", "2022-05-30", "2022-06-20", "2022-07-04",
            "2022-09-05", "2022-11-24", "2022-12-26", "2023-01-02", "2023-01-16", "2023-02-20",
            "2023-04-07", "2023-05-29", "2023-06-19", "2023-07-04", "2023-09-04", "2023-11-23",
            "2023-12-25"}


def business_days(start: dt.date, n: int) -> list[str]:
    out, d = [], start
    while len(out) < n:
        if d.weekday() < 5 and d.isoformat() not in HOLIDAYS:
            out.append(d.isoformat())
        d += dt.timedelta(days=1)
    return out


def student_t(rng: random.Random, nu: float) -> float:
    z = rng.gauss(0.0, 1.0)
    chi = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(int(nu)))
    return z / math.sqrt(chi / nu) * math.sqrt((nu - 2) / nu)


def simulate(rng: random.Random, n: int) -> list[list[float]]:
    """Adjusted daily returns (n x names) from a GARCH(1,1) market factor; a stress burst."""
    omega, alpha, beta = 2e-6, 0.09, 0.89
    var, rets = 1e-4, []
    for t in range(n):
        if t in (WINDOW + 120, WINDOW + 121, WINDOW + 124):
            var *= 6.0  # a stress week in the backtest year
        shock = student_t(rng, 5)
        market = math.sqrt(var) * shock
        var = omega + alpha * market ** 2 + beta * var
        rets.append([BETAS[i] * market + IDIO[i] * student_t(rng, 6) for i in range(len(TICKERS))])
    return rets


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    n_days = WINDOW + BACKTEST + 1
    dates = business_days(dt.date(2022, 1, 3), n_days)
    rets = simulate(rng, n_days - 1)
    split_day = WINDOW + 30  # index into dates of the ex-date
    # adjusted closes rounded to cents; raw closes divide by the split ratio from the ex-date
    adj = [START_PRICES[:]]
    for r in rets:
        adj.append([round(p * (1 + x), 2) for p, x in zip(adj[-1], r, strict=True)])
    k = TICKERS.index(SPLIT[0])
    raw = [[round(p / SPLIT[1], 2) if (i == k and t >= split_day) else p for i, p in enumerate(row)]
           for t, row in enumerate(adj)]
    # the returns the desk's model uses: from split-adjusted closes
    adj_from_raw = [[p * SPLIT[1] if (i == k and t >= split_day) else p for i, p in enumerate(row)]
                    for t, row in enumerate(raw)]
    R = [[adj_from_raw[t][i] / adj_from_raw[t - 1][i] - 1 for i in range(len(TICKERS))]
         for t in range(1, n_days)]
    shares = [[s * (SPLIT[1] if (i == k and t >= split_day) else 1) for i, s in enumerate(SHARES)]
              for t in range(n_days)]
    hyp = [None] + [round(sum(SHARES[i] * (adj_from_raw[t][i] - adj_from_raw[t - 1][i])
                              for i in range(len(TICKERS))), 2) for t in range(1, n_days)]
    fees = [None] + [round(-abs(rng.gauss(1500, 600)) + rng.gauss(0, 9000), 2)
                     for _ in range(1, n_days)]
    rows = []
    for t in range(n_days - BACKTEST, n_days):
        values = [shares[t - 1][i] * raw[t - 1][i] for i in range(len(TICKERS))]
        losses = sorted((-sum(v * R[s][i] for i, v in enumerate(values))
                         for s in range(t - 1 - WINDOW, t - 1)), reverse=True)
        var = losses[RANK - 1]
        rows.append({"date": dates[t], "var_99": round(var, 2), "hypothetical_pnl": hyp[t],
                     "exception": int(-hyp[t] > round(var, 2))})
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    with (out / "inputs" / "prices.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["date", *TICKERS])
        for d, row in zip(dates, raw, strict=True):
            w.writerow([d, *(f"{p:.2f}" for p in row)])
    with (out / "inputs" / "pnl.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["business_date", "book", "actual_pnl_usd", "hypothetical_pnl_usd"])
        for t in range(1, n_days):
            line = [dates[t], "EQ-DELTA-1", f"{hyp[t] + fees[t]:.2f}", f"{hyp[t]:.2f}"]
            w.writerow(line)
            if t == n_days - BACKTEST + 77:
                w.writerow(line)  # the P&L feed re-sent this day
    with (out / "inputs" / "positions.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["ticker", "shares", "as_of"])
        for tk, s in zip(TICKERS, SHARES, strict=True):
            w.writerow([tk, s, dates[0]])
    with (out / "inputs" / "corporate_actions.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["ex_date", "ticker", "action", "ratio"])
        w.writerow([dates[split_day], SPLIT[0], "split", f"{SPLIT[1]}:1"])
    x = sum(r["exception"] for r in rows)
    (out / "reference" / "expected.json").write_text(json.dumps(
        {"canary": CANARY, "rows": rows, "exceptions": x, **statistics(rows)},
        indent=1, sort_keys=True) + "\n")


def xlogy(x: float, y: float) -> float:
    return 0.0 if x == 0 else x * math.log(y)


def chi2_sf(lr: float, df: int) -> float:
    if df == 1:
        return math.erfc(math.sqrt(max(lr, 0.0) / 2))
    return math.exp(-lr / 2)  # df = 2


def statistics(rows: list[dict]) -> dict:
    p, seq = 0.01, [r["exception"] for r in rows]
    n, x = len(seq), sum(seq)
    pof = -2 * (xlogy(n - x, 1 - p) + xlogy(x, p) - xlogy(n - x, 1 - x / n) - xlogy(x, x / n))
    pairs = list(zip(seq, seq[1:], strict=False))
    n00 = sum(1 for a, b in pairs if (a, b) == (0, 0))
    n01 = sum(1 for a, b in pairs if (a, b) == (0, 1))
    n10 = sum(1 for a, b in pairs if (a, b) == (1, 0))
    n11 = sum(1 for a, b in pairs if (a, b) == (1, 1))
    pi0, pi1 = n01 / (n00 + n01), (n11 / (n10 + n11) if n10 + n11 else 0.0)
    pi = (n01 + n11) / (n00 + n01 + n10 + n11)
    ind = -2 * (xlogy(n00 + n10, 1 - pi) + xlogy(n01 + n11, pi)
                - xlogy(n00, 1 - pi0) - xlogy(n01, pi0) - xlogy(n10, 1 - pi1) - xlogy(n11, pi1))
    zone = "green" if x <= 4 else "yellow" if x <= 9 else "red"
    plus = {5: 0.40, 6: 0.50, 7: 0.65, 8: 0.75, 9: 0.85}.get(x, 0.0 if x <= 4 else 1.0)
    return {"zone": zone, "plus_factor": plus, "kupiec_lr": pof, "kupiec_p": chi2_sf(pof, 1),
            "christoffersen_ind_lr": ind, "christoffersen_ind_p": chi2_sf(ind, 1),
            "cc_lr": pof + ind, "cc_p": chi2_sf(pof + ind, 2),
            "transitions": {"n00": n00, "n01": n01, "n10": n10, "n11": n11}}


if __name__ == "__main__":
    main()
