"""Grader for squad-training-load-monitoring.

Tolerances. Every metric is a deterministic function of the stated cleaning rules, so a correct
pipeline differs from the reference only by float summation order and output rounding:
- distances and TRIMP, relative 0.5 % (plus 0.5 m / 0.05 AU absolute for zero or tiny values):
  one uncleaned GPS glitch (12-24 m/s) adds 2-10 % to a player's sprint distance, and
  uncleaned HR spikes or zero-filled dropouts move TRIMP by 1-5 %; the age-predicted HRmax
  (220 - age) instead of the lab value moves TRIMP by well over 5 %.
- durations 0.01 min (two decimals asked); sprint efforts exact (an integer count).
- weekly load and EWMAs relative 0.5 % (they inherit the session TRIMP tolerance); ACWR and the
  squad median 0.005 absolute (the flags' thresholds are given to 0.1); monotony and strain
  relative 1 % (a ratio of a mean to a standard deviation amplifies small load differences);
  load change 0.5 percentage points.

The crux is the per-session heart-rate load that every weekly figure is built on: a gate wants
the Banister TRIMP of most sessions within a coarse 5 % (uncleaned artefacts move it by 1-5 %,
a fabricated or skipped load by far more). Monotony accepts either standard-deviation
convention (sample or population), as the instruction allows; strain must use the same one.
"""

import math

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    rows_by,
)

SESSION_COLUMNS = ["player_id", "session_id", "date", "duration_min", "total_distance_m", "hsr_m",
                   "sprint_m", "sprint_efforts", "hr_valid_min", "trimp_banister", "trimp_edwards"]
# Gate: this share of sessions with Banister TRIMP within TRIMP_GATE_REL of the reference.
TRIMP_GATE_SHARE, TRIMP_GATE_REL = 0.8, 0.05
# Monotony with the population SD (n) instead of the sample SD (n - 1) over 7 days.
POPULATION_SD_FACTOR = math.sqrt(7 / 6)
WEEKLY_COLUMNS = ["player_id", "weekly_load", "monotony", "strain", "acute_ewma", "chronic_ewma",
                  "acwr", "acwr_flag", "load_change_pct"]


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    ref_sessions, ref_weekly = ref["sessions"], ref["weekly"]

    rows, ok = load_csv(ctx.out("session_metrics.csv"), required_columns=SESSION_COLUMNS)
    r.gate("session_metrics.csv has the required columns", ok)
    sessions = rows_by(rows, lambda row: f"{row['player_id']}|{row['session_id']}")
    close = sum(1 for k, v in ref_sessions.items()
                if near(sessions.get(k, {}).get("trimp_banister"), v["trimp_banister"], rel=TRIMP_GATE_REL).passed)
    r.gate("session loads: Banister TRIMP within 5% for at least 80% of the sessions",  # TRIMP_GATE_*
           Outcome(close >= TRIMP_GATE_SHARE * len(ref_sessions), f"{close} of {len(ref_sessions)} sessions",
                   expected=f">= {math.ceil(TRIMP_GATE_SHARE * len(ref_sessions))} sessions", seen=close))
    r.check("one row per player and session with data (absent players have none)", 1,
            sessions.coverage(ref_sessions))
    r.check("session duration", 1, match_rows(sessions, ref_sessions, ["duration_min"], abs=0.01))
    r.check("total distance from the cleaned GPS speed", 2,
            match_rows(sessions, ref_sessions, ["total_distance_m"], rel=5e-3, abs=0.5))
    r.check("high-speed (>= 5.5 m/s) and sprint (>= 7.0 m/s) distance", 2,
            match_rows(sessions, ref_sessions, ["hsr_m", "sprint_m"], rel=5e-3, abs=0.5))
    r.check("sprint efforts (2 s minimum, single-sample dips bridged)", 2,
            match_rows(sessions, ref_sessions, ["sprint_efforts"], exact=True))
    r.check("heart-rate time kept after the 10 s interpolation rule", 1,
            match_rows(sessions, ref_sessions, ["hr_valid_min"], abs=0.01))
    r.check("Banister TRIMP per session", 2,
            match_rows(sessions, ref_sessions, ["trimp_banister"], rel=5e-3, abs=0.05))
    r.check("Edwards TRIMP per session", 1,
            match_rows(sessions, ref_sessions, ["trimp_edwards"], rel=5e-3, abs=0.05))

    wrows, wok = load_csv(ctx.out("weekly_report.csv"), required_columns=WEEKLY_COLUMNS)
    weekly = rows_by(wrows, "player_id")
    r.check(
        "weekly_report.csv has the columns and all 20 players",
        1,
        Outcome(bool(wok) and sorted(weekly) == sorted(ref_weekly), wok.message,
                expected=sorted(ref_weekly), seen=sorted(weekly)[:25]),
    )
    r.check("weekly load (rest days as zero)", 1, match_rows(weekly, ref_weekly, ["weekly_load"], rel=5e-3, abs=0.05))
    r.check("acute and chronic EWMA on 2024-03-17", 2,
            match_rows(weekly, ref_weekly, ["acute_ewma", "chronic_ewma"], rel=5e-3, abs=0.01))
    r.check("acute:chronic workload ratio", 1, match_rows(weekly, ref_weekly, ["acwr"], abs=5e-3))
    r.check("ACWR flags (> 1.5 high, < 0.8 low)", 2, match_rows(weekly, ref_weekly, ["acwr_flag"], exact=True))
    sample = match_rows(weekly, ref_weekly, ["monotony", "strain"], rel=1e-2)
    population = match_rows(weekly, {p: {k: (v[k] * POPULATION_SD_FACTOR if v[k] is not None else None)
                                         for k in ("monotony", "strain")} for p, v in ref_weekly.items()},
                            ["monotony", "strain"], rel=1e-2)
    r.check("Foster monotony and strain (empty when the SD is 0)", 2,
            population if population.passed and not sample.passed else sample)
    r.check("week-on-week load change (empty when last week was 0)", 1,
            match_rows(weekly, ref_weekly, ["load_change_pct"], abs=0.5))

    summary, sok = load_json(ctx.out("summary.json"))
    ref_sum = ref["summary"]
    wanted = {"high_acwr_players": ref_sum["flagged_high"], "low_acwr_players": ref_sum["flagged_low"]}
    lists_ok = all(
        isinstance(get(summary, k), list) and sorted(map(str, get(summary, k))) == v for k, v in wanted.items()
    )
    r.check(
        "summary: flagged player lists",
        1,
        Outcome(bool(sok) and lists_ok, sok.message, expected=wanted,
                seen={k: get(summary, k, None) for k in wanted}),
    )
    med = near(get(summary, "squad_median_acwr"), ref_sum["median_acwr"], abs=5e-3)
    top = get(summary, "highest_strain_player")
    r.check(
        "summary: squad median ACWR and highest-strain player",
        1,
        Outcome(med.passed and top == ref_sum["top_strain"], med.message,
                expected=[ref_sum["median_acwr"], ref_sum["top_strain"]],
                seen=[get(summary, "squad_median_acwr", None), get(summary, "highest_strain_player", None)]),
    )
    return r
