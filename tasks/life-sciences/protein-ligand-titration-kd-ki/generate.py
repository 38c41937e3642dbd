"""Seeded generator: a Trp-quench titration of a protein with a dansyl probe (three series) and a
competition titration of the probe complex with an unlabelled inhibitor (three series).

The reference is the oracle's own exact least-squares analysis of the generated data."""

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "solution"))
import binding_fit as bf

CANARY = "000da6c4-9843-46cf-8438-b82dbfbd0aaa"
SEED = 20261203
V0_UL = 2000.0
KD, KI = 0.80, 0.25  # µM
P0, PROBE0 = 2.0, 3.0  # µM in the cuvette before any addition
PROBE_STOCK, INHIB_STOCK = 120.0, 400.0  # µM
ADDS_UL = [0, 2, 4, 6, 8, 10, 13, 16, 20, 25, 30, 40, 50, 65, 80, 100, 125, 150, 200]
SERIES = {"A": (100.0, 31.0), "B": (96.5, 30.2), "C": (103.2, 32.5)}  # (free, bound) per µM
EPS = {"protein": (0.0060, 0.0004), "probe": (0.0050, 0.0150), "inhibitor": (0.0010, 0.0002)}
OUTLIER = ("direct", "B", 7, 1.11)  # series B, step 7: about 11 % too much protein pipetted
NOISE_REL, A_NOISE = 0.004, 0.0008


def absorb(conc: dict[str, np.ndarray], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    a_ex = sum(EPS[k][0] * c for k, c in conc.items())
    a_em = sum(EPS[k][1] * c for k, c in conc.items())
    return (a_ex + rng.normal(0, A_NOISE, a_ex.shape), a_em + rng.normal(0, A_NOISE, a_em.shape))


def make_rows(exp: str, rng: np.random.Generator) -> list[dict]:
    adds = np.array(ADDS_UL, dtype=float)
    vol = V0_UL + adds
    pt = P0 * V0_UL / vol
    rows = []
    for name, (ff, fb) in SERIES.items():
        if exp == "direct":
            lt = PROBE_STOCK * adds / vol
            pl = bf.complex_direct(pt, lt, KD)
            conc = {"protein": pt, "probe": lt}
        else:
            lt = PROBE0 * V0_UL / vol
            it = INHIB_STOCK * adds / vol
            _, pl = bf.complex_competition(pt, lt, it, KD, KI)
            conc = {"protein": pt, "probe": lt, "inhibitor": it}
        true = ff * (pt - pl) + fb * pl
        a_ex, a_em = absorb(conc, rng)
        f_obs = true * 10.0 ** (-(a_ex + a_em) / 2.0) * (1 + rng.normal(0, NOISE_REL, true.shape))
        if (exp, name) == OUTLIER[:2]:
            f_obs[OUTLIER[2]] *= OUTLIER[3]
        for i in range(adds.size):
            rows.append({"series": name, "step": i, "added_uL": f"{adds[i]:g}", "A_ex": f"{a_ex[i]:.4f}",
                         "A_em": f"{a_em[i]:.4f}", "F_obs": f"{f_obs[i]:.2f}"})
    return rows


def write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    out = Path(ap.parse_args().out)
    inputs, ref = out / "inputs", out / "reference"
    inputs.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    write_csv(inputs / "direct_titration.csv", make_rows("direct", rng))
    write_csv(inputs / "competition_titration.csv", make_rows("competition", rng))
    meta = {
        "instrument": "spectrofluorometer, 1 cm x 1 cm stirred quartz cuvette, 25.0 C",
        "excitation_nm": 295, "emission_nm": 340,
        "absorbance_pathlength_cm": 1.0,
        "initial_volume_uL": V0_UL,
        "direct": {"cuvette_initial": {"protein": f"{P0:.2f} uM"},
                   "titrant": "dansyl-labelled probe ligand",
                   "titrant_stock": f"{PROBE_STOCK / 1000:.3f} mM"},
        "competition": {"cuvette_initial": {"protein": f"{P0:.2f} uM", "probe": f"{PROBE0:.2f} uM"},
                        "titrant": "unlabelled inhibitor",
                        "titrant_stock": f"{INHIB_STOCK:.0f} uM"},
    }
    (inputs / "experiment.json").write_text(json.dumps(meta, indent=2) + "\n")
    rows, summary = bf.analyse(inputs)
    expected = {"canary": CANARY,
                "series": {f"{r['experiment']}|{r['series']}": {
                    "K_uM": float(f"{r['K_uM']:.6g}"), "se_log10K": float(f"{r['se_logk']:.4g}"),
                    "f_free": float(f"{r['f_free']:.6g}"), "f_bound": float(f"{r['f_bound']:.6g}"),
                    "n_used": r["n_used"], "excluded_steps": r["excluded_steps"]} for r in rows},
                "Kd_uM": float(f"{summary['Kd_uM']:.6g}"),
                "Kd_ci95_uM": [float(f"{v:.6g}") for v in summary["Kd_ci95_uM"]],
                "Ki_uM": float(f"{summary['Ki_uM']:.6g}"),
                "Ki_ci95_uM": [float(f"{v:.6g}") for v in summary["Ki_ci95_uM"]],
                "excluded_points": summary["excluded_points"]}
    (ref / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


if __name__ == "__main__":
    main()
