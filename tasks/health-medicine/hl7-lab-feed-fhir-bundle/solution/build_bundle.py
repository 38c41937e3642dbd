"""Oracle: HL7 v2 capture -> FHIR R4 transaction Bundle, with hl7 (parsing) and fhir.resources (models)."""

import csv
import sys
import uuid
from datetime import datetime
from zoneinfo import ZoneInfo

import hl7
from fhir.resources.R4B.bundle import Bundle

SITE_TZ = ZoneInfo("America/New_York")
MRN_SYS = "urn:oid:2.16.840.1.113883.3.7204.1.1"
VISIT_SYS = "urn:oid:2.16.840.1.113883.3.7204.1.2"
FILLER_SYS = "urn:oid:2.16.840.1.113883.3.7204.1.3"
LOINC, UCUM = "http://loinc.org", "http://unitsofmeasure.org"
INTERP = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"
ACT = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
NS = uuid.UUID("6f1c1d1e-9a43-4b59-8d8e-0c3a5b2d7e10")
# unit spellings that mean the canonical UCUM unit
SAME = {("K/uL", "10*3/uL"), ("10*3/uL", "10*3/uL")}


def when(value: str) -> datetime:
    t = hl7.parse_datetime(value)
    return t.replace(tzinfo=SITE_TZ) if t.tzinfo is None else t


