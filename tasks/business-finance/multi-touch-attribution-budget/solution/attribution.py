"""Oracle: multi-touch attribution (last touch, linear, time decay, first-order Markov removal
effect), Markov ROAS and next quarter's budget over the calibrated response curves."""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

LOOKBACK = timedelta(days=30)
HALF_LIFE = timedelta(days=7)
EXTRACT_END = datetime(2026, 4, 1, tzinfo=UTC)
DIRECT = "(direct)"
BOUNDS = (0.6, 1.3)


def load(inputs: Path):
    cmap = pd.read_csv(inputs / "channel_map.csv", dtype=str)
    key = {(s.strip().lower(), m.strip().lower()): c for s, m, c in cmap.itertuples(index=False)}
    t = pd.read_csv(inputs / "touchpoints.csv", dtype=str)
    t["channel"] = [key[(s.strip().lower(), m.strip().lower())] for s, m in zip(t.utm_source, t.utm_medium, strict=False)]
    t["ts"] = pd.to_datetime(t.event_time_utc, utc=True)
    t = t.drop_duplicates(["user_id", "ts", "channel"]).sort_values(["user_id", "ts", "channel"])
    c = pd.read_csv(inputs / "conversions.csv", dtype={"order_id": str, "user_id": str, "ordered_at": str})
    c["ts"] = [pd.Timestamp(datetime.fromisoformat(v)).tz_convert("UTC") for v in c.ordered_at]
    c = c.sort_values(["user_id", "ts", "order_id"])
    return t, c


def journeys(t: pd.DataFrame, c: pd.DataFrame):
    """Converting journeys [(order_id, revenue, conv_ts, [(ts, channel)...])] and null journeys."""
    by_user = defaultdict(list)
    for u, ts, ch in zip(t.user_id, t.ts, t.channel, strict=False):
        by_user[u].append((ts, ch))
    conv, null = [], []
    last = {}
    for u, oid, rev, ts in zip(c.user_id, c.order_id, c.revenue_usd, c.ts, strict=False):
        prev = last.get(u)
        path = [(x, ch) for x, ch in by_user.get(u, []) if x <= ts and x >= ts - LOOKBACK and (prev is None or x > prev)]
        conv.append((oid, float(rev), ts, path))
        last[u] = ts
    for u in sorted(by_user):
        prev = last.get(u)
        path = [(x, ch) for x, ch in by_user[u] if x >= EXTRACT_END - LOOKBACK and (prev is None or x > prev)]
        if path:
            null.append(path)
    return conv, null


def heuristics(conv, channels):
    out = {m: dict.fromkeys(channels + [DIRECT], 0.0) for m in ("last_touch", "linear", "time_decay")}
    for _, rev, ts, path in conv:
        if not path:
            for m in out:
                out[m][DIRECT] += rev
            continue
        out["last_touch"][path[-1][1]] += rev
        for _, ch in path:
            out["linear"][ch] += rev / len(path)
        w = [0.5 ** ((ts - x) / HALF_LIFE) for x, _ in path]
        for wi, (_, ch) in zip(w, path, strict=False):
            out["time_decay"][ch] += rev * wi / sum(w)
    return out


def p_conversion(counts: np.ndarray, removed: int | None, n: int) -> float:
    """States: 0 start, 1..n channels, n+1 conversion, n+2 null."""
    P = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    if removed is not None:
        P[:, n + 2] += P[:, removed]
        P[:, removed] = 0.0
    Q = P[: n + 1, : n + 1]
    R = P[: n + 1, n + 1]
    x = np.linalg.solve(np.eye(n + 1) - Q, R)
    return float(x[0])


def markov(conv, null, channels):
    n = len(channels)
    idx = {ch: i + 1 for i, ch in enumerate(channels)}
    counts = np.zeros((n + 3, n + 3))
    paths = [([ch for _, ch in p], n + 1) for _, _, _, p in conv if p] + [([ch for _, ch in p], n + 2) for p in null]
    for seq, end in paths:
        states = [0] + [idx[ch] for ch in seq] + [end]
        for a, b in zip(states, states[1:], strict=False):
            counts[a, b] += 1
    base = p_conversion(counts, None, n)
    effect = {ch: 1.0 - p_conversion(counts, idx[ch], n) / base for ch in channels}
    return base, effect


