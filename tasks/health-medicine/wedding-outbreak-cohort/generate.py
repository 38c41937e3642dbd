"""Seeded generator of a wedding-reception outbreak: guest list, questionnaire, and the truth.

Writes inputs/guest_list.csv, inputs/questionnaire.csv and reference/expected.json. The
questionnaire is written as three interview teams would have keyed it: the web form in ISO
dates, phone interviewer MR month-first (M/D/YYYY), locum interviewer LC day-first (D/M/YYYY).
"""

import argparse
import csv
import json
import math
import random
from datetime import datetime, timedelta
from pathlib import Path

CANARY = "061366ff-ef30-4d22-9f10-10b569c0ddd7"
SEED = 605
MEAL = datetime(2026, 6, 5, 19, 30)
WINDOW_H = 72
ITEMS = ["bruschetta", "caesar_salad", "salmon", "chicken", "roast_potatoes", "green_beans",
         "tiramisu", "fruit_salad", "coffee", "wine"]
P_EAT = {"bruschetta": 0.8, "caesar_salad": 0.6, "salmon": 0.45, "chicken": 0.55, "roast_potatoes": 0.75,
         "green_beans": 0.5, "tiramisu": 0.55, "fruit_salad": 0.4, "wine": 0.7}
FIRST = ["Ann", "Ben", "Cara", "Dev", "Ema", "Finn", "Gail", "Hugo", "Ines", "Jack", "Kate", "Liam", "Maya", "Nils",
         "Olga", "Pete", "Rosa", "Sam", "Tara", "Umar", "Vera", "Will", "Yara", "Zane"]
LAST = ["Abbott", "Brennan", "Castro", "Doyle", "Evans", "Fraser", "Grant", "Hughes", "Iqbal", "Jensen", "Keane",
        "Lowe", "Moran", "Nolan", "Owens", "Price", "Quinn", "Reid", "Shaw", "Tobin", "Upton", "Vance", "Walsh"]


def write_date(d: datetime, team: str) -> str:
    if team == "WEB":
        return d.strftime("%Y-%m-%d")
    if team == "MR":
        return f"{d.month}/{d.day}/{d.year}"
    return f"{d.day}/{d.month}/{d.year}"


def make(out: Path) -> None:
    rng = random.Random(SEED)
    guests = []
    names = set()
    while len(guests) < 164:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name in names:
            continue
        names.add(name)
        dob = datetime(rng.randint(1950, 2008), rng.randint(1, 12), rng.randint(1, 28))
        guests.append({"guest_id": f"G{len(guests) + 101:03d}", "name": name, "dob": dob.strftime("%Y-%m-%d"),
                       "sex": rng.choice("FM"), "table": str(1 + len(guests) // 10)})
    rows, truth = [], {}
    responders = [g for g in guests if rng.random() < 0.93]
    for n, g in enumerate(responders):
        ate = {it: rng.random() < p for it, p in P_EAT.items()}
        ate["coffee"] = rng.random() < (0.85 if ate["tiramisu"] else 0.3)
        risk = 0.62 if ate["tiramisu"] else 0.05
        kind = "well"
        if rng.random() < risk:
            kind = "case"
        elif rng.random() < 0.05:
            kind = "vague"  # unwell without diarrhoea or vomiting: not a case
        if n in (7, 61):
            kind = "before"  # ill since before the reception
        if n in (33,):
            kind = "late"  # onset after the 72 h window
        onset, sym = None, {"diarrhoea": "N", "vomiting": "N", "fever": "N", "cramps": "N"}
        if kind == "case":
            onset = MEAL + timedelta(hours=math.exp(math.log(20) + 0.38 * rng.gauss(0, 1)))
            onset = min(max(onset, MEAL + timedelta(hours=6)), MEAL + timedelta(hours=66))
            sym.update(diarrhoea="Y", vomiting=rng.choice("YNN"), fever=rng.choice("YN"), cramps=rng.choice("YYN"))
        elif kind == "vague":
            onset = MEAL + timedelta(hours=rng.uniform(10, 50))
            sym.update(fever="Y", cramps=rng.choice("YN"))
        elif kind == "before":
            onset = MEAL - timedelta(hours=rng.uniform(20, 40))
            sym.update(diarrhoea="Y", cramps="Y")
        elif kind == "late":
            onset = MEAL + timedelta(hours=rng.uniform(80, 90))
            sym.update(diarrhoea="Y", vomiting="Y")
        onset = onset.replace(minute=onset.minute // 5 * 5, second=0, microsecond=0) if onset else None
        team = rng.choice(["WEB", "WEB", "MR", "LC"])
        interviewed = MEAL + timedelta(days=rng.randint(4, 14))
        missing = rng.choice(ITEMS) if rng.random() < 0.15 else None
        row = {"resp_id": "", "team": team, "interview_date": write_date(interviewed, team), "name": g["name"],
               "dob": write_date(datetime.fromisoformat(g["dob"]), team), "ill": "Y" if onset else "N",
               "onset_date": write_date(onset, team) if onset else "", "onset_time": onset.strftime("%H:%M") if onset else "",
               **sym, **{it: ("" if it == missing else "Y" if ate[it] else "N") for it in ITEMS}}
        rows.append(row)
        if kind not in ("before", "late"):
            truth[g["guest_id"]] = {"case": int(kind == "case"),
                                    "incubation_h": round((onset - MEAL).total_seconds() / 3600, 4) if kind == "case" else None,
                                    "ate": {it: row[it] for it in ITEMS}}
    # respondents who also filled in the other channel: a second, identical questionnaire
    for n in (12, 88):
        dup = dict(rows[n])
        dup["team"] = "WEB" if dup["team"] != "WEB" else "MR"
        g = next(x for x in guests if x["name"] == dup["name"])
        dup["dob"] = write_date(datetime.fromisoformat(g["dob"]), dup["team"])
        for k in ("interview_date", "onset_date"):
            if dup[k]:
                dup[k] = write_date(parse(rows[n][k], rows[n]["team"]), dup["team"])
        rows.append(dup)
    rng.shuffle(rows)
    for i, r in enumerate(rows):
        r["resp_id"] = f"R{2000 + 7 * i}"
    rows.sort(key=lambda r: r["resp_id"])

    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    with open(out / "inputs" / "guest_list.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["guest_id", "name", "dob", "sex", "table"], lineterminator="\n")
        w.writeheader()
        w.writerows(guests)
    with open(out / "inputs" / "questionnaire.csv", "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    ref = {"canary": CANARY, "meal_start": MEAL.isoformat(), "cohort": dict(sorted(truth.items()))}
    (out / "reference" / "truth.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


def parse(text: str, team: str) -> datetime:
    if team == "WEB":
        return datetime.fromisoformat(text)
    a, b, y = (int(x) for x in text.split("/"))
    return datetime(y, a, b) if team == "MR" else datetime(y, b, a)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).parent))
    make(Path(ap.parse_args().out))
