"""Grader for local-earthquake-location-ml: the deliverables against the planted truth.

Tolerances (and why):
- epicentre 2 km, depth 3 km, origin time 0.2 s: ten stations with good azimuthal cover and
  planted path residuals of 0.04 s (P) / 0.07 s (S) give a formal error of a few hundred metres;
  the margins cover other reasonable pickers and grid steps, not a 1.6 s clock error or a
  missing elevation correction;
- P picks 0.10 s, S picks 0.25 s (at 9 of 10 and 8 of 10 stations): onsets are causal and
  sharp at 100 Hz; S emerges from the P coda and is less certain;
- clock-drift station P within 0.15 s: the drift is known to 0.01 s from the log;
- Wood-Anderson amplitudes 0.1 in log10 (26 %): response removal, pre-filters, tapers and a
  window differing by a few tenths of a second change the 1-5 Hz peak by a few per cent only,
  while unit, orientation or gain errors change it by factors;
- ML 0.1: station amplitudes agree to a few per cent and hypocentral distances to ~1 km,
  which moves ML by < 0.03; a wrong Wood-Anderson gain (2800) moves it by 0.13;
- formula consistency 0.02 (3-decimal rounding), distance consistency 0.5 km.
"""

from __future__ import annotations

import math

from lastexam.grading import GradeContext, Outcome, Rubric, as_number, load_csv, near, rows_by

KM_PER_DEG = 111.195
# The crux gate: an event located from its arrivals. Putting it at the nearest station or the
# network centre (7-8 km off here) or guessing the origin time fails it; real location errors
# (a clock left uncorrected, a missing elevation correction) stay well inside it.
CRUX_EPI_KM, CRUX_TIME_S = 5.0, 1.0


def _utc(value):
    from obspy import UTCDateTime

    try:
        return UTCDateTime(str(value))
    except Exception:  # UTCDateTime raises several types on bad strings
        return None


def read_event(path):
    """(event, origin, magnitude) from a QuakeML file, or an Outcome explaining the failure."""
    if not path.is_file():
        return None, Outcome(False, "event.xml is missing")
    if path.stat().st_size > 20_000_000:
        return None, Outcome(False, "event.xml is too large")
    try:
        from obspy import read_events

        cat = read_events(str(path), format="QUAKEML")
    except Exception as e:  # obspy raises many types on malformed QuakeML
        return None, Outcome(False, f"event.xml is not readable QuakeML: {type(e).__name__}: {e}"[:300])
    if len(cat) < 1:
        return None, Outcome(False, "event.xml holds no event")
    ev = cat[0]
    org = ev.preferred_origin() or (ev.origins[0] if ev.origins else None)
    if org is None or org.latitude is None or org.longitude is None or org.time is None or org.depth is None:
        return None, Outcome(False, "the event has no origin with time, latitude, longitude and depth")
    mags = [m for m in ev.magnitudes if (m.magnitude_type or "").upper() == "ML"]
    pref = ev.preferred_magnitude()
    mag = pref if pref is not None and (pref.magnitude_type or "").upper() == "ML" else (mags[0] if mags else None)
    return (ev, org, mag), Outcome(True, f"{len(cat)} event(s); origin at {org.time}")


