"""Seeded generator of inputs/ and reference/ for squad-training-load-monitoring.

    python3 generate.py --out DIR

A football squad's review week of 1 Hz GPS speed and heart-rate exports (with strap dropouts,
electrical HR spikes and GPS speed glitches), the squad's lab heart-rate profile and the club
database's daily Banister TRIMP for the 42 days before. The reference metrics are computed here
with plain Python loops, independently of the oracle's vectorised pandas code.
"""

import argparse
import csv
import datetime as dt
import gzip
import io
import json
import math
import random
import statistics
from pathlib import Path

SEED = 31415
CANARY = "1f1d2946-119d-446a-a516-786ef95e479f"
WEEK_START = dt.date(2024, 3, 11)
HISTORY_DAYS = 42
N_PLAYERS = 20
POSITIONS = ["CB", "CB", "CB", "CB", "FB", "FB", "FB", "FB", "CM", "CM", "CM", "CM", "CM",
             "WM", "WM", "WM", "ST", "ST", "ST", "ST"]

# rule constants stated in the instruction
HR_LOW, HR_ABOVE_MAX = 40, 10
HR_GAP_MAX_S = 10
SPEED_MAX = 10.5
HSR, SPRINT = 5.5, 7.0
LAMBDA_A, LAMBDA_C = 2.0 / (7 + 1), 2.0 / (28 + 1)

# (session id, day offset in the week, kind, minutes)
SESSIONS = [
    ("S01", 0, "recovery", 40),
    ("S02", 2, "training", 82),
    ("S03", 3, "training", 70),
    ("S04", 4, "activation", 48),
    ("S05", 5, "match", 96),
    ("S06", 5, "top-up", 26),
]
INJURED = "P15"  # out all week
RETURNING = "P07"  # back from a three-week injury, full training this week
MODIFIED = "P11"  # modified (shortened) training on S02 and S03

# locomotor states: (name, speed range m/s, mean duration s)
STATES = [
    ("stand", (0.0, 0.6), 20),
    ("walk", (0.8, 1.9), 25),
    ("jog", (2.2, 3.9), 12),
    ("run", (4.0, 5.4), 6),
    ("hsr", (5.6, 6.9), 4),
    ("sprint", (7.2, 9.4), 4),
]
STATE_WEIGHTS = {
    "recovery": [0.34, 0.44, 0.20, 0.02, 0.0, 0.0],
    "training": [0.30, 0.33, 0.22, 0.09, 0.045, 0.015],
    "activation": [0.32, 0.34, 0.20, 0.08, 0.04, 0.02],
    "match": [0.22, 0.33, 0.24, 0.11, 0.065, 0.035],
    "top-up": [0.26, 0.28, 0.24, 0.12, 0.07, 0.03],
}
INTENSITY = {"recovery": 0.0, "training": 0.06, "activation": 0.02, "match": 0.09, "top-up": 0.07}


def make_players(rng):
    players = []
    for i in range(N_PLAYERS):
        age = rng.randint(18, 34)
        hr_max = rng.randint(183, 204)
        players.append({
            "player_id": f"P{i + 1:02d}",
            "position": POSITIONS[i],
            "age": age,
            "body_mass_kg": round(rng.uniform(66.0, 88.0), 1),
            "hr_rest": rng.randint(44, 62),
            "hr_max": hr_max,
            "v_max": rng.uniform(8.6, 9.5),
            "fitness": rng.uniform(-0.04, 0.04),
        })
    return players


def session_minutes(rng, player, session, starters, subs_on):
    sid, _, kind, minutes = session
    pid = player["player_id"]
    if pid == INJURED:
        return 0
    if kind == "match":
        if pid in starters:
            return minutes if starters[pid] is None else starters[pid]
        if pid in subs_on:
            return subs_on[pid]
        return 0
    if kind == "top-up":
        return minutes if pid not in starters else 0
    if pid == MODIFIED and sid in ("S02", "S03"):
        return minutes - 30
    return minutes + rng.randint(-2, 2)


