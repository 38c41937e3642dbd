"""Grader for dispatch-release-wb-fuel: legs.csv and release.json against the release the
instruction defines, computed by the generator from the true inputs.

Tolerances (and why):
- ZFW and TOW 2 kg, block fuel 2 kg, final reserve 1 kg: exact sums of stated masses;
- leg distance 0.1 NM and course 0.2 degree: WGS84 geodesics are exact; a sphere is off by
  0.3 % (0.4 NM on these legs);
- ground speed 1 kt, leg time 0.2 min: the wind triangle is exact; the winds blow nearly along
  these legs, so leaving out the drift correction costs under 0.3 kt (accepted), while the
  winds left out or read as "to" cost 47 to 190 kt;
- trip fuel 0.5 %, leg fuel 1 %, LW 25 kg: any integration of the fuel-flow table against the
  decreasing mass (fine steps, mid-leg mass) agrees within 0.1 %; one fuel flow for the whole
  trip is 3 % off;
- contingency 1 %, alternate 2 % (a few kg), minimum block 0.5 %, extra fuel 40 kg: they follow
  from the trip fuel;
- %MAC 0.1 (the instruction's precision); pressure altitude 5 ft; headwind 0.5 kt; takeoff
  distance 0.5 % (linear interpolation of the table is exact; the wind correction of a magnetic
  or true mix-up is 2 %; wind and slope corrections added instead of multiplied differ by 0.4 %);
- verdicts (envelope per phase, mass limits, takeoff, release): exact. The release is "no" for
  almost every mistake (cargo in lb read as kg, litres as kg, ...), so the release verdict earns
  its weight only together with the envelope, mass-limit and takeoff verdicts it combines: a
  guessed "no" beside verdicts that say otherwise earns nothing.
The crux (a fuel plan flown with the winds and the masses from the load sheet) is a gate at a
coarse threshold, so that format earns nothing without it.
"""

from __future__ import annotations

from lastexam import grading as lg
from lastexam.grading import GradeContext, Outcome, Rubric

LEG_COLUMNS = ["from", "to", "distance_nm", "true_course_deg", "ground_speed_kt", "time_min", "fuel_kg"]
PHASES = ("zfw", "tow", "lw")


