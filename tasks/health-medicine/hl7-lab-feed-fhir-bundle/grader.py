"""Grader for hl7-lab-feed-fhir-bundle.

The Bundle is flattened into rows keyed by the feed's natural keys (MRN, visit number,
filler order number, filler order + LOINC), then compared with reference/expected.json.

Tolerances: values and range limits within 0.1 % relative. The instruction asks for at least
4 significant digits (rounding error <= 0.05 %), and the clinical factor 18 for glucose
(mmol/L -> mg/dL) differs from the molar-mass factor 18.0156 by 0.09 %; every real error
(no conversion, factor applied twice, wrong direction) is off by a factor of 10 or more.
Times, codes, statuses and text are exact: they are copied or converted, not computed.
"""

from datetime import UTC, datetime

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    equal,
    get,
    load_json,
    match_rows,
    no_problems,
    rows_by,
)

MRN_SYS = "urn:oid:2.16.840.1.113883.3.7204.1.1"
VISIT_SYS = "urn:oid:2.16.840.1.113883.3.7204.1.2"
FILLER_SYS = "urn:oid:2.16.840.1.113883.3.7204.1.3"
LOINC, UCUM = "http://loinc.org", "http://unitsofmeasure.org"
REL = 1e-3
CRUX_SHARE = 0.75  # mapped share of the results below which the Bundle is not a lab feed


def ident(res: dict, system: str) -> str | None:
    for i in res.get("identifier") or []:
        if isinstance(i, dict) and i.get("system") == system and isinstance(i.get("value"), str):
            return i["value"]
    return None


def coding(concept: object, system: str) -> str | None:
    for c in get(concept, "coding", []) or []:
        if isinstance(c, dict) and c.get("system") == system and isinstance(c.get("code"), str):
            return c["code"]
    return None


def instant(value: object) -> str:
    """A FHIR dateTime as a UTC instant; a time without an offset is not an instant."""
    if not isinstance(value, str) or "T" not in value:
        return f"not a dateTime with a time: {value!r}"
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return f"unparseable: {value!r}"
    if t.tzinfo is None:
        return f"no offset: {value!r}"
    try:
        return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except OverflowError:  # year 1 at +01:00 is before year 1 in UTC
        return f"out of range: {value!r}"


def text(value: object) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").strip() if isinstance(value, str) else ""


def reference(res: dict, field: str) -> str | None:
    ref = get(res, f"{field}.reference", None)
    return ref if isinstance(ref, str) else None