def simulate(rng, player, kind, n):
    """1 Hz speed (m/s) and heart rate (bpm) for n seconds, clean."""
    weights = STATE_WEIGHTS[kind]
    speeds, hrs = [], []
    v, state_left, target = 0.5, 0, 0.5
    hr = player["hr_rest"] + 0.35 * (player["hr_max"] - player["hr_rest"])
    effort = 0.0
    for _ in range(n):
        if state_left <= 0:
            k = rng.choices(range(len(STATES)), weights)[0]
            _, (lo, hi), mean_d = STATES[k]
            hi = min(hi, player["v_max"])
            target = rng.uniform(lo, max(lo, hi))
            state_left = max(1, int(rng.expovariate(1.0 / mean_d)) + 1)
            if STATES[k][0] in ("hsr", "sprint"):
                state_left = max(3, state_left)
        state_left -= 1
        v += (target - v) * 0.45
        v = max(0.0, v + rng.gauss(0.0, 0.04))
        speeds.append(v)
        effort += (min(v / player["v_max"], 1.0) - effort) / 20.0
        frac = 0.42 + 0.62 * effort ** 0.7 + INTENSITY[kind] - player["fitness"]
        frac = min(frac, 0.985)
        target_hr = player["hr_rest"] + frac * (player["hr_max"] - player["hr_rest"])
        tau = 22.0 if target_hr > hr else 38.0
        hr += (target_hr - hr) / tau
        hrs.append(hr + rng.gauss(0.0, 1.2))
    return speeds, hrs


def add_artefacts(rng, player, speeds, hrs):
    """Strings as the export writes them: blanks, zeros and spikes, never at the edges."""
    n = len(speeds)
    s_txt = [f"{v:.2f}" for v in speeds]
    h_txt = [str(int(round(min(h, player["hr_max"])))) for h in hrs]
    for _ in range(rng.randint(0, 3)):  # strap dropouts
        length = rng.choice([2, 4, 6, 9, 10, 11, 14, 25, 60, 95])
        start = rng.randint(30, n - length - 30)
        fill = rng.choice(["0", ""])
        for t in range(start, start + length):
            h_txt[t] = fill
    for _ in range(rng.randint(0, 4)):  # electrical interference
        t = rng.randint(30, n - 32)
        for k in range(rng.randint(1, 2)):
            h_txt[t + k] = str(rng.randint(226, 254))
    for _ in range(rng.randint(0, 2)):  # implausibly low readings
        t = rng.randint(30, n - 31)
        h_txt[t] = str(rng.randint(22, 36))
    for _ in range(rng.randint(1, 4)):  # GPS speed glitches
        t = rng.randint(30, n - 31)
        s_txt[t] = f"{rng.uniform(11.5, 24.0):.2f}"
    for _ in range(rng.randint(0, 2)):  # satellite loss
        length = rng.randint(2, 7)
        start = rng.randint(30, n - length - 30)
        for t in range(start, start + length):
            s_txt[t] = ""
    return s_txt, h_txt


# ---------------------------------------------------------------- reference computation


def clean_speed(raw):
    vals = [None if x == "" or float(x) > SPEED_MAX else float(x) for x in raw]
    out = list(vals)
    i = 0
    while i < len(vals):
        if vals[i] is None:
            j = i
            while vals[j] is None:
                j += 1
            a, b = vals[i - 1], vals[j]
            for k in range(i, j):
                out[k] = a + (b - a) * (k - (i - 1)) / (j - (i - 1))
            i = j
        i += 1
    return out


def clean_hr(raw, hr_max):
    vals = [None if x == "" or not (HR_LOW <= float(x) <= hr_max + HR_ABOVE_MAX) else float(x) for x in raw]
    out = list(vals)
    i = 0
    while i < len(vals):
        if vals[i] is None:
            j = i
            while vals[j] is None:
                j += 1
            if j - i <= HR_GAP_MAX_S:
                a, b = vals[i - 1], vals[j]
                for k in range(i, j):
                    out[k] = a + (b - a) * (k - (i - 1)) / (j - (i - 1))
            i = j
        i += 1
    return out


