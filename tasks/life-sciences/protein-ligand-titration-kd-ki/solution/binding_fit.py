"""Oracle: exact (ligand-depletion) binding fits of a Trp-quench titration and a competition curve.

Reads /task/inputs, writes fits.csv and summary.json. The fit itself is scipy least_squares on
log10 K with per-series signal coefficients; 95 % intervals are Wald intervals on log10 K.
"""

import csv
import json
import sys
from pathlib import Path

import numpy as np
from scipy import optimize, stats

OUTLIER_K = 5.0  # |residual - median| > OUTLIER_K * 1.4826 * MAD: a mis-pipetted point
UNIT_TO_UM = {"nM": 1e-3, "uM": 1.0, "µM": 1.0, "mM": 1e3, "M": 1e6}


def to_um(text: str) -> float:
    value, unit = text.split()
    return float(value) * UNIT_TO_UM[unit]


def inner_filter(f_obs: np.ndarray, a_ex: np.ndarray, a_em: np.ndarray) -> np.ndarray:
    return f_obs * 10.0 ** ((a_ex + a_em) / 2.0)


def load_series(path: Path) -> dict[str, dict[str, np.ndarray]]:
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    out: dict[str, dict[str, np.ndarray]] = {}
    for name in sorted({r["series"] for r in rows}):
        sel = sorted((r for r in rows if r["series"] == name), key=lambda r: int(r["step"]))
        out[name] = {k: np.array([float(r[k]) for r in sel]) for k in
                     ("step", "added_uL", "A_ex", "A_em", "F_obs")}
    return out


def concentrations(s: dict[str, np.ndarray], v0_ul: float, initial: dict[str, float],
                   titrant_um: float) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Total concentrations (µM) in the cuvette after each cumulative addition."""
    vol = v0_ul + s["added_uL"]
    dil = {k: c * v0_ul / vol for k, c in initial.items()}
    return vol, dil, titrant_um * s["added_uL"] / vol


def complex_direct(pt: np.ndarray, lt: np.ndarray, kd: float) -> np.ndarray:
    b = pt + lt + kd
    return 2.0 * pt * lt / (b + np.sqrt(b * b - 4.0 * pt * lt))  # stable form of the quadratic root


def free_protein_competition(pt: float, lt: float, it: float, kd: float, ki: float) -> float:
    def balance(p: float) -> float:
        return p + p * lt / (kd + p) + p * it / (ki + p) - pt
    return optimize.brentq(balance, 0.0, pt, xtol=1e-15, rtol=4 * np.finfo(float).eps)


def complex_competition(pt: np.ndarray, lt: np.ndarray, it: np.ndarray, kd: float, ki: float):
    p = np.array([free_protein_competition(a, b, c, kd, ki) for a, b, c in zip(pt, lt, it, strict=True)])
    return p, p * lt / (kd + p)


def signal(model: str, logk: float, ff: float, fb: float, d: dict, kd_fixed: float | None):
    k = 10.0 ** logk
    if model == "direct":
        pl = complex_direct(d["pt"], d["lt"], k)
        return ff * (d["pt"] - pl) + fb * pl
    _, pl = complex_competition(d["pt"], d["lt"], d["it"], kd_fixed, k)
    return ff * (d["pt"] - pl) + fb * pl


def fit(model: str, curves: list[dict], x0_logk: float, kd_fixed: float | None = None) -> dict:
    """Least squares with a shared log10 K and (free, bound) coefficients per curve."""
    def resid(x: np.ndarray) -> np.ndarray:
        return np.concatenate([signal(model, x[0], x[1 + 2 * i], x[2 + 2 * i], c, kd_fixed) - c["y"]
                               for i, c in enumerate(curves)])
    x0 = [x0_logk]
    for c in curves:
        x0 += [float(c["y"][0] / c["pt"][0]), float(c["y"][0] / c["pt"][0]) * 0.5]
    res = optimize.least_squares(resid, np.array(x0), method="lm", xtol=1e-15, ftol=1e-15,
                                 gtol=1e-15, max_nfev=20000, x_scale="jac")
    n, p = res.fun.size, res.x.size
    s2 = float(res.fun @ res.fun) / (n - p)
    cov = np.linalg.inv(res.jac.T @ res.jac) * s2
    se = float(np.sqrt(cov[0, 0]))
    t = float(stats.t.ppf(0.975, n - p))
    return {"logk": float(res.x[0]), "se_logk": se, "coef": res.x[1:].tolist(), "n": n, "p": p,
            "ci": (10 ** (res.x[0] - t * se), 10 ** (res.x[0] + t * se)), "resid": res.fun}


def flag_outliers(resid: np.ndarray) -> np.ndarray:
    dev = resid - np.median(resid)
    mad = np.median(np.abs(dev))
    return np.abs(dev) > OUTLIER_K * 1.4826 * mad


def prepare(inputs: Path) -> tuple[dict, dict]:
    meta = json.loads((inputs / "experiment.json").read_text())
    v0 = float(meta["initial_volume_uL"])
    curves: dict[str, dict[str, dict]] = {"direct": {}, "competition": {}}
    for exp, fname in (("direct", "direct_titration.csv"), ("competition", "competition_titration.csv")):
        m = meta[exp]
        initial = {k: to_um(v) for k, v in m["cuvette_initial"].items()}
        for name, s in load_series(inputs / fname).items():
            _, dil, tit = concentrations(s, v0, initial, to_um(m["titrant_stock"]))
            d = {"step": s["step"].astype(int), "pt": dil["protein"],
                 "y": inner_filter(s["F_obs"], s["A_ex"], s["A_em"])}
            if exp == "direct":
                d["lt"] = tit
            else:
                d["lt"], d["it"] = dil["probe"], tit
            curves[exp][name] = d
    return meta, curves


def subset(c: dict, keep: np.ndarray) -> dict:
    return {k: v[keep] for k, v in c.items()}


def analyse(inputs: Path) -> tuple[list[dict], dict]:
    _, curves = prepare(inputs)
    rows, excluded, globals_ = [], [], {}
    kd_fixed = None
    for exp, x0 in (("direct", 0.0), ("competition", -0.5)):
        kept = []
        for name in sorted(curves[exp]):
            c = curves[exp][name]
            first = fit(exp, [c], x0, kd_fixed)
            bad = flag_outliers(first["resid"])
            c2 = subset(c, ~bad)
            one = fit(exp, [c2], first["logk"], kd_fixed)
            steps = [int(s) for s in c["step"][bad]]
            excluded += [{"experiment": exp, "series": name, "step": s} for s in steps]
            rows.append({"experiment": exp, "series": name, "n_used": int(c2["y"].size),
                         "excluded_steps": ";".join(str(s) for s in steps),
                         "K_uM": 10 ** one["logk"], "se_logk": one["se_logk"], "f_free": one["coef"][0], "f_bound": one["coef"][1]})
            kept.append(c2)
        g = fit(exp, kept, x0, kd_fixed)
        globals_[exp] = g
        if exp == "direct":
            kd_fixed = 10 ** g["logk"]
    d, c = globals_["direct"], globals_["competition"]
    summary = {"Kd_uM": 10 ** d["logk"], "Kd_ci95_uM": list(d["ci"]),
               "Ki_uM": 10 ** c["logk"], "Ki_ci95_uM": list(c["ci"]), "excluded_points": excluded}
    return rows, summary


def write(rows: list[dict], summary: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cols = ["experiment", "series", "n_used", "excluded_steps", "K_uM", "f_free", "f_bound"]
    with (out / "fits.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    rows, summary = analyse(Path(sys.argv[1]))
    write(rows, summary, Path(sys.argv[2]))
