"""Seeded generator of inputs/ and reference/ for fixed-asset-rollforward.

    python3 generate.py --out DIR     # writes DIR/inputs/ and DIR/reference/

The register mixes random assets with planted boundary cases (the 15th-of-month rule on both
ends, a life ending inside the year, a disposal before any FY depreciation, land sold at a
gain). The reference is computed month by month, independently of any spreadsheet function.
"""

import argparse
import csv
import io
import json
import random
from datetime import date
from pathlib import Path

SEED = 20250630
CANARY = "e51e4c27-d50e-494c-bf9c-5ab196a367ef"
FY_START = date(2024, 7, 1)
FY_END = date(2025, 6, 30)
CATEGORIES = ["Land", "Buildings", "Machinery & equipment", "Vehicles", "Computer equipment",
              "Furniture & fixtures"]
COLUMNS = ["asset_id", "description", "category", "in_service_date", "cost", "salvage_value",
           "useful_life_years", "method", "disposal_date", "disposal_proceeds"]
SCHEDULE_FIELDS = ["opening_cost", "additions", "disposals_cost", "opening_accumulated",
                   "fy_depreciation", "disposals_accumulated", "closing_accumulated",
                   "closing_nbv", "gain_loss"]

DESCRIPTIONS = {
    "Land": ["Parcel 14 Harbor Rd (plant site)", "Parcel 16 Harbor Rd (parking)",
             "Lot 7 Ridgeview Industrial Park"],
    "Buildings": ["Main plant building", "Warehouse B", "Office annex", "Paint shop roof replacement",
                  "Loading dock extension", "Warehouse B mezzanine"],
    "Machinery & equipment": ["CNC lathe Haas ST-20", "CNC mill Haas VF-2", "Hydraulic press 150t",
                              "Powder coating line", "Air compressor Atlas GA30", "Band saw DoALL C-916",
                              "Laser cutter Trumpf 3030", "Forklift Toyota 8FGU25", "Welding cell robot",
                              "Coordinate measuring machine", "Injection moulder Engel 200",
                              "Surface grinder Okamoto", "Shot blast cabinet", "Overhead crane 5t",
                              "Deburring machine", "Parts washer", "Tool crib carousel",
                              "Press brake Amada HG", "EDM wire cutter", "Dust collection system",
                              "Pallet racking system", "Plasma table Hypertherm"],
    "Vehicles": ["Ford Transit 250 van", "Ford F-150 pickup", "Isuzu NPR box truck",
                 "Toyota Camry (sales)", "Chevrolet Silverado 2500", "Ram ProMaster van",
                 "Ford Escape (service)", "Freightliner M2 flatbed", "Honda CR-V (sales)",
                 "Nissan NV200 van", "Ford Ranger pickup", "Hino 195 stake truck",
                 "Toyota Tacoma pickup"],
    "Computer equipment": ["Dell PowerEdge R750 server", "Engineering workstations (6)",
                           "Laptops, sales team (8)", "Network switches Cisco 9300",
                           "Firewall appliance", "ERP server upgrade", "NAS backup appliance",
                           "Shop-floor terminals (10)", "CAD workstations (4)", "Laptops, finance (5)",
                           "Wireless access points", "Video conferencing system",
                           "UPS and rack", "Label printers (6)", "Tablets, field service (12)"],
    "Furniture & fixtures": ["Office furniture, annex", "Conference room furniture",
                             "Break room fit-out", "Reception desk and seating",
                             "Workbenches, assembly (20)", "Filing systems", "Cafeteria tables",
                             "Ergonomic chairs (40)", "Shelving, stores", "Training room furniture"],
}


def month_index(d: date) -> int:
    return d.year * 12 + d.month - 1


def dep_start(d: date) -> int:
    """First depreciated month: the in-service month if on or before the 15th, else the next."""
    return month_index(d) + (1 if d.day > 15 else 0)


def dep_last(disposal: date | None) -> int | None:
    """Last depreciated month before a disposal: the month before if disposed on or before the
    15th, else the disposal month itself."""
    if disposal is None:
        return None
    return month_index(disposal) - (1 if disposal.day <= 15 else 0)


