"""Grader of succinate-knockout-design: the design is re-simulated with COBRApy's own GPR-aware
gene knockout on the pristine model under the site's anaerobic conditions."""

import re

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    rows_by,
    same_set,
)

LOCUS = re.compile(r"^b\d{4}$")
# Rates are asked to 4 decimals (h^-1), product ranges to 3 (mmol/gDW/h): half a unit of the
# last asked place plus the spread between LP solvers (1e-6) and glucose molar masses (1e-5).
GROWTH_TOL = 2e-4
FLUX_TOL = 2e-3
# The design's claims: the guaranteed yield depends on how tightly growth is pinned at its
# maximum (1e-9 to 1e-6 relative moves it by ~3e-4), so 0.005 on fluxes, 2e-4 on growth.
CLAIM_TOL = 5e-3


def knockout_list(design: object) -> tuple[list[str], Outcome]:
    genes = get(design, "knockouts")
    ok = (isinstance(genes, list) and 1 <= len(genes) <= 3
          and all(isinstance(g, str) for g in genes) and len(set(genes)) == len(genes))
    if not ok:
        return [], Outcome(False, "knockouts must be a list of 1 to 3 distinct gene ids",
                           expected="1-3 gene ids", seen=str(genes)[:200])
    return list(genes), Outcome(True, f"{len(genes)} knockouts")


def simulate(ctx: GradeContext, genes: list[str], cond: dict) -> dict:
    import cobra  # the environment's COBRApy; imported late so bad files fail before it loads
    from cobra.manipulation import knock_out_model_genes

    model = cobra.io.read_sbml_model(str(ctx.inputs / "e_coli_core.xml"))
    known = {g.id for g in model.genes}
    model.reactions.get_by_id("EX_glc__D_e").lower_bound = -cond["glucose"]
    model.reactions.get_by_id("EX_o2_e").lower_bound = -cond["oxygen"]
    model.reactions.get_by_id("ATPM").lower_bound = cond["atpm"]
    result = {"unknown": sorted(set(genes) - known), "loci": [g for g in genes if not LOCUS.match(g)]}
    if result["unknown"]:
        return result
    with model:
        removed = knock_out_model_genes(model, genes)
        result["removed"] = sorted(r.id for r in removed)
        growth = model.slim_optimize(error_value=0.0)
        result["growth"] = growth
        result["succ_min"] = result["succ_max"] = 0.0
        if growth > 1e-6:
            model.reactions.get_by_id("Biomass_Ecoli_core").lower_bound = growth * (1 - 1e-7)
            model.objective = "EX_succ_e"
            model.objective_direction = "min"
            result["succ_min"] = model.slim_optimize(error_value=0.0)
            model.objective_direction = "max"
            result["succ_max"] = model.slim_optimize(error_value=0.0)
    return result


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    spec = ref["design"]

    growth_rows, growth_ok = load_csv(ctx.out("growth.csv"), required_columns=["condition", "growth_rate"])
    fva_rows, fva_ok = load_csv(ctx.out("fva.csv"), required_columns=["reaction", "minimum", "maximum"])
    ess_rows, ess_ok = load_csv(ctx.out("essential_genes.csv"), required_columns=["condition", "gene"])
    design, design_ok = load_json(ctx.out("design.json"))
    genes, list_ok = knockout_list(design)
    readable = [
        r.gate("growth.csv has columns condition, growth_rate", growth_ok),
        r.gate("fva.csv has columns reaction, minimum, maximum", fva_ok),
        r.gate("essential_genes.csv has columns condition, gene", ess_ok),
        r.gate("design.json parses as a JSON object", design_ok),
        r.gate("design lists 1 to 3 distinct gene knockouts", list_ok),
    ]
    if not all(readable):
        return r

    sim = simulate(ctx, genes, ref["conditions"]["anaerobic"])
    if not r.gate("knockouts are genes of the model at deletable loci (b-numbers)", Outcome(
        not sim["unknown"] and not sim["loci"],
        f"not in the model: {sim['unknown']}; not a chromosomal locus: {sim['loci']}"
        if sim["unknown"] or sim["loci"] else f"all {len(genes)} are b-number genes of the model",
        expected="b-number genes of e_coli_core.xml", seen=genes)):
        return r
    coupled = sim["growth"] >= spec["min_growth"] and sim["succ_min"] >= spec["min_guaranteed_succinate"]
    r.gate("design is growth-coupled under the anaerobic site conditions (re-simulated)", Outcome(
        coupled, f"growth {sim['growth']:.4f} h-1, guaranteed succinate {sim['succ_min']:.4f} mmol/gDW/h",
        expected={"growth >=": spec["min_growth"], "guaranteed succinate >=": spec["min_guaranteed_succinate"]},
        seen={"growth": round(sim["growth"], 6), "guaranteed succinate": round(sim["succ_min"], 6),
              "reactions removed": sim["removed"]}))

    by_condition = rows_by(growth_rows, "condition")
    r.check("wild-type maximal growth, aerobic site conditions", 1,
            near(get(by_condition.get("aerobic"), "growth_rate"), ref["growth"]["aerobic"], abs=GROWTH_TOL))
    r.check("wild-type maximal growth, anaerobic site conditions", 2,
            near(get(by_condition.get("anaerobic"), "growth_rate"), ref["growth"]["anaerobic"], abs=GROWTH_TOL))
    expected_fva = {rid: {"minimum": lo, "maximum": hi} for rid, (lo, hi) in ref["fva_anaerobic"].items()}
    r.check("anaerobic FVA of the fermentation products at 95 % of optimal growth", 2,
            match_rows(rows_by(fva_rows, "reaction"), expected_fva, ["minimum", "maximum"], abs=FLUX_TOL))
    for cond in ("aerobic", "anaerobic"):
        listed = [row.get("gene") for row in ess_rows if row.get("condition") == cond]
        r.check(f"essential genes, {cond} site conditions", 1,
                same_set(listed, ref["essential_genes"][cond]))
    r.check("design's reported growth and succinate range match the re-simulation", 1, all_of([
        ("growth_rate", near(get(design, "growth_rate"), sim["growth"], abs=GROWTH_TOL)),
        ("succinate_min", near(get(design, "succinate_min"), sim["succ_min"], abs=CLAIM_TOL)),
        ("succinate_max", near(get(design, "succinate_max"), sim["succ_max"], abs=CLAIM_TOL)),
    ]))
    removed = get(design, "reactions_removed")
    if isinstance(removed, list) and not all(isinstance(x, str) for x in removed):
        removed = [str(x) for x in removed]
    r.check("design's reactions removed match the GPR evaluation", 1, same_set(removed, sim["removed"]))
    return r