def session_metrics(player, s_raw, h_raw):
    speed = clean_speed(s_raw)
    hr = clean_hr(h_raw, player["hr_max"])
    above = [v >= SPRINT for v in speed]
    filled = list(above)
    for k in range(1, len(above) - 1):
        if not above[k] and above[k - 1] and above[k + 1]:
            filled[k] = True
    efforts, run = 0, 0
    for flag in filled + [False]:
        if flag:
            run += 1
        else:
            if run >= 2:
                efforts += 1
            run = 0
    rest, mx = player["hr_rest"], player["hr_max"]
    banister = edwards = 0.0
    valid = 0
    for h in hr:
        if h is None:
            continue
        valid += 1
        x = min(max((h - rest) / (mx - rest), 0.0), 1.0)
        banister += x * 0.64 * math.exp(1.92 * x) / 60.0
        pct = 100.0 * h / mx
        zone = 0 if pct < 50 else 1 if pct < 60 else 2 if pct < 70 else 3 if pct < 80 else 4 if pct < 90 else 5
        edwards += zone / 60.0
    return {
        "duration_min": len(speed) / 60.0,
        "total_distance_m": sum(speed),
        "hsr_m": sum(v for v in speed if v >= HSR),
        "sprint_m": sum(v for v in speed if v >= SPRINT),
        "sprint_efforts": efforts,
        "hr_valid_min": valid / 60.0,
        "trimp_banister": banister,
        "trimp_edwards": edwards,
    }


def ewma(series, lam):
    out, prev = [], None
    for x in series:
        prev = x if prev is None else lam * x + (1.0 - lam) * prev
        out.append(prev)
    return out


# ---------------------------------------------------------------- history


