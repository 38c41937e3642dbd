"""Oracle: process the collection, screen it and build production volume PROD002.

    python3 produce.py INPUTS OUTPUT WORKDIR [MISTAKE]

MISTAKE (for the negative fixtures only): waiver-ignored, local-time or messageid-dedup.

Parsing uses Python's email package; text extraction and rendering use LibreOffice (docx,
xlsx, csv, txt, emails) and poppler (pdf); endorsement uses ReportLab overlays merged with
pypdf; the volume is written as Concordance DAT / Opticon OPT.
"""

from __future__ import annotations

import csv
import email
import hashlib
import io
import mailbox
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from email import policy
from pathlib import Path

from pypdf import PdfReader, PdfWriter
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen import canvas

CUSTODIANS = ["dana.whitfield", "marco.reyes", "priya.natarajan"]
COMPANY = "brightline-logistics.com"
LO, HI = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 6, 30, 23, 59, 59, tzinfo=UTC)
PREFIX, START, VOL = "BRL", 4201, "PROD002"
SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
WP = "PRIVILEGED & CONFIDENTIAL - ATTORNEY WORK PRODUCT"
NATIVE_SLIP = "Document produced in native format"
PRIV_SLIP = "Document withheld for privilege"
FIELDS = ["BEGBATES", "ENDBATES", "BEGATTACH", "ENDATTACH", "PAGECOUNT", "CUSTODIAN", "ALLCUSTODIANS", "DOCTYPE",
          "FROM", "TO", "CC", "BCC", "SUBJECT", "DATESENT", "TIMESENT", "FILENAME", "MESSAGEID", "MD5HASH",
          "REDACTED", "PRIVILEGE", "NATIVELINK", "TEXTLINK"]
LOG_FIELDS = ["BEGBATES", "DOCTYPE", "MESSAGEID", "PARENT_MESSAGEID", "FILENAME", "MD5HASH", "CUSTODIAN",
              "ALLCUSTODIANS", "DATESENT", "FROM", "TO", "CC", "BCC", "SUBJECT", "PRIVILEGE_BASIS"]


def soffice(work: Path, args: list[str]) -> None:
    subprocess.run(["soffice", f"-env:UserInstallation=file://{work}/lo-profile", "--headless", *args],
                   check=True, capture_output=True, timeout=600)


