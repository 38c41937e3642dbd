"""Grader for ediscovery-production-volume.

Coverage before structure: a gate wants the production to be mostly the right documents, with the
privileged ones withheld, and no check passes on an empty set. Everything else is exact: load files,
Bates numbers, metadata, hashes, counts and privilege entries have one right answer under the protocol.
Documents are identified without trusting the agent's hash: emails by (Message-ID, whether the copy
carries Bcc), attachments by (top-level Message-ID, file name), loose files by the MD5 of their bytes.
Image and text checks look for words a complete rendering must contain (after NFKC and whitespace
folding, since renderers differ in line breaks and ligatures), never for a layout.
"""

import hashlib
import io
import re
import subprocess
import unicodedata
import zipfile
import zlib
from contextlib import suppress
from itertools import groupby
from pathlib import Path

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    is_file,
    load_csv,
    match_rows,
    no_problems,
    read_text,
    rows_by,
)

VOL = "PROD002"
FIELDS = ["BEGBATES", "ENDBATES", "BEGATTACH", "ENDATTACH", "PAGECOUNT", "CUSTODIAN", "ALLCUSTODIANS", "DOCTYPE", "FROM",
          "TO", "CC", "BCC", "SUBJECT", "DATESENT", "TIMESENT", "FILENAME", "MESSAGEID", "MD5HASH", "REDACTED", "PRIVILEGE",
          "NATIVELINK", "TEXTLINK"]
LOG_FIELDS = ["BEGBATES", "DOCTYPE", "MESSAGEID", "PARENT_MESSAGEID", "FILENAME", "MD5HASH", "CUSTODIAN", "ALLCUSTODIANS",
              "DATESENT", "FROM", "TO", "CC", "BCC", "SUBJECT", "PRIVILEGE_BASIS"]
REPORT_FIELDS = ["term_id", "documents", "families", "unique_documents"]
BATES = re.compile(r"^BRL(\d{7})$")
NATIVE_SLIP = "document produced in native format"
PRIV_SLIP = "document withheld for privilege"
MAX_IMAGES = 5000
# Share of the expected production (and of the agent's) below which nothing else is judged.
COVERAGE = 0.8


def fold(s: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", s).lower().split())


def split_list(v: str) -> list[str]:
    return [x.strip().lower() for x in (v or "").split(";") if x.strip()]


def bates_no(v: str) -> int | None:
    m = BATES.match((v or "").strip())
    return int(m.group(1)) if m else None


def parse_dat(path: Path) -> tuple[list[dict] | None, Outcome, list[str]]:
    """The DAT's rows, whether it parses, and what is wrong with its Concordance format."""
    if not path.is_file():
        return None, Outcome(False, f"{VOL}/DATA/{VOL}.dat is missing"), []
    try:
        text = path.read_bytes()[: 64 * 1024 * 1024].decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return None, Outcome(False, f"DAT is not UTF-8: {e.reason}"), []
    if not (lines := [ln for ln in re.split(r"\r\n|\n", text) if ln.strip()]):
        return None, Outcome(False, "DAT is empty"), []
    cells = [ln.split("\x14") for ln in lines]
    header = [c.strip("\u00fe").strip() for c in cells[0]]
    if missing := [f for f in FIELDS if f not in header]:
        return None, Outcome(False, f"DAT header lacks {missing}", expected=FIELDS, seen=header[:30]), []
    form = [msg for bad, msg in (
        (header != FIELDS, f"field order {header[:6]}..."),
        (not all(c.startswith("\u00fe") and c.endswith("\u00fe") and len(c) >= 2 for row in cells for c in row),
         "not every value is enclosed in þ"),
        (text.count("\r\n") < len(lines) or text.count("\n") != text.count("\r\n"), "lines do not end with CRLF")) if bad]
    rows = [{h: (row[i].strip("\u00fe") if i < len(row) else "") for i, h in enumerate(header)} for row in cells[1:]]
    return rows, Outcome(True, f"{len(rows)} documents"), form


def parse_opt(path: Path) -> tuple[list[list[str]] | None, Outcome]:
    text, ok = read_text(path)
    if text is None:
        return None, Outcome(False, f"{VOL}/DATA/{VOL}.opt: {ok.message}")
    rows = [ln.split(",") for ln in re.split(r"\r\n|\n", text) if ln.strip()]
    if not rows or any(len(r) != 7 for r in rows):
        return None, Outcome(False, "OPT lines must have 7 comma-separated fields", seen=[",".join(r) for r in rows[:3]])
    return rows, Outcome(True, f"{len(rows)} pages")


def doc_key(*fields: str | None) -> str:
    """Identity of a document from its DOCTYPE, MESSAGEID, BCC, parent's MESSAGEID, FILENAME, MD5HASH."""
    doctype, mid, bcc, parent, filename, md5 = ((f or "").strip() for f in fields)
    if doctype.lower() == "email":
        return f"E|{mid.strip('<>')}|{'bcc' if bcc else ''}"
    if doctype.lower() == "attachment":
        return f"A|{parent.strip('<>')}|{filename}"
    return f"L|{md5.lower()}"


def keys_for(rows: list[dict]) -> list[str]:
    """Each DAT row's identity; an attachment's parent is the email opening its family range."""
    begs, out, last_email = {r.get("BEGBATES"): r for r in rows}, [], {}
    for r in rows:
        p = begs.get(r.get("BEGATTACH"))
        parent = p if p is not None and p.get("DOCTYPE", "").strip().lower() == "email" else last_email
        if r.get("DOCTYPE", "").strip().lower() == "email":
            last_email = r
        out.append(doc_key(r.get("DOCTYPE"), r.get("MESSAGEID"), r.get("BCC"), parent.get("MESSAGEID"),
                           r.get("FILENAME"), r.get("MD5HASH")))
    return out


def pdf_page_text(path: Path) -> tuple[int | None, str]:
    """(page count, text) of one image file; (None, "") if it is not a readable PDF."""
    try:
        with open(path, "rb") as f:
            if f.read(5) != b"%PDF-":
                return None, ""
        import pypdf

        n = len(pypdf.PdfReader(str(path)).pages)
        proc = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, timeout=60)
        return n, proc.stdout.decode("utf-8", errors="replace")
    except Exception:  # any malformed PDF is simply not a valid image
        return None, ""


