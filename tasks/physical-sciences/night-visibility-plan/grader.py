"""Grader for night-visibility-plan.

Times are compared in seconds since the reference evening twilight; positions, window lengths
and Moon distances as numbers; schedulability as text. The reference is astropy's geometric
AltAz for the site, bisected to 0.1 s.
"""

from __future__ import annotations

from datetime import datetime

from lastexam.grading import (
    GradeContext,
    Rubric,
    all_of,
    get,
    is_empty,
    load_csv,
    load_json,
    match_rows,
    near,
    rows_by,
)

COLUMNS = ["name", "ra_icrs_deg", "dec_icrs_deg", "window_start_utc", "window_end_utc",
           "window_minutes", "moon_sep_deg", "schedulable"]
# A wrong site longitude or a wrong night moves the twilights by hours; 5 min is far outside
# anything a correct computation with any ephemeris gives.
GATE_S = 300
# 60 s: astropy, SOFA-based or almanac-grade codes agree to a few seconds for these events.
TIME_S = 60
# 0.001 deg = 3.6 arcsec: FK4-to-ICRS differences between codes stay below 1 arcsec;
# precessing a B1950 position is a shift of tenths of a degree.
POS_DEG = 0.001
# Window length: difference of two times each within 60 s.
MINUTES = 2.0
# Topocentric Moon position: codes agree to arcseconds; 0.2 deg allows the window midpoint to
# move by a minute or two (the Moon moves 0.5 deg per hour).
MOON_DEG = 0.2


def seconds(text: object, origin: datetime) -> float | None:
    if not isinstance(text, str) or is_empty(text):
        return None
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "").replace(" ", "T"))
    except ValueError:
        return None
    if stamp.tzinfo is not None:  # an explicit offset ("+00:00") names the instant too
        offset = stamp.utcoffset()
        if offset is None:
            return None
        try:
            stamp = stamp.replace(tzinfo=None) - offset
        except OverflowError:  # year 1 at +01:00 is before year 1 in UTC
            return None
    return (stamp - origin).total_seconds()


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    origin = datetime.fromisoformat(ref["night"]["evening_twilight_utc"])

    night, night_ok = load_json(ctx.out("night.json"))
    r.gate("night.json parses as a JSON object", night_ok)
    rows, rows_ok = load_csv(ctx.out("plan.csv"), required_columns=COLUMNS)
    r.gate("plan.csv has the required columns", rows_ok)

    twilights = {k: seconds(get(night, k), origin) for k in ("evening_twilight_utc", "morning_twilight_utc")}
    expected_tw = {k: seconds(v, origin) for k, v in ref["night"].items()}
    r.gate("night located: both twilights within 5 minutes",
           all_of([(k, near(twilights[k], expected_tw[k], abs=GATE_S)) for k in twilights]))
    r.check("evening and morning twilight within 60 s", 2,
            all_of([(k, near(twilights[k], expected_tw[k], abs=TIME_S)) for k in twilights]))

    seen = rows_by(rows, "name")
    expected = {t["name"]: t for t in ref["targets"]}
    r.check("one row per target", 1, seen.coverage(list(expected)))
    r.check("ICRS positions within 0.001 deg", 2,
            match_rows(seen, expected, ["ra_icrs_deg", "dec_icrs_deg"], abs=POS_DEG))

    def times(row: dict) -> dict:
        return {k: seconds(row.get(k), origin) for k in ("window_start_utc", "window_end_utc")}

    seen_times = {name: times(row) for name, row in seen.items()}
    ref_times = {name: times(t) for name, t in expected.items()}
    r.check("observable windows: start and end within 60 s", 4,
            match_rows(seen_times, ref_times, ["window_start_utc", "window_end_utc"], abs=TIME_S))
    r.check("window lengths within 2 minutes", 1,
            match_rows(seen, expected, ["window_minutes"], abs=MINUTES))
    moon_ref = {n: {"moon_sep_deg": (None if t["moon_sep_deg"] == "" else t["moon_sep_deg"])}
                for n, t in expected.items()}
    r.check("topocentric Moon distance within 0.2 deg", 2,
            match_rows(seen, moon_ref, ["moon_sep_deg"], abs=MOON_DEG))
    r.check("schedulable decisions", 2,
            match_rows(seen, {n: {"schedulable": t["schedulable"]} for n, t in expected.items()},
                       ["schedulable"], exact=True))
    return r
