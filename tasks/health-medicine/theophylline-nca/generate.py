"""Seeded generator of inputs/ and reference/ for theophylline-nca: python3 generate.py --out DIR.

The study mimics the design of R's datasets::Theoph (single oral theophylline dose in mg/kg,
11 samples over 24 h) with new subjects simulated from a one-compartment oral model, so the
numbers cannot be recalled. The reference NCA is computed here in Python, independently of the
R oracle, by the rules the instruction states."""

import argparse
import json
import math
import random
from pathlib import Path

SEED = 20240611
CANARY = "c21f7e89-31a1-4c30-8e08-cf88f70373c3"
LLOQ = 0.10
NOMINAL = [0.0, 0.25, 0.5, 1.0, 2.0, 3.5, 5.0, 7.0, 9.0, 12.0, 24.0]
N_SUBJECTS = 18
PARAMS = ["CMAX", "TMAX", "AUCLAST", "LAMBDA_Z", "THALF", "AUCINF", "CLF", "VZF"]
AUCINF_DEPENDENT = {"AUCINF", "CLF", "VZF"}


def simulate(rng: random.Random):
    ids = rng.sample(range(101, 140), N_SUBJECTS)
    rows = []
    for k, sid in enumerate(ids):
        wt = round(rng.uniform(52.0, 92.0), 1)
        dose_mgkg = round(rng.uniform(3.0, 5.9), 2)
        ka = 1.6 * math.exp(rng.gauss(0, 0.55))
        cl = 0.040 * math.exp(rng.gauss(0, 0.28))  # L/h/kg
        v = 0.48 * math.exp(rng.gauss(0, 0.15))  # L/kg
        if k == 3:
            cl *= 0.45  # slow metaboliser: long half-life, large extrapolation
        if k == 7:
            cl *= 2.6  # fast eliminator: the 24 h sample falls below the LLOQ
        ke = cl / v
        predose = 0.0
        if k in (1, 10, 14):
            predose = round(rng.uniform(0.15, 0.75), 2)  # carry-over from a previous dose
        for _j, nom in enumerate(NOMINAL):
            t = 0.0 if nom == 0 else round(nom * (1 + rng.uniform(-0.03, 0.06)) + rng.uniform(0, 0.05), 2)
            comment = ""
            if nom == 0:
                c = predose
            else:
                c = dose_mgkg * ka / (v * (ka - ke)) * (math.exp(-ke * t) - math.exp(-ka * t))
                c += predose * math.exp(-ke * t)
                c = c * math.exp(rng.gauss(0, 0.07)) + rng.gauss(0, 0.02)
            if k == 12 and nom == 24.0:
                text, comment = "", "sample not collected (subject left the unit)"
            elif c < LLOQ:
                text = "BLQ"
            else:
                text = f"{c:.2f}"
            rows.append([f"THP-{sid}", f"{wt:.1f}", f"{dose_mgkg:.2f}", f"{nom:g}", f"{t:.2f}", text, comment])
    return rows


def lambda_z(times, concs):
    """Best-fit adjusted R^2 over the last n >= 3 post-Tmax points; ties within 1e-4 -> larger n."""
    imax = concs.index(max(concs))
    cand = [(t, c) for t, c in zip(times, concs, strict=False) if t > times[imax] and c > 0]
    fits = []
    for n in range(3, len(cand) + 1):
        pts = cand[-n:]
        xs = [p[0] for p in pts]
        ys = [math.log(p[1]) for p in pts]
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sum((x - mx) ** 2 for x in xs)
        sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False))
        syy = sum((y - my) ** 2 for y in ys)
        slope = sxy / sxx
        r2 = sxy * sxy / (sxx * syy)
        adj = 1 - (1 - r2) * (n - 1) / (n - 2)
        fits.append((adj, n, slope, xs[0]))
    best = max(f[0] for f in fits)
    adj, n, slope, tstart = max((f for f in fits if f[0] >= best - 1e-4), key=lambda f: f[1])
    assert slope < 0
    return -slope, n, tstart, adj


