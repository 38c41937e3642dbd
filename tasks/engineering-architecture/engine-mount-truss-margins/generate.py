"""Seeded generator of inputs/ and reference/ for engine-mount-truss-margins: python3 generate.py --out DIR.

A welded 4130 tube engine mount: 4 firewall pickups, 4 engine pads, 9 pin-ended struts. The
engine is a rigid body tying the pads to its CG, so the struts are three times redundant. The
powerplant loads report gives net forces and moments at the engine CG for six cases, in US
customary units (lbf, lbf.in, tube callouts in inches, allowables in ksi) while the model is in
mm; two cases are ultimate (emergency landing) and take no further factor; one has a propeller
torque. The reference is solved here by the direct stiffness method on the six rigid-body
freedoms of the engine (the oracle uses CalculiX: another route to the same answer).
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
FIXED, PADS, CG = [1, 2, 3, 4], [5, 6, 7, 8], 9
UPPER, LOWER = "0.750x0.049", "0.875x0.035"
MEMBERS = [(5, 1, UPPER), (5, 4, UPPER), (5, 2, UPPER), (6, 2, UPPER), (6, 3, UPPER),
           (7, 3, LOWER), (7, 4, LOWER), (8, 4, LOWER), (8, 1, LOWER)]
CASES = [  # id, title, basis, load factors (x fwd, y right, z up) on the engine weight; None: thrust and torque
    ("LC1", "Flight, 4.4 g down", "limit", (0.0, 0.0, -4.4)),
    ("LC2", "Flight, 1.76 g up", "limit", (0.0, 0.0, 1.76)),
    ("LC3", "Side gust 1.33 g with 1 g down", "limit", (0.0, 1.33, -1.0)),
    ("LC4", "Take-off thrust and propeller torque with 1 g down", "limit", None),
    ("LC5", "Emergency landing, 6 g down (FAR 23.561)", "ultimate", (0.0, 0.0, -6.0)),
    ("LC6", "Emergency landing, 9 g forward (FAR 23.561)", "ultimate", (9.0, 0.0, 0.0)),
]
CRIT_LR = math.pi * math.sqrt(2 * E_KSI / FCY_KSI)  # Johnson-Euler transition slenderness
FACTOR = {c[0]: (1.0 if c[2] == "ultimate" else FS) for c in CASES}
# The grader's own step appended to the agent's deck: this force (N) at the CG node alone.
PROBE_N = [2000.0, 3000.0, -10000.0]


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
    return {"area": math.pi / 4 * (od**2 - di**2), "rho": math.sqrt(od**2 + di**2) / 4}


def rigid_map(p: tuple, cg: tuple) -> list[list[float]]:
    """Pad displacement = u + theta x r, as a 3 x 6 matrix on (u, theta) of the CG."""
    r = [p[i] - cg[i] for i in range(3)]
    return [[1, 0, 0, 0, r[2], -r[1]], [0, 1, 0, -r[2], 0, r[0]], [0, 0, 1, r[1], -r[0], 0]]


def analyse(nodes: dict, loads_n: dict[str, list[float]]) -> dict:
    """loads_n: per case (Fx, Fy, Fz, Mx, My, Mz) at the CG in N and N.mm."""
    cg = nodes[CG]
    k = [[0.0] * 6 for _ in range(6)]
    lengths, rows = [], []
    for a, b, callout in MEMBERS:  # node a is the pad, node b the fixed pickup
        d = [nodes[a][i] - nodes[b][i] for i in range(3)]
        length = math.sqrt(sum(v * v for v in d))
        u = [v / length for v in d]
        t = rigid_map(nodes[a], cg)
        g = [sum(u[i] * t[i][j] for i in range(3)) for j in range(6)]  # elongation per CG freedom
        s = E_KSI * KSI * tube(callout)["area"] / length
        lengths.append(length)
        rows.append((g, s))
        for i in range(6):
            for j in range(6):
                k[i][j] += s * g[i] * g[j]
    out = {}
    for case, f in loads_n.items():
        q = solve(k, f)
        u = {n: [sum(row[j] * q[j] for j in range(6)) for row in rigid_map(nodes[n], cg)] for n in PADS}
        out[case] = {"u": u, "forces": [s * sum(g[j] * q[j] for j in range(6)) for g, s in rows]}
    return {"lengths": lengths, "cases": out}


def allowables(length: float, callout: str, euler_only: bool = False) -> tuple[float, float, float]:
    t = tube(callout)
    e, fcy = E_KSI * KSI, FCY_KSI * KSI
    slender = length / t["rho"]
    fc = math.pi**2 * e / slender**2 if euler_only or slender >= CRIT_LR else fcy - (fcy * slender / (2 * math.pi)) ** 2 / e
    return FTU_KSI * KSI * t["area"], fc * t["area"], slender


def margins(res: dict, factor: dict[str, float], euler_only: bool = False) -> list[dict]:
    rows = []
    for m, (_, _, callout) in enumerate(MEMBERS):
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


def cg_loads(weight: float, thrust: float, torque: float) -> dict[str, list[float]]:
    """Net load at the CG per case: lbf and lbf.in, whole numbers as a loads report gives them."""
    out = {}
    for cid, _, _, g in CASES:
        f = [thrust, 0.0, -weight] if g is None else [weight * v for v in g]
        m = [-torque if g is None else 0.0, 0.0, 0.0]  # reaction of a propeller turning clockwise seen from aft
        out[cid] = [float(round(v)) for v in f + m]
    return out


def build(nodes: dict, weight: float, thrust: float, torque: float) -> tuple[dict, dict, list[dict]]:
    loads = cg_loads(weight, thrust, torque)
    res = analyse(nodes, {c: [v * LBF for v in f[:3]] + [v * LBF * INCH for v in f[3:]] for c, f in loads.items()})
    return loads, res, margins(res, FACTOR)


def draw(rng: random.Random) -> dict | None:
    nodes = {n: tuple(float(v + (rng.randint(-12, 12) if n in PADS else 0)) for v in xyz) for n, xyz in BASE_NODES.items()}
    nodes[CG] = (float(rng.randint(640, 760)), 0.0, float(rng.randint(-20, 20)))
    weight, thrust, torque = 300.0, float(rng.randint(450, 650)), float(rng.randint(3200, 4600))
    _, _, rows = build(nodes, weight, thrust, torque)
    target = rng.uniform(-0.10, -0.04)
    scale = (1 + min(r["ms_min"] for r in rows)) / (1 + target)
    weight, thrust, torque = round(weight * scale), round(thrust * scale), round(torque * scale, -1)
    loads, res, rows = build(nodes, weight, thrust, torque)
    if min(abs(f) for c in res["cases"].values() for f in c["forces"]) < 5:
        return None
    worst = min(rows, key=lambda r: r["ms_min"])
    euler = margins(res, FACTOR, euler_only=True)
    twice = margins(res, dict.fromkeys(FACTOR, FS))
    neg = sorted(r["member"] for r in rows if r["ms_min"] < 0)
    ok = (worst["ms_min"] < -0.02 and all(abs(r["ms_min"]) > 0.01 for r in rows)
          and sorted(r["member"] for r in twice if r["ms_min"] < 0) != neg
          and sum(r["ms_compression"] is not None and r["slenderness"] < CRIT_LR for r in rows) >= 3
          and any(abs(a["ms_min"] - b["ms_min"]) > 0.05 for a, b in zip(rows, euler, strict=True))
          and any(r["critical_case"] == "LC4" for r in rows))
    if not ok:
        return None
    return {"nodes": nodes, "loads": loads, "res": res, "rows": rows, "worst": worst, "neg": neg,
            "meta": {"weight_lb": weight, "thrust_lb": thrust, "torque_lbin": torque}}


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
    role = {**dict.fromkeys(FIXED, "firewall pickup"), **dict.fromkeys(PADS, "engine pad"), CG: "engine CG"}
    (inp / "nodes.csv").write_text("node,x_mm,y_mm,z_mm,role\n" + "".join(
        f"{n},{x:g},{y:g},{z:g},{role[n]}\n" for n, (x, y, z) in sorted(g["nodes"].items())))
    (inp / "members.csv").write_text("member,node_a,node_b,tube\n" + "".join(
        f"{m + 1},{a},{b},{t}\n" for m, (a, b, t) in enumerate(MEMBERS)))
    lines = ["case,title,basis,Fx_lbf,Fy_lbf,Fz_lbf,Mx_lbf_in,My_lbf_in,Mz_lbf_in"]
    for cid, title, basis, _ in CASES:
        lines.append(f'{cid},"{title}",{basis},' + ",".join(f"{v:g}" for v in g["loads"][cid]))
    (inp / "powerplant_loads.csv").write_text("\n".join(lines) + "\n")
    (inp / "material.txt").write_text(
        "Tubing: AISI 4130 steel, normalized (MIL-T-6736 / AMS 6360), welded assembly, not heat treated after welding\n"
        "Tube callouts: outside diameter x wall thickness, inches\n"
        "Design allowables (MMPDS basis), t <= 0.188 in:\n"
        f"  Ftu = {FTU_KSI:g} ksi   Fty = 75 ksi   Fcy = {FCY_KSI:g} ksi   Fsu = 57 ksi\n"
        f"  E = {E_KSI:g} ksi   Ec = 29.0e3 ksi   G = 11.0e3 ksi   nu = 0.32\n")
    (inp / "loads_report_notes.txt").write_text(
        "Powerplant loads report, mount axes: x forward (firewall to engine), y to the right seen from aft, z up.\n"
        "Loads are the net forces and moments the engine applies to the mount, acting at the engine CG\n"
        "(inertia of the engine and accessories, propeller thrust and torque reaction), one row per case.\n"
        "basis: limit = limit loads (14 CFR 23.301); ultimate = emergency-landing ultimate inertia loads (14 CFR 23.561).\n"
        "The engine crankcase is far stiffer than the mount: the engine may be taken as a rigid body\n"
        "tying the four pads to its CG. Firewall pickups are pinned to the firewall fittings.\n")
    res = g["res"]
    probe = analyse(g["nodes"], {"probe": [*PROBE_N, 0.0, 0.0, 0.0]})["cases"]["probe"]["u"]
    ref = {
        "canary": CANARY,
        "cases": [c[0] for c in CASES],
        "displacements_mm": {c: {str(n): [round(v, 7) for v in u] for n, u in res["cases"][c]["u"].items()}
                             for c in res["cases"]},
        "probe": {"force_N": PROBE_N, "displacements_mm": {str(n): [round(v, 7) for v in u] for n, u in probe.items()}},
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
