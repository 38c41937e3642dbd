"""Oracle: write the CalculiX deck (mm, N, MPa) from the inputs, run ccx, read the pad
displacements and element stresses, and derive member forces and margins of safety.
--mistake builds the fixtures' wrong variants."""

import argparse
import csv
import json
import math
import re
import subprocess
from pathlib import Path

LBF, INCH, KSI = 4.4482216152605, 25.4, 6.894757293168361
FS = 1.5


def read(inputs: Path, mistake: str) -> dict:
    nodes = {int(r["node"]): (float(r["x_mm"]), float(r["y_mm"]), float(r["z_mm"]), r["role"])
             for r in csv.DictReader(open(inputs / "nodes.csv"))}
    members = [(int(r["member"]), int(r["node_a"]), int(r["node_b"]), r["tube"])
               for r in csv.DictReader(open(inputs / "members.csv"))]
    lbf = 1.0 if mistake == "lbf-as-newton" else LBF
    cases = {r["case"]: {"basis": r["basis"],
                         "force": [float(r[f"F{k}_lbf"]) * lbf for k in "xyz"],
                         "moment": [float(r[f"M{k}_lbf_in"]) * lbf * INCH for k in "xyz"]}
             for r in csv.DictReader(open(inputs / "powerplant_loads.csv"))}
    text = (inputs / "material.txt").read_text()
    prop = {k: float(v) for k, v in re.findall(r"\b(Ftu|Fcy|E) = ([\d.]+)", text)}
    return {"nodes": nodes, "members": members, "cases": cases, "prop": {k: v * KSI for k, v in prop.items()}}


def tube(callout: str) -> tuple[float, float]:
    od, t = (float(v) * INCH for v in callout.split("x"))
    di = od - 2 * t
    return math.pi / 4 * (od**2 - di**2), math.sqrt(od**2 + di**2) / 4


def deck(m: dict, mistake: str) -> str:
    out = ["** Engine mount, 4130 tube space truss: mm, N, MPa", "*NODE"]
    out += [f"{n}, {x:g}, {y:g}, {z:g}" for n, (x, y, z, _) in sorted(m["nodes"].items())]
    tubes = sorted({t for *_, t in m["members"]})
    for i, t in enumerate(tubes):
        out.append(f"*ELEMENT, TYPE=T3D2, ELSET=TUBE{i + 1}")
        out += [f"{e}, {a}, {b}" for e, a, b, tt in m["members"] if tt == t]
    out += ["*MATERIAL, NAME=STEEL4130", "*ELASTIC", f"{m['prop']['E']:.6g}, 0.32"]
    for i, t in enumerate(tubes):
        out += [f"*SOLID SECTION, ELSET=TUBE{i + 1}, MATERIAL=STEEL4130", f"{tube(t)[0]:.8g}"]
    role = {v[3]: n for n, v in m["nodes"].items()}
    fixed = [n for n, v in sorted(m["nodes"].items()) if v[3] == "firewall pickup"]
    pads = [n for n, v in sorted(m["nodes"].items()) if v[3] == "engine pad"]
    cg = role["engine CG"]
    rot = max(m["nodes"]) + 1  # the rigid body's rotational node: its translations carry the moments
    out.insert(2 + len(m["nodes"]), f"{rot}, {m['nodes'][cg][0]:g}, {m['nodes'][cg][1]:g}, {m['nodes'][cg][2]:g}")
    out += ["*NSET, NSET=PADS", ", ".join(map(str, pads)),
            f"*RIGID BODY, NSET=PADS, REF NODE={cg}, ROT NODE={rot}",
            "*BOUNDARY", *[f"{n}, 1, 3" for n in fixed],
            "*ELSET, ELSET=TUBES", ", ".join(f"TUBE{i + 1}" for i in range(len(tubes)))]
    for cid, c in m["cases"].items():
        out += [f"** {cid} ({c['basis']} loads as tabulated)", "*STEP", "*STATIC", "*CLOAD, OP=NEW"]
        out += [f"{cg}, {d + 1}, {v:.8g}" for d, v in enumerate(c["force"]) if v]
        out += [(f"{cg}, {d + 4}" if mistake == "moment-on-ref-node" else f"{rot}, {d + 1}") + f", {v:.8g}"
                for d, v in enumerate(c["moment"]) if v]
        out += ["*NODE PRINT, NSET=PADS", "U", "*EL PRINT, ELSET=TUBES", "S", "*END STEP"]
    return "\n".join(out) + "\n"


