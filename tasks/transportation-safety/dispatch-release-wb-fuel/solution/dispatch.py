"""Dispatch release: load sheet to masses and CG per phase, geodesic legs with winds aloft,
fuel plan per the operator's policy, takeoff distance from the AFM table.

python3 dispatch.py INPUTS OUTPUT
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import numpy as np
from pyproj import Geod

LB_TO_KG = 0.45359237
WIND_FROM_OFFSET = 0.0      # METAR and winds-aloft directions are "from", degrees true
APPLY_VARIATION = True      # runway heading is magnetic, METAR wind true
SEQUENTIAL_BURN = True      # centre tank first, then wings (FCOM)
DT_H = 1.0 / 3600.0         # fuel integration step: one second (midpoint rule)
TAXI, ADULT, CHILD, FT_PER_HPA = 200.0, 84.0, 35.0, 27.0


def main(inp: Path, out: Path) -> None:
    ac = json.loads((inp / "aircraft.json").read_text())
    rows = list(csv.DictReader((inp / "loadsheet.csv").open()))
    density = float(re.search(r"Density[^:]*:\s*([\d.]+)\s*kg/L", (inp / "fuel_slip.txt").read_text()).group(1))
    to_kg = {"kg": 1.0, "lb": LB_TO_KG, "L": density}

    items = [(ac["dry_operating"]["mass_kg"], ac["dry_operating"]["arm_m"])]
    fuel = {}
    for r in rows:
        q = float(r["quantity"])
        if r["item"] == "PAX":
            items.append((q * (ADULT if r["unit"] == "adult" else CHILD), ac["passenger_zones"][r["station"]]["arm_m"]))
        elif r["item"] == "CARGO":
            items.append((q * to_kg[r["unit"]], ac["holds"][r["station"]]))
        else:
            fuel[r["station"]] = q * to_kg[r["unit"]]
    m = np.array(items)
    zfw, zmom = m[:, 0].sum(), (m[:, 0] * m[:, 1]).sum()
    block = sum(fuel.values())

    ff_tab = np.array(ac["fuel_flow_kg_h_by_gross_mass_kg"], dtype=float)

    def flown(mass: float, hours: float) -> float:
        t, w = 0.0, mass
        while t < hours - 1e-12:
            h = min(DT_H, hours - t)
            mid = w - 0.5 * h * np.interp(w, ff_tab[:, 0], ff_tab[:, 1])
            w -= h * np.interp(mid, ff_tab[:, 0], ff_tab[:, 1])
            t += h
        return mass - w

    pts = {r["ident"]: r for r in csv.DictReader((inp / "route.csv").open())}
    winds = list(csv.DictReader((inp / "winds_aloft.csv").open()))
    geod, tas = Geod(ellps="WGS84"), ac["cruise"]["tas_kt"]

    def fly(w: dict) -> dict:
        a, b = pts[w["leg_from"]], pts[w["leg_to"]]
        az, _, dist = geod.inv(float(a["lon"]), float(a["lat"]), float(b["lon"]), float(b["lat"]))
        crs = az % 360.0
        wind_from = float(w["wind_dir_deg"]) + WIND_FROM_OFFSET
        # wind vector (towards) and the heading that holds the course
        wv = float(w["wind_kt"]) * np.array([np.sin(np.radians(wind_from + 180)), np.cos(np.radians(wind_from + 180))])
        u = np.array([np.sin(np.radians(crs)), np.cos(np.radians(crs))])
        cross = wv[0] * u[1] - wv[1] * u[0]
        gs = float(np.sqrt(tas**2 - cross**2) + wv @ u)
        nm = dist / 1852.0
        return {"from": a["ident"], "to": b["ident"], "distance_nm": nm, "true_course_deg": crs,
                "ground_speed_kt": gs, "time_min": 60.0 * nm / gs}

    tow = zfw + block - TAXI
    legs, w = [], tow
    for wrow in winds:
        if pts[wrow["leg_to"]]["role"] == "alternate":
            continue
        lg = fly(wrow)
        lg["fuel_kg"] = flown(w, lg["time_min"] / 60.0)
        w -= lg["fuel_kg"]
        legs.append(lg)
    lw, trip = w, tow - w
    alt_row = next(x for x in winds if pts[x["leg_to"]]["role"] == "alternate")
    alt_fuel = flown(lw, fly(alt_row)["time_min"] / 60.0)
    hold = ac["holding_fuel_flow_kg_h"]
    cont = max(0.05 * trip, hold * 5 / 60)
    final = hold * 30 / 60
    minimum = TAXI + trip + cont + alt_fuel + final

    def remaining(burnt: float) -> dict:
        if not SEQUENTIAL_BURN:
            return {k: v * (1 - burnt / block) for k, v in fuel.items()}
        c = max(fuel["CENTRE"] - burnt, 0.0)
        return {"CENTRE": c, "WING": fuel["WING"] - (burnt - (fuel["CENTRE"] - c))}

    def phase(f: dict) -> tuple[float, float]:
        mass = zfw + sum(f.values())
        arm = (zmom + sum(q * ac["tanks"][k] for k, q in f.items())) / mass
        return mass, 100 * (arm - ac["lemac_m"]) / ac["mac_m"]

    ph = {"zfw": phase({}), "tow": phase(remaining(TAXI)), "lw": phase(remaining(TAXI + trip))}
    env = np.array(ac["cg_envelope_pct_mac_kg"], dtype=float)

    def inside(x: float, y: float) -> bool:
        n, hit = len(env), False
        for i in range(n):
            (x0, y0), (x1, y1) = env[i], env[(i + 1) % n]
            if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
                hit = not hit
        return hit

    lim = {"zfw": "mzfw", "tow": "mtow", "lw": "mlw"}

    # takeoff
    rwy = json.loads((inp / "departure_runway.json").read_text())
    afm = json.loads((inp / "afm_takeoff.json").read_text())
    mt = re.search(r" (\d{3})(\d{2,3})KT .* (M?\d{2})/M?\d{2} Q(\d{4})", (inp / "metar.txt").read_text())
    wdir, wspd, oat, qnh = int(mt.group(1)), int(mt.group(2)), int(mt.group(3).replace("M", "-")), int(mt.group(4))
    pa = rwy["elevation_ft"] + (1013.25 - qnh) * FT_PER_HPA
    var = re.fullmatch(r"([\d.]+)([EW])", rwy["magnetic_variation"])
    east = float(var.group(1)) * (1 if var.group(2) == "E" else -1)
    rwy_true = rwy["runway_magnetic_heading"] + (east if APPLY_VARIATION else 0.0)
    hw = wspd * np.cos(np.radians(wdir + WIND_FROM_OFFSET - rwy_true))
    tab = {(int(r["tow_kg"]), int(r["pressure_alt_ft"]), int(r["oat_c"])): float(r["todr_m"])
           for r in csv.DictReader((inp / "afm_todr.csv").open())}
    ws, ps, ts = afm["weights_kg"], afm["pressure_alt_ft"], afm["oat_c"]
    # interpolate in OAT, then pressure altitude, then weight
    by_wp = np.array([[np.interp(oat, ts, [tab[(wt, p, t)] for t in ts]) for p in ps] for wt in ws])
    by_w = [np.interp(pa, ps, row) for row in by_wp]
    base = float(np.interp(ph["tow"][0], ws, by_w))
    wind_pct = afm["headwind_pct_per_10kt"] * hw / 10 if hw >= 0 else -afm["tailwind_pct_per_10kt"] * hw / 10
    todr = base * (1 + wind_pct / 100) * (1 + afm["uphill_pct_per_1pct_slope"] * rwy["slope_pct_uphill"] / 100)

    rel = {
        "mass_kg": {k: round(v[0], 1) for k, v in ph.items()},
        "cg_pct_mac": {k: round(v[1], 3) for k, v in ph.items()},
        "in_envelope": {k: inside(v[1], v[0]) for k, v in ph.items()},
        "within_mass_limit": {k: bool(v[0] <= ac["limits_kg"][lim[k]]) for k, v in ph.items()},
        "fuel_kg": {k: round(float(v), 1) for k, v in {
            "block": block, "taxi": TAXI, "trip": trip, "contingency": cont, "alternate": alt_fuel,
            "final_reserve": final, "minimum_block": minimum, "extra": block - minimum}.items()},
        "takeoff": {"pressure_altitude_ft": round(pa, 1), "headwind_kt": round(float(hw), 2),
                    "todr_m": round(todr, 1), "toda_m": rwy["toda_m"], "todr_within_toda": bool(todr <= rwy["toda_m"])},
    }
    rel["release"] = bool(all(rel["in_envelope"].values()) and all(rel["within_mass_limit"].values())
                          and block >= minimum and todr <= rwy["toda_m"])
    out.mkdir(parents=True, exist_ok=True)
    (out / "release.json").write_text(json.dumps(rel, indent=2) + "\n")
    with (out / "legs.csv").open("w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(legs[0]), lineterminator="\n")
        wr.writeheader()
        for lg in legs:
            wr.writerow({k: round(v, 3) if isinstance(v, float) else v for k, v in lg.items()})


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
