"""Grader for ais-close-quarters-colreg: vessels, tracks and encounters against the analysis
the instruction defines, computed by the generator from exactly the reported values.

Tolerances (and why):
- static data, minute coverage, encounter set, situation and give-way vessel: exact, since the
  rules are fully stated and the decoded values are discrete;
- track positions 10 m: AIS positions are quantised to 1/10000 minute (0.2 m) and dead
  reckoning spans at most 180 s; flat-earth versus geodesic stepping differs by < 1 m;
- SOG/COG 0.05: they are copied from the report (0.1 kn / 0.1 degree resolution);
- CPA 0.02 NM, TCPA 0.2 min, minimum range 0.02 NM: the geometry is evaluated at a stated
  minute from stated states; a flat-earth (equirectangular) range differs by < 0.5 %;
- first alert +-1 minute: a CPA or TCPA within rounding of its limit may flip one minute.
The crux (encounters found and called by Rules 13-15) is a gate at a coarse threshold, so that
decoding and tracks earn nothing without it.
"""

from __future__ import annotations

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    load_csv,
    match_rows,
    near,
    rows_by,
)

VESSEL_FIELDS = ["class", "name", "callsign", "ship_type", "length_m", "beam_m"]


def _pair(row) -> tuple[int, int] | None:
    a, b = as_number(row.get("mmsi_a")), as_number(row.get("mmsi_b"))
    if a is None or b is None:
        return None
    return tuple(sorted((int(a), int(b))))


def _call(row) -> dict[str, str]:
    return {"situation": str(row.get("situation", "")).strip().lower(),
            "give_way": str(row.get("give_way", "")).strip().lower()}


