"""Seeded generator of inputs/ and reference/ for well-log-net-pay: python3 generate.py --out DIR.

Three vertical wells through two deltaic sands. Traps: W-2 was logged by a metric contractor
(depths in metres, tops in feet), W-3 has a washout over a tight streak in its oil column, and
W-3's gamma ray was spliced from a second run whose vendor null code (-9999) differs from the
header's NULL, over a shaly sand in the oil column.
"""

import argparse
import csv
import json
import sys
from pathlib import Path

import lasio
import numpy as np

sys.path.insert(0, str(Path(__file__).parent / "solution"))
import petro

SEED = 90210
CANARY = "dd303013-a28f-485b-80fb-95c34ebf5d44"
PARAMS = {
    "archie_a": 1.0, "archie_m": 2.0, "archie_n": 2.0,
    "rw_ohmm": 0.045, "rw_temperature_f": 77.0,
    "surface_temperature_f": 70.0, "geothermal_gradient_f_per_100ft": 1.6,
    "matrix_density_g_cc": 2.65, "fluid_density_g_cc": 1.0, "shale_density_g_cc": 2.45,
    "bit_size_in": 8.5, "washout_threshold_in": 1.0,
    "cutoffs": {"vsh_max": 0.35, "phie_min": 0.10, "sw_max": 0.55},
    "wells": {"W-1": {"gr_clean_api": 32.0, "gr_shale_api": 128.0},
              "W-2": {"gr_clean_api": 38.0, "gr_shale_api": 141.0},
              "W-3": {"gr_clean_api": 30.0, "gr_shale_api": 125.0}},
}
# well: (log top ft, log base ft, A-sand top/base, B-sand top/base, oil-water contact ft TVD)
WELLS = {"W-1": (7000.0, 7500.0, (7102.0, 7188.0), (7301.0, 7362.0), 7161.0),
         "W-2": (7050.0, 7550.0, (7131.0, 7224.0), (7336.0, 7395.0), 7161.0),
         "W-3": (6980.0, 7480.0, (7074.0, 7153.0), (7270.0, 7338.0), 7161.0)}
B_OWC = 7318.0


def larionov_inverse(vsh: np.ndarray) -> np.ndarray:
    return np.log2(vsh / 0.083 + 1.0) / 3.7


def beds(rng: np.random.Generator, top: float, base: float, sand_frac: float) -> list[tuple[float, float, str]]:
    out, d = [], top
    while d < base:
        kind = "sand" if rng.random() < sand_frac else "shale"
        h = float(rng.uniform(3.0, 14.0) if kind == "sand" else rng.uniform(1.5, 6.0))
        out.append((d, min(base, d + h), kind))
        d += h
    return out


def synth(rng: np.random.Generator, name: str, depth_ft: np.ndarray) -> dict[str, np.ndarray]:
    log_top, log_base, a_zone, b_zone, owc = WELLS[name]
    n = depth_ft.size
    vsh = rng.uniform(0.75, 0.95, n)
    phie = np.zeros(n)
    sw = np.ones(n)
    for (top, base), frac, contact in ((a_zone, 0.75, owc), (b_zone, 0.65, B_OWC)):
        for b_top, b_base, kind in beds(rng, top, base, frac):
            sel = (depth_ft >= b_top) & (depth_ft < b_base)
            if kind == "sand":
                vsh[sel] = rng.uniform(0.04, 0.30)
                phie[sel] = rng.uniform(0.12, 0.26)
                above = sel & (depth_ft < contact)
                sw[above] = np.clip(0.22 + 0.30 * np.exp(-(contact - depth_ft[above]) / 8.0)
                                    + rng.normal(0, 0.02, above.sum()), 0.12, 1.0)
    wp = PARAMS["wells"][name]
    gr = wp["gr_clean_api"] + larionov_inverse(vsh) * (wp["gr_shale_api"] - wp["gr_clean_api"])
    gr += rng.normal(0, 1.5, n)
    phid_sh = (PARAMS["matrix_density_g_cc"] - PARAMS["shale_density_g_cc"]) / (PARAMS["matrix_density_g_cc"] - 1.0)
    phid = phie + vsh * phid_sh
    rhob = PARAMS["matrix_density_g_cc"] - phid * (PARAMS["matrix_density_g_cc"] - 1.0) + rng.normal(0, 0.006, n)
    t_f = PARAMS["surface_temperature_f"] + PARAMS["geothermal_gradient_f_per_100ft"] * depth_ft / 100.0
    rw = PARAMS["rw_ohmm"] * (PARAMS["rw_temperature_f"] + 6.77) / (t_f + 6.77)
    with np.errstate(divide="ignore"):
        rt = np.where(phie > 0.01, rw / (np.maximum(phie, 0.01) ** 2 * sw ** 2), rng.uniform(1.8, 3.5, n))
    rt *= np.exp(rng.normal(0, 0.03, n))
    nphi = phie + 0.32 * vsh + rng.normal(0, 0.01, n)
    cali = PARAMS["bit_size_in"] + rng.normal(0.1, 0.05, n)
    return {"GR": gr, "RHOB": rhob, "NPHI": nphi, "RT": rt, "CALI": cali}


