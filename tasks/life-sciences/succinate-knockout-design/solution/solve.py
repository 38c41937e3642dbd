"""Oracle: FBA, FVA, gene essentiality and a growth-coupled succinate design with COBRApy."""

import csv
import itertools
import json
import sys
from pathlib import Path

import cobra
from cobra.flux_analysis import flux_variability_analysis, single_gene_deletion

INPUTS = Path(sys.argv[1])
OUT = Path(sys.argv[2])
MOLAR_MASS = {"glucose": 180.156}
PRODUCTS = ["EX_succ_e", "EX_ac_e", "EX_etoh_e", "EX_for_e", "EX_lac__D_e"]


def mmol(value: float, unit: str, metabolite: str) -> float:
    if unit == "mmol/gDW/h":
        return value
    if unit == "mg/gDW/h":
        return value / MOLAR_MASS[metabolite]
    raise SystemExit(f"unknown unit {unit}")


def read_sheet() -> dict[str, dict[str, float]]:
    media = {"aerobic": {"oxygen": 1000.0}, "anaerobic": {"oxygen": 0.0}}  # N2-sparged: no O2 at all
    atpm = None
    with open(INPUTS / "conditions.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            value = float(row["value"])
            if row["quantity"].startswith("non-growth-associated ATP"):
                atpm = value
                continue
            metabolite = row["quantity"].split()[0]
            media[row["condition"]][metabolite] = mmol(value, row["unit"], metabolite)
    for medium in media.values():
        medium["atpm"] = atpm
    return media


def set_condition(model: cobra.Model, medium: dict[str, float]) -> None:
    model.reactions.EX_glc__D_e.lower_bound = -medium["glucose"]
    model.reactions.EX_o2_e.lower_bound = -medium["oxygen"]
    model.reactions.ATPM.lower_bound = medium["atpm"]


def dead_reactions(model: cobra.Model, genes: tuple[str, ...]) -> list[str]:
    hit = set(genes)
    return sorted(
        r.id for g in genes for r in model.genes.get_by_id(g).reactions if not r.gpr.eval(hit)
    )


def evaluate(model: cobra.Model, genes: tuple[str, ...]) -> tuple[float, float, float]:
    with model:
        for rid in dead_reactions(model, genes):
            model.reactions.get_by_id(rid).bounds = (0.0, 0.0)
        growth = model.slim_optimize(error_value=0.0)
        if growth < 0.1:
            return growth, 0.0, 0.0
        model.reactions.Biomass_Ecoli_core.lower_bound = growth * (1 - 1e-9)
        model.objective = "EX_succ_e"
        model.objective_direction = "min"
        low = model.slim_optimize()
        model.objective_direction = "max"
        return growth, low, model.slim_optimize()


def design(model: cobra.Model, essential: set[str]) -> dict:
    by_effect: dict[tuple[str, ...], str] = {}
    for gene in sorted(g.id for g in model.genes):
        if not gene.startswith("b") or gene in essential:
            continue  # s0001 marks spontaneous reactions: there is no locus to delete
        effect = tuple(dead_reactions(model, (gene,)))
        if effect:
            by_effect.setdefault(effect, gene)
    candidates = sorted(by_effect.values())
    best = (0.0, 0.0, 0.0, ())
    for size in (1, 2, 3):
        for combo in itertools.combinations(candidates, size):
            growth, low, high = evaluate(model, combo)
            if growth >= 0.1 and low > best[1] + 1e-6:
                best = (growth, low, high, combo)
    growth, low, high, combo = best
    return {"knockouts": list(combo), "reactions_removed": dead_reactions(model, combo),
            "growth_rate": round(growth, 5), "succinate_min": round(low, 5), "succinate_max": round(high, 5)}


def main() -> None:
    model = cobra.io.read_sbml_model(str(INPUTS / "e_coli_core.xml"))
    media = read_sheet()
    growth_rows, essential_rows = [], []
    for name in ("aerobic", "anaerobic"):
        set_condition(model, media[name])
        wild_type = model.slim_optimize()
        growth_rows.append([name, f"{wild_type:.6f}"])
        deletions = single_gene_deletion(model, processes=1)
        for ids, grows in zip(deletions["ids"], deletions["growth"], strict=True):
            if not grows >= 0.01 * wild_type:  # NaN (infeasible) counts as no growth
                essential_rows.append([name, next(iter(ids))])
    fva = flux_variability_analysis(model, PRODUCTS, fraction_of_optimum=0.95)
    essential = {gene for cond, gene in essential_rows if cond == "anaerobic"}
    plan = design(model, essential)
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "growth.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["condition", "growth_rate"], *growth_rows])
    with open(OUT / "essential_genes.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["condition", "gene"], *sorted(essential_rows)])
    with open(OUT / "fva.csv", "w", newline="") as handle:
        rows = [[rid, f"{fva.loc[rid, 'minimum'] + 0.0:.6f}", f"{fva.loc[rid, 'maximum']:.6f}"] for rid in PRODUCTS]
        csv.writer(handle).writerows([["reaction", "minimum", "maximum"], *rows])
    (OUT / "design.json").write_text(json.dumps(plan, indent=2) + "\n")


if __name__ == "__main__":
    main()