def _minutes(iso: str | None) -> int | None:
    import datetime as dt

    try:
        t = dt.datetime.strptime(str(iso).strip(), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return int(t.replace(tzinfo=dt.UTC).timestamp()) // 60


def _metres(lat1, lon1, lat2, lon2) -> float:
    import math

    # Local equirectangular distance: exact enough below 100 m.
    k = 1852.0 * 60.0
    dy = (lat2 - lat1) * k
    dx = (lon2 - lon1) * k * math.cos(math.radians(0.5 * (lat1 + lat2)))
    return math.hypot(dx, dy)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    ref_tracks, _ = load_csv(ctx.ref("tracks.csv"))

    enc, enc_ok = load_csv(ctx.out("encounters.csv"), required_columns=[
        "mmsi_a", "mmsi_b", "first_alert", "cpa_nm", "tcpa_min", "min_range_nm", "situation", "give_way"])
    r.gate("encounters.csv parses with the required columns", enc_ok)
    ves, _ = load_csv(ctx.out("vessels.csv"), required_columns=[
        "mmsi", "class", "name", "callsign", "ship_type", "length_m", "beam_m"])
    trk, _ = load_csv(ctx.out("tracks.csv"), required_columns=["mmsi", "time", "lat", "lon", "sog_kn", "cog_deg"])

    # vessels.csv
    want = {v["mmsi"]: {f: v[f] if f in ("class", "name", "callsign") else float(v[f]) for f in VESSEL_FIELDS}
            for v in ref["vessels"]}
    r.check("vessels.csv: every vessel's static data decoded exactly (types 5 and 24), no phantom vessels", 2,
            match_rows(rows_by(ves, lambda row: int(as_number(row["mmsi"]))), want, VESSEL_FIELDS, exact=True,
                       only=True))

    # tracks.csv
    ref_rows = {(int(x["ref_mmsi"]), x["ref_time"]): x for x in ref_tracks or []}
    got_rows = rows_by(trk, lambda row: (int(as_number(row["mmsi"])), row["time"]))
    missing = sorted(set(ref_rows) - set(got_rows))
    surplus = sorted(set(got_rows) - set(ref_rows))
    ok = trk is not None and not missing and not surplus
    r.check("tracks.csv has exactly the vessel-minutes with a state no older than 180 s", 1,
            Outcome(ok, f"{len(missing)} missing, {len(surplus)} surplus of {len(ref_rows)} rows",
                    expected=len(ref_rows), seen={"missing": [list(k) for k in missing[:4]],
                                                   "surplus": [list(k) for k in surplus[:4]]}))
    common = sorted(set(ref_rows) & set(got_rows))
    bad = []
    for k in common:
        a, b = ref_rows[k], got_rows[k]
        vals = [as_number(b.get(c)) for c in ("lat", "lon", "sog_kn", "cog_deg")]
        if None in vals:
            bad.append(k)
            continue
        d = _metres(float(a["ref_lat"]), float(a["ref_lon"]), vals[0], vals[1])
        if d > 10.0 or abs(vals[2] - float(a["ref_sog"])) > 0.05 or abs(vals[3] - float(a["ref_cog"])) > 0.05:
            bad.append(k)
    share = (len(common) - len(bad)) / len(ref_rows) if ref_rows else 0.0
    r.check("tracks.csv dead-reckoned positions within 10 m and SOG/COG as reported (>= 99.5 % of rows)", 2,
            Outcome(share >= 0.995, f"{share:.1%} of reference rows matched",
                    expected=">= 99.5 %", seen=[list(k) for k in bad[:5]] or None))

    # encounters.csv
    ref_enc = {tuple(sorted((e["mmsi_a"], e["mmsi_b"]))): e for e in ref["encounters"]}
    got_enc = rows_by(enc, _pair)
    # The crux, at a coarse threshold: screening that finds the encounters and COLREG calls made
    # by the rules. More than half the encounters right (pair, situation, give-way vessel)
    # tolerates one method slip; listing every pair or labelling every encounter alike (even with
    # the crossing rule's give-way vessel) does not pass.
    called = [p for p, e in sorted(ref_enc.items()) if p in got_enc and _call(got_enc[p]) == _call(e)]
    spurious = len(set(got_enc) - set(ref_enc))
    crux = 2 * len(called) > len(ref_enc) and spurious <= len(ref_enc)
    r.gate("more than half the encounters found and called right (situation, give-way), spurious pairs no more than real",
           Outcome(crux, f"{len(called)} of {len(ref_enc)} encounters called right, {spurious} spurious pairs",
                   expected=f">= {len(ref_enc) // 2 + 1} right, <= {len(ref_enc)} spurious",
                   seen={"called_right": [list(p) for p in called], "spurious": spurious}))
    ok = set(got_enc) == set(ref_enc)
    r.check("encounter set: exactly the pairs ever in a close-quarters situation", 3,
            Outcome(ok, "same pairs" if ok else f"missing {sorted(set(ref_enc) - set(got_enc))}, "
                    f"unexpected {sorted(set(got_enc) - set(ref_enc))}",
                    expected=[list(p) for p in sorted(ref_enc)], seen=[list(p) for p in sorted(got_enc)]))

    def each_pair(test) -> Outcome:
        return all_of([(f"{p[0]}-{p[1]}", test(e, got_enc[p]) if p in got_enc else Outcome(False, "pair not reported"))
                       for p, e in sorted(ref_enc.items())])

    def alert(e, row) -> Outcome:
        a, b = _minutes(e["first_alert"]), _minutes(row.get("first_alert"))
        return Outcome(b is not None and abs(a - b) <= 1, "first alert minute", expected=e["first_alert"],
                       seen=row.get("first_alert"))

    r.check("first alert minute of each encounter (+-1 min)", 1, each_pair(alert))
    r.check("CPA (0.02 NM) and TCPA (0.2 min) at the first alert", 2, each_pair(lambda e, row: all_of([
        ("cpa_nm", near(row.get("cpa_nm"), e["cpa_nm"], abs=0.02)),
        ("tcpa_min", near(row.get("tcpa_min"), e["tcpa_min"], abs=0.2))])))
    r.check("minimum range between the pair (0.02 NM)", 1,
            each_pair(lambda e, row: near(row.get("min_range_nm"), e["min_range_nm"], abs=0.02)))

    # COLREG classification, one check per encounter so that a missed pair costs only itself.
    for p, e in sorted(ref_enc.items()):
        row = got_enc.get(p)
        seen = None if row is None else _call(row)
        exp = _call(e)
        r.check(f"encounter {p[0]}-{p[1]}: COLREG situation and give-way vessel (Rules 13-15)", 1.5,
                Outcome(seen == exp, "correct" if seen == exp else ("pair not reported" if seen is None else "differs"),
                        expected=exp, seen=seen))
    return r