def judged(problems: list, n: int, what: str) -> Outcome:
    """no_problems, failing when there was nothing to judge: a check never passes on an empty set."""
    return no_problems(problems if n else [f"no {what} to check"], f"{n} {what} right")


def fields_of(d: dict) -> dict:
    """A reference document's fields, normalised as they are compared."""
    return {"DOCTYPE": d["doctype"].lower(), "SUBJECT": fold(d["subject"]), "DATESENT": d["date"], "TIMESENT": d["time"],
            "FILENAME": unicodedata.normalize("NFC", d["filename"]), "CUSTODIAN": d["custodian"],
            "ALLCUSTODIANS": d["allcustodians"], "MD5HASH": d["md5"], "FROM": [d["from"]] if d["from"] else [],
            "TO": sorted(d["to"]), "CC": sorted(d["cc"]), "BCC": sorted(d["bcc"])}


def fields_seen(row: dict) -> dict:
    """A DAT or privilege-log row's fields, normalised the same way."""
    return {**{f: (row.get(f) or "").strip() for f in ("DATESENT", "TIMESENT", "CUSTODIAN")},
            "DOCTYPE": (row.get("DOCTYPE") or "").strip().lower(), "SUBJECT": fold(row.get("SUBJECT") or ""),
            "FILENAME": unicodedata.normalize("NFC", (row.get("FILENAME") or "").strip()),
            "ALLCUSTODIANS": [x.strip() for x in (row.get("ALLCUSTODIANS") or "").split(";") if x.strip()],
            "MD5HASH": (row.get("MD5HASH") or "").strip().lower(),
            **{f: sorted(split_list(row.get(f) or "")) for f in ("FROM", "TO", "CC", "BCC")}}