def norm_body(text: str) -> str:
    lines = [ln.rstrip(" \t") for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def addrs(msg, name) -> list[str]:
    h = msg[name]
    return [a.addr_spec.lower() for a in h.addresses] if h is not None else []


class Doc:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def email_hash(d: Doc, children: list[Doc]) -> str:
    """The protocol hash; children are the message's direct attachments (an email by its hash)."""
    s = (f"FROM:{';'.join(d.frm)}\nTO:{';'.join(sorted(d.to))}\nCC:{';'.join(sorted(d.cc))}\n"
         f"BCC:{';'.join(sorted(d.bcc))}\nSUBJECT:{d.subject}\nDATE:{d.sent.strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
         f"BODY:{d.body}\nATTACHMENTS:{';'.join(sorted(c.md5 for c in children))}")
    return hashlib.md5(s.encode("utf-8")).hexdigest()


def load_mbox(path: Path, custodian: str) -> list[Doc]:
    box = mailbox.mbox(str(path), factory=lambda f: email.message_from_binary_file(f, policy=policy.default),
                       create=False)
    out = []
    for msg in box:
        d = parse_email_tree(msg)
        # The family, depth first: an attached email is followed by its own attachments.
        d.family = [x for c in d.children for x in (c, *c.children)]
        out.append(d)
    return out


def parse_email_tree(msg) -> Doc:
    body = ""
    for part in msg.walk():
        if part.get_content_type() == "text/plain" and part.get_content_disposition() != "attachment":
            body = part.get_content()
            break
    children = []
    for part in msg.iter_attachments():
        name = part.get_filename() or ""
        if part.get_content_type() == "message/rfc822":
            inner = parse_email_tree(part.get_content())
            inner.filename = name
            children.append(inner)
        else:
            data = part.get_payload(decode=True)
            children.append(Doc(kind="file", filename=name, data=data, md5=hashlib.md5(data).hexdigest(),
                                ext=name.rsplit(".", 1)[-1].lower(), children=[]))
    d = Doc(kind="email", frm=addrs(msg, "From"), to=addrs(msg, "To"), cc=addrs(msg, "Cc"), bcc=addrs(msg, "Bcc"),
            subject=" ".join(str(msg["Subject"] or "").split()), sent=msg["Date"].datetime.astimezone(UTC),
            mid=str(msg["Message-ID"] or "").strip().strip("<>"), body=norm_body(body), filename="",
            children=children, ext="email", data=None, local=msg["Date"].datetime.replace(tzinfo=None))
    d.md5 = email_hash(d, children)
    return d


# --- search --------------------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def term_match(term: str, tok: str) -> bool:
    t = term.lower()
    return tok.startswith(t[:-1]) if t.endswith("*") else tok == t


def query(expr: str):
    toks = re.findall(r'"[^"]*"|\(|\)|[^\s()"]+', expr)
    i = 0

    def atom():
        nonlocal i
        t = toks[i]
        i += 1
        if t == "(":
            e = disj()
            i += 1
            return e
        if t.startswith('"'):
            words = tokens(t)
            return lambda ts: any(ts[k:k + len(words)] == words for k in range(len(ts) - len(words) + 1))
        if i < len(toks) and re.fullmatch(r"(?i)w/\d+", toks[i]):
            n, other = int(toks[i][2:]), toks[i + 1]
            i += 2
            return lambda ts: any(abs(a - b) <= n for a, x in enumerate(ts) if term_match(t, x)
                                  for b, y in enumerate(ts) if term_match(other, y))
        return lambda ts: any(term_match(t, x) for x in ts)

    def conj():
        nonlocal i
        parts = [atom()]
        while i < len(toks) and toks[i] == "AND":
            i += 1
            parts.append(atom())
        return lambda ts: all(p(ts) for p in parts)

    def disj():
        nonlocal i
        parts = [conj()]
        while i < len(toks) and toks[i] == "OR":
            i += 1
            parts.append(conj())
        return lambda ts: any(p(ts) for p in parts)

    return disj()


# --- main ----------------------------------------------------------------------------------

def main() -> None:
    inputs, output, work = (Path(a).resolve() for a in sys.argv[1:4])
    mistake = sys.argv[4] if len(sys.argv) > 4 else ""
    work.mkdir(parents=True, exist_ok=True)
    families: dict[str, dict] = {}
    loose_rows = list(csv.DictReader(open(inputs / "loose_files_manifest.csv", newline="")))
    for cust in CUSTODIANS:
        for d in load_mbox(inputs / "collection" / cust / "mailbox.mbox", cust):
            if mistake == "local-time":
                d.sent = d.local.replace(tzinfo=UTC)
            key = "E" + (d.mid if mistake == "messageid-dedup" else d.md5)
            f = families.setdefault(key, {"top": d, "custodians": [], "date": d.sent})
            if cust not in f["custodians"]:
                f["custodians"].append(cust)
        for row in loose_rows:
            if row["custodian"] != cust:
                continue
            data = (inputs / "collection" / row["path"]).read_bytes()
            name = row["path"].rsplit("/", 1)[-1]
            d = Doc(kind="file", filename=name, data=data, md5=hashlib.md5(data).hexdigest(),
                    ext=name.rsplit(".", 1)[-1].lower(), family=[])
            date = datetime.strptime(row["last_modified_utc"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            f = families.setdefault("L" + d.md5, {"top": d, "custodians": [], "date": date, "loose": True})
            if cust not in f["custodians"]:
                f["custodians"].append(cust)
    fams = [f for f in families.values() if LO <= f["date"] <= HI]
    for f in fams:
        f["members"] = [f["top"], *f["top"].family]

    extract_text(fams, work)
    terms = [line.split("\t", 1) for line in (inputs / "search_terms.txt").read_text().splitlines() if line.strip()]
    preds = [(tid, query(expr)) for tid, expr in terms]
    for f in fams:
        for d in f["members"]:
            ts = tokens(d.text)
            d.hits = [tid for tid, p in preds if p(ts)]
    report(fams, terms, output)

    counsel = list(csv.DictReader(open(inputs / "counsel.csv", newline="")))
    c_addr = {c["address_or_domain"].lower() for c in counsel if not c["address_or_domain"].startswith("@")}
    c_dom = {c["address_or_domain"][1:].lower() for c in counsel if c["address_or_domain"].startswith("@")}
    is_c = lambda a: a in c_addr or a.split("@")[-1] in c_dom  # noqa: E731

    responsive = sorted((f for f in fams if any(d.hits for d in f["members"])), key=lambda f: (f["date"], f["top"].md5))
    produced, logged = [], []
    for f in responsive:
        top = f["top"]
        if top.kind == "email":
            parts = [*top.frm, *top.to, *top.cc, *top.bcc]
            withheld = any(map(is_c, parts)) and (mistake == "waiver-ignored" or all(
                is_c(a) or a.endswith("@" + COMPANY) for a in parts))
        else:
            withheld = WP in top.text
        for d in f["members"]:
            d.fam, d.custodians = f, f["custodians"]
            d.wp = WP in d.text
            d.redacted = bool(SSN.search(d.text))
            d.native = d.ext in ("xlsx", "csv") and not d.redacted
            d.slip = None
            if withheld:
                d.basis = "Attorney Work Product" if d.wp else "Attorney-Client Privilege"
                logged.append(d)
                continue
            if d.wp:
                d.slip, d.basis = "privilege", "Attorney Work Product"
                logged.append(d)
            elif d.native:
                d.slip = "native"
            produced.append(d)

    vol = output / VOL
    for sub in ("DATA", "IMAGES", "NATIVES", "TEXT"):
        (vol / sub).mkdir(parents=True, exist_ok=True)
    render(produced, work)
    bates = START
    for d in produced:
        d.pages = len(PdfReader(str(d.pdf)).pages)
        d.beg, d.end = bates, bates + d.pages - 1
        bates += d.pages
    for f in responsive:
        members = [d for d in f["members"] if d in produced]
        for d in members:
            d.begattach, d.endattach = members[0].beg, members[-1].end
    write_volume(produced, vol, work)
    write_log(logged, output)


def b(n: int) -> str:
    return f"{PREFIX}{n:07d}"


def extract_text(fams: list[dict], work: Path) -> None:
    """Searchable text: emails from the message; documents through LibreOffice or pdftotext."""
    xdir = work / "extract"
    xdir.mkdir(exist_ok=True)
    by_kind: dict[str, list[Doc]] = {}
    n = 0
    for f in fams:
        for d in f["members"]:
            if d.kind == "email":
                d.text = d.subject + "\n" + d.body
                continue
            n += 1
            d.src = xdir / f"d{n:04d}.{d.ext}"
            d.src.write_bytes(d.data)
            by_kind.setdefault(d.ext, []).append(d)
    if by_kind.get("docx"):
        soffice(work, ["--convert-to", "txt:Text (encoded):UTF8", "--outdir", str(xdir / "txt"),
                       *[str(d.src) for d in by_kind["docx"]]])
        for d in by_kind["docx"]:
            d.text = (xdir / "txt" / (d.src.stem + ".txt")).read_text(encoding="utf-8-sig")
    if by_kind.get("xlsx"):
        soffice(work, ["--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76", "--outdir", str(xdir / "csv"),
                       *[str(d.src) for d in by_kind["xlsx"]]])
        for d in by_kind["xlsx"]:
            d.text = (xdir / "csv" / (d.src.stem + ".csv")).read_text(encoding="utf-8")
    for d in by_kind.get("pdf", []):
        d.text = subprocess.run(["pdftotext", "-layout", str(d.src), "-"], capture_output=True, check=True).stdout.decode()
    for ext in ("csv", "txt"):
        for d in by_kind.get(ext, []):
            d.text = d.data.decode("utf-8")


def report(fams: list[dict], terms: list[list[str]], output: Path) -> None:
    hit = {tid: set() for tid, _ in terms}
    for f in fams:
        for d in f["members"]:
            for t in d.hits:
                hit[t].add(id(d))
    with open(output / "search_term_report.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["term_id", "documents", "families", "unique_documents"])
        for tid, _ in terms:
            fam_docs = sum(len(f["members"]) for f in fams if any(t == tid for d in f["members"] for t in d.hits))
            others = set().union(*(hit[t] for t, _ in terms if t != tid))
            w.writerow([tid, len(hit[tid]), fam_docs, len(hit[tid] - others)])


def header_block(d: Doc) -> str:
    return (f"From: {'; '.join(d.frm)}\nTo: {'; '.join(d.to)}\nCc: {'; '.join(d.cc)}\n"
            + (f"Bcc: {'; '.join(d.bcc)}\n" if d.bcc else "")
            + f"Sent: {d.sent.strftime('%m/%d/%Y %H:%M:%S')} UTC\nSubject: {d.subject}\n\n")


def redact(text: str) -> str:
    return SSN.sub("[REDACTED]", text)


def slip_pdf(path: Path, lines: list[str]) -> None:
    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    c.setFont("Helvetica-Bold", 18)
    y = 460
    for line in lines:
        c.drawCentredString(306, y, line)
        y -= 28
    c.save()


def render(produced: list[Doc], work: Path) -> None:
    rdir = work / "render"
    rdir.mkdir(exist_ok=True)
    text_jobs, docx_jobs, calc_jobs = [], [], []
    for i, d in enumerate(produced):
        stem = rdir / f"r{i:04d}"
        if d.slip == "native":
            d.pdf = stem.with_suffix(".pdf")
            slip_pdf(d.pdf, [NATIVE_SLIP, d.filename])
            d.prod_text = redact(d.text)
        elif d.slip == "privilege":
            d.pdf = stem.with_suffix(".pdf")
            slip_pdf(d.pdf, [PRIV_SLIP])
            d.prod_text = PRIV_SLIP + "\n"
        elif d.kind == "email":
            d.prod_text = redact(header_block(d) + d.body + "\n")
            src = stem.with_suffix(".txt")
            src.write_text(d.prod_text, encoding="utf-8")
            text_jobs.append((d, src))
        elif d.ext == "pdf":
            d.pdf = stem.with_suffix(".pdf")
            shutil.copyfile(d.src, d.pdf)
            d.prod_text = redact(d.text)
        elif d.ext == "csv":
            src = stem.with_suffix(".csv")
            src.write_text(redact(d.text), encoding="utf-8")
            calc_jobs.append((d, src))
            d.prod_text = redact(d.text)
        elif d.ext == "txt":
            src = stem.with_suffix(".txt")
            src.write_text(redact(d.text), encoding="utf-8")
            text_jobs.append((d, src))
            d.prod_text = redact(d.text)
        else:  # docx, and xlsx needing redaction (none here, but Calc would render it)
            if d.redacted:
                raise SystemExit(f"redaction of {d.ext} not implemented")
            docx_jobs.append((d, d.src))
            d.prod_text = d.text
    out = rdir / "pdf"
    if text_jobs:
        soffice(work, ["--infilter=Text (encoded):UTF8,LF,,,", "--convert-to", "pdf", "--outdir", str(out),
                       *[str(s) for _, s in text_jobs]])
    if docx_jobs:
        soffice(work, ["--convert-to", "pdf", "--outdir", str(out), *[str(s) for _, s in docx_jobs]])
    if calc_jobs:
        soffice(work, ["--infilter=Text - txt - csv (StarCalc):44,34,76", "--convert-to", "pdf", "--outdir", str(out),
                       *[str(s) for _, s in calc_jobs]])
    for d, s in [*text_jobs, *docx_jobs, *calc_jobs]:
        d.pdf = out / (s.stem + ".pdf")


def stamp(page, label: str):
    buf = io.BytesIO()
    w, h = float(page.mediabox.width), float(page.mediabox.height)
    c = canvas.Canvas(buf, pagesize=(w, h), invariant=1)
    c.setFont("Helvetica-Bold", 10)
    c.drawRightString(w - 36, 22, label)
    c.save()
    buf.seek(0)
    page.merge_page(PdfReader(buf).pages[0])
    return page


def write_volume(produced: list[Doc], vol: Path, work: Path) -> None:
    dat = ["\x14".join(f"\u00fe{f}\u00fe" for f in FIELDS)]
    opt = []
    for d in produced:
        reader = PdfReader(str(d.pdf))
        for k, page in enumerate(reader.pages):
            wtr = PdfWriter()
            wtr.add_page(stamp(page, b(d.beg + k)))
            with open(vol / "IMAGES" / f"{b(d.beg + k)}.pdf", "wb") as fh:
                wtr.write(fh)
            opt.append(f"{b(d.beg + k)},{VOL},IMAGES\\{b(d.beg + k)}.pdf,{'Y' if k == 0 else ''},,,"
                       f"{d.pages if k == 0 else ''}")
        (vol / "TEXT" / f"{b(d.beg)}.txt").write_text(d.prod_text, encoding="utf-8")
        native = ""
        if d.native:
            native = f"NATIVES\\{b(d.beg)}.{d.ext}"
            (vol / "NATIVES" / f"{b(d.beg)}.{d.ext}").write_bytes(d.data)
        dat.append("\x14".join(f"\u00fe{v}\u00fe" for v in row_values(d, native)))
    (vol / "DATA" / f"{VOL}.dat").write_bytes(("\r\n".join(dat) + "\r\n").encode("utf-8"))
    (vol / "DATA" / f"{VOL}.opt").write_bytes(("\r\n".join(opt) + "\r\n").encode("utf-8"))


def common(d: Doc) -> dict:
    top = d.fam["top"]
    is_mail = d.kind == "email"
    when = d.sent if is_mail else d.fam["date"]
    return {
        "DOCTYPE": "Loose" if d.fam.get("loose") else ("Email" if d is top else "Attachment"),
        "CUSTODIAN": d.custodians[0], "ALLCUSTODIANS": "; ".join(d.custodians),
        "FROM": "; ".join(d.frm) if is_mail else "", "TO": "; ".join(d.to) if is_mail else "",
        "CC": "; ".join(d.cc) if is_mail else "", "BCC": "; ".join(d.bcc) if is_mail else "",
        "SUBJECT": d.subject if is_mail else "", "DATESENT": when.strftime("%m/%d/%Y"),
        "TIMESENT": when.strftime("%H:%M:%S"), "FILENAME": d.filename, "MESSAGEID": d.mid if is_mail else "",
        "MD5HASH": d.md5, "PARENT_MESSAGEID": top.mid if top.kind == "email" and d is not top else "",
    }


def row_values(d: Doc, native: str) -> list[str]:
    v = common(d)
    v.update({"BEGBATES": b(d.beg), "ENDBATES": b(d.end), "BEGATTACH": b(d.begattach), "ENDATTACH": b(d.endattach),
              "PAGECOUNT": str(d.pages), "REDACTED": "Y" if d.redacted else "N",
              "PRIVILEGE": "Withheld - Slip Sheet" if d.slip == "privilege" else "", "NATIVELINK": native,
              "TEXTLINK": f"TEXT\\{b(d.beg)}.txt"})
    return [v[f] for f in FIELDS]


def write_log(logged: list[Doc], output: Path) -> None:
    with open(output / "privilege_log.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([*LOG_FIELDS])
        for d in logged:
            v = common(d)
            v["BEGBATES"] = b(d.beg) if d.slip == "privilege" else ""
            v["PRIVILEGE_BASIS"] = d.basis
            w.writerow([v[f] for f in LOG_FIELDS])


if __name__ == "__main__":
    main()