def monthly_charges(cost: float, salvage: float, life_months: int, method: str) -> list[float]:
    """Charges for months 1..L of the asset's life."""
    if method == "NONE":
        return []
    if method == "SL":
        return [(cost - salvage) / life_months] * life_months
    nbv, out = cost, []
    for m in range(life_months):
        ddb = min(nbv * 2 / life_months, max(nbv - salvage, 0.0))
        sl = (nbv - salvage) / (life_months - m)
        charge = max(ddb, sl)
        out.append(charge)
        nbv -= charge
    return out


def asset_values(a: dict) -> dict:
    cost, salvage = a["cost"], a["salvage_value"]
    life_m = int(a["useful_life_years"] * 12) if a["method"] != "NONE" else 0
    charges = monthly_charges(cost, salvage, life_m, a["method"])
    start = dep_start(a["in_service_date"])
    last = dep_last(a["disposal_date"])
    fy_s, fy_e = month_index(FY_START), month_index(FY_END)

    def dep_between(first: int, final: int) -> float:
        """Depreciation for calendar months first..final (inclusive), within life."""
        total = 0.0
        for k, charge in enumerate(charges):
            m = start + k
            if first <= m <= final and (last is None or m <= last):
                total += charge
        return total

    opening_asset = a["in_service_date"] < FY_START
    disposed = a["disposal_date"] is not None
    opening_acc = dep_between(-10**9, fy_s - 1) if opening_asset else 0.0
    fy_dep = dep_between(fy_s, fy_e)
    acc_at_disposal = opening_acc + fy_dep if disposed else 0.0
    v = {
        "opening_cost": cost if opening_asset else 0.0,
        "additions": 0.0 if opening_asset else cost,
        "disposals_cost": cost if disposed else 0.0,
        "opening_accumulated": opening_acc,
        "fy_depreciation": fy_dep,
        "disposals_accumulated": acc_at_disposal,
        "closing_accumulated": opening_acc + fy_dep - acc_at_disposal,
        "gain_loss": (a["disposal_proceeds"] - (cost - acc_at_disposal)) if disposed else 0.0,
    }
    v["closing_nbv"] = v["opening_cost"] + v["additions"] - v["disposals_cost"] - v["closing_accumulated"]
    return v


def rand_date(rng: random.Random, lo: date, hi: date) -> date:
    return date.fromordinal(rng.randint(lo.toordinal(), hi.toordinal()))


def money(rng: random.Random, lo: float, hi: float) -> float:
    return round(rng.uniform(lo, hi), 2)


