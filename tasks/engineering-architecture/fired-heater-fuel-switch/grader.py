"""Grader for fired-heater-fuel-switch.

Every figure is recomputed here with Cantera (gri30) from the inputs, by another route than a
solver would take: the reactant temperature from an explicit enthalpy balance of the two
streams, the flue-gas excess air in closed form, the heating values from formation enthalpies.
The flame table is the crux: its adiabatic flame temperatures gate the grade.
"""

from __future__ import annotations

import csv
import json
import math

import cantera as ct

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    rows_by,
)

SPECIES = {"methane": "CH4", "ethane": "C2H6", "propane": "C3H8", "hydrogen": "H2",
           "nitrogen": "N2", "carbon dioxide": "CO2", "oxygen": "O2", "argon": "AR"}
PHIS = [f"{0.60 + 0.05 * i:.2f}" for i in range(17)]
T_STD, P_STD = 288.15, 101325.0
# Crux: an equilibrium flame temperature of these reactants (humid, preheated air, cold fuel,
# site pressure) lies within this of the graded one even with one convention slipped; a
# textbook or frozen-mixture table does not.
CRUX_TAD_K = 60.0
M_H2O = 18.015268


class Plant:
    def __init__(self, inputs) -> None:
        self.gas = ct.Solution("gri30.yaml")
        site = json.loads((inputs / "site_conditions.json").read_text())
        self.site = site
        lines = [ln for ln in (inputs / "gas_analysis.csv").read_text().splitlines()
                 if ln.strip() and not ln.startswith("#")]
        raw = {SPECIES[r["component"].strip().lower()]: float(r["mol_pct"]) for r in csv.DictReader(lines)}
        self.dry_air = {SPECIES[k]: v / 100.0 for k, v in site["dry_air_mol_pct"].items()}
        # Air drawn into the sample: all its O2, with N2 and Ar in air proportion.
        air = raw.get("O2", 0.0) / 100.0 / self.dry_air["O2"]
        fuel = {k: v / 100.0 - (air * self.dry_air.get(k, 0.0) if k in ("O2", "N2", "AR") else 0.0)
                for k, v in raw.items()}
        fuel = {k: v for k, v in fuel.items() if v > 1e-12}
        total = sum(fuel.values())
        self.fuel = {k: v / total for k, v in fuel.items()}
        self.p = site["barometric_pressure_mbar"] * 100.0
        water = ct.Water()
        water.TQ = site["ambient_temperature_c"] + 273.15, 0.0
        x_h2o = site["relative_humidity_pct"] / 100.0 * water.P / self.p
        self.air = {k: v * (1 - x_h2o) for k, v in self.dry_air.items()} | {"H2O": x_h2o}
        self.t_fuel = site["fuel_temperature_c"] + 273.15
        self.t_air = site["combustion_air_temperature_c"] + 273.15
        atoms = {e: sum(x * self.gas.n_atoms(k, e) for k, x in self.fuel.items()) for e in "CHON"}
        self.atoms = atoms
        self.o2_need = atoms["C"] + atoms["H"] / 4 - atoms["O"] / 2
        self.air_stoich = self.o2_need / self.air["O2"]

    def molar(self, t: float, x: dict) -> tuple[float, float]:
        """(molar enthalpy J/kmol, molar mass) of composition x at t and site pressure."""
        self.gas.TPX = t, self.p, x
        return self.gas.enthalpy_mole, self.gas.mean_molecular_weight

    def flame(self, phi: float) -> dict:
        a = self.air_stoich / phi
        hf, mf = self.molar(self.t_fuel, self.fuel)
        ha, ma = self.molar(self.t_air, self.air)
        mix = {k: (self.fuel.get(k, 0.0) + a * self.air.get(k, 0.0)) for k in set(self.fuel) | set(self.air)}
        h_mass = (hf + a * ha) / (mf + a * ma)
        self.gas.TPX = 300.0, self.p, mix
        self.gas.HP = h_mass, self.p
        t_mix = self.gas.T
        self.gas.equilibrate("HP")
        return {"t_mix_k": float(t_mix), "t_ad_k": float(self.gas.T), "x_no_ppm": float(1e6 * self.gas["NO"].X[0]),
                "x_co_ppm": float(1e6 * self.gas["CO"].X[0])}

    def properties(self) -> dict:
        g = self.gas
        g.TPX = T_STD, P_STD, self.fuel
        m_fuel, h_fuel = g.mean_molecular_weight, g.enthalpy_mole
        c, h = self.atoms["C"], self.atoms["H"]
        formation = {}
        for sp in ("O2", "CO2", "H2O", "N2", "AR"):
            g.TPX = T_STD, P_STD, f"{sp}:1"
            formation[sp] = g.enthalpy_mole
        inert = self.fuel.get("N2", 0.0) * formation["N2"] + self.fuel.get("AR", 0.0) * formation["AR"]
        products = c * formation["CO2"] + h / 2 * formation["H2O"] + inert
        lhv = (h_fuel + self.o2_need * formation["O2"] - products) / m_fuel
        w = ct.Water()
        w.TQ = T_STD, 0.0
        h_liq = w.enthalpy_mass
        w.TQ = T_STD, 1.0
        hhv = lhv + h / 2 * (w.enthalpy_mass - h_liq) * M_H2O / m_fuel
        g.TPX = T_STD, P_STD, self.dry_air
        m_air = g.mean_molecular_weight
        vol = P_STD / (ct.gas_constant * T_STD) * m_fuel  # kg of fuel per standard m3
        d = m_fuel / m_air
        return {"molar_mass_kg_kmol": m_fuel, "lhv_mj_kg": lhv / 1e6, "hhv_mj_kg": hhv / 1e6,
                "hhv_mj_sm3": hhv * vol / 1e6, "relative_density": d,
                "wobbe_mj_sm3": hhv * vol / 1e6 / math.sqrt(d),
                "afr_stoich_kg_kg": self.o2_need / self.dry_air["O2"] * m_air / m_fuel}

    def operating(self) -> dict:
        """Excess air from the in-situ (wet-basis) O2 reading, complete combustion, in closed form."""
        y = self.site["stack_o2_analyser"]["reading_pct"] / 100.0
        c, h = self.atoms["C"], self.atoms["H"]
        delta = c + h / 2 + self.fuel.get("N2", 0.0) + self.fuel.get("AR", 0.0) - self.o2_need
        a = (self.o2_need + y * delta) / (self.air["O2"] - y)
        wet = a + delta
        dry = wet - a * self.air["H2O"] - h / 2
        phi = self.air_stoich / a
        return {"phi": phi, "excess_air_pct": 100.0 * (a / self.air_stoich - 1), "t_ad_k": self.flame(phi)["t_ad_k"],
                "flue_o2_dry_pct": 100.0 * (a * self.air["O2"] - self.o2_need) / dry,
                "flue_co2_dry_pct": 100.0 * (c + a * self.air["CO2"]) / dry}

    def lean_phi_at(self, t_target: float) -> float:
        lo, hi = 0.3, 1.0
        while hi - lo > 1e-6:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.flame(mid)["t_ad_k"] < t_target else (lo, mid)
        return (lo + hi) / 2


