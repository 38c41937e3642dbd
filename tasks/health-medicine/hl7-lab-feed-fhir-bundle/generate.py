"""Seeded generator of an HL7 v2.5.1 interface capture (ADT and ORU) and its expected FHIR content.

Writes inputs/feed.hl7, inputs/lab_code_map.csv and reference/expected.json.
Times are generated in UTC and written as New York local time, with the offset
(ADT, EASTLAB) or without it (WESTLAB); the feed spans the end of daylight saving time
(2026-11-01 06:00 UTC).
"""

import argparse
import csv
import json
import random
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

CANARY = "d24d1f4f-2d05-4b53-a759-2e4be71dae6f"
SEED = 20261101
DST_END = datetime(2026, 11, 1, 6, 0, tzinfo=UTC)
START = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)

# local code, name, LOINC, display, UCUM, molar mass, normal range (canonical), panel
TESTS = [
    ("GLU", "Glucose", "2345-7", "Glucose [Mass/volume] in Serum or Plasma", "mg/dL", "180.156", (70, 99), "BMP"),
    ("NA", "Sodium", "2951-2", "Sodium [Moles/volume] in Serum or Plasma", "mmol/L", "", (135, 145), "BMP"),
    ("K", "Potassium", "2823-3", "Potassium [Moles/volume] in Serum or Plasma", "mmol/L", "", (3.5, 5.1), "BMP"),
    ("CREAT", "Creatinine", "2160-0", "Creatinine [Mass/volume] in Serum or Plasma", "mg/dL", "113.12", (0.6, 1.3), "BMP"),
    ("HGB", "Hemoglobin", "718-7", "Hemoglobin [Mass/volume] in Blood", "g/dL", "", (12.0, 17.0), "CBC"),
    ("WBC", "WBC", "6690-2", "Leukocytes [#/volume] in Blood by Automated count", "10*3/uL", "", (4.0, 11.0), "CBC"),
    ("PLT", "Platelets", "777-3", "Platelets [#/volume] in Blood by Automated count", "10*3/uL", "", (150, 400), "CBC"),
]
PANELS = {
    "BMP": ("Basic metabolic panel", "51990-0", "Basic metabolic panel - Blood"),
    "CBC": ("Complete blood count", "58410-2", "CBC panel - Blood by Automated count"),
}
# what each lab writes in OBX-6, and the factor from that unit to the canonical one
EAST_UNITS = {"GLU": ("mg/dL", 1.0), "NA": ("mmol/L", 1.0), "K": ("mmol/L", 1.0), "CREAT": ("mg/dL", 1.0),
              "HGB": ("g/dL", 1.0), "WBC": ("K/uL", 1.0), "PLT": ("K/uL", 1.0)}
WEST_UNITS = {"GLU": ("mmol/L", 180.156 / 10), "NA": ("mmol/L", 1.0), "K": ("mmol/L", 1.0),
              "CREAT": ("umol/L", 113.12 / 1e4), "HGB": ("g/L", 0.1), "WBC": ("10*3/uL", 1.0),
              "PLT": ("10*3/uL", 1.0)}
SENT_DECIMALS = {("EAST", "GLU"): 0, ("EAST", "CREAT"): 2, ("WEST", "GLU"): 1, ("WEST", "CREAT"): 0,
                 ("EAST", "HGB"): 1, ("WEST", "HGB"): 0, "NA": 0, "K": 1, "WBC": 1, "PLT": 0}
CANON_MEAN = {"GLU": (110, 35), "NA": (139, 4), "K": (4.2, 0.6), "CREAT": (1.1, 0.45), "HGB": (12.8, 2.0),
              "WBC": (8.5, 3.5), "PLT": (240, 80)}

FAMILY = ["GARCIA", "NGUYEN", "OKAFOR", "MULLER", "ROSSI", "KOWALSKI", "SATO", "HASSAN", "BROWN", "SILVA",
          "PATEL", "JOHANSSON", "DUBOIS", "KIM", "MURPHY", "COHEN", "ALVAREZ", "NOVAK", "IVANOVA", "WALSH",
          "MENDES", "FISCHER", "OCONNOR", "TANAKA", "LOPEZ", "SCHMIDT", "BAKER", "RAHMAN"]
