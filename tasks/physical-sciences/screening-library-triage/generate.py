"""Seeded generator of inputs/ and reference/ for screening-library-triage.

    python3 generate.py --out DIR      (run in the `chem` environment: RDKit is needed)

The parent structures come from SDF files shipped inside the rdkit wheel (EGFR and CDK2 docking
sets, the c-Met Free-Wilson set, the first 200 NCI compounds). They are redrawn as the offers of
three fictional suppliers: salt forms, protonated forms, other tautomers, shuffled atom order,
repeat offers at other prices and purities, and a few records RDKit cannot read. The reference
is then computed from the written files with the protocol stated in instruction.md.
"""

import argparse
import json
import os
import random
from pathlib import Path

import rdkit
from rdkit import Chem, DataStructs, RDLogger
from rdkit.Chem import Crippen, Descriptors, rdDepictor, rdFingerprintGenerator, rdMolDescriptors
from rdkit.Chem.FilterCatalog import FilterCatalog, FilterCatalogParams
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.SaltRemover import SaltRemover
from rdkit.ML.Cluster import Butina

SEED = 20240611
CANARY = "5a3563e5-25fd-4959-912b-2c884efd8019"
SOURCES = [
    "Contrib/FreeWilson/data/cmet_ligands.sdf",
    "Contrib/Fastcluster/testdata/cdk2.sdf",
    "Contrib/PBF/testData/egfr.sdf",
    "Data/NCI/first_200.props.sdf",
]
SUPPLIERS = [("aldane", "ALD"), ("borealis", "BSC"), ("cygnet", "CYG")]
ALLOWED_ELEMENTS = {"H", "C", "N", "O", "S", "P", "F", "Cl", "Br", "I"}
MIN_PURITY = 90.0
CUTOFF = 0.665  # Butina distance threshold; no pair distance lies within 1e-4 of it (asserted)
FP_RADIUS, FP_BITS = 2, 2048

# Counterions as suppliers draw them: neutral acid forms, ionic forms with a protonated amine.
NEUTRAL_ACIDS = [
    "Cl",
    "Br",
    "CS(=O)(=O)O",
    "OC(=O)C(F)(F)F",
    "OC(=O)/C=C\\C(=O)O",
    "OC(=O)C(=O)O",
    "Cc1ccc(cc1)S(=O)(=O)O",
]
SMALL_AMINE_SALTS = ["Cc1ccc(cc1)S(=O)(=O)O", "OC(=O)C(O)C(O)C(=O)O"]
IONIC_ANIONS = ["[Cl-]", "[Br-]", "CS(=O)(=O)[O-]"]

BASIC_N = Chem.MolFromSmarts("[NX3;H2,H1,H0;+0;!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N-a);!$(N#*);!$(N=*);!$(N-N);!$(N-O)]")
CARBOXYLIC = Chem.MolFromSmarts("[CX3](=O)[OX2H1]")


def shipped_parents() -> list[tuple[Chem.Mol, tuple[str, str, str]]]:
    """The parent structures, each with its parent_identity."""
    root = Path(os.path.dirname(rdkit.__file__))
    seen, parents = set(), []
    for rel in SOURCES:
        for mol in Chem.SDMolSupplier(str(root / rel)):
            if mol is None:
                continue
            mol = Chem.RemoveAllHs(mol)
            for name in list(mol.GetPropNames()):
                mol.ClearProp(name)
            ident = parent_identity(mol)
            # Parents whose InChIKey depends on the depiction (stereo read from coordinates)
            # would make the duplicate key ambiguous: left out.
            if ident is None or ident[1] != ident[2] or ident[1] in seen:
                continue
            seen.add(ident[1])
            parents.append((mol, ident))
    return parents


def shuffled(mol: Chem.Mol, rng: random.Random) -> Chem.Mol:
    order = list(range(mol.GetNumAtoms()))
    rng.shuffle(order)
    return Chem.RenumberAtoms(mol, order)


def neutral_form(mol: Chem.Mol) -> Chem.Mol:
    return rdMolStandardize.Uncharger().uncharge(mol)


def protonated(mol: Chem.Mol) -> Chem.Mol | None:
    mol = Chem.RWMol(neutral_form(mol))
    hits = mol.GetSubstructMatches(BASIC_N)
    if not hits:
        return None
    atom = mol.GetAtomWithIdx(hits[0][0])
    atom.SetFormalCharge(1)
    atom.SetNumExplicitHs(atom.GetTotalNumHs() + 1)
    atom.SetNoImplicit(True)
    Chem.SanitizeMol(mol)
    return mol.GetMol()