def make_history(rng, players, week_loads):
    """Daily TRIMP for the 42 days before the review week, shaped like the squad's usual
    microcycle and scaled to each player's current sessions, with the injury stories."""
    first = WEEK_START - dt.timedelta(days=HISTORY_DAYS)
    rows = []
    pattern = {0: 0.42, 2: 1.0, 3: 0.9, 4: 0.55, 5: 1.9}  # Mon..Sat relative to a training day
    midweek_match_weeks = {2}  # week index with a Wednesday match instead of training
    for p in players:
        pid = p["player_id"]
        base = week_loads[pid] / 4.8 if week_loads[pid] > 0 else 95.0
        if pid == RETURNING:
            base = 92.0
        for d in range(HISTORY_DAYS):
            day = first + dt.timedelta(days=d)
            week, wd = d // 7, day.weekday()
            if wd not in pattern:
                continue
            factor = pattern[wd]
            if week in midweek_match_weeks and wd == 2:
                factor = 1.7
            if week in midweek_match_weeks and wd == 3:
                factor = 0.4
            if week % 2 == 1 and pid in ("P18", "P19", "P20") and wd == 5:
                factor = 0.8  # unused substitutes: top-up only
            if pid == RETURNING:
                if 14 <= d < 35:
                    continue  # injured
                if d >= 35:
                    factor *= 0.45 if wd != 5 else 0.15  # rehab: reduced team training
            if pid == INJURED and d >= 34:
                continue
            if pid == "P04" and week == 5:
                factor *= 1.9 if wd in (2, 3) else 1.0  # extra conditioning block
            if pid == "P12" and week >= 4:
                factor *= 0.55  # managed load after a knock
            load = base * factor * rng.uniform(0.85, 1.15)
            rows.append({"player_id": pid, "date": day.isoformat(), "trimp": f"{load:.1f}"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    inputs, reference = out / "inputs", out / "reference"
    (inputs / "raw").mkdir(parents=True, exist_ok=True)
    reference.mkdir(parents=True, exist_ok=True)

    players = make_players(rng)
    pids = [p["player_id"] for p in players]
    fit_ids = [x for x in pids if x != INJURED]
    order = fit_ids[:]
    rng.shuffle(order)
    starters = {x: None for x in order[:11]}
    for x in order[8:11]:
        starters[x] = rng.randint(58, 80)  # substituted
    subs_on = {x: 96 - starters[y] for x, y in zip(order[11:14], order[8:11], strict=False)}

    session_rows, metrics = [], {}
    for sess in SESSIONS:
        sid, offset, kind, _ = sess
        date = (WEEK_START + dt.timedelta(days=offset)).isoformat()
        session_rows.append({"session_id": sid, "date": date, "type": kind})
        buf = io.StringIO()
        buf.write("player_id,t_s,hr_bpm,speed_ms\n")
        for p in players:
            minutes = session_minutes(rng, p, sess, starters, subs_on)
            if minutes <= 0:
                continue
            n = minutes * 60
            speeds, hrs = simulate(rng, p, kind, n)
            s_txt, h_txt = add_artefacts(rng, p, speeds, hrs)
            for t in range(n):
                buf.write(f"{p['player_id']},{t},{h_txt[t]},{s_txt[t]}\n")
            m = session_metrics(p, s_txt, h_txt)
            metrics[(p["player_id"], sid)] = {"date": date, **m}
        with open(inputs / "raw" / f"{sid}.csv.gz", "wb") as f:
            with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=6) as gz:
                gz.write(buf.getvalue().encode())

    week_loads = {x: 0.0 for x in pids}
    for (pid, _), m in metrics.items():
        week_loads[pid] += m["trimp_banister"]
    history = make_history(rng, players, week_loads)

    with open(inputs / "players.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["player_id", "position", "age", "body_mass_kg", "hr_rest", "hr_max"])
        for p in players:
            w.writerow([p["player_id"], p["position"], p["age"], p["body_mass_kg"], p["hr_rest"], p["hr_max"]])
    with open(inputs / "sessions.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["session_id", "date", "type"], lineterminator="\n")
        w.writeheader()
        w.writerows(session_rows)
    with open(inputs / "load_history.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["player_id", "date", "trimp"], lineterminator="\n")
        w.writeheader()
        w.writerows(history)

    # weekly report from the history as written (one decimal) and this week's computed TRIMP
    first = WEEK_START - dt.timedelta(days=HISTORY_DAYS)
    days = [first + dt.timedelta(days=d) for d in range(HISTORY_DAYS + 7)]
    daily = {pid: {d.isoformat(): 0.0 for d in days} for pid in pids}
    for row in history:
        daily[row["player_id"]][row["date"]] += float(row["trimp"])
    for (pid, _), m in metrics.items():
        daily[pid][m["date"]] += m["trimp_banister"]
    weekly = {}
    for pid in pids:
        series = [daily[pid][d.isoformat()] for d in days]
        acute, chronic = ewma(series, LAMBDA_A)[-1], ewma(series, LAMBDA_C)[-1]
        week = series[-7:]
        prev = series[-14:-7]
        load = sum(week)
        sd = statistics.stdev(week)
        monotony = statistics.mean(week) / sd if sd > 0 else None
        acwr = acute / chronic if chronic > 0 else None
        flag = None if acwr is None else "high" if acwr > 1.5 else "low" if acwr < 0.8 else "ok"
        weekly[pid] = {
            "weekly_load": load,
            "monotony": monotony,
            "strain": None if monotony is None else load * monotony,
            "acute_ewma": acute,
            "chronic_ewma": chronic,
            "acwr": acwr,
            "acwr_flag": flag,
            "load_change_pct": 100.0 * (load - sum(prev)) / sum(prev) if sum(prev) > 0 else None,
        }
    acwrs = sorted(v["acwr"] for v in weekly.values() if v["acwr"] is not None)
    strains = {pid: v["strain"] for pid, v in weekly.items() if v["strain"] is not None}
    summary = {
        "flagged_high": sorted(p for p, v in weekly.items() if v["acwr_flag"] == "high"),
        "flagged_low": sorted(p for p, v in weekly.items() if v["acwr_flag"] == "low"),
        "median_acwr": statistics.median(acwrs),
        "top_strain": max(sorted(strains), key=lambda p: strains[p]),
    }

    def r(x):
        return None if x is None else float(f"{x:.10g}")

    expected = {
        "canary": CANARY,
        "sessions": {
            f"{pid}|{sid}": {k: (v if isinstance(v, (str, int)) else r(v)) for k, v in m.items()}
            for (pid, sid), m in sorted(metrics.items())
        },
        "weekly": {pid: {k: (v if isinstance(v, str) or v is None else r(v)) for k, v in w.items()}
                   for pid, w in sorted(weekly.items())},
        "summary": {k: (r(v) if isinstance(v, float) else v) for k, v in summary.items()},
    }
    (reference / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