def plant_traps(name: str, depth_ft: np.ndarray, logs: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    if name != "W-3":
        return
    # A tight, cemented streak in the oil column, washed out: the density reads the mud.
    tight = (depth_ft >= 7096.0) & (depth_ft < 7102.0)
    rw = 0.045 * 83.77 / (70.0 + 1.6 * depth_ft[tight] / 100.0 + 6.77)
    logs["RT"][tight] = rw / (0.05 ** 2 * 0.45 ** 2)
    logs["GR"][tight] = 40.0 + rng.normal(0, 1.5, tight.sum())
    logs["CALI"][tight] = 11.6 + rng.normal(0, 0.2, tight.sum())
    logs["RHOB"][tight] = 2.33 + rng.normal(0, 0.01, tight.sum())
    # A shaly sand (Vsh about 0.5) in the oil column; its GR is lost in the splice.
    shaly = (depth_ft >= 7112.0) & (depth_ft < 7119.0)
    logs["RHOB"][shaly] = 2.65 - (0.19 + 0.5 * 0.1212) * 1.65
    rw = 0.045 * 83.77 / (70.0 + 1.6 * depth_ft[shaly] / 100.0 + 6.77)
    logs["RT"][shaly] = rw / (0.19 ** 2 * 0.35 ** 2)
    logs["GR"][shaly] = -9999.0


def write_las(path: Path, name: str, depth: np.ndarray, unit: str, logs: dict[str, np.ndarray]) -> None:
    las = lasio.LASFile()
    las.well["WELL"].value = name
    las.well["COMP"].value = "Delta Basin Operating Co."
    las.well["FLD"].value = "Kestrel"
    las.well["SRVC"].value = "Meridian Logging" if unit == "M" else "Bayou Wireline"
    las.well["NULL"].value = -999.25
    las.append_curve("DEPT", depth, unit=unit, descr="measured depth (vertical well)")
    for mnem, u, descr in (("GR", "GAPI", "gamma ray"), ("RHOB", "G/C3", "bulk density"),
                           ("NPHI", "V/V", "neutron porosity, sandstone units"),
                           ("RT", "OHMM", "deep resistivity"), ("CALI", "IN", "caliper")):
        las.append_curve(mnem, logs[mnem], unit=u, descr=descr)
    with path.open("w") as fh:
        las.write(fh, version=2.0, fmt="%.4f")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = np.random.default_rng(SEED)
    inputs = out / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    tops = []
    for name, (log_top, log_base, a_zone, b_zone, _) in WELLS.items():
        if name == "W-2":
            depth = np.round(np.arange(log_top * 0.3048, log_base * 0.3048, 0.15), 2)
            depth_ft, unit = depth / 0.3048, "M"
            for z in (*a_zone, *b_zone):
                assert np.min(np.abs(depth_ft - z)) > 1e-3, "a metric sample sits on a zone boundary"
        else:
            depth = np.arange(log_top, log_base, 0.5)
            depth_ft, unit = depth, "FT"
        logs = synth(rng, name, depth_ft)
        plant_traps(name, depth_ft, logs, rng)
        write_las(inputs / f"{name}.las", name, depth, unit, logs)
        tops += [(name, "A-Sand", *a_zone), (name, "B-Sand", *b_zone)]
    with (inputs / "zone_tops.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["well", "zone", "top_md_ft", "base_md_ft"])
        w.writerows([[a, b, f"{c:.1f}", f"{d:.1f}"] for a, b, c, d in tops])
    (inputs / "parameters.json").write_text(json.dumps(PARAMS, indent=2) + "\n")
    res = petro.solve(inputs)
    ref = {"canary": CANARY, "netpay": [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()}
                                        for r in res["rows"]]}
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    main()