def build_register(rng: random.Random) -> list[dict]:
    """Assets with random attributes, then planted boundary cases overwrite a few fields."""
    profiles = {
        # category: (count, cost range, life choices, method weights, salvage fraction range)
        "Land": (3, (180_000, 900_000), [0], {"NONE": 1}, (0, 0)),
        "Buildings": (6, (250_000, 2_400_000), [25, 39, 40], {"SL": 1}, (0.0, 0.10)),
        "Machinery & equipment": (22, (18_000, 420_000), [7, 10, 12], {"SL": 1, "DDB": 1}, (0.0, 0.10)),
        "Vehicles": (13, (26_000, 145_000), [5, 6], {"DDB": 3, "SL": 1}, (0.10, 0.20)),
        "Computer equipment": (15, (4_500, 95_000), [3, 4, 5], {"SL": 1}, (0.0, 0.0)),
        "Furniture & fixtures": (10, (6_000, 80_000), [7, 10], {"SL": 1}, (0.0, 0.05)),
    }
    assets = []
    for cat in CATEGORIES:
        count, (clo, chi), lives, methods, (slo, shi) = profiles[cat]
        names = DESCRIPTIONS[cat]
        for i in range(count):
            method = rng.choices(sorted(methods), weights=[methods[k] for k in sorted(methods)])[0]
            life = rng.choice(lives) if method != "NONE" else 0
            cost = money(rng, clo, chi)
            salvage = round(cost * rng.uniform(slo, shi) / 100) * 100 if shi > 0 else 0.0
            # Most assets are mid-life; about one in five is older and fully depreciated.
            earliest = date(2004, 1, 1) if cat in ("Land", "Buildings") else date(2016, 1, 1)
            if life and rng.random() < 0.8:
                earliest = max(earliest, date.fromordinal(date(2024, 6, 30).toordinal() - int(life * 365 * 0.95)))
            assets.append({
                "description": names[i % len(names)],
                "category": cat,
                "in_service_date": rand_date(rng, earliest, date(2024, 6, 30)),
                "cost": cost,
                "salvage_value": float(salvage),
                "useful_life_years": life,
                "method": method,
                "disposal_date": None,
                "disposal_proceeds": None,
            })

    taken: set[int] = set()

    def pick(cat: str, method: str | None = None) -> dict:
        pool = [a for a in assets if a["category"] == cat and id(a) not in taken
                and (method is None or a["method"] == method)]
        a = rng.choice(pool)
        taken.add(id(a))
        return a

    # Additions during FY2025, two of them straddling the 15th-of-month rule.
    for cat, method, d in [("Machinery & equipment", "DDB", date(2024, 7, 15)),
                           ("Machinery & equipment", "SL", date(2024, 7, 16)),
                           ("Computer equipment", "SL", date(2025, 2, 3)),
                           ("Vehicles", "DDB", date(2024, 10, 21)),
                           ("Buildings", "SL", date(2024, 12, 9)),
                           ("Furniture & fixtures", "SL", date(2025, 3, 28)),
                           ("Computer equipment", "SL", date(2025, 6, 20)),
                           ("Vehicles", "SL", date(2025, 4, 15))]:
        pick(cat, method)["in_service_date"] = d
    # In service before the year starts but first depreciated in July 2024.
    pick("Machinery & equipment", "SL")["in_service_date"] = date(2024, 6, 16)
    # Lives that end inside FY2025: depreciation must stop at salvage.
    a = pick("Vehicles", "DDB")
    a.update(in_service_date=date(2019, 10, 3), useful_life_years=5)
    a = pick("Computer equipment", "SL")
    a.update(in_service_date=date(2021, 11, 22), useful_life_years=3)
    a = pick("Machinery & equipment", "DDB")
    a.update(in_service_date=date(2014, 12, 2), useful_life_years=10)
    # Disposals during FY2025, at a gain and at a loss, on both sides of the 15th.
    for cat, method, d, frac in [("Vehicles", "DDB", date(2024, 7, 10), 0.55),
                                 ("Vehicles", "DDB", date(2025, 1, 16), 1.35),
                                 ("Machinery & equipment", "SL", date(2024, 11, 15), 0.40),
                                 ("Machinery & equipment", "DDB", date(2025, 3, 31), 0.0),
                                 ("Computer equipment", "SL", date(2024, 9, 30), 0.05),
                                 ("Furniture & fixtures", "SL", date(2025, 5, 2), 0.25),
                                 ("Land", "NONE", date(2025, 2, 14), 1.6)]:
        a = pick(cat, method)
        if method == "NONE":
            a["in_service_date"] = rand_date(rng, date(2006, 1, 1), date(2015, 12, 31))
        else:
            # Mid-life at disposal, so that depreciation up to the disposal month matters.
            span = a["useful_life_years"] * 365
            a["in_service_date"] = rand_date(rng, date.fromordinal(d.toordinal() - int(span * 0.8)),
                                             date.fromordinal(d.toordinal() - int(span * 0.25)))
        a["disposal_date"] = d
        nbv_guess = a["cost"] * (0.35 if method != "NONE" else 1.0)
        a["disposal_proceeds"] = round(nbv_guess * frac, -2) if frac else 0.0
    assets.sort(key=lambda a: (a["in_service_date"], a["category"], a["cost"]))
    for i, a in enumerate(assets):
        a["asset_id"] = f"FA-{1001 + i}"
    return assets


