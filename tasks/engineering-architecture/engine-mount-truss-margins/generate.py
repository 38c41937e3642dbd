"""Seeded generator of inputs/ and reference/ for engine-mount-truss-margins: python3 generate.py --out DIR.

A welded 4130 tube engine mount (4 firewall pickups, 4 engine pads, 14 pin-ended tubes, two
redundants) with five powerplant load cases. The inputs are in US customary units (tube
callouts in inches, pad loads in lbf, allowables in ksi) while the model is in mm; one case is an
ultimate (emergency-landing) case that takes no further factor. The reference is solved here by
the direct stiffness method (the oracle uses CalculiX: another route to the same answer).
"""

import argparse
import json
import math
import random
from pathlib import Path

SEED = 3
CANARY = "d79a6a72-3cb0-4841-b3ae-e35acadb5b7d"
LBF, INCH, KSI = 4.4482216152605, 25.4, 6.894757293168361
E_KSI, FTU_KSI, FCY_KSI = 29000.0, 95.0, 75.0
FS = 1.5
BASE_NODES = {1: (0, -260, 210), 2: (0, 260, 210), 3: (0, 260, -190), 4: (0, -260, -190),
              5: (470, -200, 160), 6: (470, 200, 160), 7: (480, 200, -150), 8: (480, -200, -150)}
FIXED, PADS = [1, 2, 3, 4], [5, 6, 7, 8]
STRUT, RING = "0.750x0.049", "0.625x0.035"
MEMBERS = [(5, 1, STRUT), (5, 4, STRUT), (5, 2, STRUT), (6, 2, STRUT), (6, 3, STRUT), (7, 3, STRUT),
           (7, 4, STRUT), (8, 4, STRUT), (8, 1, STRUT),
           (5, 6, RING), (6, 7, RING), (7, 8, RING), (8, 5, RING), (6, 8, RING)]
CASES = [  # id, title, basis, load factors (x fwd, y right, z up) on the engine weight, torque (lb.in)
    ("LC1", "Flight, 4.4 g down", "limit", (0.0, 0.0, -4.4), 0.0),
    ("LC2", "Flight, 1.76 g up", "limit", (0.0, 0.0, 1.76), 0.0),
    ("LC3", "Side gust 1.33 g with 1 g down", "limit", (0.0, 1.33, -1.0), 0.0),
    ("LC4", "Take-off thrust and torque with 1 g down", "limit", None, None),
    ("LC5", "Emergency landing, 6 g down (FAR 23.561)", "ultimate", (0.0, 0.0, -6.0), 0.0),
    ("LC6", "Emergency landing, 9 g forward (FAR 23.561)", "ultimate", (9.0, 0.0, 0.0), 0.0),
]
CRIT_LR = math.pi * math.sqrt(2 * E_KSI / FCY_KSI)  # Johnson-Euler transition slenderness
FACTOR = {c[0]: (1.0 if c[2] == "ultimate" else FS) for c in CASES}


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-9:
            raise ValueError("singular")
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def tube(callout: str) -> dict[str, float]:
    od_in, t_in = (float(v) for v in callout.split("x"))
    od, t = od_in * INCH, t_in * INCH
    di = od - 2 * t
    area = math.pi / 4 * (od**2 - di**2)
    return {"area": area, "rho": math.sqrt(od**2 + di**2) / 4}


def pad_loads(force: tuple[float, float, float], moment: tuple[float, float, float],
              cg: tuple[float, float, float], nodes: dict) -> dict[int, list[float]]:
    """Minimum-norm pad forces in equilibrium with a force at the CG plus a couple (bolt-group rule)."""
    rows = []  # 6 x 12: sum of forces, sum of moments about the CG
    for i in range(3):
        rows.append([1.0 if j % 3 == i else 0.0 for j in range(12)])
    for i in range(3):
        row = [0.0] * 12
        for p, n in enumerate(PADS):
            r = [nodes[n][k] - cg[k] for k in range(3)]
            # (r x f)_i coefficients on f
            j, k = (i + 1) % 3, (i + 2) % 3
            row[3 * p + k] += r[j]
            row[3 * p + j] -= r[k]
        rows.append(row)
    b = list(force) + [-(moment[i]) * -1 for i in range(3)]
    aat = [[sum(rows[i][k] * rows[j][k] for k in range(12)) for j in range(6)] for i in range(6)]
    lam = solve(aat, b)
    f = [sum(rows[i][k] * lam[i] for i in range(6)) for k in range(12)]
    return {n: f[3 * p:3 * p + 3] for p, n in enumerate(PADS)}


