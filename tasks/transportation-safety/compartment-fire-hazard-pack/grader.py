"""Grader for compartment-fire-hazard-pack: the room and device tables against the reference the
generator computed (closed-form MQH, bisection for flashover, fixed-step RK4 of the link).

Tolerances (and why):
- growth coefficient, t_p: 0.5 %, they follow from the inputs by one formula each;
- temperatures 1 K: closed forms, reported to 0.1 degC or finer;
- flashover HRR 0.5 % or 1 kW: closed forms, reported to 1 kW or finer;
- times 1 s: an adaptive or fixed-step integration of the link to 0.1 s differs by < 0.1 s, and
  the layer rise is monotone so its 500 K crossing is one number;
- HRR at operation 0.5 % or 1 kW of the fire curve at the agent's own operating time, so that a
  time within tolerance is not penalised twice;
- verdicts and empty cells exact: they are discrete.
The crux (device operation from the ceiling jet through the RTI equation) is a gate at 5 s on
more than half the devices, so that the closed-form room quantities earn nothing without it.
"""

from __future__ import annotations

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    is_empty,
    load_csv,
    match_rows,
    near,
    rows_by,
)

ROOM_COLS = ["room_id", "alpha_kw_per_s2", "t_p_s", "hgl_60_c", "hgl_120_c", "hgl_300_c", "qfo_mqh_kw",
             "qfo_babrauskas_kw", "qfo_thomas_kw", "t_flashover_s", "first_activation_s", "activates_before_flashover"]
DEV_COLS = ["device_id", "room_id", "activation_s", "hrr_at_activation_kw"]


def _same_time(seen, expected, tol: float) -> bool:
    if expected is None:
        return is_empty(seen)
    value = as_number(seen)
    return value is not None and abs(value - expected) <= tol


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    rooms_ref, devs_ref = ref["rooms"], ref["devices"]

    dev_rows, dev_ok = load_csv(ctx.out("devices.csv"), required_columns=DEV_COLS)
    r.gate("devices.csv parses with the required columns", dev_ok)
    room_rows, _ = load_csv(ctx.out("rooms.csv"), required_columns=ROOM_COLS)
    devs = rows_by(dev_rows, "device_id")
    rooms = rows_by(room_rows, "room_id")

    right = [d for d, e in sorted(devs_ref.items()) if d in devs and _same_time(devs[d].get("activation_s"),
                                                                                   e["activation_s"], 5.0)]
    r.gate("device operation: more than half the devices' operating times (or non-operation) within 5 s",
           Outcome(2 * len(right) > len(devs_ref), f"{len(right)} of {len(devs_ref)} devices within 5 s",
                   expected=f">= {len(devs_ref) // 2 + 1}", seen=right))

    # rooms.csv
    r.check("rooms.csv: exactly one row per room", 1, rooms.coverage(sorted(rooms_ref)))
    r.check("NFPA 72 growth coefficient (0.5 %)", 1, match_rows(rooms, rooms_ref, ["alpha_kw_per_s2"], rel=5e-3))
    r.check("thermal penetration time of the lining (0.5 %)", 1, match_rows(rooms, rooms_ref, ["t_p_s"], rel=5e-3))
    r.check("MQH upper-layer temperature at 60, 120 and 300 s (1 degC)", 3,
            match_rows(rooms, rooms_ref, ["hgl_60_c", "hgl_120_c", "hgl_300_c"], abs=1.0))
    r.check("flashover HRR: MQH, Babrauskas and Thomas (0.5 % or 1 kW)", 2, all_of([
        (f"{rid}.{f}", near(rooms[rid].get(f) if rid in rooms else None, e[f], rel=5e-3, abs=1.0)
         if rid in rooms else Outcome(False, "room not reported"))
        for rid, e in sorted(rooms_ref.items()) for f in ("qfo_mqh_kw", "qfo_babrauskas_kw", "qfo_thomas_kw")]))
    r.check("time to flashover, empty where the layer never reaches +500 K (1 s)", 2,
            match_rows(rooms, rooms_ref, ["t_flashover_s"], abs=1.0))
    r.check("first device operation in each room (1 s)", 1,
            match_rows(rooms, rooms_ref, ["first_activation_s"], abs=1.0))
    r.check("verdict: a device operates before flashover, each room", 2,
            match_rows(rooms, rooms_ref, ["activates_before_flashover"], exact=True))

    # devices.csv
    r.check("devices.csv: exactly one row per physical device (schedule duplicates merged)", 1,
            devs.coverage(sorted(devs_ref)))
    r.check("every device's operating time, empty if none within 900 s (1 s)", 3,
            match_rows(devs, devs_ref, ["activation_s"], abs=1.0))
    for rid in sorted(rooms_ref):
        mine = {d: e for d, e in devs_ref.items() if e["room_id"] == rid}
        r.check(f"room {rid}: its devices' operating times (1 s)", 0.5, match_rows(devs, mine, ["activation_s"], abs=1.0))

    fires = ref["fires"]
    parts = []
    for did, e in sorted(devs_ref.items()):
        row = devs.get(did)
        if row is None:
            parts.append((did, Outcome(False, "device not reported")))
            continue
        t = as_number(row.get("activation_s"))
        fire = fires[e["room_id"]]
        want = None if t is None else min(fire["alpha"] * t * t, fire["peak_hrr_kw"])
        parts.append((did, near(row.get("hrr_at_activation_kw"), want, rel=5e-3, abs=1.0)))
    r.check("HRR at operation on the room's fire curve at the reported time (0.5 % or 1 kW)", 1, all_of(parts))
    return r
