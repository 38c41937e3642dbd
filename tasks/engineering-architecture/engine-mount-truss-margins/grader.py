"""Grader for engine-mount-truss-margins.

The crux is the finite-element model: the grader runs CalculiX on the agent's own deck, with
its own *NODE PRINT of the pad nodes appended to each step (so the agent's print requests,
increments and set names do not matter) and one step of its own after the last: a force at the
CG node alone, which a deck that merely reproduces displacements (prescribed pads, tuned springs)
does not answer. The pad displacements at the end of every step are compared with the reference,
which generate.py solved by the direct stiffness method (another route than the oracle's ccx run).
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

import re
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
CG = 9


STEP = re.compile(r"^\s*\*(?!\*)\s*STEP\b", re.I | re.M)
END_STEP = re.compile(r"^\s*\*(?!\*)\s*END\s*STEP\b", re.I | re.M)
SET = "LXPAD"  # the grader's own pad sets: LXPAD1.. for the agent's steps, LXPADP for the probe
BLOCK = re.compile(r"displacements \(vx,vy,vz\) for set (\S+) and time")


def instrumented(text: str, probe_n: list[float]) -> tuple[str | None, int]:
    """The deck with the grader's own pad print at the end of each step, and a last step of its
    own: the probe force at the CG node alone (a deck that only reproduces displacements, by
    prescribed pads or tuned springs, does not answer it)."""
    ends = list(END_STEP.finditer(text))
    first = STEP.search(text)
    if not ends or first is None:
        return None, 0
    pads = ", ".join(PADS)
    out, last = [], 0
    for k, m in enumerate(ends, start=1):
        out += [text[last:m.start()], f"*NODE PRINT, NSET={SET}{k}\nU\n"]
        last = m.start()
    out.append(text[last:].rstrip("\n") + "\n")
    probe = ["*STEP", "*STATIC", "*CLOAD, OP=NEW", *[f"{CG}, {d + 1}, {v:g}" for d, v in enumerate(probe_n) if v],
             f"*NODE PRINT, NSET={SET}P", "U", "*END STEP", ""]
    sets = "".join(f"*NSET, NSET={SET}{k}\n{pads}\n" for k in [*range(1, len(ends) + 1), "P"])
    body = "".join(out)
    at = first.start()
    return body[:at] + sets + body[at:] + "\n".join(probe), len(ends)


def run_deck(ctx: GradeContext, probe_n: list[float]) -> tuple[dict[str, dict[str, list[float]]], int, Outcome]:
    """Run ccx on the instrumented mount.inp; per grader set (step number or "P"), the pad
    displacements of its last block (the end of the step, whatever the increments)."""
    text, ok = read_text(ctx.out("mount.inp"))
    if text is None:
        return {}, 0, ok
    deck, n_steps = instrumented(text, probe_n)
    if deck is None:
        return {}, 0, Outcome(False, "mount.inp has no *STEP ... *END STEP")
    work = ctx.scratch / "ccx"
    work.mkdir(exist_ok=True)
    (work / "mount.inp").write_text(deck)
    if shutil.which("ccx") is None:
        return {}, 0, Outcome(False, "ccx is not installed in the grading environment")
    try:
        proc = subprocess.run(["ccx", "-i", "mount"], cwd=work, capture_output=True, timeout=120)
    except (subprocess.TimeoutExpired, OSError) as e:
        return {}, 0, Outcome(False, f"ccx did not finish: {e}")
    dat = work / "mount.dat"
    log = (proc.stdout or b"").decode(errors="replace")
    if proc.returncode != 0 or not dat.is_file() or "*ERROR" in log:
        tail = log[log.find("*ERROR"):][:300] if "*ERROR" in log else log[-300:]
        return {}, n_steps, Outcome(False, f"ccx failed on mount.inp (exit {proc.returncode}): {tail}")
    blocks: dict[str, dict[str, list[float]]] = {}
    cur: dict[str, list[float]] | None = None
    for line in dat.read_text(errors="replace").splitlines():
        s = line.strip()
        head = BLOCK.match(s)
        if head:
            name = head.group(1).upper()
            cur = blocks[name[len(SET):]] = {} if name.startswith(SET) else None
        elif s and not s[0].isdigit():
            cur = None
        elif cur is not None and s:
            f = s.split()
            nums = [as_number(v) for v in f[1:4]]
            if len(f) == 4 and f[0] in PADS and None not in nums:
                cur[f[0]] = nums
    return blocks, n_steps, Outcome(True, f"ccx ran; {n_steps} steps")


def compare(got: dict[str, list[float]] | None, want: dict[str, list[float]], label: str) -> list[tuple[str, Outcome]]:
    scale = max(abs(v) for u in want.values() for v in u)
    return [(f"{label} node {n}", all_of([near((got or {}).get(n, [None] * 3)[i], want[n][i], abs=DISP_REL * scale)
                                           for i in range(3)])) for n in PADS]


def displacement_gate(blocks: dict[str, dict[str, list[float]]], n_steps: int, ran: Outcome, ref: dict) -> Outcome:
    if not ran.passed:
        return ran
    cases = ref["cases"]
    if n_steps < len(cases):
        return Outcome(False, f"{n_steps} steps, {len(cases)} load cases", expected=len(cases), seen=n_steps)
    parts = []
    for k, case in enumerate(cases, start=1):
        parts += compare(blocks.get(str(k)), ref["displacements_mm"][case], case)
    parts += compare(blocks.get("P"), ref["probe"]["displacements_mm"], "grader's probe step (CG force only)")
    return all_of(parts)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    blocks, n_steps, ran = run_deck(ctx, ref["probe"]["force_N"])
    r.gate("CalculiX runs mount.inp; pad displacements match the reference in every load case and the probe step",
           displacement_gate(blocks, n_steps, ran, ref))

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