def sodium_salt(mol: Chem.Mol) -> Chem.Mol | None:
    mol = Chem.RWMol(neutral_form(mol))
    hits = mol.GetSubstructMatches(CARBOXYLIC)
    if not hits:
        return None
    oxygen = mol.GetAtomWithIdx(hits[0][2])
    oxygen.SetFormalCharge(-1)
    oxygen.SetNumExplicitHs(0)
    oxygen.SetNoImplicit(True)
    Chem.SanitizeMol(mol)
    return Chem.CombineMols(mol.GetMol(), Chem.MolFromSmiles("[Na+]"))


def other_tautomer(mol: Chem.Mol, rng: random.Random) -> Chem.Mol | None:
    enumerator = rdMolStandardize.TautomerEnumerator()
    enumerator.SetMaxTautomers(30)
    base = Chem.MolToSmiles(neutral_form(mol))
    smiles = sorted({Chem.MolToSmiles(t) for t in enumerator.Enumerate(neutral_form(mol))} - {base})
    if not smiles:
        return None
    return Chem.MolFromSmiles(rng.choice(smiles))


def salt_form(mol: Chem.Mol, rng: random.Random) -> Chem.Mol:
    small_amine = mol.GetNumHeavyAtoms() <= 9 and mol.HasSubstructMatch(BASIC_N)
    if small_amine:
        return Chem.CombineMols(neutral_form(mol), Chem.MolFromSmiles(rng.choice(SMALL_AMINE_SALTS)))
    roll = rng.random()
    if roll < 0.2:
        salt = sodium_salt(mol)
        if salt is not None:
            return salt
    if roll < 0.5:
        cation = protonated(mol)
        if cation is not None:
            return Chem.CombineMols(cation, Chem.MolFromSmiles(rng.choice(IONIC_ANIONS)))
    acid = Chem.MolFromSmiles(rng.choice(NEUTRAL_ACIDS))
    parent = neutral_form(mol)
    if roll > 0.9:
        return Chem.CombineMols(Chem.CombineMols(parent, acid), Chem.MolFromSmiles("O"))
    return Chem.CombineMols(parent, acid)


def parent_identity(mol: Chem.Mol) -> tuple[str, str, str] | None:
    """The standardised parent of a drawing as read back from its mol block: canonical SMILES,
    InChIKey with the 2D coordinates and InChIKey from the SMILES. None if it does not read."""
    mol = Chem.Mol(mol)
    rdDepictor.Compute2DCoords(mol)
    back = Chem.MolFromMolBlock(Chem.MolToMolBlock(mol))
    if back is None:
        return None
    parent, inchikey = standardise(back)
    smiles = Chem.MolToSmiles(parent)
    return smiles, inchikey, Chem.MolToInchiKey(Chem.MolFromSmiles(smiles))


def drawn(mol: Chem.Mol, identity: tuple[str, str, str], form: str, rng: random.Random) -> Chem.Mol:
    """One supplier's drawing of a parent structure whose parent_identity is `identity`."""
    variant = None
    if form == "salt":
        variant = salt_form(mol, rng)
    elif form == "charged":
        variant = protonated(mol)
    elif form == "tautomer":
        variant = other_tautomer(mol, rng)
    if variant is None or parent_identity(variant) != identity:
        variant = Chem.Mol(mol)
    variant = shuffled(variant, rng)
    rdDepictor.Compute2DCoords(variant)
    return variant


def broken_block(mol: Chem.Mol) -> str:
    """A mol block with its first three-connected carbon written as oxygen: RDKit refuses the
    record on sanitisation (valence error), as it does with a garbled supplier record."""
    rw = Chem.RWMol(mol)
    Chem.Kekulize(rw, clearAromaticFlags=True)
    for atom in rw.GetAtoms():
        if atom.GetSymbol() == "C" and atom.GetDegree() == 3:
            atom.SetAtomicNum(8)
            break
    return Chem.MolToMolBlock(rw, kekulize=False)


def record_text(block: str, props: dict[str, str]) -> str:
    lines = [block.rstrip("\n")]
    for name, value in props.items():
        lines += [f">  <{name}>", value, ""]
    return "\n".join(lines) + "\n$$$$\n"