def flatten(entries: list) -> dict:
    """Rows per resource type, keyed later; references resolved through fullUrl."""
    by_url = {e.get("fullUrl"): e.get("resource") for e in entries if isinstance(e, dict)}
    res_of = {u: r for u, r in by_url.items() if isinstance(u, str) and isinstance(r, dict)}
    out: dict[str, list] = {"Patient": [], "Encounter": [], "DiagnosticReport": [], "Observation": []}
    mrn_of, visit_of, problems = {}, {}, []
    for e in entries:
        r = e.get("resource") if isinstance(e, dict) else None
        if not isinstance(r, dict):
            continue
        kind = r.get("resourceType")
        if kind == "Patient":
            addr = get(r, "address[0]", {}) or {}
            row = {"mrn": ident(r, MRN_SYS), "family": get(r, "name[0].family", ""),
                   "given": " ".join(x for x in get(r, "name[0].given", []) or [] if isinstance(x, str)),
                   "birthDate": r.get("birthDate"), "gender": r.get("gender"),
                   "line": "|".join(x for x in get(addr, "line", []) or [] if isinstance(x, str)),
                   "city": get(addr, "city", ""), "state": get(addr, "state", ""),
                   "postalCode": get(addr, "postalCode", ""),
                   "method": get(e, "request.method", ""), "ifNoneExist": get(e, "request.ifNoneExist", "")}
            out["Patient"].append(row)
            mrn_of[e.get("fullUrl")] = row["mrn"]
        elif kind == "Encounter":
            row = {"visit": ident(r, VISIT_SYS), "subject": reference(r, "subject"), "status": r.get("status"),
                   "class": get(r, "class.code", None), "start": instant(get(r, "period.start", None)),
                   "end": instant(get(r, "period.end", None)) if get(r, "period.end", None) else None}
            out["Encounter"].append(row)
            visit_of[e.get("fullUrl")] = row["visit"]
    for row in out["Encounter"]:
        row["mrn"] = mrn_of.get(row["subject"])
    for e in entries:
        r = e.get("resource") if isinstance(e, dict) else None
        if not isinstance(r, dict):
            continue
        for field in ("subject", "encounter"):
            ref = reference(r, field)
            if ref is not None and ref not in res_of:
                problems.append(f"{r.get('resourceType')}.{field} {ref} does not resolve")
        if r.get("resourceType") != "DiagnosticReport":
            continue
        filler = ident(r, FILLER_SYS)
        results = []
        for ref in r.get("result") or []:
            url = get(ref, "reference", None)
            o = res_of.get(url) if isinstance(url, str) else None
            if not isinstance(o, dict) or o.get("resourceType") != "Observation":
                problems.append(f"DiagnosticReport {filler} result {url} is not an Observation of the Bundle")
                continue
            loinc = coding(o.get("code"), LOINC)
            results.append(loinc or "")
            q = o.get("valueQuantity") or {}
            rr = get(o, "referenceRange[0]", {}) or {}
            out["Observation"].append({
                "key": (filler, loinc), "mrn": mrn_of.get(reference(o, "subject")),
                "visit": visit_of.get(reference(o, "encounter")), "value": get(q, "value", None),
                "unit": get(q, "code", None), "unit_system": get(q, "system", None),
                "low": get(rr, "low.value", None), "high": get(rr, "high.value", None),
                "interpretation": coding(get(o, "interpretation[0]", None),
                                         "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"),
                "status": o.get("status"), "effective": instant(o.get("effectiveDateTime")),
                "note": text(get(o, "note[0].text", None))})
        out["DiagnosticReport"].append({
            "filler": filler, "mrn": mrn_of.get(reference(r, "subject")),
            "visit": visit_of.get(reference(r, "encounter")), "code": coding(r.get("code"), LOINC),
            "status": r.get("status"), "effective": instant(r.get("effectiveDateTime")),
            "results": "|".join(sorted(results))})
    out["problems"] = problems
    out["n_observations"] = sum(1 for e in entries if get(e, "resource.resourceType", None) == "Observation")
    return out