def analyse(nodes: dict, loads_n: dict[str, dict[int, list[float]]]) -> dict:
    free = {n: i for i, n in enumerate(PADS)}
    k = [[0.0] * 12 for _ in range(12)]
    geo = []
    for a, b, _ in MEMBERS:
        d = [nodes[a][i] - nodes[b][i] for i in range(3)]
        length = math.sqrt(sum(v * v for v in d))
        geo.append((length, [v / length for v in d]))
    ea = [E_KSI * KSI * tube(t)["area"] for _, _, t in MEMBERS]
    for (a, b, _), (length, u), stiff in zip(MEMBERS, geo, ea, strict=True):
        for n1, s1 in ((a, 1), (b, -1)):
            for n2, s2 in ((a, 1), (b, -1)):
                if n1 in free and n2 in free:
                    for i in range(3):
                        for j in range(3):
                            k[3 * free[n1] + i][3 * free[n2] + j] += s1 * s2 * stiff / length * u[i] * u[j]
    out = {}
    for case, loads in loads_n.items():
        f = [loads[n][i] for n in PADS for i in range(3)]
        disp = solve(k, f)
        u_of = {n: (disp[3 * free[n]:3 * free[n] + 3] if n in free else [0.0, 0.0, 0.0]) for n in nodes}
        forces = []
        for (a, b, _), (length, u), stiff in zip(MEMBERS, geo, ea, strict=True):
            forces.append(stiff / length * sum((u_of[a][i] - u_of[b][i]) * u[i] for i in range(3)))
        out[case] = {"u": {n: u_of[n] for n in PADS}, "forces": forces}
    return {"lengths": [g[0] for g in geo], "cases": out}


def allowables(length: float, callout: str, euler_only: bool = False) -> tuple[float, float, float]:
    t = tube(callout)
    e, fcy = E_KSI * KSI, FCY_KSI * KSI
    slender = length / t["rho"]
    fc = math.pi**2 * e / slender**2 if euler_only or slender >= CRIT_LR else fcy - (fcy * slender / (2 * math.pi)) ** 2 / e
    return FTU_KSI * KSI * t["area"], fc * t["area"], slender


def margins(res: dict, nodes: dict, factor: dict[str, float], euler_only: bool = False) -> list[dict]:
    rows = []
    for m, (a, b, callout) in enumerate(MEMBERS):
        length = res["lengths"][m]
        ft, fc, slender = allowables(length, callout, euler_only)
        design = {c: res["cases"][c]["forces"][m] * factor[c] for c in res["cases"]}
        pt = max([v for v in design.values() if v > 0], default=0.0)
        pc = max([-v for v in design.values() if v < 0], default=0.0)
        ms_t = ft / pt - 1 if pt > 0 else None
        ms_c = fc / pc - 1 if pc > 0 else None
        crit = min(design, key=lambda c: (ft / design[c] if design[c] > 0 else fc / -design[c]))
        rows.append({"member": m + 1, "tube": callout, "length_mm": length, "area_mm2": tube(callout)["area"],
                     "slenderness": slender, "P_tension_N": pt, "P_compression_N": pc,
                     "allow_tension_N": ft, "allow_compression_N": fc, "ms_tension": ms_t,
                     "ms_compression": ms_c, "critical_case": crit,
                     "ms_min": min(v for v in (ms_t, ms_c) if v is not None)})
    return rows


def build(nodes: dict, weight: float, cg: tuple, thrust: float, torque: float) -> tuple[dict, dict, list[dict]]:
    loads_lbf = {}
    for cid, _, _, g, _ in CASES:
        force = (thrust, 0.0, -weight) if g is None else tuple(weight * v for v in g)
        moment = (torque * INCH, 0.0, 0.0) if g is None else (0.0, 0.0, 0.0)  # lb.mm about x
        loads_lbf[cid] = {n: [round(v) for v in f] for n, f in pad_loads(force, moment, cg, nodes).items()}
    loads_n = {c: {n: [v * LBF for v in f] for n, f in ls.items()} for c, ls in loads_lbf.items()}
    res = analyse(nodes, loads_n)
    return loads_lbf, res, margins(res, nodes, FACTOR)


