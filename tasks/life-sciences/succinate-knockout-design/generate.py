"""Inputs and reference for succinate-knockout-design: python3 generate.py --out DIR.

The model is COBRApy's shipped E. coli core ("textbook") written as SBML with its default
bounds; the site's conditions sheet carries the measured uptake limits. Nothing is random:
the conditions are fixed below, and every reference figure is an LP optimum (unique value).
"""

import argparse
import csv
import io
import json
from pathlib import Path

import cobra

CANARY = "d3dba0f5-8e60-4ed6-9b33-93c5556cdd39"
GLUCOSE_MW = 180.156  # g/mol, C6H12O6
ATP_MAINTENANCE = 7.6  # mmol ATP/gDW/h
AEROBIC_GLUCOSE = 9.2  # mmol/gDW/h
AEROBIC_OXYGEN = 18.5  # mmol/gDW/h
ANAEROBIC_GLUCOSE_MG = 2972.6  # mg/gDW/h, as the fermentation lab's notebook reports it
PRODUCTS = ["EX_succ_e", "EX_ac_e", "EX_etoh_e", "EX_for_e", "EX_lac__D_e"]
FVA_FRACTION = 0.95
ESSENTIAL_FRACTION = 0.01
MIN_DESIGN_GROWTH = 0.1
MIN_GUARANTEED_SUCCINATE = 4.0

SHEET = [
    ("both", "non-growth-associated ATP maintenance (ATPM lower bound)", ATP_MAINTENANCE, "mmol/gDW/h",
     "chemostat extrapolation, 2024 campaign"),
    ("aerobic", "glucose uptake limit", AEROBIC_GLUCOSE, "mmol/gDW/h", "shake flask, M9 + 4 g/L glucose"),
    ("aerobic", "oxygen uptake limit", AEROBIC_OXYGEN, "mmol/gDW/h", "OTR-limited, 250 rpm"),
    ("anaerobic", "glucose uptake limit", ANAEROBIC_GLUCOSE_MG, "mg/gDW/h", "serum bottles, N2-sparged"),
]


def conditions() -> dict[str, dict[str, float]]:
    anaerobic_glucose = ANAEROBIC_GLUCOSE_MG / GLUCOSE_MW
    return {
        "aerobic": {"glucose": AEROBIC_GLUCOSE, "oxygen": AEROBIC_OXYGEN, "atpm": ATP_MAINTENANCE},
        "anaerobic": {"glucose": anaerobic_glucose, "oxygen": 0.0, "atpm": ATP_MAINTENANCE},
    }


def apply(model: cobra.Model, cond: dict[str, float]) -> None:
    model.reactions.get_by_id("EX_glc__D_e").lower_bound = -cond["glucose"]
    model.reactions.get_by_id("EX_o2_e").lower_bound = -cond["oxygen"]
    model.reactions.get_by_id("ATPM").lower_bound = cond["atpm"]


def essential_genes(model: cobra.Model, wild_type: float) -> list[str]:
    found = []
    for gene in sorted(model.genes, key=lambda g: g.id):
        with model:
            for reaction in gene.reactions:
                if not reaction.gpr.eval({gene.id}):
                    reaction.bounds = (0.0, 0.0)
            growth = model.slim_optimize(error_value=0.0)
        if growth < ESSENTIAL_FRACTION * wild_type:
            found.append(gene.id)
    return found


def product_ranges(model: cobra.Model, wild_type: float) -> dict[str, list[float]]:
    ranges = {}
    with model:
        model.reactions.get_by_id("Biomass_Ecoli_core").lower_bound = FVA_FRACTION * wild_type
        for rid in PRODUCTS:
            model.objective = rid
            model.objective_direction = "min"
            low = model.slim_optimize()
            model.objective_direction = "max"
            high = model.slim_optimize()
            ranges[rid] = [round(low + 0.0, 6), round(high + 0.0, 6)]
    return ranges


def reference(model: cobra.Model) -> dict:
    out: dict = {"canary": CANARY, "conditions": conditions(), "growth": {}, "essential_genes": {}}
    for name, cond in conditions().items():
        with model:
            apply(model, cond)
            wild_type = model.slim_optimize()
            out["growth"][name] = round(wild_type, 6)
            out["essential_genes"][name] = essential_genes(model, wild_type)
            if name == "anaerobic":
                out["fva_anaerobic"] = product_ranges(model, wild_type)
    out["design"] = {"min_growth": MIN_DESIGN_GROWTH, "min_guaranteed_succinate": MIN_GUARANTEED_SUCCINATE,
                     "max_knockouts": 3}
    return out


def sheet_text() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["condition", "quantity", "value", "unit", "note"])
    writer.writerows(SHEET)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    model = cobra.io.load_model("textbook")
    model.id = "e_coli_core_site"
    cobra.io.write_sbml_model(model, str(out / "inputs" / "e_coli_core.xml"))
    (out / "inputs" / "conditions.csv").write_text(sheet_text())
    text = json.dumps(reference(model), indent=2, sort_keys=True) + "\n"
    (out / "reference" / "expected.json").write_text(text)


if __name__ == "__main__":
    main()