def parse_dat(path: Path) -> list[dict]:
    """Per step: pad displacements and, per element, the trace of its stress (the axial stress)."""
    steps, cur, kind = [], None, None
    for line in path.read_text().splitlines():
        if line.strip().startswith("displacements"):
            cur = {"u": {}, "s": {}}
            steps.append(cur)
            kind = "u"
        elif line.strip().startswith("stresses"):
            kind = "s"
        elif cur is not None and line.strip():
            f = line.split()
            if kind == "u" and len(f) == 4:
                cur["u"][int(f[0])] = [float(v) for v in f[1:]]
            elif kind == "s" and len(f) == 8 and f[1] == "1":
                cur["s"][int(f[0])] = sum(float(v) for v in f[2:5])
    return steps


def allowables(m: dict, length: float, callout: str, mistake: str) -> tuple[float, float, float]:
    area, rho = tube(callout)
    e, fcy = m["prop"]["E"], m["prop"]["Fcy"]
    sl = length / rho
    if mistake == "euler-only" or sl >= math.pi * math.sqrt(2 * e / fcy):
        fc = math.pi**2 * e / sl**2
    else:
        fc = fcy - (fcy * sl / (2 * math.pi)) ** 2 / e
    return m["prop"]["Ftu"] * area, fc * area, sl


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--mistake", default="", choices=["", "euler-only", "ultimate-factored", "lbf-as-newton",
                                                        "moment-on-ref-node"])
    a = ap.parse_args()
    m = read(a.inputs, a.mistake)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "mount.inp").write_text(deck(m, a.mistake))
    subprocess.run(["ccx", "-i", "mount"], cwd=a.out, check=True, capture_output=True)
    steps = parse_dat(a.out / "mount.dat")
    for junk in ("mount.dat", "mount.frd", "mount.sta", "mount.cvg", "mount.12d", "spooles.out"):
        (a.out / junk).unlink(missing_ok=True)
    cids = list(m["cases"])
    forces = {c: {e: steps[i]["s"][e] * tube(t)[0] for e, _, _, t in m["members"]} for i, c in enumerate(cids)}
    with open(a.out / "member_forces.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "member", "axial_N"])
        for c in cids:
            for e, *_ in m["members"]:
                w.writerow([c, e, f"{forces[c][e]:.3f}"])
    factor = {c: (1.0 if v["basis"] == "ultimate" and a.mistake != "ultimate-factored" else FS)
              for c, v in m["cases"].items()}
    rows = []
    for e, na, nb, t in m["members"]:
        length = math.dist(m["nodes"][na][:3], m["nodes"][nb][:3])
        ft, fc, sl = allowables(m, length, t, a.mistake)
        design = {c: forces[c][e] * factor[c] for c in cids}
        pt = max([v for v in design.values() if v > 0], default=0.0)
        pc = max([-v for v in design.values() if v < 0], default=0.0)
        mt, mc = (ft / pt - 1 if pt else None), (fc / pc - 1 if pc else None)
        crit = min(cids, key=lambda c: ft / design[c] if design[c] > 0 else fc / -design[c])
        rows.append({"member": e, "tube": t, "length_mm": length, "area_mm2": tube(t)[0], "slenderness": sl,
                     "P_tension_N": pt, "P_compression_N": pc, "allow_tension_N": ft, "allow_compression_N": fc,
                     "ms_tension": mt, "ms_compression": mc,
                     "ms_min": min(v for v in (mt, mc) if v is not None), "critical_case": crit})
    cols = list(rows[0])
    with open(a.out / "margins.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r[k] is None else f"{r[k]:.6f}" if isinstance(r[k], float) else r[k] for k in cols])
    worst = min(rows, key=lambda r: r["ms_min"])
    (a.out / "summary.json").write_text(json.dumps({
        "critical_member": worst["member"], "critical_case": worst["critical_case"],
        "min_ms": round(worst["ms_min"], 4),
        "negative_ms_members": [r["member"] for r in rows if r["ms_min"] < 0]}, indent=2) + "\n")


if __name__ == "__main__":
    main()
