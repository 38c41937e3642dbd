"""Grader for screening-library-triage.

The reference is the stated protocol run with the environment's pinned RDKit, so identifiers,
outcomes, flags, statuses, counts and cluster memberships are deterministic and compared exactly.
Real-valued descriptors get 0.001: the instruction asks for at least 3 decimals (rounding error
up to 0.0005), and the smallest chemically meaningful difference (a hydrogen, 1.008 in MW; a
tautomer or protonation change in cLogP or TPSA) is far larger.
"""

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

LIBRARY_COLUMNS = [
    "compound_id", "supplier", "inchikey", "smiles", "mw", "clogp", "tpsa", "hbd", "hba", "rotb",
    "lipinski_violations", "veber_pass", "pains", "status", "cluster", "centroid",
]
SUMMARY_KEYS = [
    "records_read", "unparseable", "low_purity", "duplicates", "unique_parents", "failed_element",
    "failed_lipinski", "failed_veber", "failed_pains", "passed", "clusters", "singletons",
]
# Descriptors are judged on the parents both sides share, if they share at least this fraction
# of the reference's; below it the table is for a different compound set.
MIN_SHARED = 0.9
# The crux gates. Standardisation and de-duplication: at least this fraction of the reference
# parents found, and no more than this fraction extra (skipping standardisation leaves salts and
# tautomers as separate "parents"). Clustering: the pairwise F1 of "same cluster" between the
# agent's and the reference's partitions of the pass parents; no clustering (all singletons) or
# a confused threshold gives far less, a shifted pass set (a few parents moved) about 0.9.
CRUX_PARENTS = 0.9
CRUX_CLUSTER_F1 = 0.8


def _int(value):
    n = as_number(value)
    return int(n) if n is not None and n == int(n) else None


def _read_picks(path):
    """(records, error): records as (inchikey, props) in file order, never raising."""
    if not path.is_file():
        return None, "picks.sdf is missing"
    try:
        from rdkit import Chem, RDLogger

        RDLogger.DisableLog("rdApp.*")
        records = []
        for mol in Chem.SDMolSupplier(str(path)):
            if mol is None:
                records.append((None, {}))
                continue
            records.append((Chem.MolToInchiKey(mol), mol.GetPropsAsDict()))
        return records, ""
    except Exception as e:  # RDKit raises several types on malformed files
        return None, f"picks.sdf does not read: {type(e).__name__}: {e}"


def _co_members(partition: set) -> set:
    """Unordered pairs of parents placed in the same cluster."""
    return {(a, b) for group in partition for a in group for b in group if a < b}