def _flag(seen, expected: bool) -> Outcome:
    ok = isinstance(seen, bool) and seen == expected
    return Outcome(ok, "right" if ok else "wrong or not a JSON boolean", expected=expected,
                   seen=seen if isinstance(seen, (bool, int, float, str)) or seen is None else repr(seen)[:80])


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    rel, rel_ok = lg.load_json(ctx.out("release.json"))
    r.gate("release.json parses as a JSON object", rel_ok)
    legs, legs_ok = lg.load_csv(ctx.out("legs.csv"), required_columns=LEG_COLUMNS)
    r.gate("legs.csv parses with the required columns", legs_ok)

    fuel, mass = ref["fuel_kg"], ref["mass_kg"]
    r.gate("crux: trip fuel within 5 % and TOW within 3 %, release a JSON boolean", lg.all_of([
        ("fuel_kg.trip", lg.near(lg.get(rel, "fuel_kg.trip"), fuel["trip"], rel=0.05)),
        ("mass_kg.tow", lg.near(lg.get(rel, "mass_kg.tow"), mass["tow"], rel=0.03)),
        ("release", Outcome(isinstance(lg.get(rel, "release"), bool), "a boolean", seen=str(lg.get(rel, "release")))),
    ]))

    want = {(leg["from"], leg["to"]): leg for leg in ref["legs"]}
    got = lg.rows_by(legs, ("from", "to"))
    r.check("legs.csv: one row per route leg, WGS84 geodesic distance (0.1 NM) and initial true course (0.2 deg)", 2,
            lg.all_of([("rows", got.coverage(want)),
                    ("distance", lg.match_rows(got, want, ["distance_nm"], abs=0.1)),
                    ("course", lg.match_rows(got, want, ["true_course_deg"], abs=0.2))]))
    r.check("legs.csv: ground speed from the wind triangle (1 kt) and leg time (0.2 min)", 2,
            lg.all_of([("gs", lg.match_rows(got, want, ["ground_speed_kt"], abs=1.0)),
                    ("time", lg.match_rows(got, want, ["time_min"], abs=0.2))]))
    r.check("legs.csv: fuel burnt on each leg (1 %)", 1, lg.match_rows(got, want, ["fuel_kg"], rel=0.01))

    r.check("ZFW and TOW from the load sheet (2 kg)", 2, lg.all_of(
        [(p, lg.near(lg.get(rel, f"mass_kg.{p}"), mass[p], abs=2.0)) for p in ("zfw", "tow")]))
    r.check("LW after the trip fuel (25 kg)", 1, lg.near(lg.get(rel, "mass_kg.lw"), mass["lw"], abs=25.0))
    r.check("%MAC at ZFW and TOW (0.1)", 2, lg.all_of(
        [(p, lg.near(lg.get(rel, f"cg_pct_mac.{p}"), ref["cg_pct_mac"][p], abs=0.1)) for p in ("zfw", "tow")]))
    r.check("%MAC at LW after the burn sequence (0.1)", 2,
            lg.near(lg.get(rel, "cg_pct_mac.lw"), ref["cg_pct_mac"]["lw"], abs=0.1))
    r.check("CG envelope verdict at every phase", 2, lg.all_of(
        [(p, _flag(lg.get(rel, f"in_envelope.{p}"), ref["in_envelope"][p])) for p in PHASES]))
    r.check("structural mass limit verdicts (MZFW, MTOW, MLW)", 1, lg.all_of(
        [(p, _flag(lg.get(rel, f"within_mass_limit.{p}"), ref["within_mass_limit"][p])) for p in PHASES]))

    r.check("trip fuel integrated against the decreasing mass (0.5 %)", 2,
            lg.near(lg.get(rel, "fuel_kg.trip"), fuel["trip"], rel=0.005))
    r.check("fuel policy: block, taxi, contingency, alternate, final reserve, minimum block, extra", 2, lg.all_of([
        ("block", lg.near(lg.get(rel, "fuel_kg.block"), fuel["block"], abs=2.0)),
        ("taxi", lg.near(lg.get(rel, "fuel_kg.taxi"), fuel["taxi"], abs=0.5)),
        ("contingency", lg.near(lg.get(rel, "fuel_kg.contingency"), fuel["contingency"], rel=0.01)),
        ("alternate", lg.near(lg.get(rel, "fuel_kg.alternate"), fuel["alternate"], rel=0.02)),
        ("final_reserve", lg.near(lg.get(rel, "fuel_kg.final_reserve"), fuel["final_reserve"], abs=1.0)),
        ("minimum_block", lg.near(lg.get(rel, "fuel_kg.minimum_block"), fuel["minimum_block"], rel=0.005)),
        ("extra", lg.near(lg.get(rel, "fuel_kg.extra"), fuel["extra"], abs=40.0)),
    ]))

    to = ref["takeoff"]
    r.check("takeoff: pressure altitude (5 ft) and runway headwind component (0.5 kt)", 1, lg.all_of([
        ("pressure_altitude_ft", lg.near(lg.get(rel, "takeoff.pressure_altitude_ft"), to["pressure_altitude_ft"], abs=5.0)),
        ("headwind_kt", lg.near(lg.get(rel, "takeoff.headwind_kt"), to["headwind_kt"], abs=0.5)),
    ]))
    r.check("takeoff distance required from the AFM table with wind and slope (0.5 %) and its verdict", 2, lg.all_of([
        ("todr_m", lg.near(lg.get(rel, "takeoff.todr_m"), to["todr_m"], rel=0.005)),
        ("toda_m", lg.near(lg.get(rel, "takeoff.toda_m"), to["toda_m"], abs=0.5)),
        ("todr_within_toda", _flag(lg.get(rel, "takeoff.todr_within_toda"), to["todr_within_toda"])),
    ]))
    verdicts = [("release", ref["release"]), ("takeoff.todr_within_toda", to["todr_within_toda"])]
    verdicts += [(f"{group}.{p}", ref[group][p]) for group in ("in_envelope", "within_mass_limit") for p in PHASES]
    r.check("release verdict, with every envelope, mass-limit and takeoff verdict it combines", 3,
            lg.all_of([(path, _flag(lg.get(rel, path), want)) for path, want in verdicts]))
    return r