def make_offers(parents: list[tuple[Chem.Mol, tuple[str, str, str]]], rng: random.Random) -> dict[str, list[str]]:
    records: dict[str, list[tuple[Chem.Mol | None, str, dict[str, str]]]] = {s: [] for s, _ in SUPPLIERS}
    order = list(range(len(parents)))
    rng.shuffle(order)
    for pos, idx in enumerate(order):
        parent, identity = parents[idx]
        n_offers = rng.choices([1, 2, 3], weights=[70, 24, 6])[0]
        suppliers = rng.sample([s for s, _ in SUPPLIERS], n_offers)
        base_price = rng.uniform(40, 160)
        for k, supplier in enumerate(suppliers):
            if k == 0:
                form = rng.choices(["plain", "salt", "charged"], weights=[60, 30, 10])[0]
            else:
                form = rng.choice(["plain", "salt", "charged", "tautomer"])
            pack = rng.choice([1, 2, 5, 10])
            factor = {"aldane": 1.0, "borealis": 0.85, "cygnet": 1.2}[supplier]
            price = base_price * factor * pack**0.55 * rng.uniform(0.8, 1.25)
            purity = rng.uniform(86.0, 89.9) if rng.random() < 0.1 else rng.uniform(90.0, 99.8)
            props = {"PACK_MG": str(pack), "PRICE_USD": f"{price:.2f}", "PURITY_PCT": f"{purity:.1f}"}
            if pos % 157 == 11 and k == 0:
                records[supplier].append((None, broken_block(parent), props))
            else:
                records[supplier].append((drawn(parent, identity, form, rng), "", props))
    files = {}
    for supplier, prefix in SUPPLIERS:
        items = records[supplier]
        rng.shuffle(items)
        ids = sorted(rng.sample(range(10000, 99999), len(items)))
        out = []
        for (mol, block, props), num in zip(items, ids, strict=True):
            cat_id = f"{prefix}-{num}"
            if mol is not None:
                mol.SetProp("_Name", cat_id)
                block = Chem.MolToMolBlock(mol)
            else:
                block = cat_id + block[block.index("\n"):]
            out.append(record_text(block, {"CATALOG_ID": cat_id, **props}))
        files[supplier] = out
    return files


# ---------------------------------------------------------------------------------------------
# Reference: the protocol of instruction.md applied to the written files.


SALT_REMOVER = SaltRemover()
LARGEST_FRAGMENT = rdMolStandardize.LargestFragmentChooser()
UNCHARGER = rdMolStandardize.Uncharger()
TAUTOMERS = rdMolStandardize.TautomerEnumerator()


# Canonical SMILES of a drawing, and of its neutral parent before the tautomer step, -> the
# standardised parent and its InChIKey; for this run only.
_BY_DRAWING: dict[str, tuple[Chem.Mol, str]] = {}
_BY_NEUTRAL: dict[str, tuple[Chem.Mol, str]] = {}


def standardise(mol: Chem.Mol) -> tuple[Chem.Mol, str]:
    """The parent structure of a readable record and its InChIKey, shared: not to be modified.
    The result depends on the structure, not on atom order or drawing (shipped_parents leaves
    out parents whose InChIKey depends on the drawing), so each distinct drawing is standardised
    once and the tautomer search, nearly all the cost, once per neutral parent: a compound's
    salt forms, repeat offers and the generator's own checks share it."""
    drawing = Chem.MolToSmiles(mol)
    if drawing not in _BY_DRAWING:
        mol = rdMolStandardize.Cleanup(mol)
        mol = SALT_REMOVER.StripMol(mol, dontRemoveEverything=True)
        mol = LARGEST_FRAGMENT.choose(mol)
        mol = UNCHARGER.uncharge(mol)
        neutral = Chem.MolToSmiles(mol)
        if neutral not in _BY_NEUTRAL:
            parent = TAUTOMERS.Canonicalize(mol)
            _BY_NEUTRAL[neutral] = parent, Chem.MolToInchiKey(parent)
        _BY_DRAWING[drawing] = _BY_NEUTRAL[neutral]
    return _BY_DRAWING[drawing]