def register_csv(assets: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for a in assets:
        w.writerow([
            a["asset_id"], a["description"], a["category"], a["in_service_date"].isoformat(),
            f"{a['cost']:.2f}", f"{a['salvage_value']:.2f}",
            a["useful_life_years"] if a["method"] != "NONE" else "", a["method"],
            a["disposal_date"].isoformat() if a["disposal_date"] else "",
            f"{a['disposal_proceeds']:.2f}" if a["disposal_date"] else "",
        ])
    return buf.getvalue()


def r6(x: float) -> float:
    return round(x + 0.0, 6)


def rollforward(assets: list[dict], values: dict[str, dict]) -> dict:
    rf = {}
    for cat in [*CATEGORIES, "Total"]:
        rows = [values[a["asset_id"]] for a in assets if cat in ("Total", a["category"])]
        rf[cat] = {f: r6(sum(v[f] for v in rows)) for f in SCHEDULE_FIELDS if f != "gain_loss"}
    return rf


def groups(assets: list[dict]) -> dict[str, list[str]]:
    """Asset ids per trap, for checks that name the convention an agent got wrong."""
    g = {"straight_line_full_year": [], "declining_balance_full_year": [], "additions": [],
         "disposals": [], "life_ends_during_fy": [], "fully_depreciated_before_fy": [], "land": []}
    for a in assets:
        life_m = a["useful_life_years"] * 12
        last_month = dep_start(a["in_service_date"]) + life_m - 1
        if a["disposal_date"] is not None:
            g["disposals"].append(a["asset_id"])
        elif a["in_service_date"] >= FY_START:
            g["additions"].append(a["asset_id"])
        elif a["method"] == "NONE":
            g["land"].append(a["asset_id"])
        elif last_month < month_index(FY_START):
            g["fully_depreciated_before_fy"].append(a["asset_id"])
        elif last_month <= month_index(FY_END):
            g["life_ends_during_fy"].append(a["asset_id"])
        elif a["method"] == "SL":
            g["straight_line_full_year"].append(a["asset_id"])
        elif a["method"] == "DDB":
            g["declining_balance_full_year"].append(a["asset_id"])
    return g


def salvage_edit(assets: list[dict]) -> dict:
    """The second live-model probe: salvage and proceeds of every asset each times a factor of
    its own (cost kept), and the values the policy gives then. A pasted value times a ratio of
    the cost (=Register!E5*0.0541) follows the first probe, which scales the three amounts of a
    row alike, but moves where the policy does not (or stays where it moves) under this one."""
    factors, values = {}, {}
    for i, a in enumerate(sorted(assets, key=lambda a: a["asset_id"])):
        k = {"cost": 1.0, "salvage_value": 0.3 + 0.005 * i, "disposal_proceeds": 2.5 - 0.0125 * i}
        b = dict(a, salvage_value=a["salvage_value"] * k["salvage_value"])
        if a["disposal_proceeds"] is not None:
            b["disposal_proceeds"] = a["disposal_proceeds"] * k["disposal_proceeds"]
        factors[a["asset_id"]] = k
        values[a["asset_id"]] = {f: r6(x) for f, x in asset_values(b).items()}
    return {"factors": factors, "values": values}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    assets = build_register(rng)
    values = {a["asset_id"]: asset_values(a) for a in assets}
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "inputs" / "asset_register.csv").write_text(register_csv(assets))

    # The live-model probe: the grader raises two costs in the agent's Register sheet and
    # expects these recalculated values.
    g = groups(assets)
    probe_ids = [g["declining_balance_full_year"][0], g["straight_line_full_year"][-1]]
    probed = []
    for a in assets:
        b = dict(a)
        if a["asset_id"] in probe_ids:
            b["cost"] = round(a["cost"] * 1.25 + 1000, 2)
        probed.append(b)
    probed_values = {a["asset_id"]: asset_values(a) for a in probed}
    probe = {
        "new_cost": {i: next(a["cost"] for a in probed if a["asset_id"] == i) for i in probe_ids},
        "fy_depreciation": {i: r6(probed_values[i]["fy_depreciation"]) for i in probe_ids},
        "total_fy_depreciation": r6(sum(v["fy_depreciation"] for v in probed_values.values())),
        "total_closing_nbv": r6(sum(v["closing_nbv"] for v in probed_values.values())),
    }
    rf = rollforward(assets, values)
    expected = {
        "canary": CANARY,
        "fy_start": FY_START.isoformat(),
        "fy_end": FY_END.isoformat(),
        "assets": {i: {k: r6(x) for k, x in v.items()} for i, v in sorted(values.items())},
        "categories": CATEGORIES,
        "rollforward": rf,
        "groups": g,
        "summary": {
            "depreciation_expense": rf["Total"]["fy_depreciation"],
            "closing_cost": r6(rf["Total"]["opening_cost"] + rf["Total"]["additions"]
                               - rf["Total"]["disposals_cost"]),
            "closing_accumulated_depreciation": rf["Total"]["closing_accumulated"],
            "closing_nbv": rf["Total"]["closing_nbv"],
            "net_gain_loss_on_disposals": r6(sum(v["gain_loss"] for v in values.values())),
        },
        "probe": probe,
        "salvage_edit": salvage_edit(assets),
    }
    (out / "reference" / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
