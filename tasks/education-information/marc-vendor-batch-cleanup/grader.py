"""Grader for marc-vendor-batch-cleanup.

Cataloguing results have one right answer under the rules of the instruction, so every check
is exact. Text is compared after Unicode NFC normalisation (either composed or decomposed
UTF-8 is acceptable MARC 21 practice; mojibake is not), and ISBD punctuation at the end of a
subfield is ignored.
"""

from __future__ import annotations

import io
import subprocess
import unicodedata

from lastexam.grading import GradeContext, Outcome, Rubric, load_csv, no_problems

MAX_BYTES = 20_000_000  # the real files are under 1 MB
MIN_KEPT = 0.8


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s or "")


def bare(s: str) -> str:
    return nfc(s).rstrip(" /:;,.").strip()


def read_marc(path, force_utf8: bool = True):
    """(records by 001, raw leaders, problem) with pymarc; None records on failure."""
    if not path.is_file():
        return None, [], f"{path.name} is missing"
    if path.stat().st_size > MAX_BYTES:  # checked before reading: the grader's memory is capped
        return None, [], f"{path.name} is too large"
    data = path.read_bytes()
    try:
        from pymarc import MARCReader

        leaders = [chunk[:24].decode("ascii", "replace") for chunk in data.split(b"\x1d") if chunk.strip()]
        reader = MARCReader(io.BytesIO(data), to_unicode=True, force_utf8=force_utf8, utf8_handling="strict")
        recs = {}
        for rec in reader:
            if rec is None:
                return None, leaders, f"unreadable record near #{len(recs) + 1}: {reader.current_exception}"
            f001 = rec["001"]
            recs.setdefault(f001.data if f001 else f"<no 001 #{len(recs)}>", rec)
        return recs, leaders, ""
    except Exception as e:  # pymarc raises many types on malformed input
        return None, [], f"{type(e).__name__}: {e}"


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    surv = ref["survivors"]
    recs, leaders, why = read_marc(ctx.out("clean.mrc"))
    kept = len(set(recs or {}) & set(surv))
    # An empty or near-empty file is not a cleaned batch: no other check may earn on it.
    r.gate("clean.mrc parses as MARC 21 (ISO 2709, UTF-8) and holds at least 80% of the records to keep",  # MIN_KEPT
           Outcome(recs is not None and kept >= MIN_KEPT * len(surv),
                   why or f"{len(recs or {})} records, {kept} of the {len(surv)} to keep",
                   expected=f">= {MIN_KEPT:.0%} of {len(surv)} records", seen=kept))
    recs = recs or {}

    proc = None
    if ctx.out("clean.mrc").is_file() and ctx.out("clean.mrc").stat().st_size <= MAX_BYTES:
        try:
            proc = subprocess.run(["yaz-marcdump", "-n", str(ctx.out("clean.mrc"))], capture_output=True, timeout=120)
        except (subprocess.TimeoutExpired, OSError) as e:
            proc = None
            why = str(e)
    yaz_ok = proc is not None and proc.returncode == 0 and not proc.stderr.strip()
    bad_leaders = [ld for ld in leaders if len(ld) < 10 or ld[9] != "a"]
    r.check("yaz-marcdump reads clean.mrc without complaint; every leader/09 is 'a'", 1,
            Outcome(yaz_ok and not bad_leaders and bool(leaders),
                    f"yaz: {(proc.stderr.decode(errors='replace')[:200] if proc else why) or 'clean'}; "
                    f"{len(bad_leaders)} leaders not 'a'", expected="clean, all 'a'",
                    seen=bad_leaders[:3] or None))

    got_ids, want_ids = set(recs), set(surv)
    r.check("surviving records after de-duplication (by 001)", 3,
            Outcome(got_ids == want_ids and bool(want_ids),
                    f"missing {len(want_ids - got_ids)}, unexpected {len(got_ids - want_ids)}",
                    expected=f"{len(want_ids)} records",
                    seen={"missing": sorted(want_ids - got_ids)[:6], "unexpected": sorted(got_ids - want_ids)[:6]}))

    rows, ok = load_csv(ctx.out("dedup_report.csv"), required_columns=["kept_id", "removed_id"])
    want_pairs = {(p["kept_id"], p["removed_id"]) for p in ref["removed"]}
    got_pairs = {(x["kept_id"], x["removed_id"]) for x in rows or []}
    r.check("dedup_report.csv: each removed record with the record kept", 2,
            Outcome(rows is not None and got_pairs == want_pairs,
                    ok.message if rows is None else f"missing {len(want_pairs - got_pairs)}, unexpected "
                    f"{len(got_pairs - want_pairs)}", expected=f"{len(want_pairs)} pairs",
                    seen=sorted(want_pairs ^ got_pairs)[:6] or None))

    common = sorted(got_ids & want_ids)

    def first(rec, tag, code):
        fs = rec.get_fields(tag)
        vals = fs[0].get_subfields(code) if fs else []
        return vals[0] if vals else ""

    problems = []
    for rid in common:
        rec, s = recs[rid], surv[rid]
        title, author = bare(first(rec, "245", "a")), bare(first(rec, "100", "a"))
        if title != s["title"] or author != s["author"]:
            problems.append({"id": rid, "expected": [s["title"], s["author"]], "seen": [title, author]})
    r.check("titles and names decoded correctly (MARC-8 and UTF-8 records)", 3,
            no_problems(problems if common else ["no records"], f"{len(common)} records"))
    lie = [rid for rid in ref["planted"]["leader9_lie"] if rid in recs]
    problems = [rid for rid in lie if bare(first(recs[rid], "245", "a")) != surv[rid]["title"]
                or bare(first(recs[rid], "100", "a")) != surv[rid]["author"]]
    r.check("UTF-8 records mislabelled with a blank leader/09 decoded as UTF-8", 1,
            no_problems(problems if lie else ["none of the mislabelled records kept"], f"{len(lie)} records"))

    problems = []
    for rid in common:
        f008 = recs[rid]["008"].data if recs[rid]["008"] else ""
        s = surv[rid]
        if len(f008) != 40 or f008[:18] != s["prefix008"] or f008[35:38] != s["lang"]:
            problems.append({"id": rid, "expected_lang": s["lang"], "seen": f008})
    r.check("008 is 40 characters with the language in 008/35-37", 2,
            no_problems(problems if common else ["no records"], "all repaired"))

    problems = []
    for rid in common:
        fs = recs[rid].get_fields("245")
        ind = fs[0].indicator2 if fs else None
        if ind != str(surv[rid]["nonfiling"]):
            problems.append({"id": rid, "title": surv[rid]["title"], "lang": surv[rid]["lang"],
                             "expected": surv[rid]["nonfiling"], "seen": ind})
    r.check("245 second indicator: nonfiling characters for the title's language", 3,
            no_problems(problems if common else ["no records"], "all right"))

    problems = []
    for rid in common:
        fs = recs[rid].get_fields("020")
        a = sorted(v for f in fs for v in f.get_subfields("a"))
        q = sorted(v for f in fs for v in f.get_subfields("q"))
        z = sorted(v for f in fs for v in f.get_subfields("z"))
        s = surv[rid]
        if a != s["isbn13"] or q != s["q"] or z != s["z"]:
            problems.append({"id": rid, "expected": [s["isbn13"], s["q"], s["z"]], "seen": [a, q, z]})
    r.check("020: valid ISBNs as ISBN-13 in $a, qualifiers in $q, invalid ones in $z", 2,
            no_problems(problems if common else ["no records"], "all normalised"))

    problems = []
    for rid in common:
        barcodes = sorted(v for f in recs[rid].get_fields("852") for v in f.get_subfields("p"))
        if barcodes != surv[rid]["barcodes"]:
            problems.append({"id": rid, "expected": surv[rid]["barcodes"], "seen": barcodes})
    r.check("852 holdings of removed duplicates merged into the kept record, no repeats", 2,
            no_problems(problems if common else ["no records"], "holdings merged"))

    problems = [rid for rid in common if len(recs[rid].get_fields("650")) != surv[rid]["subjects"]
                or not first(recs[rid], "245", "c") or not recs[rid].get_fields("264", "300")]
    r.check("descriptive fields kept (245 $c, 264, 300, 650s)", 1,
            no_problems(problems if common else ["no records"], "kept"))

    xml_recs, problem = read_marcxml(ctx.out("clean.xml"))
    xml_ok = xml_recs is not None and set(xml_recs) == got_ids and all(
        bare(xml_recs[i]) == bare(first(recs[i], "245", "a")) for i in got_ids)
    r.check("clean.xml is MARCXML of the same records", 1,
            Outcome(xml_ok and bool(got_ids), problem or ("same records" if xml_ok else "records or titles differ")))

    shelf, ok = load_csv(ctx.out("shelflist.csv"), required_columns=["position", "record_id", "call_number", "barcodes"])
    shelf = shelf or []
    by_id = {x["record_id"]: x for x in shelf}
    problems = [{"id": rid, "expected": surv[rid]["call_number"], "seen": by_id[rid]["call_number"]}
                for rid in sorted(surv) if rid in by_id and by_id[rid]["call_number"] != surv[rid]["call_number"]]
    present = sum(1 for rid in surv if rid in by_id)
    if present < len(surv):
        problems.insert(0, f"{len(surv) - present} records missing from the shelflist")
    r.check("shelflist call numbers normalised", 2, no_problems(problems if shelf else [ok.message], "all normalised"))

    def position(x):
        try:
            return int(x["position"])
        except (TypeError, ValueError):
            return 10**9
    order = [x["record_id"] for x in sorted(shelf, key=position)]
    want = ref["shelf_order"]
    diff = next((i for i, (a, b) in enumerate(zip(order, want, strict=False)) if a != b), None)
    ok_order = order == want
    r.check("shelflist in LC filing order", 3,
            Outcome(ok_order, "order right" if ok_order else (f"first difference at position {diff + 1}"
                                                              if diff is not None else f"{len(order)} rows, expected {len(want)}"),
                    expected=want[diff:diff + 3] if diff is not None else len(want),
                    seen=order[diff:diff + 3] if diff is not None else len(order)))

    problems = [rid for rid in sorted(surv) if rid in by_id and
                sorted(b for b in by_id[rid]["barcodes"].split(";") if b) != surv[rid]["barcodes"]]
    r.check("shelflist barcodes after the holdings merge", 1,
            no_problems(problems if shelf else [ok.message], "all right"))
    return r


def read_marcxml(path):
    if not path.is_file():
        return None, "clean.xml is missing"
    if path.stat().st_size > MAX_BYTES:
        return None, "clean.xml is too large"
    try:
        import xml.etree.ElementTree as ET

        ns = "{http://www.loc.gov/MARC21/slim}"
        root = ET.parse(path).getroot()
        out = {}
        for rec in root.iter(f"{ns}record"):
            cid = next((c.text or "" for c in rec.findall(f"{ns}controlfield") if c.get("tag") == "001"), None)
            title = ""
            for df in rec.findall(f"{ns}datafield"):
                if df.get("tag") == "245":
                    title = next((sf.text or "" for sf in df.findall(f"{ns}subfield") if sf.get("code") == "a"), "")
            if cid is not None:
                out[cid] = title
        if not out:
            return None, "no MARCXML records (namespace http://www.loc.gov/MARC21/slim)"
        return out, ""
    except Exception as e:  # malformed XML
        return None, f"{type(e).__name__}: {e}"