GIVEN_F = ["MARIA", "LINH", "ADA", "ANNA", "GIULIA", "EWA", "YUKI", "LAYLA", "EMMA", "ANA", "PRIYA", "SARA", "CLAIRE", "MIN"]
GIVEN_M = ["JOSE", "MINH", "CHIDI", "LUKAS", "MARCO", "PIOTR", "KENJI", "OMAR", "NOAH", "JOAO", "RAVI", "ERIK", "HUGO", "JUN"]
STREETS = ["Maple Ave", "Hudson St", "Lark St", "Central Ave", "State St", "Delaware Ave", "Madison Ave", "Quail St"]
CITIES = [("Albany", "12203"), ("Troy", "12180"), ("Schenectady", "12305"), ("Delmar", "12054")]
NOTES = [
    ("Specimen slightly hemolyzed\\.br\\Potassium may be falsely elevated",
     "Specimen slightly hemolyzed\nPotassium may be falsely elevated"),
    ("Result called to RN J. Diaz \\T\\ read back verified", "Result called to RN J. Diaz & read back verified"),
    ("Drawn above IV line \\F\\ recollect advised", "Drawn above IV line | recollect advised"),
    ("Ratio reported as A\\S\\B per lab SOP", "Ratio reported as A^B per lab SOP"),
    ("Lipemic sample\\.br\\Ultracentrifuged before analysis", "Lipemic sample\nUltracentrifuged before analysis"),
]


def local(t: datetime) -> datetime:
    return t.astimezone(timezone(timedelta(hours=-4 if t < DST_END else -5)))


def ts(t: datetime, offset: bool = True, seconds: bool = False) -> str:
    lt = local(t)
    s = lt.strftime("%Y%m%d%H%M%S" if seconds else "%Y%m%d%H%M")
    if offset:
        s += lt.strftime("%z")
    return s


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fmt(v: float, d: int) -> str:
    return f"{v:.{d}f}"


def seg(*fields: str) -> str:
    return "|".join(fields)


class Feed:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.msgs: list[tuple[datetime, str]] = []  # (arrival time, text)
        self.n = 0

    def msh(self, app: str, fac: str, typ: str, t: datetime) -> tuple[str, str]:
        self.n += 1
        ctl = f"{app[:3]}{self.n:05d}"
        return ctl, seg("MSH", "^~\\&", app, fac, "LASTEXAM", "HIE", ts(t, seconds=True), "", typ, ctl, "P", "2.5.1")

    def add(self, arrival: datetime, segs: list[str]) -> None:
        self.msgs.append((arrival, "\r".join(segs) + "\r"))


def pid(p: dict) -> str:
    addr = f"{p['line'][0]}^{p['line'][1] if len(p['line']) > 1 else ''}^{p['city']}^NY^{p['zip']}"
    return seg("PID", "1", "", f"{p['mrn']}^^^MAINHOSP^MR", "", f"{p['family']}^{p['given']}",
               "", p["dob"].replace("-", ""), p["sex"], "", "", addr)


def pv1(cls: str, visit: str, admit: datetime | None = None, disch: datetime | None = None) -> str:
    f = ["PV1", "1", cls] + [""] * 43
    f[3] = "W3^301^A" if cls == "I" else "ED^12"
    f[19] = f"{visit}^^^MAINHOSP^VN"
    if admit is not None:
        f[44] = ts(admit)
    if disch is not None:
        f[45] = ts(disch)
    return "|".join(f)


