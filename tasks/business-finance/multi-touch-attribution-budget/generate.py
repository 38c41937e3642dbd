"""Seeded generator for multi-touch-attribution-budget.

Writes inputs/ (touchpoints, conversions, channel map, spend, response curves) and
reference/expected.json (the attribution, removal effects and optimal budget computed from the
clean simulated touches and orders, before the export is damaged, by the oracle's model code).

Planted problems: re-delivered touch events (at-least-once collector, new delivery id),
conversion timestamps exported with their local UTC offset (America/New_York), and UTM values
in mixed case with stray whitespace.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "solution"))
import attribution  # noqa: E402

SEED = 20260315
CANARY = "14a9da1d-713e-4c04-bb41-8f97559e50aa"
N_USERS = 1700
START = datetime(2025, 12, 1, tzinfo=UTC)
Q_START = datetime(2026, 1, 1, tzinfo=UTC)
END = datetime(2026, 4, 1, tzinfo=UTC)
NY = ZoneInfo("America/New_York")

# channel -> (utm_source, utm_medium, touch propensity, conversion lift, monthly spend or 0)
CHANNELS = {
    "paid_search": ("google", "cpc", 1.0, 0.10, 61000.0),
    "paid_social": ("facebook", "paid_social", 1.3, 0.03, 48000.0),
    "display": ("gdn", "display", 1.5, 0.01, 30000.0),
    "video": ("youtube", "video", 0.6, 0.04, 22000.0),
    "affiliate": ("partnerize", "affiliate", 0.5, 0.08, 18000.0),
    "email": ("newsletter", "email", 0.9, 0.07, 0.0),
    "organic_search": ("google", "organic", 0.8, 0.06, 0.0),
}
# (saturation spend b per quarter) for the paid channels' response curves
SATURATION = {"paid_search": 45000.0, "paid_social": 50000.0, "display": 30000.0,
              "video": 24000.0, "affiliate": 18000.0}


def _case_variant(rng: np.random.Generator, text: str) -> str:
    pick = rng.integers(0, 30)
    if pick == 0:
        return text.upper()
    if pick == 1:
        return text.capitalize()
    if pick == 2:
        return text + " "
    if pick == 3:
        return " " + text.title()
    return text


def simulate(rng: np.random.Generator):
    names = sorted(CHANNELS)
    prop = np.array([CHANNELS[c][2] for c in names])
    prop = prop / prop.sum()
    touches = []  # (user, ts, channel)
    conversions = []  # (user, ts, revenue)
    for u in range(N_USERS):
        user = f"U{u + 1:05d}"
        t = START + timedelta(seconds=int(rng.integers(0, int((END - START).total_seconds() * 0.8))))
        score = 0.0
        while t < END:
            ch = names[int(rng.choice(len(names), p=prop))]
            touches.append((user, t, ch))
            score += CHANNELS[ch][3]
            if t >= Q_START and rng.random() < min(0.3, score * 0.45):
                # most purchases follow the last touch within a few hours
                delay = timedelta(minutes=int(rng.integers(5, 9 * 60)))
                ct = t + delay
                if ct < END:
                    conversions.append((user, ct, float(np.round(rng.gamma(3.0, 45.0) + 19.0, 2))))
                score = 0.0
                if rng.random() < 0.6:
                    break
            gap = timedelta(seconds=int(rng.exponential(24 * 6 * 3600)))
            t = t + gap
    return touches, conversions


def write_inputs(rng: np.random.Generator, touches, conversions, inputs: Path) -> None:
    inputs.mkdir(parents=True, exist_ok=True)
    rows = []
    for user, ts, ch in touches:
        src, med = CHANNELS[ch][0], CHANNELS[ch][1]
        copies = 2 if rng.random() < 0.06 else 1
        for _ in range(copies):
            rows.append((ts, user, _case_variant(rng, src), _case_variant(rng, med)))
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0] + timedelta(seconds=int(rng.integers(0, 40))), i))
    with (inputs / "touchpoints.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["delivery_id", "user_id", "event_time_utc", "utm_source", "utm_medium"])
        for n, i in enumerate(order):
            ts, user, src, med = rows[i]
            w.writerow([f"d{n + 1:07d}", user, ts.strftime("%Y-%m-%dT%H:%M:%SZ"), src, med])
    with (inputs / "conversions.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["order_id", "user_id", "ordered_at", "revenue_usd"])
        for n, (user, ts, rev) in enumerate(sorted(conversions, key=lambda c: (c[1], c[0]))):
            w.writerow([f"SO-{300001 + n}", user, ts.astimezone(NY).isoformat(), f"{rev:.2f}"])
    with (inputs / "channel_map.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["utm_source", "utm_medium", "channel"])
        for ch in sorted(CHANNELS):
            w.writerow([CHANNELS[ch][0], CHANNELS[ch][1], ch])
    with (inputs / "spend.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["month", "channel", "spend_usd"])
        for month in ("2026-01", "2026-02", "2026-03"):
            for ch in sorted(CHANNELS):
                base = CHANNELS[ch][4]
                if base > 0:
                    w.writerow([month, ch, f"{0.4 * base * float(rng.uniform(0.9, 1.1)):.2f}"])
    with (inputs / "response_curves.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["channel", "saturation_spend_usd"])
        for ch in sorted(SATURATION):
            w.writerow([ch, f"{SATURATION[ch]:.0f}"])


def truth_frames(touches, conversions):
    t = pd.DataFrame(sorted(touches, key=lambda x: (x[0], x[1], x[2])), columns=["user_id", "ts", "channel"])
    ordered = sorted(conversions, key=lambda x: (x[1], x[0]))
    c = pd.DataFrame([(u, f"SO-{300001 + n}", rev, ts) for n, (u, ts, rev) in enumerate(ordered)],
                     columns=["user_id", "order_id", "revenue_usd", "ts"])
    t["ts"] = pd.to_datetime(t.ts, utc=True)
    c["ts"] = pd.to_datetime(c.ts, utc=True)
    return t, c.sort_values(["user_id", "ts", "order_id"])


def _rounded(value):
    """8 decimals: far below every tolerance, and above the last-bit noise of BLAS kernels."""
    if isinstance(value, float):
        return round(value, 8)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=HERE)
    out = ap.parse_args().out
    rng = np.random.default_rng(SEED)
    touches, conversions = simulate(rng)
    write_inputs(rng, touches, conversions, out / "inputs")
    # The reference comes from the simulated journeys before the export damaged them, so the
    # oracle's cleaning of the raw files is checked by its reaching the same figures.
    result = attribution.run_clean(*truth_frames(touches, conversions), out / "inputs")
    (out / "reference").mkdir(parents=True, exist_ok=True)
    result = _rounded(result)
    result["canary"] = CANARY
    (out / "reference" / "expected.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