def draw(rng: random.Random) -> dict | None:
    nodes = {n: tuple(float(v + (rng.randint(-12, 12) if n in PADS else 0)) for v in xyz) for n, xyz in BASE_NODES.items()}
    cg = (float(rng.randint(640, 760)), 0.0, float(rng.randint(-20, 20)))
    weight, thrust, torque = 300.0, float(rng.randint(450, 650)), float(rng.randint(3200, 4600))
    _, _, rows = build(nodes, weight, cg, thrust, torque)
    target = rng.uniform(-0.10, -0.04)
    scale = (1 + min(r["ms_min"] for r in rows)) / (1 + target)
    weight, thrust, torque = round(weight * scale), round(thrust * scale), round(torque * scale, -1)
    loads_lbf, res, rows = build(nodes, weight, cg, thrust, torque)
    if min(abs(f) for c in res["cases"].values() for f in c["forces"]) < 5:
        return None
    worst = min(rows, key=lambda r: r["ms_min"])
    euler = margins(res, nodes, FACTOR, euler_only=True)
    twice = margins(res, nodes, dict.fromkeys(FACTOR, FS))
    neg = sorted(r["member"] for r in rows if r["ms_min"] < 0)
    ok = (worst["ms_min"] < -0.02 and all(abs(r["ms_min"]) > 0.01 for r in rows)
          and sorted(r["member"] for r in twice if r["ms_min"] < 0) != neg
          and sum(r["ms_compression"] is not None and r["slenderness"] < CRIT_LR for r in rows) >= 4
          and any(abs(a["ms_min"] - b["ms_min"]) > 0.05 for a, b in zip(rows, euler, strict=True)))
    if not ok:
        return None
    return {"nodes": nodes, "loads_lbf": loads_lbf, "res": res, "rows": rows, "worst": worst, "neg": neg,
            "meta": {"weight_lb": weight, "cg_mm": cg, "thrust_lb": thrust, "torque_lbin": torque}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    tries = 0
    while (g := draw(rng)) is None:
        tries += 1
        if tries > 5000:
            raise SystemExit("no draw satisfied the design conditions")
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    inp = out / "inputs"
    (inp / "nodes.csv").write_text("node,x_mm,y_mm,z_mm,role\n" + "".join(
        f"{n},{x:g},{y:g},{z:g},{'firewall pickup' if n in FIXED else 'engine pad'}\n"
        for n, (x, y, z) in sorted(g["nodes"].items())))
    (inp / "members.csv").write_text("member,node_a,node_b,tube\n" + "".join(
        f"{m + 1},{a},{b},{t}\n" for m, (a, b, t) in enumerate(MEMBERS)))
    lines = ["case,title,basis,node,Fx_lbf,Fy_lbf,Fz_lbf"]
    for cid, title, basis, _, _ in CASES:
        for n in PADS:
            fx, fy, fz = g["loads_lbf"][cid][n]
            lines.append(f'{cid},"{title}",{basis},{n},{fx},{fy},{fz}')
    (inp / "pad_loads.csv").write_text("\n".join(lines) + "\n")
    (inp / "material.txt").write_text(
        "Tubing: AISI 4130 steel, normalized (MIL-T-6736 / AMS 6360), welded assembly, not heat treated after welding\n"
        "Tube callouts: outside diameter x wall thickness, inches\n"
        "Design allowables (MMPDS basis), t <= 0.188 in:\n"
        f"  Ftu = {FTU_KSI:g} ksi   Fty = 75 ksi   Fcy = {FCY_KSI:g} ksi   Fsu = 57 ksi\n"
        f"  E = {E_KSI:g} ksi   Ec = 29.0e3 ksi   G = 11.0e3 ksi   nu = 0.32\n"
        "Firewall pickups: pinned to the firewall fittings (treat as fixed in translation).\n"
        "Engine pads: the mount's pad nodes; the pad loads below are the reactions of the engine on the mount.\n")
    res = g["res"]
    ref = {
        "canary": CANARY,
        "cases": [c[0] for c in CASES],
        "basis": {c[0]: c[2] for c in CASES},
        "displacements_mm": {c: {str(n): [round(v, 7) for v in u] for n, u in res["cases"][c]["u"].items()}
                             for c in res["cases"]},
        "forces_N": {c: {str(m + 1): round(f, 4) for m, f in enumerate(res["cases"][c]["forces"])} for c in res["cases"]},
        "margins": {str(r["member"]): {k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items() if k != "member"}
                    for r in g["rows"]},
        "critical_member": g["worst"]["member"],
        "critical_case": g["worst"]["critical_case"],
        "min_ms": round(g["worst"]["ms_min"], 6),
        "negative_ms_members": g["neg"],
        "design": g["meta"],
    }
    (out / "reference" / "expected.json").write_text(json.dumps(ref, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
