"""Grader for engine-mount-truss-margins.

The crux is the finite-element model: the grader runs CalculiX on the agent's own deck and
compares the printed pad displacements of every load case with the reference, which
generate.py solved by the direct stiffness method (another route than the oracle's ccx run).
Units (lbf, lbf.in, inch tube callouts, ksi), areas, supports, the rigid engine and its moments all show
in these displacements, so a wrong model fails the gate; the member forces, allowables and
margins are weighted checks against the same reference.

Tolerances: displacements 0.5 % of the case's largest pad displacement (the unit and model
errors this catches are 10 % to 25x; ccx and the direct stiffness solve agree to 1e-6);
member forces 0.2 % or 1 N (3 decimals are asked; the loads are whole lbf); lengths, areas,
slenderness and allowables 0.2 % (E, Ftu and Fcy converted from ksi with 6.894757 MPa, the
inch with 25.4 mm: a rounded conversion factor to 4 digits stays inside); design loads 0.3 %
or 2 N; margins of safety 0.01 absolute (the instruction asks for 3 decimals, and no margin
of the reference is within 0.01 of zero).
"""

from __future__ import annotations

import shutil
import subprocess

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    equal,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    read_text,
    rows_by,
    same_set,
)

DISP_REL, FORCE_REL, FORCE_ABS = 5e-3, 2e-3, 1.0
GEO_REL, LOAD_REL, LOAD_ABS, MS_ABS = 2e-3, 3e-3, 2.0, 0.01
MARGIN_COLUMNS = ["member", "tube", "length_mm", "area_mm2", "slenderness", "P_tension_N", "P_compression_N",
                  "allow_tension_N", "allow_compression_N", "ms_tension", "ms_compression", "ms_min", "critical_case"]
PADS = ["5", "6", "7", "8"]


def run_deck(ctx: GradeContext) -> tuple[list[dict[str, list[float]]], Outcome]:
    """Run ccx on a copy of mount.inp; the pad displacements printed, one dict per step."""
    text, ok = read_text(ctx.out("mount.inp"))
    if text is None:
        return [], ok
    work = ctx.scratch / "ccx"
    work.mkdir(exist_ok=True)
    (work / "mount.inp").write_text(text)
    if shutil.which("ccx") is None:
        return [], Outcome(False, "ccx is not installed in the grading environment")
    try:
        proc = subprocess.run(["ccx", "-i", "mount"], cwd=work, capture_output=True, timeout=120)
    except (subprocess.TimeoutExpired, OSError) as e:
        return [], Outcome(False, f"ccx did not finish: {e}")
    dat = work / "mount.dat"
    log = (proc.stdout or b"").decode(errors="replace")
    if proc.returncode != 0 or not dat.is_file() or "*ERROR" in log:
        tail = log[log.find("*ERROR"):][:300] if "*ERROR" in log else log[-300:]
        return [], Outcome(False, f"ccx failed on mount.inp (exit {proc.returncode}): {tail}")
    steps: list[dict[str, list[float]]] = []
    in_disp = False
    for line in dat.read_text(errors="replace").splitlines():
        s = line.strip()
        if s.startswith("displacements"):
            steps.append({})
            in_disp = True
        elif s and not s[0].isdigit():
            in_disp = False
        elif in_disp and s:
            f = s.split()
            nums = [as_number(v) for v in f[1:4]]
            if len(f) == 4 and f[0] in PADS and None not in nums and f[0] not in steps[-1]:
                steps[-1][f[0]] = nums
    return steps, Outcome(True, f"ccx ran; {len(steps)} displacement blocks")


def displacement_gate(steps: list[dict[str, list[float]]], ran: Outcome, ref: dict) -> Outcome:
    if not ran.passed:
        return ran
    cases = ref["cases"]
    steps = [s for s in steps if s]  # blocks for other node sets print no pad
    if len(steps) < len(cases):
        return Outcome(False, f"{len(steps)} steps print pad displacements, {len(cases)} load cases",
                       expected=len(cases), seen=len(steps))
    parts = []
    for case, got in zip(cases, steps, strict=False):
        want = ref["displacements_mm"][case]
        scale = max(abs(v) for u in want.values() for v in u)
        for n in PADS:
            g = got.get(n)
            parts.append((f"{case} node {n}", all_of([
                near(g[i] if g else None, want[n][i], abs=DISP_REL * scale) for i in range(3)])))
    return all_of(parts)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    steps, ran = run_deck(ctx)
    r.gate("CalculiX runs mount.inp and its pad displacements match the reference in every load case",
           displacement_gate(steps, ran, ref))

    forces, fok = load_csv(ctx.out("member_forces.csv"), required_columns=["case", "member", "axial_N"])
    by = rows_by(forces, lambda row: (row["case"], str(int(float(row["member"])))))
    want = {(c, m): {"axial_N": f} for c, fs in ref["forces_N"].items() for m, f in fs.items()}
    r.check("member_forces.csv: one row per case and member", 1, by.coverage(sorted(want)) if fok.passed else fok)
    r.check("member axial forces, every case (tension positive)", 2,
            match_rows(by, want, ["axial_N"], rel=FORCE_REL, abs=FORCE_ABS) if fok.passed else fok)

    margins, mok = load_csv(ctx.out("margins.csv"), required_columns=MARGIN_COLUMNS)
    mb = rows_by(margins, lambda row: str(int(float(row["member"]))))
    ref_m = ref["margins"]

    def cols(names: list[str], rel: float = 0.0, abs_: float = 0.0) -> Outcome:
        if not mok.passed:
            return mok
        return match_rows(mb, ref_m, names, rel=rel, abs=abs_)

    r.check("margins.csv: one row per member", 1, mb.coverage(sorted(ref_m)) if mok.passed else mok)
    r.check("lengths, tube areas and slenderness ratios", 1, cols(["length_mm", "area_mm2", "slenderness"], rel=GEO_REL))
    r.check("tension allowables (Ftu x A)", 1, cols(["allow_tension_N"], rel=GEO_REL))
    r.check("compression allowables: pin-ended columns, Johnson-Euler", 3, cols(["allow_compression_N"], rel=GEO_REL))
    r.check("design ultimate loads (limit x 1.5, ultimate cases as given)", 3,
            cols(["P_tension_N", "P_compression_N"], rel=LOAD_REL, abs_=LOAD_ABS))
    r.check("margins of safety in tension and compression", 3, cols(["ms_tension", "ms_compression", "ms_min"], abs_=MS_ABS))
    r.check("critical load case of every member", 1,
            match_rows(mb, {k: {"critical_case": v["critical_case"]} for k, v in ref_m.items()}, ["critical_case"])
            if mok.passed else mok)

    summary, sok = load_json(ctx.out("summary.json"))
    r.check("summary: critical member and load case", 2, all_of([
        ("critical_member", equal(as_number(get(summary, "critical_member")), float(ref["critical_member"]))),
        ("critical_case", equal(get(summary, "critical_case"), ref["critical_case"]))]) if sok.passed else sok)
    r.check("summary: minimum margin of safety", 1, near(get(summary, "min_ms"), ref["min_ms"], abs=MS_ABS)
            if sok.passed else sok)
    r.check("summary: members with a negative margin", 2,
            same_set(get(summary, "negative_ms_members"), ref["negative_ms_members"]) if sok.passed else sok)
    return r