def differences(k: str, d: dict, row: dict, fields: tuple[str, ...]) -> list[dict]:
    want, got = fields_of(d), fields_seen(row)
    bad = {f: (want[f], got[f]) for f in fields if want[f] != got[f]}
    return [{k: bad}] if bad else []


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    vol = ctx.out(VOL)
    rows, dat_ok, dat_form = parse_dat(vol / "DATA" / f"{VOL}.dat")
    r.gate("DAT load file parses with the required fields", dat_ok)
    opt, opt_ok = parse_opt(vol / "DATA" / f"{VOL}.opt")
    r.gate("OPT load file parses", opt_ok)
    rows, opt = rows or [], opt or []
    keys = keys_for(rows)
    by_key = dict(reversed(list(zip(keys, rows, strict=False))))  # the first row of each key
    exp = {d["key"]: d for d in ref["produced"]}
    exp_order = [d["key"] for d in ref["produced"]]
    present = [k for k in exp_order if k in by_key]
    missing = [k for k in exp_order if k not in by_key]
    extra = sorted(set(keys) - set(exp))
    sets = {"missing": missing[:5], "unexpected": extra[:5]}

    def docs(problems: list) -> Outcome:
        return judged(problems, len(present), "documents")

    # --- coverage before structure: which documents are produced ----------------------------
    # The crux: the responsive, non-privileged documents are produced and nothing else. One
    # mistake moves a few documents; a volume missing or padding a fifth of them is not the job.
    withheld = {d["key"] for d in ref["privilege_log"] if d["slip"] is None}
    leaked = sorted(k for k in withheld if k in by_key)
    recall, precision = len(present) / len(exp_order), (len(keys) - len(extra)) / max(len(keys), 1)
    r.gate("coverage: at least 80% of the documents to produce are produced, at least 80% of the production "
           "is such documents, and at most 20% of the withheld ones are produced",  # COVERAGE
           Outcome(recall >= COVERAGE and precision >= COVERAGE and len(leaked) <= (1 - COVERAGE) * len(withheld),
                   f"{recall:.0%} produced, {precision:.0%} of the production right, {len(leaked)} withheld produced",
                   expected=f"{len(exp)} documents", seen={**sets, "withheld produced": leaked[:5]}))
    r.check("produced document set is exact", 3,
            Outcome(not missing and not extra, f"{len(missing)} missing, {len(extra)} unexpected",
                    expected=f"{len(exp)} documents", seen=sets))

    def planted(names: str, produced: bool = True) -> list[str]:
        """The planted documents of these tags that are missing (or, produced=False, produced)."""
        return [f"{n}: {t['key']} {'missing' if produced else 'produced'}" for n in names.split()
                for t in ref["tags"].get(n, []) if (t["key"] in by_key) != produced]

    problems = planted("edge-in-newyear edge-in-june") + planted("edge-out-newyear edge-out-june loose-out-of-range", False)
    r.check("date range applied to the family date in UTC", 2, judged(problems, len(present), "edges"))

    problems = [f"{k} appears {keys.count(k)} times" for k in sorted(set(keys)) if keys.count(k) > 1]
    problems += planted("bcc-pair resend-v1 resend-v2 loose-copy-of-priv-att dup-format loose-dup")
    r.check("deduplication: one copy per duplicate, BCC copy and re-send kept", 2, docs(problems))

    hit_families = {t["key"] for n in ("qp-hit", "b64-hit", "attachment-only-hit", "nested", "counsel-mentioned")
                    for t in ref["tags"].get(n, [])}
    problems = [f"{d['key']} missing (planted hit)" for d in ref["produced"]
                if d["family"] in hit_families and d["key"] not in by_key]
    problems += [f"non-responsive {t['key']} produced" for ts in ref["tags"].values() for t in ts
                 if t["in_range"] and not t["responsive"] and t["key"] in by_key]
    r.check("responsiveness per family, after decoding, including attachment-only hits", 2, docs(problems))

    problems = [f"withheld {k} produced" for k in leaked]
    problems += planted("waived-third-party waived-personal counsel-mentioned wp-attachment")
    r.check("privileged families withheld, waived and non-privileged ones produced", 3, docs(problems))

    seen_order = list(dict.fromkeys(k for k in keys if k in exp))
    first_diff = next((i for i, (a, b) in enumerate(zip(seen_order, present, strict=False)) if a != b), None)
    ok = seen_order == present and len(present) >= COVERAGE * len(exp_order)
    r.check("production order: families by UTC date, parent before attachments", 2,
            Outcome(ok, "order right" if ok else f"order differs at position {first_diff}" if first_diff is not None
                    else f"only {len(present)} of {len(exp_order)} documents to order",
                    expected=present[first_diff] if first_diff is not None else None,
                    seen=seen_order[first_diff] if first_diff is not None else None))

    # --- Bates numbers and families -------------------------------------------------------
    problems, prev_end = [], ref["bates_start"] - 1
    for row in rows:
        beg, end, pc = bates_no(row.get("BEGBATES")), bates_no(row.get("ENDBATES")), row.get("PAGECOUNT", "")
        if beg is None or end is None:
            problems.append(f"bad Bates {row.get('BEGBATES')!r}/{row.get('ENDBATES')!r}")
            continue
        problems += [m for bad, m in ((beg != prev_end + 1, f"{row['BEGBATES']} follows BRL{prev_end:07d}"),
                                      (not pc.isdigit() or end - beg + 1 != int(pc) or int(pc) < 1,
                                       f"{row['BEGBATES']}: range {end - beg + 1} pages, PAGECOUNT {pc!r}")) if bad]
        prev_end = end
    r.check("Bates numbers: BRL prefix, 7 digits, start BRL0004201, contiguous, one per page", 2, docs(problems))

    # Reference families are contiguous in production order: parent, then its attachments.
    families = [[d["key"] for d in g] for _, g in groupby(ref["produced"], key=lambda d: d["family"])]
    complete = [m for m in families if all(k in by_key for k in m)]
    span = {m[0]: (by_key[m[0]].get("BEGBATES"), by_key[m[-1]].get("ENDBATES")) for m in complete}
    problems = [f"{k}: {by_key[k].get('BEGATTACH')}-{by_key[k].get('ENDATTACH')} != {'-'.join(map(str, span[m[0]]))}"
                for m in complete for k in m if (by_key[k].get("BEGATTACH"), by_key[k].get("ENDATTACH")) != span[m[0]]]
    if len(complete) < COVERAGE * len(families):
        problems.append(f"only {len(complete)} of {len(families)} families complete")
    r.check("family ranges BEGATTACH/ENDATTACH", 2, judged(problems, len(complete), "families"))

    # --- OPT, images, then every produced document field by field ---------------------------
    page_text, image_problems = read_images(rows, vol)
    texts: dict[str, str] = {}
    doc = document_problems(present, by_key, exp, vol, page_text, texts)
    r.check("CUSTODIAN and ALLCUSTODIANS after global deduplication", 2, docs(doc["custodians"]))
    r.check("metadata: DOCTYPE, addresses, decoded subject and file name, UTC date and time", 2, docs(doc["metadata"]))
    r.check("MD5HASH per the protocol (email hash, file MD5)", 2, judged(doc["md5"], len(present), "hashes"))
    r.check("OPT: one line per page, breaks and page counts match the DAT", 2,
            judged(opt_problems(opt, rows), len(opt) if present else 0, "pages"))
    r.check("images: a single-page PDF per Bates number, endorsed with it", 3,
            judged(image_problems, len(page_text) if present else 0, "pages"))
    r.check("images render each whole document; slip sheets for natives and privilege", 2, docs(doc["render"]))
    r.check("natives: spreadsheets produced natively, byte-identical, NATIVELINK right", 2, docs(doc["natives"]))
    r.check("extracted text: one UTF-8 file per document, TEXTLINK right, complete", 2, docs(doc["text"]))

    # --- redaction and leaks ------------------------------------------------------------------
    blobs = [("TEXT", t) for t in texts.values()] + [("IMAGES", fold(t)) for t in page_text.values()]
    native_dir = vol / "NATIVES"
    blobs += [(f"NATIVES/{p.name}", zip_or_text(p)) for p in (sorted(native_dir.iterdir()) if native_dir.is_dir() else [])
              if p.is_file() and p.stat().st_size < 20_000_000]
    blobs.append(("DAT", " ".join(" ".join(x.values()) for x in rows)))
    problems = [f"SSN {ssn[:3]}-**-**** in {where[:3]}" for ssn in ref["ssns"] if (where := [w for w, b in blobs if ssn in b])]
    r.check("SSNs redacted in images, text and natives; REDACTED flag right", 3, docs(problems + doc["redaction"]))
    problems = [f"{ph[:50]!r} in {where[:3]}" for ph in ref["withheld_phrases"]
                if (where := [w for w, b in blobs if fold(ph) in b])]
    r.check("no withheld privileged content in the production", 2, docs(problems))

    # --- privilege log ------------------------------------------------------------------------
    log_rows, log_ok = load_csv(ctx.out("privilege_log.csv"), required_columns=LOG_FIELDS)
    exp_log = {d["key"]: d for d in ref["privilege_log"]}
    got_log = rows_by(log_rows, lambda x: doc_key(*(x.get(f) for f in ("DOCTYPE", "MESSAGEID", "BCC", "PARENT_MESSAGEID",
                                                                      "FILENAME", "MD5HASH"))))
    logged = {k: (got_log[k], d) for k, d in exp_log.items() if log_rows is not None and got_log.get(k) is not None}
    problems = []
    for k, (x, d) in logged.items():
        want_bates = (by_key[k].get("BEGBATES") if k in by_key else "<its Bates number>") if d["slip"] else ""
        problems += [f"{k}: {f} {x.get(f)!r} != {want!r}" for f, want in (("PRIVILEGE_BASIS", d["basis"]), ("BEGBATES", want_bates))
                     if (x.get(f) or "").strip() != want]
    r.check("privilege log: every withheld or slip-sheeted document, basis and Bates", 3, all_of([
        ("entries", got_log.coverage(exp_log) if log_rows is not None else log_ok),
        ("basis and Bates", judged(problems, len(logged), "entries"))]))

    problems = [p for k, (x, d) in logged.items() for p in differences(
        k, d, x, ("CUSTODIAN", "ALLCUSTODIANS", "DATESENT", "FROM", "TO", "CC", "BCC", "SUBJECT", "MD5HASH"))]
    r.check("privilege log metadata: custodians, date, parties, subject, hash", 1,
            judged(problems, len(logged), "entries"))

    # --- search term report ---------------------------------------------------------------------
    rep, rep_ok = load_csv(ctx.out("search_term_report.csv"), required_columns=REPORT_FIELDS)
    r.check("search term report: document, family and unique hit counts", 2,
            match_rows(rows_by(rep, "term_id"), {t["term_id"]: t for t in ref["search_report"]}, REPORT_FIELDS[1:],
                       exact=True) if rep is not None else rep_ok)

    r.check("DAT format: field order, þ qualifiers, DC4 delimiters, CRLF", 1, docs(dat_form))
    return r


