"""Deterministic generator for dispatch-release-wb-fuel: a dispatch scenario (load sheet, fuel slip,
route, winds aloft, METAR, AFM takeoff table) and the release the operations manual defines.

python3 generate.py [--out DIR]   writes DIR/inputs/ and DIR/reference/ (default: this folder)
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from itertools import pairwise
from pathlib import Path

from pyproj import Geod

CANARY = "f3cb5d1e-3cb3-4b34-9984-1468983c3215"
LB_KG = 0.45359237
GEOD = Geod(ellps="WGS84")
NM = 1852.0

AIRCRAFT = {
    "type": "TX-320 (synthetic twin-jet)",
    "arm_unit": "m aft of datum",
    "lemac_m": 16.52,
    "mac_m": 4.19,
    "dry_operating": {"mass_kg": 43180.0, "arm_m": 17.83},
    "limits_kg": {"mzfw": 62500.0, "mtow": 73500.0, "mlw": 64500.0},
    "passenger_zones": {"0A": {"rows": "1-8", "arm_m": 11.20}, "0B": {"rows": "9-20", "arm_m": 17.90},
                        "0C": {"rows": "21-30", "arm_m": 24.60}},
    "holds": {"CPT1": 11.20, "CPT3": 20.90, "CPT4": 22.80, "CPT5": 24.90},
    "tanks": {"WING": 18.10, "CENTRE": 16.35},
    "fuel_burn_sequence": "CENTRE tank first (from engine start) until empty, then WING tanks",
    "cruise": {"tas_kt": 447.0},
    "fuel_flow_kg_h_by_gross_mass_kg": [[50000, 2050], [55000, 2180], [60000, 2330], [65000, 2500],
                                        [70000, 2690], [75000, 2900], [80000, 3120]],
    "holding_fuel_flow_kg_h": 2240.0,
    "cg_envelope_pct_mac_kg": [[17.0, 40000], [17.0, 53000], [20.5, 73500], [32.6, 73500], [33.8, 66000],
                               [35.2, 61000], [37.5, 53000], [39.0, 40000]],
}
# Waypoints: name, lat, lon (departure, en-route fixes, destination), alternate separately.
ROUTE = [("DEP", 51.1220, -114.0130), ("KELIB", 50.9120, -110.4410), ("ROXAM", 50.5400, -106.8630),
         ("TUVEN", 49.9910, -103.3120), ("PIKAD", 49.3200, -99.7800), ("MOGLI", 48.5030, -96.4110),
         ("DST", 47.7460, -93.3350)]
ALTERNATE = ("ALT", 46.7300, -92.1900)
WINDS = [(262, 72), (268, 85), (275, 94), (281, 80), (290, 66), (300, 48)]  # from, kt
ALT_WIND = (315, 35)
METAR = {"wind_from_true": 338, "wind_kt": 22, "oat_c": 27, "qnh_hpa": 1003}
DEP_FIELD = {"elevation_ft": 3557, "magnetic_variation": "14E", "runway": "29",
             "runway_magnetic_heading": 287.0, "toda_m": 2400, "slope_pct_uphill": 0.6}
AFM = {"weights_kg": [60000, 65000, 70000, 75000], "pressure_alt_ft": [0, 2000, 4000, 6000],
       "oat_c": [0, 10, 20, 30, 40], "headwind_pct_per_10kt": -5.0, "tailwind_pct_per_10kt": 15.0,
       "uphill_pct_per_1pct_slope": 7.0}
OPS = {"taxi_kg": 200.0, "contingency_share": 0.05, "contingency_min_holding_min": 5.0,
       "final_reserve_min": 30.0, "ft_per_hpa": 27.0, "adult_kg": 84.0, "child_kg": 35.0}
CARGO = [("CPT1", 1250.0, "kg"), ("CPT3", 980.0, "kg"), ("CPT4", 2650.0, "lb"), ("CPT5", 310.0, "kg")]
PAX = {"0A": (44, 2), "0B": (68, 3), "0C": (52, 1)}  # adults, children
FUEL = {"WING": (4600.0, "kg"), "CENTRE": (3800.0, "L")}
DENSITY = 0.792


def todr_table() -> list[list[float]]:
    rows = []
    for w in AFM["weights_kg"]:
        for pa in AFM["pressure_alt_ft"]:
            for t in AFM["oat_c"]:
                sigma = 1.0 + 0.000031 * pa + 0.0000000016 * pa * pa
                hot = 1.0 + 0.0045 * max(t - 15.0, 0.0) + 0.0012 * (t - 15.0)
                rows.append([w, pa, t, round(1480.0 * (w / 60000.0) ** 2.05 * sigma * hot, -1)])
    return rows


def interp(x: float, pts: list[list[float]]) -> float:
    for (x0, y0), (x1, y1) in pairwise(pts):
        if x <= x1 or (x1, y1) == tuple(pts[-1]):
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    raise ValueError(x)


def burn(mass: float, hours: float, n: int = 4000) -> float:
    """Fuel burnt flying `hours` from `mass` (RK4 on dm/dt = -FF(m))."""
    ff = AIRCRAFT["fuel_flow_kg_h_by_gross_mass_kg"]
    h, m = hours / n, mass
    for _ in range(n):
        k1 = interp(m, ff)
        k2 = interp(m - 0.5 * h * k1, ff)
        k3 = interp(m - 0.5 * h * k2, ff)
        k4 = interp(m - h * k3, ff)
        m -= h * (k1 + 2 * k2 + 2 * k3 + k4) / 6.0
    return mass - m


def leg(a, b, wind) -> dict:
    crs, _, dist = GEOD.inv(a[2], a[1], b[2], b[1])
    crs %= 360.0
    rel = math.radians(wind[0] - crs)
    tas = AIRCRAFT["cruise"]["tas_kt"]
    wca = math.asin(wind[1] * math.sin(rel) / tas)
    gs = tas * math.cos(wca) - wind[1] * math.cos(rel)
    d = dist / NM
    return {"from": a[0], "to": b[0], "distance_nm": d, "true_course_deg": crs, "ground_speed_kt": gs,
            "time_min": 60.0 * d / gs}


def inside(x: float, y: float, poly: list[list[float]]) -> bool:
    hit = False
    for (x0, y0), (x1, y1) in pairwise(poly + poly[:1]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            hit = not hit
    return hit


def trilinear(w: float, pa: float, t: float, table: list[list[float]]) -> float:
    grid = {(r[0], r[1], r[2]): r[3] for r in table}

    def bracket(v, axis):
        for lo, hi in pairwise(axis):
            if lo <= v <= hi:
                return lo, hi, (v - lo) / (hi - lo)
        raise ValueError(v)

    (w0, w1, fw), (p0, p1, fp), (t0, t1, ft) = (bracket(w, AFM["weights_kg"]), bracket(pa, AFM["pressure_alt_ft"]),
                                                bracket(t, AFM["oat_c"]))
    out = 0.0
    for wv, cw in ((w0, 1 - fw), (w1, fw)):
        for pv, cp in ((p0, 1 - fp), (p1, fp)):
            for tv, ct in ((t0, 1 - ft), (t1, ft)):
                out += cw * cp * ct * grid[(wv, pv, tv)]
    return out


def pct_mac(moment: float, mass: float) -> float:
    return 100.0 * (moment / mass - AIRCRAFT["lemac_m"]) / AIRCRAFT["mac_m"]


def reference() -> dict:
    ac, tanks = AIRCRAFT, AIRCRAFT["tanks"]
    mass = ac["dry_operating"]["mass_kg"]
    mom = mass * ac["dry_operating"]["arm_m"]
    for zone, (adults, children) in PAX.items():
        m = adults * OPS["adult_kg"] + children * OPS["child_kg"]
        mass, mom = mass + m, mom + m * ac["passenger_zones"][zone]["arm_m"]
    for hold, q, unit in CARGO:
        m = q * (LB_KG if unit == "lb" else 1.0)
        mass, mom = mass + m, mom + m * ac["holds"][hold]
    zfw, zmom = mass, mom
    fuel = {t: q * (DENSITY if u == "L" else 1.0) for t, (q, u) in FUEL.items()}
    block = sum(fuel.values())

    def burn_from(f: dict, kg: float) -> dict:
        f = dict(f)
        take = min(kg, f["CENTRE"])
        f["CENTRE"] -= take
        f["WING"] -= kg - take
        return f

    def state(f: dict) -> tuple[float, float]:
        m = zfw + sum(f.values())
        return m, pct_mac(zmom + sum(q * tanks[t] for t, q in f.items()), m)

    legs, tow = [], zfw + block - OPS["taxi_kg"]
    m = tow
    for (a, b), wind in zip(pairwise(ROUTE), WINDS, strict=True):
        lg = leg(a, b, wind)
        lg["fuel_kg"] = burn(m, lg["time_min"] / 60.0)
        m -= lg["fuel_kg"]
        legs.append(lg)
    trip = tow - m
    lw = m
    alt = leg(ROUTE[-1], ALTERNATE, ALT_WIND)
    alt_fuel = burn(lw, alt["time_min"] / 60.0)
    hold = ac["holding_fuel_flow_kg_h"]
    cont = max(OPS["contingency_share"] * trip, hold * OPS["contingency_min_holding_min"] / 60.0)
    final = hold * OPS["final_reserve_min"] / 60.0
    minimum = OPS["taxi_kg"] + trip + cont + alt_fuel + final
    f_to = burn_from(fuel, OPS["taxi_kg"])
    f_ld = burn_from(f_to, trip)
    phases = {"zfw": (zfw, pct_mac(zmom, zfw)), "tow": state(f_to), "lw": state(f_ld)}
    env = ac["cg_envelope_pct_mac_kg"]
    limit = {"zfw": "mzfw", "tow": "mtow", "lw": "mlw"}
    pa = DEP_FIELD["elevation_ft"] + (1013.25 - METAR["qnh_hpa"]) * OPS["ft_per_hpa"]
    var = DEP_FIELD["magnetic_variation"]
    rwy_true = DEP_FIELD["runway_magnetic_heading"] + float(var[:-1]) * (1 if var[-1] == "E" else -1)
    hw = METAR["wind_kt"] * math.cos(math.radians(METAR["wind_from_true"] - rwy_true))
    base = trilinear(phases["tow"][0], pa, METAR["oat_c"], todr_table())
    wind_pct = (AFM["headwind_pct_per_10kt"] if hw >= 0 else -AFM["tailwind_pct_per_10kt"]) * hw / 10.0
    todr = base * (1 + wind_pct / 100.0) * (1 + AFM["uphill_pct_per_1pct_slope"] * DEP_FIELD["slope_pct_uphill"] / 100.0)
    out = {
        "canary": CANARY,
        "legs": legs,
        "mass_kg": {k: v[0] for k, v in phases.items()},
        "cg_pct_mac": {k: v[1] for k, v in phases.items()},
        "in_envelope": {k: inside(v[1], v[0], env) for k, v in phases.items()},
        "within_mass_limit": {k: v[0] <= ac["limits_kg"][limit[k]] for k, v in phases.items()},
        "fuel_kg": {"block": block, "taxi": OPS["taxi_kg"], "trip": trip, "contingency": cont,
                    "alternate": alt_fuel, "final_reserve": final, "minimum_block": minimum,
                    "extra": block - minimum},
        "takeoff": {"pressure_altitude_ft": pa, "headwind_kt": hw, "todr_m": todr,
                    "toda_m": DEP_FIELD["toda_m"], "todr_within_toda": todr <= DEP_FIELD["toda_m"]},
    }
    out["release"] = (all(out["in_envelope"].values()) and all(out["within_mass_limit"].values())
                      and block >= minimum and todr <= DEP_FIELD["toda_m"])
    return out


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = ap.parse_args().out
    inp, ref = out / "inputs", out / "reference"
    inp.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    (inp / "aircraft.json").write_text(json.dumps(AIRCRAFT, indent=1) + "\n")
    rows = [["PAX", z, a, "adult"] for z, (a, _) in PAX.items()] + [["PAX", z, c, "child"] for z, (_, c) in PAX.items()]
    rows += [["CARGO", h, q, u] for h, q, u in CARGO] + [["FUEL", t, q, u] for t, (q, u) in FUEL.items()]
    write_csv(inp / "loadsheet.csv", ["item", "station", "quantity", "unit"], rows)
    (inp / "fuel_slip.txt").write_text(
        "FUEL DELIVERY RECEIPT - into-plane\nProduct: Jet A-1\nMetered uplift (centre tank): 3800 L\n"
        f"Density at delivery temperature: {DENSITY:.3f} kg/L\nWing tanks: not refuelled (FQI reading on load sheet)\n")
    write_csv(inp / "route.csv", ["ident", "lat", "lon", "role"],
              [[n, f"{la:.4f}", f"{lo:.4f}", "departure" if i == 0 else "destination" if i == len(ROUTE) - 1 else "fix"]
               for i, (n, la, lo) in enumerate(ROUTE)] + [[ALTERNATE[0], f"{ALTERNATE[1]:.4f}", f"{ALTERNATE[2]:.4f}", "alternate"]])
    winds = [[a[0], b[0], d, s] for (a, b), (d, s) in zip(pairwise(ROUTE), WINDS, strict=True)]
    write_csv(inp / "winds_aloft.csv", ["leg_from", "leg_to", "wind_dir_deg", "wind_kt"],
              winds + [[ROUTE[-1][0], ALTERNATE[0], *ALT_WIND]])
    (inp / "metar.txt").write_text(
        f"METAR DEP 031400Z {METAR['wind_from_true']:03d}{METAR['wind_kt']:02d}KT 9999 FEW045 "
        f"{METAR['oat_c']:02d}/08 Q{METAR['qnh_hpa']} NOSIG=\n")
    (inp / "departure_runway.json").write_text(json.dumps(DEP_FIELD, indent=1) + "\n")
    afm = {k: v for k, v in AFM.items()}
    afm["note"] = "Takeoff distance required (m), all engines, flaps 2, dry runway, zero wind, zero slope"
    (inp / "afm_takeoff.json").write_text(json.dumps(afm, indent=1) + "\n")
    write_csv(inp / "afm_todr.csv", ["tow_kg", "pressure_alt_ft", "oat_c", "todr_m"],
              [[int(w), int(p), int(t), int(d)] for w, p, t, d in todr_table()])
    # One line per top-level key: short structural lines would repeat the instruction's template.
    body = ",\n".join(f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(reference().items()))
    (ref / "expected.json").write_text("{\n" + body + "\n}\n")


if __name__ == "__main__":
    main()
