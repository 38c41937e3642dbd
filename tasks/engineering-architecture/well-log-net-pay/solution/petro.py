"""Oracle: shaly-sand petrophysics and net pay per zone with lasio and NumPy.

python3 petro.py INPUTS_DIR OUTPUT_DIR
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import lasio
import numpy as np

FT_PER_M = 1 / 0.3048
# Vendor null codes seen in spliced runs, besides the header's NULL.
EXTRA_NULLS = (-9999.0, -999.25, -9999.25)


def load_well(path: Path) -> dict:
    las = lasio.read(str(path))
    unit = las.curves[0].unit.strip().upper()
    depth = las.index * (FT_PER_M if unit in ("M", "METRE", "METRES", "METER", "METERS") else 1.0)
    curves = {}
    for mnem in ("GR", "RHOB", "NPHI", "RT", "CALI"):
        x = np.array(las[mnem], dtype=float)
        for code in EXTRA_NULLS:
            x[np.isclose(x, code)] = np.nan
        curves[mnem] = x
    return {"well": str(las.well["WELL"].value), "depth_ft": depth, "las": las, **curves}


def petrophysics(w: dict, p: dict) -> dict:
    wp = p["wells"][w["well"]]
    igr = np.clip((w["GR"] - wp["gr_clean_api"]) / (wp["gr_shale_api"] - wp["gr_clean_api"]), 0.0, 1.0)
    vsh = 0.083 * (2.0 ** (3.7 * igr) - 1.0)
    rho_ma, rho_fl = p["matrix_density_g_cc"], p["fluid_density_g_cc"]
    phid = (rho_ma - w["RHOB"]) / (rho_ma - rho_fl)
    phid_sh = (rho_ma - p["shale_density_g_cc"]) / (rho_ma - rho_fl)
    phie = np.clip(phid - vsh * phid_sh, 0.0, None)
    t_f = p["surface_temperature_f"] + p["geothermal_gradient_f_per_100ft"] * w["depth_ft"] / 100.0
    rw = p["rw_ohmm"] * (p["rw_temperature_f"] + 6.77) / (t_f + 6.77)
    a, m, n = p["archie_a"], p["archie_m"], p["archie_n"]
    with np.errstate(divide="ignore", invalid="ignore"):
        sw = np.where(phie > 0, (a * rw / (phie ** m * w["RT"])) ** (1.0 / n), 1.0)
    sw = np.clip(sw, 0.0, 1.0)
    bad_hole = (w["CALI"] - p["bit_size_in"]) > p["washout_threshold_in"]
    valid = ~(np.isnan(w["GR"]) | np.isnan(w["RHOB"]) | np.isnan(w["RT"]) | np.isnan(w["CALI"]))
    c = p["cutoffs"]
    pay = valid & ~bad_hole & (vsh <= c["vsh_max"]) & (phie >= c["phie_min"]) & (sw <= c["sw_max"])
    nan = ~valid
    return {"VSH": np.where(nan, np.nan, vsh), "PHIE": np.where(nan, np.nan, phie),
            "SW": np.where(nan, np.nan, sw), "PAY": pay.astype(float)}


def zone_table(w: dict, res: dict, tops: list[dict]) -> list[dict]:
    d = w["depth_ft"]
    step = float(np.median(np.diff(d)))
    out = []
    for z in tops:
        if z["well"] != w["well"]:
            continue
        top, base = float(z["top_md_ft"]), float(z["base_md_ft"])
        inz = (d >= top) & (d < base)
        pay = inz & (res["PAY"] > 0)
        h = pay.sum() * step
        phie, sw = res["PHIE"][pay], res["SW"][pay]
        out.append({"well": w["well"], "zone": z["zone"], "gross_ft": base - top, "net_pay_ft": h,
                    "phie_avg": float(phie.mean()) if pay.any() else 0.0,
                    "sw_avg": float(sw.mean()) if pay.any() else 0.0,
                    "hcpv_ft": float((phie * (1 - sw)).sum() * step)})
    return out


def solve(inputs: Path) -> dict:
    p = json.loads((inputs / "parameters.json").read_text())
    with (inputs / "zone_tops.csv").open() as fh:
        tops = list(csv.DictReader(fh))
    wells = {}
    for path in sorted(inputs.glob("*.las")):
        w = load_well(path)
        wells[w["well"]] = (w, petrophysics(w, p))
    rows = [r for name in sorted(wells) for r in zone_table(*wells[name], tops)]
    return {"wells": wells, "rows": rows}


def write_outputs(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, (w, cur) in res["wells"].items():
        las = lasio.LASFile()
        las.well["WELL"].value = name
        las.well["NULL"].value = -999.25
        las.append_curve("DEPT", np.round(w["depth_ft"], 4), unit="FT", descr="measured depth")
        for mnem, unit, descr in (("VSH", "V/V", "shale volume, Larionov tertiary"),
                                  ("PHIE", "V/V", "effective porosity"),
                                  ("SW", "V/V", "water saturation, Archie"),
                                  ("PAY", "", "pay flag 1/0")):
            las.append_curve(mnem, cur[mnem], unit=unit, descr=descr)
        with (out / f"{name}_petro.las").open("w") as fh:
            las.write(fh, version=2.0, fmt="%.5f")
    with (out / "netpay.csv").open("w", newline="") as fh:
        cols = ["well", "zone", "gross_ft", "net_pay_ft", "phie_avg", "sw_avg", "hcpv_ft"]
        wr = csv.writer(fh)
        wr.writerow(cols)
        for r in res["rows"]:
            wr.writerow([r["well"], r["zone"], *(f"{r[c]:.4f}" for c in cols[2:])])


if __name__ == "__main__":
    write_outputs(solve(Path(sys.argv[1])), Path(sys.argv[2]))