def structure(data: dict) -> Outcome:
    try:
        from fhir.resources.R4B.bundle import Bundle
        Bundle.model_validate(data)
    except Exception as e:  # any validation failure of agent data is the finding
        return Outcome(False, f"not a valid FHIR Bundle: {str(e)[:400]}")
    return Outcome(True, "valid FHIR Bundle")


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    data, ok = load_json(ctx.out("bundle.json"))
    entries = get(data, "entry", None)
    r.gate("bundle.json is a transaction Bundle with entries", all_of([
        ("parses", ok), ("resourceType", equal(get(data, "resourceType", None), "Bundle")),
        ("type", equal(get(data, "type", None), "transaction")),
        ("entries", Outcome(isinstance(entries, list) and len(entries) > 0, "entry is a non-empty list")),
    ]))
    if not r.gate("bundle.json conforms to the FHIR resource models", structure(data) if ok else ok):
        return r
    flat = flatten(entries)
    obs = rows_by(flat["Observation"], "key")
    exp_obs = {(k.split("|")[0], k.split("|")[1]): v for k, v in ref["observations"].items()}
    mapped = sum(1 for k, v in exp_obs.items() if k in obs and near_ok(obs[k].get("value"), v["value"]))
    r.gate(f"at least {CRUX_SHARE:.0%} of the lab results mapped to LOINC with values in the canonical unit",
           Outcome(mapped >= CRUX_SHARE * len(exp_obs), f"{mapped} of {len(exp_obs)} results mapped",
                   expected=f">= {CRUX_SHARE * len(exp_obs):.0f}", seen=mapped))

    pats = rows_by(flat["Patient"], "mrn")
    r.check("one Patient per MRN (A08 updates merged, resends not duplicated)", 2, pats.coverage(ref["patients"]))
    exp_pat = {k: dict(v, line="|".join(v["line"])) for k, v in ref["patients"].items()}
    r.check("demographics as of the latest ADT event time", 2, match_rows(
        pats, exp_pat, ["family", "given", "birthDate", "gender", "line", "city", "state", "postalCode"], exact=True))
    r.check("Patients are conditional creates on the MRN", 1, match_rows(
        pats, {k: {"method": "POST", "ifNoneExist": f"identifier={MRN_SYS}|{k}"} for k in ref["patients"]},
        ["method", "ifNoneExist"], exact=True))

    encs = rows_by(flat["Encounter"], "visit")
    r.check("one Encounter per visit with patient, class and status", 1, all_of([
        ("coverage", encs.coverage(ref["encounters"])),
        ("fields", match_rows(encs, ref["encounters"], ["mrn", "class", "status"], exact=True))]))
    r.check("Encounter periods as instants (offsets, end of DST)", 2,
            match_rows(encs, ref["encounters"], ["start", "end"], exact=True))

    r.check("one Observation per order and test (resends and corrections not duplicated)", 2, all_of([
        ("coverage", obs.coverage(exp_obs)),
        ("Observation resources", equal(flat["n_observations"], len(exp_obs)))]))
    exp_units = {k: {"unit": v["unit"], "unit_system": UCUM, "value": v["value"]} for k, v in exp_obs.items()}
    r.check("result values in the canonical UCUM unit", 3, all_of([
        ("values", match_rows(obs, exp_obs, ["value"], rel=REL)),
        ("units", match_rows(obs, exp_units, ["unit", "unit_system"], exact=True))]))
    r.check("result status (corrected results replace the original)", 1,
            match_rows(obs, exp_obs, ["status"], exact=True))
    r.check("reference ranges in the canonical unit and interpretation flags", 1, all_of([
        ("ranges", match_rows(obs, exp_obs, ["low", "high"], rel=REL)),
        ("flags", match_rows(obs, exp_obs, ["interpretation"], exact=True))]))
    r.check("result times as instants (unlabelled times are New York local)", 1,
            match_rows(obs, exp_obs, ["effective"], exact=True))
    exp_notes = {k: {"note": v["note"] or ""} for k, v in exp_obs.items()}
    r.check("NTE comments with HL7 escape sequences decoded", 1, match_rows(obs, exp_notes, ["note"], exact=True))

    reps = rows_by(flat["DiagnosticReport"], "filler")
    exp_rep = {k: dict(v, results="|".join(v["observations"])) for k, v in ref["reports"].items()}
    r.check("one DiagnosticReport per order with panel code, status, time and results", 1, all_of([
        ("coverage", reps.coverage(exp_rep)),
        ("fields", match_rows(reps, exp_rep, ["mrn", "visit", "code", "status", "effective", "results"],
                              exact=True))]))
    wrong_link = [f"{k}: {obs[k].get('mrn')}/{obs[k].get('visit')}" for k, v in exp_obs.items()
                  if k in obs and (obs[k].get("mrn"), obs[k].get("visit")) !=
                  (ref["reports"][k[0]]["mrn"], ref["reports"][k[0]]["visit"])]
    r.check("references resolve inside the Bundle to the right patient and encounter", 1,
            no_problems(flat["problems"] + wrong_link, "every reference resolves"))
    return r


def near_ok(seen: object, want: float) -> bool:
    return isinstance(seen, (int, float)) and not isinstance(seen, bool) and abs(seen - want) <= REL * abs(want)