def read_images(rows: list[dict], vol: Path) -> tuple[dict[str, str], list[str]]:
    """Text of every page image the DAT's Bates ranges name, and what is wrong with them."""
    page_text, problems = {}, []
    for row in rows:
        beg, end = bates_no(row.get("BEGBATES")), bates_no(row.get("ENDBATES"))
        if beg is None or end is None or end < beg or end - beg > MAX_IMAGES:
            continue
        for n in range(beg, end + 1):
            name = f"BRL{n:07d}"
            count, page_text[name] = pdf_page_text(vol / "IMAGES" / f"{name}.pdf")
            if count != 1:
                problems.append(f"{name}.pdf: {'missing or unreadable' if count is None else f'{count} pages'}")
            elif name not in page_text[name].replace(" ", ""):
                problems.append(f"{name}.pdf: Bates number not on the page")
    return page_text, problems


def opt_problems(opt: list[list[str]], rows: list[dict]) -> list[str]:
    pages_total = sum(int(x["PAGECOUNT"]) for x in rows if x.get("PAGECOUNT", "").isdigit())
    problems = [f"{len(opt)} OPT lines for {pages_total} pages"] if len(opt) != pages_total else []
    breaks = {row.get("BEGBATES"): row.get("PAGECOUNT") for row in rows}
    for line in opt:
        key, volume, path, brk, _f, _b, count = (x.strip() for x in line)
        problems += [msg for bad, msg in (
            (volume != VOL, f"{key}: volume {volume!r}"), (path != f"IMAGES\\{key}.pdf", f"{key}: path {path!r}"),
            ((brk == "Y") != (key in breaks), f"{key}: document break {brk!r}"),
            (key in breaks and count != breaks[key], f"{key}: page count {count!r} != {breaks.get(key)!r}"),
            (key not in breaks and bool(count), f"{key}: page count on a non-first page")) if bad]
    return problems