def phi_key(row: dict) -> str:
    return f"{as_number(row['phi']):.2f}"


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    plant = Plant(ctx.inputs)
    table, ok_t = load_csv(ctx.out("flame_table.csv"), required_columns=["phi", "t_mix_k", "t_ad_k", "x_no_ppm", "x_co_ppm"])
    r.gate("flame_table.csv has the columns phi, t_mix_k, t_ad_k, x_no_ppm, x_co_ppm", ok_t)
    rows = rows_by(table, phi_key)
    want = {k: plant.flame(float(k)) for k in PHIS}
    r.gate("flame_table.csv: one row for each phi from 0.60 to 1.40 by 0.05", rows.coverage(want))
    r.gate("adiabatic flame temperatures within 60 K of the equilibrium of these reactants",
           match_rows(rows, want, ["t_ad_k"], abs=CRUX_TAD_K))
    # 3 K: two equilibrium solvers on the same mechanism agree to well under 1 K; the slack
    # covers rounding to 0.1 K and a different saturation-pressure correlation for the humidity.
    r.check("flame table: HP-equilibrium flame temperature at every phi (3 K)", 4,
            match_rows(rows, want, ["t_ad_k"], abs=3.0))
    # 1 K: the reactant temperature is an enthalpy balance of two streams.
    r.check("flame table: mixed reactant temperature at every phi (1 K)", 2,
            match_rows(rows, want, ["t_mix_k"], abs=1.0))
    # 3 % (and 1 ppm): equilibrium NO and CO move by about 3 % per 10 K of flame temperature.
    r.check("flame table: equilibrium NO and CO at every phi (3 %)", 1,
            match_rows(rows, want, ["x_no_ppm", "x_co_ppm"], rel=0.03, abs=1.0))

    fuel, ok_f = load_json(ctx.out("fuel_properties.json"))
    props = plant.properties()
    comp = get(fuel, "composition_mol_pct")
    comp_parts = [(sp, near(get(comp, sp) if isinstance(comp, dict) else None, 100.0 * x, abs=0.02))
                  for sp, x in sorted(plant.fuel.items())]
    if isinstance(comp, dict):
        extra = sorted(k for k in comp if k not in plant.fuel and (as_number(comp[k]) or 0.0) > 0.02)
        comp_parts.append(("no other component", Outcome(not extra, f"extra components {extra}" if extra else "none")))
    # 0.02 mol %: the analysis is given to 0.001 % and the result is stated to 0.01 %.
    r.check("fuel: air-free composition normalised to 100 mol %", 2, all_of(comp_parts) if ok_f else ok_f)
    # 0.3 %: the standard-reference data (ISO 6976 against gri30 enthalpies, real against
    # ideal water latent heat) differ by about 0.1 %.
    r.check("fuel: molar mass, LHV, HHV (mass and volume), relative density, Wobbe index", 2, all_of([
        (k, near(get(fuel, k), props[k], rel=3e-3))
        for k in ("molar_mass_kg_kmol", "lhv_mj_kg", "hhv_mj_kg", "hhv_mj_sm3", "relative_density", "wobbe_mj_sm3")
    ]) if ok_f else ok_f)
    r.check("fuel: stoichiometric air-fuel ratio, dry air (0.3 %)", 1,
            near(get(fuel, "afr_stoich_kg_kg"), props["afr_stoich_kg_kg"], rel=3e-3) if ok_f else ok_f)

    op, ok_o = load_json(ctx.out("operating_point.json"))
    ref_op = plant.operating()
    # phi to 0.003 and excess air to 0.4 points: the reading is given to 0.01 % O2 (about
    # 0.0005 in phi); O2 and CO2 to 0.03 points: complete-combustion flue gas.
    r.check("operating point: phi and excess air from the stack O2 reading", 3, all_of([
        ("phi", near(get(op, "phi"), ref_op["phi"], abs=3e-3)),
        ("excess_air_pct", near(get(op, "excess_air_pct"), ref_op["excess_air_pct"], abs=0.4)),
    ]) if ok_o else ok_o)
    r.check("operating point: dry flue O2 and CO2, flame temperature", 2, all_of([
        ("flue_o2_dry_pct", near(get(op, "flue_o2_dry_pct"), ref_op["flue_o2_dry_pct"], abs=0.03)),
        ("flue_co2_dry_pct", near(get(op, "flue_co2_dry_pct"), ref_op["flue_co2_dry_pct"], abs=0.03)),
        ("t_ad_k", near(get(op, "t_ad_k"), ref_op["t_ad_k"], abs=3.0)),
    ]) if ok_o else ok_o)
    lim = plant.site["burner_limits"]
    lo = plant.lean_phi_at(lim["min_adiabatic_flame_temperature_k"])
    hi = plant.lean_phi_at(lim["max_adiabatic_flame_temperature_k"])
    # 0.002 in phi: about 3 K of flame temperature at the window's edges.
    r.check("burner window: lean-side phi limits", 3, all_of([
        ("window_phi_min", near(get(op, "window_phi_min"), lo, abs=2e-3)),
        ("window_phi_max", near(get(op, "window_phi_max"), hi, abs=2e-3)),
    ]) if ok_o else ok_o)
    inside = lo <= ref_op["phi"] <= hi
    flag = get(op, "within_window")
    r.check("operating point: inside or outside the burner window", 1,
            Outcome(flag is inside, f"the heater runs at phi {ref_op['phi']:.3f}, window {lo:.3f}-{hi:.3f}",
                    expected=inside, seen=flag if isinstance(flag, (bool, int, float, str)) or flag is None else repr(flag)))
    return r
