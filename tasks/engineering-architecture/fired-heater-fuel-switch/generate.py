"""Seeded generator of inputs/ and reference/ for fired-heater-fuel-switch: python3 generate.py --out DIR.

A hydrogen-enriched pipeline gas for a refinery fired heater at a high-altitude site. Traps:
the spot sample is air-contaminated (O2 in the analysis), the stack O2 is read by an in-situ
zirconia probe (wet basis), the combustion air is humid and preheated while the fuel is cold,
and the site pressure is well below one atmosphere.
"""

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "solution"))
import burner

SEED = 4417
CANARY = "9474b402-7c07-4058-a2b7-4ce4a9713aff"
DRY_AIR = {"nitrogen": 78.084, "oxygen": 20.946, "argon": 0.934, "carbon dioxide": 0.036}


def analysis(rng: random.Random) -> list[tuple[str, float]]:
    gas = {"methane": rng.uniform(80.0, 84.0), "ethane": rng.uniform(3.5, 5.0),
           "propane": rng.uniform(0.8, 1.4), "hydrogen": rng.uniform(8.0, 11.0),
           "nitrogen": rng.uniform(1.2, 2.0), "carbon dioxide": rng.uniform(0.8, 1.4)}
    total = sum(gas.values())
    gas = {k: 100.0 * v / total for k, v in gas.items()}
    air = rng.uniform(2.0, 2.6)  # % of the sample is air drawn in at the sampling point
    out = {k: v * (1 - air / 100.0) for k, v in gas.items()}
    for k, v in DRY_AIR.items():
        if k in ("oxygen", "nitrogen"):
            out[k] = out.get(k, 0.0) + air * v / 100.0
    total = sum(out.values())
    return [(k, round(100.0 * out[k] / total, 3)) for k in
            ["methane", "ethane", "propane", "hydrogen", "nitrogen", "carbon dioxide", "oxygen"]]


def write_inputs(inputs: Path, rng: random.Random) -> None:
    inputs.mkdir(parents=True, exist_ok=True)
    rows = analysis(rng)
    lines = ["# Gas chromatograph report GC-2026-1187, fuel gas header FG-101, spot sample",
             "# Method: ISO 6974 (GC, TCD); results in mol %, normalised to 100 by the lab",
             "# Sample: evacuated cylinder, filled 2026-11-24 09:40 at the FG-101 sample point",
             "component,mol_pct"]
    lines += [f"{k},{v:.3f}" for k, v in rows]
    (inputs / "gas_analysis.csv").write_text("\n".join(lines) + "\n")
    site = {
        "unit": "H-201 crude charge heater, natural-draught, 8 low-NOx burners",
        "site_elevation_m": 1580,
        "barometric_pressure_mbar": round(rng.uniform(832.0, 840.0), 1),
        "ambient_temperature_c": 31.0,
        "relative_humidity_pct": 58.0,
        "dry_air_mol_pct": DRY_AIR,
        "combustion_air_temperature_c": 285.0,
        "combustion_air_note": "ambient air heated in the flue-gas air preheater APH-201 (no moisture added or removed)",
        "fuel_temperature_c": 15.0,
        "stack_o2_analyser": {"type": "in-situ zirconium oxide probe at the radiant section outlet",
                              "reading_pct": round(rng.uniform(2.6, 3.0), 2)},
        "burner_limits": {"min_adiabatic_flame_temperature_k": 1900.0,
                          "max_adiabatic_flame_temperature_k": 2150.0,
                          "note": "burner vendor: stable lean flame and tube-metal/NOx limits, on the lean side"},
    }
    (inputs / "site_conditions.json").write_text(json.dumps(site, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    write_inputs(out / "inputs", rng)
    res = burner.solve(out / "inputs")
    ref = {"canary": CANARY, "fuel": res["fuel"], "operating_point": res["operating_point"],
           "table": [{k: round(v, 6) for k, v in row.items()} for row in res["table"]]}
    ref["fuel"] = {k: (round(v, 8) if isinstance(v, float) else v) for k, v in ref["fuel"].items()}
    ref["operating_point"] = {k: (round(v, 8) if isinstance(v, float) else v) for k, v in ref["operating_point"].items()}
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    main()
