"""Oracle for screening-library-triage: the triage protocol with RDKit.

    python3 triage.py INPUT_DIR OUTPUT_DIR
"""

import csv
import json
import re
import sys
from pathlib import Path

from rdkit import Chem, DataStructs, RDLogger
from rdkit.Chem import Crippen, Descriptors, rdFingerprintGenerator, rdMolDescriptors
from rdkit.Chem.FilterCatalog import FilterCatalog, FilterCatalogParams
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.SaltRemover import SaltRemover
from rdkit.ML.Cluster import Butina

SUPPLIERS = ["aldane", "borealis", "cygnet"]
ALLOWED = {"H", "C", "N", "O", "S", "P", "F", "Cl", "Br", "I"}
CUTOFF = 0.665
CATALOG_RE = re.compile(r">\s*<CATALOG_ID>[^\n]*\n([^\n]*)")


class Standardiser:
    def __init__(self) -> None:
        self.salts = SaltRemover()
        self.largest = rdMolStandardize.LargestFragmentChooser()
        self.uncharger = rdMolStandardize.Uncharger()
        self.tautomers = rdMolStandardize.TautomerEnumerator()

    def __call__(self, mol: Chem.Mol) -> Chem.Mol:
        mol = rdMolStandardize.Cleanup(mol)
        mol = self.salts.StripMol(mol, dontRemoveEverything=True)
        mol = self.largest.choose(mol)
        mol = self.uncharger.uncharge(mol)
        return self.tautomers.Canonicalize(mol)


def read_offers(inputs: Path, std: Standardiser) -> list[dict]:
    offers = []
    for supplier in SUPPLIERS:
        sdf = Chem.SDMolSupplier(str(inputs / f"{supplier}.sdf"))
        for i in range(len(sdf)):
            mol = sdf[i]
            match = CATALOG_RE.search(sdf.GetItemText(i))
            offer = {"supplier": supplier, "catalog_id": match.group(1).strip() if match else ""}
            if mol is None:
                offer.update(outcome="unparseable", inchikey="")
            else:
                parent = std(mol)
                offer.update(
                    inchikey=Chem.MolToInchiKey(parent),
                    parent=parent,
                    per_mg=float(mol.GetProp("PRICE_USD")) / float(mol.GetProp("PACK_MG")),
                    outcome="low_purity" if float(mol.GetProp("PURITY_PCT")) < 90.0 else "",
                )
            offers.append(offer)
    candidates = sorted(
        (o for o in offers if o["outcome"] == ""),
        key=lambda o: (o["inchikey"], o["per_mg"], o["supplier"], o["catalog_id"]),
    )
    seen = set()
    for o in candidates:
        o["outcome"] = "duplicate" if o["inchikey"] in seen else "kept"
        seen.add(o["inchikey"])
    return offers


def profile(offers: list[dict]) -> list[dict]:
    params = FilterCatalogParams()
    params.AddCatalog(FilterCatalogParams.FilterCatalogs.PAINS)
    pains = FilterCatalog(params)
    rows = []
    for o in sorted((o for o in offers if o["outcome"] == "kept"), key=lambda o: o["inchikey"]):
        m = o["parent"]
        mw, logp = Descriptors.MolWt(m), Crippen.MolLogP(m)
        hbd, hba = rdMolDescriptors.CalcNumLipinskiHBD(m), rdMolDescriptors.CalcNumLipinskiHBA(m)
        tpsa, rotb = rdMolDescriptors.CalcTPSA(m), rdMolDescriptors.CalcNumRotatableBonds(m)
        violations = (mw > 500) + (logp > 5) + (hbd > 5) + (hba > 10)
        veber = rotb <= 10 and tpsa <= 140
        alert = pains.HasMatch(m)
        if any(a.GetSymbol() not in ALLOWED for a in m.GetAtoms()):
            status = "element"
        elif violations > 1:
            status = "lipinski"
        elif not veber:
            status = "veber"
        elif alert:
            status = "pains"
        else:
            status = "pass"
        rows.append({
            "compound_id": o["catalog_id"], "supplier": o["supplier"], "inchikey": o["inchikey"],
            "smiles": Chem.MolToSmiles(m), "mw": f"{mw:.4f}", "clogp": f"{logp:.4f}",
            "hbd": hbd, "hba": hba, "tpsa": f"{tpsa:.4f}", "rotb": rotb,
            "lipinski_violations": int(violations), "veber_pass": int(veber), "pains": int(alert),
            "status": status, "cluster": "", "centroid": 0, "_mol": m,
        })
    return rows


def cluster(rows: list[dict]) -> list[tuple[int, ...]]:
    passing = [r for r in rows if r["status"] == "pass"]
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    fps = [gen.GetFingerprint(r["_mol"]) for r in passing]
    dists = []
    for i in range(1, len(fps)):
        dists.extend(DataStructs.BulkTanimotoSimilarity(fps[i], fps[:i], returnDistance=True))
    clusters = Butina.ClusterData(dists, len(fps), CUTOFF, isDistData=True)
    for cid, members in enumerate(clusters, start=1):
        for j, idx in enumerate(members):
            passing[idx]["cluster"] = cid
            passing[idx]["centroid"] = int(j == 0)
    return [tuple(passing[i]["inchikey"] for i in c) for c in clusters]


def main() -> None:
    inputs, out = Path(sys.argv[1]), Path(sys.argv[2])
    RDLogger.DisableLog("rdApp.*")
    offers = read_offers(inputs, Standardiser())
    rows = profile(offers)
    clusters = cluster(rows)
    by_key = {r["inchikey"]: r for r in rows}

    with open(out / "offers.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["supplier", "catalog_id", "outcome", "inchikey"])
        for o in offers:
            w.writerow([o["supplier"], o["catalog_id"], o["outcome"], o["inchikey"]])
    fields = [k for k in rows[0] if k != "_mol"]
    with open(out / "library.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    writer = Chem.SDWriter(str(out / "picks.sdf"))
    for cid, members in enumerate(clusters, start=1):
        r = by_key[members[0]]
        m = Chem.Mol(r["_mol"])
        m.SetProp("_Name", r["compound_id"])
        m.SetProp("compound_id", r["compound_id"])
        m.SetIntProp("cluster", cid)
        m.SetIntProp("cluster_size", len(members))
        writer.write(m)
    writer.close()

    def n(outcome: str) -> int:
        return sum(o["outcome"] == outcome for o in offers)

    def s(status: str) -> int:
        return sum(r["status"] == status for r in rows)

    summary = {
        "records_read": len(offers), "unparseable": n("unparseable"), "low_purity": n("low_purity"),
        "duplicates": n("duplicate"), "unique_parents": len(rows), "failed_element": s("element"),
        "failed_lipinski": s("lipinski"), "failed_veber": s("veber"), "failed_pains": s("pains"),
        "passed": s("pass"), "clusters": len(clusters),
        "singletons": sum(len(c) == 1 for c in clusters),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