def fhir_time(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def factor(sent: str, canon: str, mw: str) -> float:
    if sent == canon or (sent, canon) in SAME:
        return 1.0
    if (sent, canon) == ("g/L", "g/dL"):
        return 0.1
    mass = float(mw)  # g/mol
    per_litre_mg = {"mmol/L": mass, "umol/L": mass / 1000}[sent]
    return per_litre_mg / 10 if canon == "mg/dL" else per_litre_mg


def urn(*key: str) -> str:
    return f"urn:uuid:{uuid.uuid5(NS, '|'.join(key))}"


def main(feed_path: str, map_path: str, out_path: str) -> None:
    with open(map_path, newline="") as f:
        cmap = {r["local_code"]: r for r in csv.DictReader(f)}
    with open(feed_path, newline="") as f:
        raw = f.read()
    seen_ctl: set[str] = set()
    demo: dict[str, tuple[datetime, dict]] = {}
    enc: dict[str, dict] = {}
    reports: dict[str, dict] = {}
    for text in raw.replace("\r\n", "\n").split("\n"):
        text = text.strip("\n")
        if not text.strip():
            continue
        m = hl7.parse(text)
        ctl = str(m.segment("MSH")[10])
        if ctl in seen_ctl:
            continue
        seen_ctl.add(ctl)
        typ = str(m.segment("MSH")[9][0][0])
        p = m.segment("PID")
        mrn = str(p[3][0][0])
        v = m.segment("PV1")
        visit = str(v[19][0][0])
        if typ == "ADT":
            evt = when(str(m.segment("EVN")[2]))
            addr = p[11][0]
            lines = [m.unescape(str(addr[0]))] + ([m.unescape(str(addr[1]))] if str(addr[1]) else [])
            d = {"family": m.unescape(str(p[5][0][0])), "given": m.unescape(str(p[5][0][1])),
                 "birthDate": f"{str(p[7])[:4]}-{str(p[7])[4:6]}-{str(p[7])[6:8]}",
                 "gender": {"F": "female", "M": "male"}.get(str(p[8]), "unknown"),
                 "line": lines, "city": str(addr[2]), "state": str(addr[3]), "postalCode": str(addr[4])}
            if mrn not in demo or evt >= demo[mrn][0]:
                demo[mrn] = (evt, d)
            e = enc.setdefault(visit, {"mrn": mrn, "class": {"I": "IMP", "E": "EMER", "O": "AMB"}[str(v[2])]})
            if str(v[44]):
                e["start"] = when(str(v[44]))
            if str(v[45]):
                e["end"] = when(str(v[45]))
            continue
        obr = m.segment("OBR")
        filler = str(obr[3])
        rep = {"mrn": mrn, "visit": visit, "panel": str(obr[4][0][0]), "effective": when(str(obr[7])),
               "status": "corrected" if str(obr[25]) == "C" else "final", "obs": {}}
        prev = reports.get(filler)
        last = None
        for s in m:
            tag = str(s[0])
            if tag == "OBX":
                code = str(s[3][0][0])
                row = cmap[code]
                k = factor(str(s[6]), row["ucum_unit"], row["molar_mass_g_per_mol"])
                lo, hi = str(s[7]).split("-")
                last = {"loinc": row["loinc"], "display": row["loinc_display"], "unit": row["ucum_unit"],
                        "value": round(float(str(s[5])) * k, 4), "low": round(float(lo) * k, 4),
                        "high": round(float(hi) * k, 4), "flag": str(s[8]),
                        "status": "corrected" if str(s[11]) == "C" else "final",
                        "effective": when(str(s[14])), "note": None}
                if prev and prev["obs"].get(row["loinc"], {}).get("status") == "corrected":
                    last["status"] = "corrected"
                rep["obs"][row["loinc"]] = last
            elif tag == "NTE" and last is not None:
                last["note"] = m.unescape(str(s[3])).replace("\r", "\n")
        if prev and prev["status"] == "corrected":
            rep["status"] = "corrected"
        reports[filler] = rep

    entries = []
    for mrn, (_t, d) in sorted(demo.items()):
        res = {"resourceType": "Patient", "identifier": [{"system": MRN_SYS, "value": mrn}],
               "name": [{"family": d["family"], "given": [d["given"]]}], "gender": d["gender"],
               "birthDate": d["birthDate"],
               "address": [{"line": d["line"], "city": d["city"], "state": d["state"], "postalCode": d["postalCode"]}]}
        entries.append({"fullUrl": urn("Patient", mrn), "resource": res,
                        "request": {"method": "POST", "url": "Patient", "ifNoneExist": f"identifier={MRN_SYS}|{mrn}"}})
    for visit, e in sorted(enc.items()):
        period = {"start": fhir_time(e["start"])}
        if "end" in e:
            period["end"] = fhir_time(e["end"])
        res = {"resourceType": "Encounter", "identifier": [{"system": VISIT_SYS, "value": visit}],
               "status": "finished" if "end" in e else "in-progress",
               "class": {"system": ACT, "code": e["class"]},
               "subject": {"reference": urn("Patient", e["mrn"])}, "period": period}
        entries.append({"fullUrl": urn("Encounter", visit), "resource": res,
                        "request": {"method": "POST", "url": "Encounter",
                                    "ifNoneExist": f"identifier={VISIT_SYS}|{visit}"}})
    for filler, rep in sorted(reports.items()):
        refs = []
        for loinc, o in sorted(rep["obs"].items()):
            res = {"resourceType": "Observation", "status": o["status"],
                   "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                             "code": "laboratory"}]}],
                   "code": {"coding": [{"system": LOINC, "code": loinc, "display": o["display"]}]},
                   "subject": {"reference": urn("Patient", rep["mrn"])},
                   "encounter": {"reference": urn("Encounter", rep["visit"])},
                   "effectiveDateTime": fhir_time(o["effective"]),
                   "valueQuantity": {"value": o["value"], "unit": o["unit"], "system": UCUM, "code": o["unit"]},
                   "interpretation": [{"coding": [{"system": INTERP, "code": o["flag"]}]}],
                   "referenceRange": [{"low": {"value": o["low"], "unit": o["unit"], "system": UCUM, "code": o["unit"]},
                                       "high": {"value": o["high"], "unit": o["unit"], "system": UCUM, "code": o["unit"]}}]}
            if o["note"]:
                res["note"] = [{"text": o["note"]}]
            full = urn("Observation", filler, loinc)
            refs.append({"reference": full})
            entries.append({"fullUrl": full, "resource": res, "request": {"method": "POST", "url": "Observation"}})
        panel = cmap[rep["panel"]]
        res = {"resourceType": "DiagnosticReport", "identifier": [{"system": FILLER_SYS, "value": filler}],
               "status": rep["status"],
               "code": {"coding": [{"system": LOINC, "code": panel["loinc"], "display": panel["loinc_display"]}]},
               "subject": {"reference": urn("Patient", rep["mrn"])},
               "encounter": {"reference": urn("Encounter", rep["visit"])},
               "effectiveDateTime": fhir_time(rep["effective"]), "result": refs}
        entries.append({"fullUrl": urn("DiagnosticReport", filler), "resource": res,
                        "request": {"method": "POST", "url": "DiagnosticReport",
                                    "ifNoneExist": f"identifier={FILLER_SYS}|{filler}"}})
    bundle = Bundle.model_validate({"resourceType": "Bundle", "type": "transaction", "entry": entries})
    with open(out_path, "w") as f:
        f.write(bundle.model_dump_json(indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:4])