def reference(input_dir: Path) -> dict:
    offers = []
    for supplier, _ in SUPPLIERS:
        sup = Chem.SDMolSupplier(str(input_dir / f"{supplier}.sdf"))
        for i in range(len(sup)):
            mol = sup[i]
            text = sup.GetItemText(i)
            cat_id = text.split(">  <CATALOG_ID>\n", 1)[1].split("\n", 1)[0].strip()
            offer = {"supplier": supplier, "catalog_id": cat_id}
            if mol is None:
                offer.update(outcome="unparseable", inchikey="")
                offers.append(offer)
                continue
            purity = float(mol.GetProp("PURITY_PCT"))
            per_mg = float(mol.GetProp("PRICE_USD")) / float(mol.GetProp("PACK_MG"))
            parent, inchikey = standardise(mol)
            offer.update(inchikey=inchikey, per_mg=per_mg, parent=parent)
            offer["outcome"] = "low_purity" if purity < MIN_PURITY else "candidate"
            offers.append(offer)

    best: dict[str, dict] = {}
    for o in offers:
        if o["outcome"] != "candidate":
            continue
        k = o["inchikey"]
        if k not in best or (o["per_mg"], o["supplier"], o["catalog_id"]) < (
            best[k]["per_mg"], best[k]["supplier"], best[k]["catalog_id"]
        ):
            best[k] = o
    for o in offers:
        if o["outcome"] == "candidate":
            o["outcome"] = "kept" if best[o["inchikey"]] is o else "duplicate"

    params = FilterCatalogParams()
    params.AddCatalog(FilterCatalogParams.FilterCatalogs.PAINS)
    pains = FilterCatalog(params)
    library = []
    for key in sorted(best):
        o = best[key]
        m = o["parent"]
        row = {
            "compound_id": o["catalog_id"],
            "supplier": o["supplier"],
            "inchikey": key,
            "smiles": Chem.MolToSmiles(m),
            "mw": Descriptors.MolWt(m),
            "clogp": Crippen.MolLogP(m),
            "hbd": rdMolDescriptors.CalcNumLipinskiHBD(m),
            "hba": rdMolDescriptors.CalcNumLipinskiHBA(m),
            "tpsa": rdMolDescriptors.CalcTPSA(m),
            "rotb": rdMolDescriptors.CalcNumRotatableBonds(m),
            "pains": int(pains.HasMatch(m)),
        }
        row["lipinski_violations"] = (
            int(row["mw"] > 500) + int(row["clogp"] > 5) + int(row["hbd"] > 5) + int(row["hba"] > 10)
        )
        row["veber_pass"] = int(row["rotb"] <= 10 and row["tpsa"] <= 140)
        elements_ok = all(a.GetSymbol() in ALLOWED_ELEMENTS for a in m.GetAtoms())
        if not elements_ok:
            row["status"] = "element"
        elif row["lipinski_violations"] > 1:
            row["status"] = "lipinski"
        elif not row["veber_pass"]:
            row["status"] = "veber"
        elif row["pains"]:
            row["status"] = "pains"
        else:
            row["status"] = "pass"
        row["_mol"] = m
        library.append(row)

    passing = [r for r in library if r["status"] == "pass"]  # already in InChIKey order
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=FP_RADIUS, fpSize=FP_BITS)
    fps = [gen.GetFingerprint(r["_mol"]) for r in passing]
    dists = []
    for i in range(1, len(fps)):
        dists.extend(1.0 - s for s in DataStructs.BulkTanimotoSimilarity(fps[i], fps[:i]))
    gap = min(abs(d - CUTOFF) for d in dists)
    assert gap > 1e-4, f"a pair distance lies {gap} from the cutoff"
    clusters = Butina.ClusterData(dists, len(fps), CUTOFF, isDistData=True)
    for r in library:
        r["cluster"], r["centroid"] = "", 0
    for cid, members in enumerate(clusters, start=1):
        for j, idx in enumerate(members):
            passing[idx]["cluster"] = cid
            passing[idx]["centroid"] = int(j == 0)

    counts = {
        "records_read": len(offers),
        "unparseable": sum(o["outcome"] == "unparseable" for o in offers),
        "low_purity": sum(o["outcome"] == "low_purity" for o in offers),
        "duplicates": sum(o["outcome"] == "duplicate" for o in offers),
        "unique_parents": len(library),
        "failed_element": sum(r["status"] == "element" for r in library),
        "failed_lipinski": sum(r["status"] == "lipinski" for r in library),
        "failed_veber": sum(r["status"] == "veber" for r in library),
        "failed_pains": sum(r["status"] == "pains" for r in library),
        "passed": len(passing),
        "clusters": len(clusters),
        "singletons": sum(len(c) == 1 for c in clusters),
    }
    picks = [
        {"compound_id": passing[c[0]]["compound_id"], "inchikey": passing[c[0]]["inchikey"], "cluster": cid, "cluster_size": len(c)}
        for cid, c in enumerate(clusters, start=1)
    ]
    lib_out = []
    for r in library:
        lib_out.append({
            **{k: v for k, v in r.items() if k != "_mol"},
            "mw": round(r["mw"], 6),
            "clogp": round(r["clogp"], 6),
            "tpsa": round(r["tpsa"], 6),
        })
    return {
        "canary": CANARY,
        "protocol": {"min_purity": MIN_PURITY, "cutoff": CUTOFF, "radius": FP_RADIUS, "bits": FP_BITS, "cutoff_gap": round(gap, 6)},
        "summary": counts,
        "offers": [{k: o[k] for k in ("supplier", "catalog_id", "outcome", "inchikey")} for o in offers],
        "library": lib_out,
        "picks": picks,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    RDLogger.DisableLog("rdApp.*")
    rng = random.Random(SEED)
    inputs = out / "inputs"
    (inputs).mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    files = make_offers(shipped_parents(), rng)
    for supplier, records in files.items():
        (inputs / f"{supplier}.sdf").write_text("".join(records))
    ref = reference(inputs)
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