def document_problems(present: list[str], by_key: dict, exp: dict, vol: Path, page_text: dict[str, str],
                      texts: dict[str, str]) -> dict[str, list]:
    """Each produced document against the reference, by aspect; fills texts (key -> folded text)."""
    out: dict[str, list] = {a: [] for a in ("custodians", "metadata", "md5", "render", "natives", "text", "redaction")}
    for k in present:
        row, d = by_key[k], exp[k]
        out["custodians"] += differences(k, d, row, ("CUSTODIAN", "ALLCUSTODIANS"))
        out["metadata"] += differences(k, d, row, ("DOCTYPE", "FROM", "TO", "CC", "BCC", "SUBJECT", "DATESENT",
                                                   "TIMESENT", "FILENAME"))
        out["md5"] += differences(k, d, row, ("MD5HASH",))

        beg, end = bates_no(row.get("BEGBATES")), bates_no(row.get("ENDBATES"))
        image = fold(" ".join(page_text.get(f"BRL{n:07d}", "") for n in range(beg, min(end, beg + MAX_IMAGES) + 1))
                     ) if beg is not None and end is not None else ""
        if d["slip"] in ("native", "privilege"):
            if (NATIVE_SLIP if d["slip"] == "native" else PRIV_SLIP) not in image or row.get("PAGECOUNT") != "1":
                out["render"].append(f"{k}: {d['slip']} slip sheet")
        else:
            need = [fold(w) for w in d["sentinel"]] + ([fold(d["subject"])] if d["subject"] else [])
            if lost := [w for w in need if w not in image]:
                out["render"].append(f"{k}: image lacks {lost}")
            if d["ext"] == "pdf" and row.get("PAGECOUNT") != str(d["pdf_pages"]):
                out["render"].append(f"{k}: PDF imaged as {row.get('PAGECOUNT')} pages, original has {d['pdf_pages']}")

        link, native = row.get("NATIVELINK", "").strip(), f"{row.get('BEGBATES')}.{d['ext']}"
        if d["native"] and link.lower() != (want_native := f"NATIVES\\{native}").lower():
            out["natives"].append(f"{k}: NATIVELINK {link!r} != {want_native!r}")
        elif d["native"] and (not is_file(vol / "NATIVES" / native)
                              or hashlib.md5((vol / "NATIVES" / native).read_bytes()).hexdigest() != d["md5"]):
            out["natives"].append(f"{k}: native file missing or altered")
        elif not d["native"] and link:
            out["natives"].append(f"{k}: NATIVELINK {link!r} for a document that must not be native")

        want_link = f"TEXT\\{row.get('BEGBATES')}.txt"
        t, ok = read_text(vol / "TEXT" / f"{row.get('BEGBATES')}.txt") if row.get("TEXTLINK", "").strip() == want_link else (None, None)
        if t is None:
            out["text"].append(f"{k}: {ok.message}" if ok else f"{k}: TEXTLINK {row.get('TEXTLINK')!r} != {want_link!r}")
        else:
            texts[k] = fold(t)
            need = [PRIV_SLIP] if d["slip"] == "privilege" else [fold(w) for w in d["sentinel"]]
            if lost := [w for w in need if w not in texts[k]]:
                out["text"].append(f"{k}: text lacks {lost}")

        if (flag := row.get("REDACTED", "").strip().upper()) != ("Y" if d["redacted"] else "N"):
            out["redaction"].append(f"{k}: REDACTED {flag!r}")
        if d["redacted"] and ("[redacted]" not in texts.get(k, "") or "[redacted]" not in image):
            out["redaction"].append(f"{k}: [REDACTED] marker missing from text or image")
    return out


def zip_or_text(p: Path) -> str:
    """Searchable text of a native: the XML of an OOXML container, or the bytes as text."""
    data = p.read_bytes()
    if data[:2] == b"PK":
        # RuntimeError: an encrypted member; NotImplementedError: an unknown compression method
        with suppress(zipfile.BadZipFile, OSError, ValueError, RuntimeError, NotImplementedError, EOFError,
                      zlib.error), zipfile.ZipFile(io.BytesIO(data)) as z:
            parts, budget = [], 20_000_000  # bytes of XML read from one native, all members together
            for name in z.namelist():
                size = z.getinfo(name).file_size
                if name.endswith(".xml") and size < budget:
                    parts.append(z.read(name).decode("utf-8", "replace"))
                    budget -= size
            return fold(" ".join(parts))
    return fold(data.decode("utf-8", "replace"))