def auc_lin_up_log_down(times, concs):
    auc = 0.0
    for i in range(1, len(times)):
        dt = times[i] - times[i - 1]
        c0, c1 = concs[i - 1], concs[i]
        if c1 < c0 and c1 > 0 and c0 > 0:
            auc += dt * (c0 - c1) / math.log(c0 / c1)
        else:
            auc += dt * (c0 + c1) / 2
    return auc


def nca(rows):
    by_subject = {}
    for sid, wt, dmgkg, _nom, t, c, _comment in rows:
        by_subject.setdefault(sid, {"wt": float(wt), "dose": float(dmgkg), "obs": []})
        if c == "":
            continue
        if c == "BLQ":
            if float(t) == 0.0:
                by_subject[sid]["obs"].append((0.0, 0.0))
            continue
        by_subject[sid]["obs"].append((float(t), float(c)))
    result = {}
    for sid in sorted(by_subject):
        s = by_subject[sid]
        obs = sorted(s["obs"])
        times = [o[0] for o in obs]
        concs = [o[1] for o in obs]
        dose_mg = s["dose"] * s["wt"]
        cmax = max(concs)
        tmax = times[concs.index(cmax)]
        auclast = auc_lin_up_log_down(times, concs)
        lz, n, tstart, adj = lambda_z(times, concs)
        clast = concs[-1]
        aucinf = auclast + clast / lz
        pct = 100 * (aucinf - auclast) / aucinf
        result[sid] = {
            "DOSE_MG": dose_mg,
            "CMAX": cmax,
            "TMAX": tmax,
            "TLAST": times[-1],
            "CLAST": clast,
            "AUCLAST": auclast,
            "LAMBDA_Z": lz,
            "LZ_N": n,
            "LZ_TSTART": tstart,
            "LZ_ADJR2": adj,
            "THALF": math.log(2) / lz,
            "AUCINF": aucinf,
            "AUC_PCTEXTRAP": pct,
            "CLF": dose_mg / aucinf,
            "VZF": dose_mg / (lz * aucinf),
            "FLAG": "Y" if pct > 20 else "N",
        }
    return result


def summary(subjects):
    out = {}
    for p in PARAMS:
        vals = sorted(
            v[p] for v in subjects.values() if not (p in AUCINF_DEPENDENT and v["FLAG"] == "Y")
        )
        n = len(vals)
        mean = sum(vals) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in vals) / (n - 1))
        med = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
        row = {"N": n, "MEAN": mean, "SD": sd, "MEDIAN": med, "MIN": vals[0], "MAX": vals[-1]}
        if p != "TMAX":
            logs = [math.log(x) for x in vals]
            lm = sum(logs) / n
            lsd = math.sqrt(sum((x - lm) ** 2 for x in logs) / (n - 1))
            row["GEOMEAN"] = math.exp(lm)
            row["GEOCV_PCT"] = 100 * math.sqrt(math.exp(lsd**2) - 1)
        out[p] = row
    return out


def rounded(obj):
    if isinstance(obj, float):
        return float(f"{obj:.10g}")
    if isinstance(obj, dict):
        return {k: rounded(v) for k, v in obj.items()}
    return obj


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    rows = simulate(rng)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    # Subjects appear in enrolment order, not sorted by ID.
    header = "SUBJID,WT_KG,DOSE_MGKG,NOMTIME_H,TIME_H,CONC_MGL,COMMENT\n"
    body = "".join(",".join(r) + "\n" for r in rows)
    (out / "inputs" / "theophylline_pk.csv").write_text(header + body)
    subjects = nca(rows)
    ref = {"canary": CANARY, "lloq_mgl": LLOQ, "subjects": subjects, "summary": summary(subjects)}
    (out / "reference" / "expected.json").write_text(json.dumps(rounded(ref), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
