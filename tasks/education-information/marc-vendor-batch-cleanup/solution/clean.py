"""Oracle, step 2: catalogue clean-up of the YAZ-converted batch with pymarc.

    python3 clean.py CONVERTED.mrc OUTDIR [--english-articles]

Repairs 008, sets 245 nonfiling indicators, normalises 020, merges duplicates (with their
852 holdings) and writes clean.mrc, dedup_report.csv and shelflist.csv.
"""

import csv
import re
import sys
import unicodedata
from decimal import Decimal
from pathlib import Path

from pymarc import Field, Indicators, MARCReader, Subfield

ARTICLES = {"eng": ["The ", "A ", "An "], "fre": ["Les ", "Le ", "La ", "L'", "Une ", "Un "],
            "ger": ["Die ", "Der ", "Das ", "Eine ", "Ein "], "spa": ["Los ", "Las ", "El ", "La ", "Una ", "Un "]}
CALL = re.compile(r"^([A-Z]{1,3})(\d+(?:\.\d+)?)(?:\s*\.?\s*([A-Z]\d+))?(?:\s+\.?([A-Z]\d+))?(?:\s+(\d{4}))?$")


def check10(d9):
    r = (11 - sum(int(c) * (10 - i) for i, c in enumerate(d9)) % 11) % 11
    return "X" if r == 10 else str(r)


def check13(d12):
    return str((10 - sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(d12)) % 10) % 10)


def fix_008(rec):
    f = rec["008"]
    data = f.data.ljust(40)
    lang = data[35:38]
    if not lang.strip():
        f041 = rec.get_fields("041")
        codes = f041[0].get_subfields("a") if f041 else []
        lang = codes[0] if codes else "eng"
    f.data = data[:35] + lang + data[38:]
    return lang


def fix_245(rec, lang):
    f = rec["245"]
    title = f.get_subfields("a")[0]
    if "--english-articles" in sys.argv:  # a negative fixture: English articles for every language
        lang = "eng"
    nf = next((len(a) for a in ARTICLES.get(lang, []) if title.startswith(a)), 0)
    f.indicator2 = str(nf)
    return unicodedata.normalize("NFC", title), nf


def fix_020(rec):
    good = []
    for f in rec.get_fields("020"):
        value = f.get_subfields("a")[0]
        m = re.match(r"^([0-9Xx\-]+)\s*(.*)$", value)
        digits = m.group(1).replace("-", "").upper()
        quals = re.findall(r"\(([^)]*)\)", m.group(2))
        if len(digits) == 10 and re.fullmatch(r"\d{9}[\dX]", digits) and check10(digits[:9]) == digits[9]:
            digits, code = "978" + digits[:9] + check13("978" + digits[:9]), "a"
        elif len(digits) == 13 and digits.isdigit() and check13(digits[:12]) == digits[12]:
            code = "a"
        else:
            code = "z"
        if code == "a":
            good.append(digits)
        f.subfields = [Subfield(code, digits)] + [Subfield("q", q) for q in quals]
    return good


def oclc_numbers(rec):
    out = []
    for f in rec.get_fields("035"):
        for v in f.get_subfields("a"):
            if v.startswith("(OCoLC)"):
                out.append(str(int(re.sub(r"^\(OCoLC\)(ocm|ocn|on)?", "", v))))
    return out


def title_key(title, nf, date1):
    t = unicodedata.normalize("NFC", title[nf:]).lower()
    return " ".join(re.sub(r"[^\w\s]", " ", t).split()) + "|" + date1


def call_number(rec):
    f = rec.get_fields("050")
    if not f:
        return None
    s = " ".join((" ".join(f[0].get_subfields("a", "b"))).upper().split())
    s = re.sub(r"^([A-Z]{1,3})\s+(\d)", r"\1\2", s)
    m = CALL.match(s)
    return m.groups() if m else None


def sort_key(parts):
    cls, num, c1, c2, yr = parts
    cut = lambda c: (0, "", Decimal(0)) if not c else (1, c[0], Decimal("0." + c[1:]))  # noqa: E731
    return (cls, Decimal(num), cut(c1), cut(c2), int(yr) if yr else -1)


def display(parts):
    cls, num, c1, c2, yr = parts
    return f"{cls}{num}" + (f" .{c1}" if c1 else "") + (f" {c2}" if c2 else "") + (f" {yr}" if yr else "")


def main():
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    with open(src, "rb") as fh:
        records = [r for r in MARCReader(fh, to_unicode=True, force_utf8=True)]
    info = {}
    for rec in records:
        rid = rec["001"].data
        lang = fix_008(rec)
        title, nf = fix_245(rec, lang)
        isbns = fix_020(rec)
        keys = [f"o:{o}" for o in oclc_numbers(rec)] + [f"i:{i}" for i in isbns]
        if not keys:
            keys = ["t:" + title_key(title, nf, rec["008"].data[7:11])]
        info[rid] = (rec, keys)
    parent = {rid: rid for rid in info}

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x
    owner = {}
    for rid in sorted(info):
        for k in info[rid][1]:
            if k in owner:
                a, b = find(owner[k]), find(rid)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                owner[k] = rid
    clusters = {}
    for rid in sorted(info):
        clusters.setdefault(find(rid), []).append(rid)
    kept, pairs = [], []
    for root in sorted(clusters):
        ids = clusters[root]
        keep = info[ids[0]][0]
        have = {f.get_subfields("p")[0] for f in keep.get_fields("852")}
        for rid in ids[1:]:
            pairs.append((ids[0], rid))
            for f in info[rid][0].get_fields("852"):
                bc = f.get_subfields("p")[0]
                if bc not in have:
                    keep.add_ordered_field(Field(tag="852", indicators=Indicators(*f.indicators),
                                                 subfields=list(f.subfields)))
                    have.add(bc)
        keep.leader = keep.leader[:9] + "a" + keep.leader[10:]
        kept.append(keep)
    with open(out / "clean.mrc", "wb") as fh:
        for rec in kept:
            fh.write(rec.as_marc())
    with open(out / "dedup_report.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["kept_id", "removed_id"])
        w.writerows(sorted(pairs, key=lambda p: p[1]))
    shelf = []
    for rec in kept:
        parts = call_number(rec)
        barcodes = ";".join(sorted(f.get_subfields("p")[0] for f in rec.get_fields("852")))
        shelf.append((parts is None, sort_key(parts) if parts else (), rec["001"].data,
                      display(parts) if parts else "", barcodes))
    shelf.sort(key=lambda x: (x[0], x[1], x[2]))
    with open(out / "shelflist.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["position", "record_id", "call_number", "barcodes"])
        for i, (_, _, rid, call, bcs) in enumerate(shelf, start=1):
            w.writerow([i, rid, call, bcs])


if __name__ == "__main__":
    main()
