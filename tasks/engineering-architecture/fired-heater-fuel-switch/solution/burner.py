"""Oracle: fuel-gas properties, flame table, operating point and burner window with Cantera.

python3 burner.py INPUTS_DIR OUTPUT_DIR
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import cantera as ct
import numpy as np

MECH = "gri30.yaml"
NAMES = {"methane": "CH4", "ethane": "C2H6", "propane": "C3H8", "hydrogen": "H2",
         "nitrogen": "N2", "carbon dioxide": "CO2", "oxygen": "O2", "argon": "AR"}
T_STD, P_STD = 288.15, 101325.0
PHIS = [round(0.60 + 0.05 * i, 2) for i in range(17)]


def read_analysis(path: Path) -> dict[str, float]:
    lines = [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    return {NAMES[r["component"].strip().lower()]: float(r["mol_pct"]) for r in csv.DictReader(lines)}


def air_free(raw: dict[str, float], dry_air: dict[str, float]) -> dict[str, float]:
    """Remove the air that contaminated the sample (all its O2, with N2 and Ar in air
    proportion) and normalise to 100 %."""
    air = raw.get("O2", 0.0) / dry_air["O2"]
    x = {k: v - air * dry_air.get(k, 0.0) if k in ("O2", "N2", "AR") else v for k, v in raw.items()}
    x = {k: v for k, v in x.items() if v > 1e-12}
    total = sum(x.values())
    return {k: 100.0 * v / total for k, v in sorted(x.items())}


def streams(inputs: Path) -> dict:
    site = json.loads((inputs / "site_conditions.json").read_text())
    dry = {NAMES[k]: v for k, v in site["dry_air_mol_pct"].items()}
    fuel = air_free(read_analysis(inputs / "gas_analysis.csv"), dry)
    p = site["barometric_pressure_mbar"] * 100.0
    w = ct.Water()
    w.TQ = site["ambient_temperature_c"] + 273.15, 0.0
    x_h2o = site["relative_humidity_pct"] / 100.0 * w.P / p
    air = {k: v / 100.0 * (1 - x_h2o) for k, v in dry.items()}
    air["H2O"] = x_h2o
    return {"site": site, "fuel": fuel, "dry_air": dry, "air": air, "p": p,
            "t_fuel": site["fuel_temperature_c"] + 273.15,
            "t_air": site["combustion_air_temperature_c"] + 273.15}


def heating_values(gas: ct.Solution, fuel: dict[str, float]) -> tuple[float, float]:
    """(LHV, HHV) in J/kg of fuel at the 15 degC combustion reference."""
    gas.TPX = T_STD, P_STD, fuel
    m_fuel = gas.mean_molecular_weight
    h_react = gas.enthalpy_mole
    n = {k: v / 100.0 for k, v in fuel.items()}
    c = sum(v * gas.n_atoms(k, "C") for k, v in n.items())
    h = sum(v * gas.n_atoms(k, "H") for k, v in n.items())
    o = sum(v * gas.n_atoms(k, "O") for k, v in n.items())
    o2 = c + h / 4 - o / 2
    gas.TPX = T_STD, P_STD, "O2:1"
    h_react += o2 * gas.enthalpy_mole
    prod = {"CO2": c, "H2O": h / 2, "N2": n.get("N2", 0.0), "AR": n.get("AR", 0.0)}
    gas.TPX = T_STD, P_STD, prod
    h_prod = gas.enthalpy_mole * sum(prod.values())
    w = ct.Water()
    w.TQ = T_STD, 1.0
    h_g = w.enthalpy_mass
    w.TQ = T_STD, 0.0
    h_fg = (h_g - w.enthalpy_mass) * 18.015268
    lhv = (h_react - h_prod) / m_fuel
    return lhv, lhv + h / 2 * h_fg / m_fuel


def o2_need(gas: ct.Solution, fuel: dict[str, float]) -> float:
    """mol O2 for complete combustion of 1 mol fuel."""
    return sum(v / 100.0 * (gas.n_atoms(k, "C") + gas.n_atoms(k, "H") / 4 - gas.n_atoms(k, "O") / 2)
               for k, v in fuel.items())


def burn(gas: ct.Solution, s: dict, phi: float) -> dict:
    air_per_fuel = o2_need(gas, s["fuel"]) / s["air"]["O2"] / phi
    gas.TPX = s["t_fuel"], s["p"], s["fuel"]
    mix = ct.Quantity(gas, moles=1.0, constant="HP")
    gas.TPX = s["t_air"], s["p"], s["air"]
    mix += ct.Quantity(gas, moles=air_per_fuel, constant="HP")
    t_mix = mix.T
    mix.equilibrate("HP")
    x = mix.phase
    return {"phi": phi, "t_mix_k": t_mix, "t_ad_k": x.T,
            "x_no_ppm": 1e6 * x["NO"].X[0], "x_co_ppm": 1e6 * x["CO"].X[0]}


def complete_products(gas: ct.Solution, s: dict, air_per_fuel: float) -> dict[str, float]:
    n = {k: v / 100.0 for k, v in s["fuel"].items()}
    prod = {k: air_per_fuel * v for k, v in s["air"].items()}
    prod["CO2"] += sum(v * gas.n_atoms(k, "C") for k, v in n.items())
    prod["H2O"] += sum(v * gas.n_atoms(k, "H") for k, v in n.items()) / 2
    prod["N2"] += n.get("N2", 0.0)
    prod["O2"] -= o2_need(gas, s["fuel"])
    return prod


def operating_point(gas: ct.Solution, s: dict) -> dict:
    """The in-situ zirconia probe reads O2 on the wet flue gas."""
    target = s["site"]["stack_o2_analyser"]["reading_pct"] / 100.0
    stoich = o2_need(gas, s["fuel"]) / s["air"]["O2"]
    lo, hi = stoich, 10 * stoich
    for _ in range(200):
        mid = (lo + hi) / 2
        prod = complete_products(gas, s, mid)
        if prod["O2"] / sum(prod.values()) < target:
            lo = mid
        else:
            hi = mid
    prod = complete_products(gas, s, (lo + hi) / 2)
    dry = sum(prod.values()) - prod["H2O"]
    phi = stoich / ((lo + hi) / 2)
    return {"phi": phi, "excess_air_pct": 100.0 * (1 / phi - 1), "t_ad_k": burn(gas, s, phi)["t_ad_k"],
            "flue_o2_dry_pct": 100 * prod["O2"] / dry, "flue_co2_dry_pct": 100 * prod["CO2"] / dry}


def edge(gas: ct.Solution, s: dict, t_target: float) -> float:
    """The lean-side phi at which the adiabatic flame temperature is t_target."""
    lo, hi = 0.3, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if burn(gas, s, mid)["t_ad_k"] < t_target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def solve(inputs: Path) -> dict:
    gas = ct.Solution(MECH)
    s = streams(inputs)
    lhv, hhv = heating_values(gas, s["fuel"])
    gas.TPX = T_STD, P_STD, s["fuel"]
    m_fuel = gas.mean_molecular_weight
    gas.TPX = T_STD, P_STD, s["dry_air"]
    m_air = gas.mean_molecular_weight
    kmol_per_sm3 = P_STD / (ct.gas_constant * T_STD)
    d = m_fuel / m_air
    hhv_vol = hhv * m_fuel * kmol_per_sm3
    afr = o2_need(gas, s["fuel"]) / (s["dry_air"]["O2"] / 100.0) * m_air / m_fuel
    props = {"composition_mol_pct": {k: round(v, 4) for k, v in s["fuel"].items()},
             "molar_mass_kg_kmol": m_fuel, "lhv_mj_kg": lhv / 1e6, "hhv_mj_kg": hhv / 1e6,
             "hhv_mj_sm3": hhv_vol / 1e6, "relative_density": d, "wobbe_mj_sm3": hhv_vol / 1e6 / np.sqrt(d),
             "afr_stoich_kg_kg": afr}
    table = [burn(gas, s, phi) for phi in PHIS]
    op = operating_point(gas, s)
    lim = s["site"]["burner_limits"]
    op["window_phi_min"] = edge(gas, s, lim["min_adiabatic_flame_temperature_k"])
    op["window_phi_max"] = edge(gas, s, lim["max_adiabatic_flame_temperature_k"])
    op["within_window"] = bool(op["window_phi_min"] <= op["phi"] <= op["window_phi_max"])
    return {"fuel": props, "table": table, "operating_point": op}


def write_outputs(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "fuel_properties.json").write_text(json.dumps(res["fuel"], indent=2) + "\n")
    (out / "operating_point.json").write_text(json.dumps(res["operating_point"], indent=2) + "\n")
    cols = ["phi", "t_mix_k", "t_ad_k", "x_no_ppm", "x_co_ppm"]
    with (out / "flame_table.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for row in res["table"]:
            w.writerow([f"{row['phi']:.2f}", *(f"{row[c]:.2f}" for c in cols[1:])])


if __name__ == "__main__":
    write_outputs(solve(Path(sys.argv[1])), Path(sys.argv[2]))