def _pair_f1(seen: set, expected: set) -> float:
    if not seen or not expected:
        return 0.0
    common = len(seen & expected)
    return 2 * common / (len(seen) + len(expected))


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    ref_offers = {(o["supplier"], o["catalog_id"]): o for o in ref["offers"]}
    ref_lib = {row["inchikey"]: row for row in ref["library"]}

    lib_rows, lib_ok = load_csv(ctx.out("library.csv"), required_columns=LIBRARY_COLUMNS)
    r.gate("library.csv parses with the required columns", lib_ok)
    offer_rows, offers_ok = load_csv(ctx.out("offers.csv"),
                                     required_columns=["supplier", "catalog_id", "outcome", "inchikey"])
    summary, summary_ok = load_json(ctx.out("summary.json"))

    lib = rows_by(lib_rows, "inchikey")
    found = sum(1 for k in ref_lib if k in lib)
    extra = sum(1 for k in lib if k not in ref_lib)
    r.gate(
        "parents standardised and de-duplicated: at least 90% of the reference parents, at most 10% extra",
        Outcome(found >= CRUX_PARENTS * len(ref_lib) and extra <= (1 - CRUX_PARENTS) * len(ref_lib),
                f"{found} of {len(ref_lib)} reference parents found, {extra} parents not in the reference",
                expected=len(ref_lib), seen={"found": found, "extra": extra}),
    )
    offers = rows_by(offer_rows, ("supplier", "catalog_id"))

    def outcome_set(rows: dict, outcome: str) -> set:
        return {k for k, o in rows.items() if o.get("outcome") == outcome}

    for outcome, weight in (("unparseable", 1), ("low_purity", 1)):
        exp, got = outcome_set(ref_offers, outcome), outcome_set(offers, outcome)
        if not offers_ok:
            r.check(f"offers.csv: the {outcome} records are exactly the reference's", weight, offers_ok)
            continue
        r.check(f"offers.csv: the {outcome} records are exactly the reference's", weight,
                Outcome(exp == got, f"{len(got & exp)} of {len(exp)} found, {len(got - exp)} extra",
                        expected=f"{len(exp)} records",
                        seen={"missing": sorted(map(list, exp - got))[:4],
                              "unexpected": sorted(map(list, got - exp))[:4]}))
    r.check("offers.csv: kept/duplicate decision for every offer (purity, price per mg, ties)", 3,
            match_rows(offers, ref_offers, "outcome", exact=True, only=True) if offers_ok else offers_ok)
    r.check("offers.csv: parent InChIKey of every readable offer", 2,
            match_rows(offers, ref_offers, "inchikey", exact=True, only=True) if offers_ok else offers_ok)

    r.check("library.csv: one row per unique parent, with the kept offer as compound_id", 3,
            match_rows(lib, ref_lib, ["compound_id", "supplier"], exact=True, only=True))
    r.check("library.csv: canonical SMILES of the standardised parent (canonical tautomer)", 2,
            match_rows(lib, ref_lib, "smiles", exact=True, only=True))
    shared = {k: v for k, v in ref_lib.items() if k in lib}
    enough = Outcome(len(shared) >= MIN_SHARED * len(ref_lib),
                     f"{len(shared)} of {len(ref_lib)} reference parents present",
                     expected=f">= {MIN_SHARED:.0%} of {len(ref_lib)}", seen=len(shared))
    r.check("library.csv: mw, clogp, tpsa within 0.001", 3,
            all_of([("parents", enough), ("values", match_rows(lib, shared, ["mw", "clogp", "tpsa"], abs=1e-3))]))
    r.check("library.csv: hbd, hba, rotb exact", 2,
            all_of([("parents", enough), ("values", match_rows(lib, shared, ["hbd", "hba", "rotb"], exact=True))]))
    r.check("library.csv: Lipinski violation counts and Veber flags", 2,
            all_of([("parents", enough),
                    ("values", match_rows(lib, shared, ["lipinski_violations", "veber_pass"], exact=True))]))
    r.check("library.csv: PAINS-flagged parents", 2,
            match_rows({k: v for k, v in lib.items() if _int(v.get("pains"))},
                       {k: v for k, v in ref_lib.items() if v["pains"]}, "pains", exact=True, only=True))
    r.check("library.csv: status of every parent (element, lipinski, veber, pains, pass)", 3,
            match_rows(lib, ref_lib, "status", exact=True, only=True))

    def partition(rows: dict) -> set:
        groups: dict = {}
        for k, v in rows.items():
            c = _int(v.get("cluster"))
            if c is not None:
                groups.setdefault(c, set()).add(k)
        return {frozenset(g) for g in groups.values()}

    exp_part, got_part = partition(ref_lib), partition(lib)
    f1 = _pair_f1(_co_members(got_part), _co_members(exp_part))
    r.gate(
        "pass parents clustered as the protocol does: same-cluster pairs agree with F1 >= 0.8",
        Outcome(f1 >= CRUX_CLUSTER_F1, f"pairwise F1 {f1:.3f} ({len(got_part)} clusters seen, {len(exp_part)} expected)",
                expected=f">= {CRUX_CLUSTER_F1}", seen=round(f1, 4)),
    )
    r.check("library.csv: Butina cluster memberships", 4,
            Outcome(exp_part == got_part,
                    f"{len(exp_part & got_part)} of {len(exp_part)} clusters identical; {len(got_part)} clusters seen",
                    expected=len(exp_part), seen=len(got_part)))
    r.check("library.csv: cluster numbering and centroids", 2,
            match_rows({k: v for k, v in lib.items() if _int(v.get("cluster")) is not None},
                       {k: v for k, v in ref_lib.items() if v["cluster"] != ""}, ["cluster", "centroid"],
                       exact=True, only=True))

    records, err = _read_picks(ctx.out("picks.sdf"))
    exp_picks = [(p["inchikey"], p["compound_id"], p["cluster"], p["cluster_size"]) for p in ref["picks"]]
    if records is None:
        picks_outcome = Outcome(False, err, expected=f"{len(exp_picks)} records")
    else:
        got_picks = [(key, str(props.get("compound_id", "")), _int(props.get("cluster")),
                      _int(props.get("cluster_size"))) for key, props in records]
        same = got_picks == exp_picks
        first_bad = next((i for i, (a, b) in enumerate(zip(exp_picks, got_picks, strict=False)) if a != b), None)
        picks_outcome = Outcome(
            same,
            "all picks match" if same else f"{len(got_picks)} records (expected {len(exp_picks)}); first difference at record {first_bad}",
            expected=exp_picks[first_bad] if first_bad is not None else len(exp_picks),
            seen=got_picks[first_bad] if first_bad is not None else len(got_picks),
        )
    r.check("picks.sdf: centroid structures, IDs, cluster numbers and sizes in cluster order", 3, picks_outcome)

    r.check("summary.json: every count matches the reference", 2,
            all_of([(k, near(get(summary, k), ref["summary"][k])) for k in SUMMARY_KEYS]) if summary_ok else summary_ok)

    # The deliverables must tell one story: counts in summary.json agree with the agent's own tables.
    own = {}
    if offers_ok:
        for outcome, key in (("unparseable", "unparseable"), ("low_purity", "low_purity"), ("duplicate", "duplicates")):
            own[key] = sum(o.get("outcome") == outcome for o in offers.values())
        own["records_read"] = len(offer_rows)
    own["unique_parents"] = len(lib_rows or [])
    own["passed"] = sum(v.get("status") == "pass" for v in lib.values())
    own["clusters"] = len(got_part)
    r.check("summary.json agrees with the agent's own offers.csv and library.csv", 1,
            all_of([(k, near(get(summary, k), v)) for k, v in own.items()]) if summary_ok else summary_ok)
    return r