def make(out: Path) -> None:
    rng = random.Random(SEED)
    feed = Feed(rng)
    patients: dict[str, dict] = {}
    encounters: dict[str, dict] = {}
    reports: dict[str, dict] = {}
    observations: dict[str, dict] = {}
    dup_candidates: list[tuple[datetime, list[str]]] = []
    npat = 28
    for i in range(npat):
        sex = "F" if i % 2 == 0 else "M"
        p = {"mrn": f"{700100 + 37 * i}", "family": FAMILY[i], "given": (GIVEN_F if sex == "F" else GIVEN_M)[i // 2 % 14],
             "dob": f"{rng.randint(1935, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "sex": sex,
             "line": [f"{rng.randint(2, 480)} {rng.choice(STREETS)}"], "city": "", "zip": ""}
        p["city"], p["zip"] = rng.choice(CITIES)
        if i == 5:
            p["line"] = [f"{rng.randint(2, 480)} {rng.choice(STREETS)}", "Rear \\T\\ Side Entrance"]
        visit = f"V{9300 + 11 * i}"
        cls = "I" if i % 4 else "E"
        admit = START + timedelta(minutes=rng.randint(0, 60 * 40))
        if i in (9, 14, 21):  # admitted in the hour repeated at the end of DST
            admit = DST_END - timedelta(minutes=rng.randint(5, 55)) + timedelta(hours=rng.choice([0, 1]) - 0)
        ctl, msh = feed.msh("REGADT", "MAINHOSP", "ADT^A01^ADT_A01", admit + timedelta(minutes=2))
        segs = [msh, seg("EVN", "A01", ts(admit)), pid(p), pv1(cls, visit, admit)]
        feed.add(admit + timedelta(minutes=2), segs)
        if i in (3, 17):
            dup_candidates.append((admit + timedelta(hours=3), segs))
        current = dict(p, line=list(p["line"]))
        updates: list[tuple[datetime, dict]] = []
        if i % 3 == 0 or i in (10, 20, 26):
            upd = dict(current, line=list(current["line"]))
            if i % 2 == 0:
                upd["family"] = FAMILY[(i + 7) % len(FAMILY)]
            else:
                upd["line"] = [f"{rng.randint(2, 480)} {rng.choice(STREETS)}"]
                upd["city"], upd["zip"] = rng.choice(CITIES)
            if i == 12:
                upd["dob"] = p["dob"][:8] + f"{(int(p['dob'][8:]) % 27) + 1:02d}"
            updates.append((admit + timedelta(hours=rng.randint(2, 20)), upd))
        if i in (10, 20, 26):
            # two corrections around the repeated hour; the later event arrives first
            second = dict(updates[-1][1], line=[f"{rng.randint(2, 480)} {rng.choice(STREETS)}"])
            second["city"], second["zip"] = rng.choice(CITIES)
            older = DST_END - timedelta(minutes=rng.randint(8, 25))     # 01:35-01:52 EDT
            newer = DST_END + timedelta(minutes=rng.randint(5, 20))     # 01:05-01:20 EST
            updates = [(older, updates[-1][1]), (newer, second)]
            arrivals = [newer + timedelta(minutes=3), newer + timedelta(minutes=41)]
            for (evt, u), arr in zip(sorted(updates, key=lambda x: -x[0].timestamp()), arrivals, strict=True):
                ctl, msh = feed.msh("REGADT", "MAINHOSP", "ADT^A08^ADT_A01", arr)
                feed.add(arr, [msh, seg("EVN", "A08", ts(evt)), pid(u), pv1(cls, visit)])
        else:
            for evt, u in updates:
                ctl, msh = feed.msh("REGADT", "MAINHOSP", "ADT^A08^ADT_A01", evt + timedelta(minutes=1))
                feed.add(evt + timedelta(minutes=1), [msh, seg("EVN", "A08", ts(evt)), pid(u), pv1(cls, visit)])
        final = max(updates, key=lambda x: x[0])[1] if updates else current
        patients[p["mrn"]] = {"family": final["family"], "given": final["given"], "birthDate": final["dob"],
                              "gender": {"F": "female", "M": "male"}[final["sex"]],
                              "line": [x.replace("\\T\\", "&") for x in final["line"]],
                              "city": final["city"], "state": "NY", "postalCode": final["zip"]}
        disch = None
        if i % 5 != 2 and i not in (10, 20, 26):  # still in house: no A03 after the late updates
            disch = max(admit + timedelta(hours=rng.randint(30, 70)), max(u[0] for u in updates) + timedelta(hours=2)
                        if updates else admit)
            ctl, msh = feed.msh("REGADT", "MAINHOSP", "ADT^A03^ADT_A03", disch + timedelta(minutes=4))
            feed.add(disch + timedelta(minutes=4), [msh, seg("EVN", "A03", ts(disch)), pid(final), pv1(cls, visit, admit, disch)])
        encounters[visit] = {"mrn": p["mrn"], "class": {"I": "IMP", "E": "EMER"}[cls],
                             "status": "finished" if disch else "in-progress", "start": iso(admit),
                             "end": iso(disch) if disch else None}

        lab = "WEST" if i % 3 == 1 else "EAST"
        units = WEST_UNITS if lab == "WEST" else EAST_UNITS
        for k in range(rng.randint(2, 3)):
            coll = admit + timedelta(minutes=30 + 600 * k + rng.randint(0, 300))
            if lab == "WEST" and DST_END - timedelta(hours=1) <= coll < DST_END + timedelta(hours=1):
                coll += timedelta(hours=2)  # no unlabeled times inside the repeated hour
            panel = "BMP" if k % 2 == 0 else "CBC"
            placer, filler = f"P{40000 + 97 * i + k}", f"{lab[0]}L{810000 + 131 * i + 7 * k}"
            resulted = coll + timedelta(minutes=rng.randint(35, 110))
            rows = []
            for code, _name, loinc, _disp, ucum, _mw, (lo, hi), pnl in TESTS:
                if pnl != panel:
                    continue
                mu, sd = CANON_MEAN[code]
                canon = max(mu + sd * rng.gauss(0, 1), mu * 0.2)
                unit, factor = units[code]
                dec = SENT_DECIMALS.get((lab, code), SENT_DECIMALS.get(code, 1))
                sent = fmt(canon / factor, dec)
                value = float(sent) * factor
                flag = "H" if value > hi else "L" if value < lo else "N"
                rng_txt = f"{fmt(lo / factor, dec if dec else 0)}-{fmt(hi / factor, dec if dec else 0)}"
                note = rng.choice(NOTES) if rng.random() < 0.12 else None
                rows.append([code, unit, sent, rng_txt, flag, note])
                observations[f"{filler}|{loinc}"] = {
                    "value": round(value, 6), "unit": ucum, "low": round(float(rng_txt.split("-")[0]) * factor, 6),
                    "high": round(float(rng_txt.split("-")[1]) * factor, 6), "interpretation": flag,
                    "status": "final", "effective": iso(coll), "note": note[1] if note else None}
            pmeta = PANELS[panel]
            reports[filler] = {"mrn": p["mrn"], "visit": visit, "code": pmeta[1], "status": "final",
                               "effective": iso(coll),
                               "observations": sorted(k2.split("|")[1] for k2 in observations if k2.startswith(filler + "|"))}

            def oru(rows: list[list], status: str, when: datetime, fixed_j: int = -1) -> list[str]:
                ctl, msh = feed.msh(f"{lab}LAB", f"{lab}LAB", "ORU^R01^ORU_R01", when)
                off = lab == "EAST"
                out = [msh, pid(final if when > max([u[0] for u in updates], default=admit) else p),
                       pv1(cls, visit), seg("ORC", "RE", placer, filler),
                       seg("OBR", "1", placer, filler, f"{panel}^{pmeta[0]}^L", "", "", ts(coll, off), "", "", "", "", "",
                           "", "", "", "", "", "", "", "", "", ts(when, off), "", "", status)]
                for j, (code, unit, sent, rng_txt, flag, note) in enumerate(rows, 1):
                    name = next(t[1] for t in TESTS if t[0] == code)
                    st = "C" if j - 1 == fixed_j else "F"
                    out.append(seg("OBX", str(j), "NM", f"{code}^{name}^L", "", sent, unit, rng_txt, flag, "", "",
                                   st, "", "", ts(coll, off)))
                    if note:
                        out.append(seg("NTE", "1", "L", note[0]))
                return out

            segs = oru(rows, "F", resulted)
            feed.add(resulted + timedelta(minutes=1), segs)
            if (i, k) in ((4, 0), (11, 1), (16, 0), (25, 0)):
                dup_candidates.append((resulted + timedelta(minutes=rng.randint(20, 90)), segs))
            if (i, k) in ((2, 0), (7, 1), (19, 0), (22, 0)):
                j = rng.randrange(len(rows))
                code, unit, sent, rng_txt, _flag, _note = rows[j]
                loinc = next(t[2] for t in TESTS if t[0] == code)
                lo, hi = next(t[6] for t in TESTS if t[0] == code)
                factor = units[code][1]
                dec = SENT_DECIMALS.get((lab, code), SENT_DECIMALS.get(code, 1))
                new_sent = fmt(float(sent) * rng.choice([0.62, 0.71, 1.38, 1.52]), dec)
                value = float(new_sent) * factor
                flag = "H" if value > hi else "L" if value < lo else "N"
                fixed = [list(r) for r in rows]
                fixed[j][2], fixed[j][4] = new_sent, flag
                when = resulted + timedelta(hours=rng.randint(2, 6))
                feed.add(when, oru(fixed, "C", when, j))
                o = observations[f"{filler}|{loinc}"]
                o.update(value=round(value, 6), interpretation=flag, status="corrected")
                reports[filler]["status"] = "corrected"
    for arrival, segs in dup_candidates:  # interface-engine resends: same control id, same content
        feed.add(arrival, segs)

    feed.msgs.sort(key=lambda m: m[0])
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    with open(out / "inputs" / "feed.hl7", "w", newline="") as f:
        f.write("\n".join(m[1] for m in feed.msgs) + "\n")
    with open(out / "inputs" / "lab_code_map.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["local_code", "local_name", "loinc", "loinc_display", "ucum_unit", "molar_mass_g_per_mol"])
        for code, name, loinc, disp, ucum, mw, _r, _p in TESTS:
            w.writerow([code, name, loinc, disp, ucum, mw])
        for code, (name, loinc, disp) in PANELS.items():
            w.writerow([code, name, loinc, disp, "", ""])
    ref = {"canary": CANARY, "patients": dict(sorted(patients.items())), "encounters": dict(sorted(encounters.items())),
           "reports": dict(sorted(reports.items())), "observations": dict(sorted(observations.items()))}
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).parent))
    make(Path(ap.parse_args().out))