def optimise(A: dict, b: dict, spend: dict):
    chans = sorted(A)
    total = sum(spend.values())
    lo = {c: BOUNDS[0] * spend[c] for c in chans}
    hi = {c: BOUNDS[1] * spend[c] for c in chans}

    def alloc(lam: float) -> dict:
        return {c: min(hi[c], max(lo[c], b[c] * math.log(A[c] / (b[c] * lam)))) if A[c] > 0 else lo[c] for c in chans}

    a, z = -40.0, 10.0  # log10 of the marginal revenue per dollar
    for _ in range(300):
        mid = (a + z) / 2
        if sum(alloc(10 ** mid).values()) > total:
            a = mid
        else:
            z = mid
    x = alloc(10 ** ((a + z) / 2))
    revenue = sum(A[c] * (1 - math.exp(-x[c] / b[c])) for c in chans)
    return total, x, revenue


def run(inputs: Path) -> dict:
    return run_clean(*load(inputs), inputs)


def run_clean(t: pd.DataFrame, c: pd.DataFrame, inputs: Path) -> dict:
    """From cleaned touches (user_id, ts, channel) and orders (user_id, order_id, revenue_usd, ts in UTC)."""
    channels = sorted(pd.read_csv(inputs / "channel_map.csv", dtype=str).channel.unique())
    conv, null = journeys(t, c)
    models = heuristics(conv, channels)
    base, effect = markov(conv, null, channels)
    pathed = sum(rev for _, rev, _, p in conv if p)
    norm = sum(effect.values())
    models["markov"] = {ch: pathed * effect[ch] / norm for ch in channels}
    models["markov"][DIRECT] = models["last_touch"][DIRECT]
    sp = pd.read_csv(inputs / "spend.csv")
    spend = {k: float(v) for k, v in sp.groupby("channel").spend_usd.sum().items()}
    curves = pd.read_csv(inputs / "response_curves.csv")
    b = {ch: float(v) for ch, v in zip(curves.channel, curves.saturation_spend_usd, strict=False)}
    A = {ch: models["markov"][ch] / (1 - math.exp(-spend[ch] / b[ch])) for ch in b}
    total, x, revenue = optimise(A, b, {ch: spend[ch] for ch in b})
    rows = []
    for ch in channels + [DIRECT]:
        s = spend.get(ch)
        rows.append({"channel": ch, **{m: models[m][ch] for m in ("last_touch", "linear", "time_decay", "markov")},
                     "removal_effect": effect.get(ch), "spend": s,
                     "roas": models["markov"][ch] / s if s else None})
    return {"rows": rows, "p_conversion": base, "total_revenue": float(c.revenue_usd.sum()),
            "conversions": len(conv), "journeys_with_touches": sum(1 for j in conv if j[3]),
            "null_journeys": len(null), "curve_scale": A, "saturation": b, "q1_spend": spend,
            "budget": {"total_budget": total, "allocation": x, "expected_revenue": revenue}}


def write(result: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(result["rows"])
    for col in ("last_touch", "linear", "time_decay", "markov", "spend"):
        df[col] = df[col].round(2)
    df["removal_effect"] = df["removal_effect"].round(6)
    df["roas"] = df["roas"].round(4)
    df.to_csv(out / "attribution.csv", index=False)
    bud = result["budget"]
    (out / "budget.json").write_text(json.dumps({
        "total_budget": round(bud["total_budget"], 2),
        "allocation": {k: round(v, 2) for k, v in bud["allocation"].items()},
        "expected_revenue": round(bud["expected_revenue"], 2)}, indent=2) + "\n")


if __name__ == "__main__":
    write(run(Path(sys.argv[1])), Path(sys.argv[2]))
