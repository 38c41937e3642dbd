"""Oracle for squad-training-load-monitoring: pandas/NumPy workflow from raw 1 Hz exports to
session metrics, EWMA acute:chronic workload ratios and the weekly report."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

inputs, output = Path(sys.argv[1]), Path(sys.argv[2])
HISTORY_START, WEEK_START, WEEK_END = "2024-01-29", "2024-03-11", "2024-03-17"

players = pd.read_csv(inputs / "players.csv").set_index("player_id")
sessions = pd.read_csv(inputs / "sessions.csv")
history = pd.read_csv(inputs / "load_history.csv")


def gap_lengths(mask: pd.Series) -> pd.Series:
    """For each True in mask, the length of the run of consecutive Trues it belongs to."""
    run_id = (mask != mask.shift()).cumsum()
    return mask.groupby(run_id).transform("size").where(mask, 0)


def metrics(g: pd.DataFrame, rest: float, hrmax: float) -> dict:
    speed = g["speed_ms"].where(g["speed_ms"] <= 10.5)
    speed = speed.interpolate(method="linear", limit_area="inside")
    hr_bad = g["hr_bpm"].isna() | (g["hr_bpm"] < 40) | (g["hr_bpm"] > hrmax + 10)
    hr = g["hr_bpm"].where(~hr_bad).interpolate(method="linear", limit_area="inside")
    hr = hr.where(gap_lengths(hr_bad) <= 10)  # long dropouts stay excluded

    above = speed >= 7.0
    dip = ~above & above.shift(1, fill_value=False) & above.shift(-1, fill_value=False)
    effort = above | dip
    runs = gap_lengths(effort)
    starts = effort & ~effort.shift(1, fill_value=False)
    efforts = int((starts & (runs >= 2)).sum())

    h = hr.dropna().to_numpy()
    x = np.clip((h - rest) / (hrmax - rest), 0.0, 1.0)
    pct = 100.0 * h / hrmax
    zone = np.select([pct >= 90, pct >= 80, pct >= 70, pct >= 60, pct >= 50], [5, 4, 3, 2, 1], 0)
    return {
        "duration_min": len(g) / 60.0,
        "total_distance_m": speed.sum(),
        "hsr_m": speed[speed >= 5.5].sum(),
        "sprint_m": speed[speed >= 7.0].sum(),
        "sprint_efforts": efforts,
        "hr_valid_min": len(h) / 60.0,
        "trimp_banister": float((x * 0.64 * np.exp(1.92 * x)).sum() / 60.0),
        "trimp_edwards": float(zone.sum() / 60.0),
    }


rows = []
for s in sessions.itertuples():
    raw = pd.read_csv(inputs / "raw" / f"{s.session_id}.csv.gz")
    for pid, g in raw.sort_values(["player_id", "t_s"]).groupby("player_id", sort=True):
        p = players.loc[pid]
        m = metrics(g.reset_index(drop=True), float(p["hr_rest"]), float(p["hr_max"]))
        rows.append({"player_id": pid, "session_id": s.session_id, "date": s.date, **m})
sm = pd.DataFrame(rows)
sm.round(4).to_csv(output / "session_metrics.csv", index=False)

# daily load: history + this week's Banister TRIMP, with rest days as zero load
days = pd.date_range(HISTORY_START, WEEK_END, freq="D")
daily = pd.concat([
    history.rename(columns={"trimp": "load"}),
    sm[["player_id", "date", "trimp_banister"]].rename(columns={"trimp_banister": "load"}),
])
daily["date"] = pd.to_datetime(daily["date"])
table = daily.pivot_table(index="date", columns="player_id", values="load", aggfunc="sum")
table = table.reindex(index=days, columns=players.index).fillna(0.0)

acute = table.ewm(alpha=2 / (7 + 1), adjust=False).mean().iloc[-1]
chronic = table.ewm(alpha=2 / (28 + 1), adjust=False).mean().iloc[-1]
week = table.loc[WEEK_START:WEEK_END]
prev = table.loc[pd.Timestamp(WEEK_START) - pd.Timedelta(days=7):pd.Timestamp(WEEK_START) - pd.Timedelta(days=1)]
sd = week.std(ddof=1)
monotony = (week.mean() / sd).where(sd > 0)
report = pd.DataFrame({
    "weekly_load": week.sum(),
    "monotony": monotony,
    "strain": week.sum() * monotony,
    "acute_ewma": acute,
    "chronic_ewma": chronic,
    "acwr": (acute / chronic).where(chronic > 0),
    "load_change_pct": (100 * (week.sum() - prev.sum()) / prev.sum()).where(prev.sum() > 0),
})
report["acwr_flag"] = np.select([report["acwr"] > 1.5, report["acwr"] < 0.8], ["high", "low"], "ok")
report.loc[report["acwr"].isna(), "acwr_flag"] = ""
report.index.name = "player_id"
cols = ["weekly_load", "monotony", "strain", "acute_ewma", "chronic_ewma", "acwr", "acwr_flag", "load_change_pct"]
report[cols].round(4).to_csv(output / "weekly_report.csv")

summary = {
    "high_acwr_players": sorted(report.index[report["acwr_flag"] == "high"]),
    "low_acwr_players": sorted(report.index[report["acwr_flag"] == "low"]),
    "squad_median_acwr": round(float(report["acwr"].median()), 4),
    "highest_strain_player": str(report["strain"].idxmax()),
}
(output / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