def epicentral_km(lat1, lon1, lat2, lon2):
    from obspy.geodetics import locations2degrees

    return locations2degrees(lat1, lon1, lat2, lon2) * KM_PER_DEG


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    truth = ctx.reference_json("truth.json")
    stations = truth["stations"]
    o_true = truth["origin"]

    parsed, ok = read_event(ctx.out("event.xml"))
    r.gate("event.xml is QuakeML with an origin (time, latitude, longitude, depth)", ok)
    ev, org, mag = parsed if parsed else (None, None, None)

    picks, _ = load_csv(ctx.out("picks.csv"), required_columns=["station", "phase", "time", "polarity"])
    mags, _ = load_csv(ctx.out("magnitudes.csv"),
                             required_columns=["station", "hypo_dist_km", "amp_n_mm", "amp_e_mm", "station_ml", "used"])

    # Location.
    epi_err = dt = None
    if org is not None:
        epi_err = epicentral_km(org.latitude, org.longitude, o_true["latitude"], o_true["longitude"])
        dt = org.time - _utc(o_true["time"])
    r.gate("event located from the arrivals: epicentre within 5 km and origin time within 1 s",
           Outcome(epi_err is not None and epi_err <= CRUX_EPI_KM and abs(dt) <= CRUX_TIME_S,
                   f"epicentre {epi_err:.2f} km and origin time {dt:+.2f} s from truth" if epi_err is not None else "no origin",
                   expected={"epicentre_km": f"<= {CRUX_EPI_KM}", "origin_time_s": f"<= {CRUX_TIME_S}"},
                   seen={"epicentre_km": epi_err and round(epi_err, 2), "origin_time_s": dt and round(dt, 3)}))
    if org is not None:
        r.check("epicentre within 2 km of the true epicentre", 3,
                Outcome(epi_err <= 2.0, f"{epi_err:.2f} km from truth", expected=[o_true["latitude"], o_true["longitude"]],
                        seen=[round(org.latitude, 5), round(org.longitude, 5)]))
        r.check("depth within 3 km (QuakeML depth in metres)", 2, near(org.depth / 1000.0, o_true["depth_km"], abs=3.0))
        r.check("origin time within 0.2 s", 2, near(dt, 0.0, abs=0.2))
    else:
        for name, w in (("epicentre within 2 km of the true epicentre", 3), ("depth within 3 km (QuakeML depth in metres)", 2),
                        ("origin time within 0.2 s", 2)):
            r.check(name, w, Outcome(False, "no origin"))

    # Picks.
    table = rows_by(picks, lambda row: (row["station"].upper(), row["phase"].upper()))
    errs = {"P": {}, "S": {}}
    for sta in sorted(stations):
        for ph in ("P", "S"):
            row = table.get((sta, ph))
            t = _utc(row["time"]) if row else None
            true_t = _utc(stations[sta]["p_time" if ph == "P" else "s_time"])
            errs[ph][sta] = None if t is None else round(t - true_t, 3)

    def pick_outcome(ph, tol, need):
        good = [s for s, e in errs[ph].items() if e is not None and abs(e) <= tol]
        return Outcome(len(good) >= need, f"{len(good)} of {len(errs[ph])} {ph} picks within {tol} s",
                       expected=f">= {need} within {tol} s", seen=errs[ph])

    r.check("P picks within 0.10 s of the true onsets at >= 9 of 10 stations", 2, pick_outcome("P", 0.10, 9))
    r.check("S picks within 0.25 s of the true onsets at >= 8 of 10 stations", 1, pick_outcome("S", 0.25, 8))
    clk = truth["clock"]["station"]
    e = errs["P"].get(clk)
    r.check(f"{clk} P pick corrected for the logged clock drift (within 0.15 s of true time)", 2,
            Outcome(e is not None and abs(e) <= 0.15, f"error {e} s", expected=0.0, seen=e))
    pol_seen = {s: str((table.get((s, "P")) or {}).get("polarity", "")).upper() for s in sorted(stations)}
    pol_true = {s: stations[s]["p_polarity"] for s in sorted(stations)}
    wrong = sorted(s for s in stations if pol_seen[s] != pol_true[s])
    r.check("P first-motion polarities (ground up/down) correct at all 10 stations", 2,
            Outcome(not wrong, f"wrong at {wrong}" if wrong else "all correct", expected=pol_true, seen=pol_seen))

    # Amplitudes and magnitudes.
    mrow = rows_by(mags, lambda row: row["station"].upper())
    bad_amp, shown = [], {}
    for sta, s in sorted(stations.items()):
        if s["clipped"]:
            continue
        for comp, col in (("N", "amp_n_mm"), ("E", "amp_e_mm")):
            if comp in s["dead_channels"]:
                continue
            v = as_number((mrow.get(sta) or {}).get(col))
            ref = s["wa_amp_mm"][comp]
            diff = None if v is None or v <= 0 else round(math.log10(v / ref), 3)
            shown[f"{sta}.{comp}"] = diff
            if diff is None or abs(diff) > 0.1:
                bad_amp.append(f"{sta}.{comp}")
    r.check("Wood-Anderson amplitudes within 0.1 log10 units on every live, unclipped horizontal", 3,
            Outcome(not bad_amp, f"off at {bad_amp}" if bad_amp else f"all {len(shown)} within 0.1",
                    expected="log10(seen/true) within +-0.1", seen=shown))

    dead_sta, dead_comp = next((k, v["dead_channels"][0]) for k, v in sorted(stations.items()) if v["dead_channels"])
    dead_col = "amp_n_mm" if dead_comp == "N" else "amp_e_mm"
    used_true = {s: 0 if v["clipped"] else 1 for s, v in sorted(stations.items())}
    used_seen = {s: as_number((mrow.get(s) or {}).get("used")) for s in sorted(stations)}
    dead_blank = mrow.get(dead_sta) is not None and str(mrow[dead_sta].get(dead_col, "")).strip() == ""
    r.check("clipped station excluded from ML (used = 0), dead channel left blank", 1,
            Outcome(used_seen == used_true and dead_blank, "as required" if used_seen == used_true and dead_blank
                    else f"used flags or {dead_sta}.{dead_comp} wrong",
                    expected={"used": used_true, f"{dead_sta}.{dead_comp}": ""},
                    seen={"used": used_seen, f"{dead_sta}.{dead_comp}": (mrow.get(dead_sta) or {}).get(dead_col)}))

    r.check("event ML within 0.1 of the reference", 3,
            near(mag.mag if mag is not None else None, truth["ml"], abs=0.1))


    # Internal consistency of magnitudes.csv with the stated formula and with event.xml.
    problems = []
    used_ml = []
    for sta, m in sorted(mrow.items()):
        amps = [as_number(m.get(c)) for c in ("amp_n_mm", "amp_e_mm")]
        amps = [a for a in amps if a is not None and a > 0]
        rr, sml = as_number(m.get("hypo_dist_km")), as_number(m.get("station_ml"))
        if not amps or rr is None or sml is None or rr <= 0:
            problems.append(f"{sta}: incomplete row")
            continue
        want = sum(math.log10(a) + 1.11 * math.log10(rr / 100.0) + 0.00189 * (rr - 100.0) + 3.0 for a in amps) / len(amps)
        if abs(want - sml) > 0.02:
            problems.append(f"{sta}: station_ml {sml} but formula gives {want:.3f}")
        if as_number(m.get("used")) == 1:
            used_ml.append(sml)
    ev_ml = as_number(mag.mag) if mag is not None else None
    if used_ml and ev_ml is not None:
        used_ml.sort()
        k = len(used_ml)
        median = used_ml[k // 2] if k % 2 else 0.5 * (used_ml[k // 2 - 1] + used_ml[k // 2])
        if abs(median - ev_ml) > 0.011:
            problems.append(f"event ML {ev_ml} is not the median {median:.3f} of used station MLs")
    ok_formula = bool(mrow) and ev_ml is not None and not problems
    r.check("station MLs follow the stated attenuation formula and the event ML is their median", 1,
            Outcome(ok_formula, "consistent" if ok_formula else "; ".join(problems[:4]) or "no magnitudes",
                    expected="station_ml = mean over channels of the formula; ML = median of used", seen=problems[:6]))

    dist_bad = {}
    if org is not None and mrow:
        for sta, m in sorted(mrow.items()):
            if sta not in stations:
                continue
            s = stations[sta]
            epi = epicentral_km(org.latitude, org.longitude, s["latitude"], s["longitude"])
            want = math.hypot(epi, org.depth / 1000.0)
            got = as_number(m.get("hypo_dist_km"))
            if got is None or abs(got - want) > 0.5:
                dist_bad[sta] = {"expected": round(want, 2), "seen": got}
    ok_dist = org is not None and bool(mrow) and not dist_bad and all(s in mrow for s in stations)
    r.check("hypocentral distances in magnitudes.csv match the reported hypocentre (0.5 km)", 1,
            Outcome(ok_dist, "consistent" if ok_dist else f"inconsistent at {sorted(dist_bad)}", seen=dist_bad or None))

    n_arr = len(org.arrivals) if org is not None else 0
    n_picks = len(ev.picks) if ev is not None else 0
    ok_qml = mag is not None and n_arr >= 15 and n_picks >= 15
    r.check("event.xml holds the picks, their arrivals and a preferred ML magnitude", 1,
            Outcome(ok_qml, f"{n_picks} picks, {n_arr} arrivals, ML {'present' if mag is not None else 'missing'}",
                    expected=">= 15 picks and arrivals, an ML magnitude", seen={"picks": n_picks, "arrivals": n_arr}))
    return r
