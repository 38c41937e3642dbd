"""Oracle step: resolve every citation of the brief's body pages to its authority and build the
Table of Authorities.

    python3 resolve.py PAGES_DIR OUT/toa.json

PAGES_DIR holds page-NNN.txt from `pdftotext -f N -l N`; a page's printed number is its last
non-empty line. Sentences are split on periods that do not close a citation abbreviation; each
citation sentence is a full citation (which registers the authority and its short-form key),
a short form (resolved by its volume and reporter, author, or section), or "Id." (the
authority of the immediately preceding citation, whatever its kind).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ABBREV = {"v", "Co", "Mut", "Ins", "Labs", "Inc", "Corp", "Cir", "Cal", "App", "Civ", "Proc", "Fed", "R", "P",
          "L", "Rev", "Stan", "H", "N.D", "Bankr", "B.R", "U.S.C", "Cf", "ed", "d", "Id", "id"}
SIGNAL = re.compile(r"^(?:See also|See|Cf\.)\s+")
FULL_CASE = re.compile(r"^(?P<name>.+?), (?P<vol>\d+) (?P<rep>[A-Z][A-Za-z. ]*?(?:\d[a-z]+)?) (?P<first>\d+), \d+ "
                       r"\((?P<court>[^)]*\d{4})\)")
SHORT_CASE = re.compile(r"^.+?, (?P<vol>\d+) (?P<rep>.+?) at \d+$")
ARTICLE = re.compile(r"^(?P<cite>(?P<author>[^,]+), .+?, \d+ [^,]*?L\. (?:Rev|J)\.[^,]* \d+), \d+ \((?P<year>\d{4})\)$")
BOOK = re.compile(r"^(?P<author>[^,]+), (?P<title>.+?) \d+ \((?P<ed>[^)]*\d{4})\)$")
SUPRA = re.compile(r"^(?P<surname>[A-Z]\w+), supra")
USC = re.compile(r"^(?P<cite>\d+ U\.S\.C\. § (?P<sec>[\d.]+))$")
STATE = re.compile(r"^(?P<cite>Cal\. [A-Za-z. ]+ Code § (?P<sec>[\d.]+))$")
SECTION = re.compile(r"^§ (?P<sec>[\d.]+)$")
RULE = re.compile(r"^(?P<cite>Fed\. R\. (?P<kind>Civ|App)\. P\. (?P<num>\S+))$")
SHORT_RULE = re.compile(r"^Rule (?P<num>\S+)$")


def sentences(text: str) -> list[str]:
    text = re.sub(r"\s+", " ", text).strip()
    out, start = [], 0
    for m in re.finditer(r"\.(?= [A-Z§\d]|$)", text):
        token = text[:m.start()].rsplit(" ", 1)[-1].lstrip("(")
        if token in ABBREV and token not in ("Id", "id"):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    return out


def main() -> None:
    pages_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    full: dict[str, tuple[str, str]] = {}  # authority id -> (category, citation)
    short: dict[tuple, str] = {}
    pages: dict[str, set[int]] = {}
    last = None
    for path in sorted(pages_dir.glob("page-*.txt")):
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        if not lines or not lines[-1].strip().isdigit():
            continue  # cover and front matter: not in the table
        printed = int(lines[-1].strip())
        for s in sentences(" ".join(lines[:-1])):
            s = SIGNAL.sub("", s).rstrip(".")
            s = re.sub(r" \((?:holding|noting|explaining) that .*\)$", "", s)
            found = None
            if re.match(r"^[Ii]d\.?( at \d+)?$", s):
                found = last
            elif m := ARTICLE.match(s):
                found = m["author"]
                full[found] = ("Other Authorities", f"{m['cite']} ({m['year']})")
                short[("author", m["author"].split()[-1])] = found
            elif m := SHORT_CASE.match(s):
                found = short.get(("case", m["vol"], m["rep"]))
            elif m := FULL_CASE.match(s):
                found = f"{m['vol']} {m['rep']} {m['first']}"
                full[found] = ("Cases", f"{m['name']}, {m['vol']} {m['rep']} {m['first']} ({m['court']})")
                short[("case", m["vol"], m["rep"])] = found
            elif m := BOOK.match(s):
                found = m["author"]
                full[found] = ("Other Authorities", f"{m['author']}, {m['title']} ({m['ed']})")
                short[("author", m["author"].split()[-1])] = found
            elif m := SUPRA.match(s):
                found = short.get(("author", m["surname"]))
            elif m := (USC.match(s) or STATE.match(s)):
                found = m["cite"]
                full[found] = ("Statutes", m["cite"])
                short[("sec", m["sec"])] = found
            elif m := SECTION.match(s):
                found = short.get(("sec", m["sec"]))
            elif m := RULE.match(s):
                found = m["cite"]
                full[found] = ("Rules", m["cite"])
                short[("rule", m["num"])] = found
            elif m := SHORT_RULE.match(s):
                found = short.get(("rule", m["num"]))
            if found is None:
                continue  # prose
            pages.setdefault(found, set()).add(printed)
            last = found

    def order(aid: str) -> tuple:
        cat, cite = full[aid]
        if cat == "Statutes":  # federal before state; U.S.C. by title, then section
            m = re.match(r"(\d+) U\.S\.C\. § ([\d.]+)", cite)
            return (0, int(m[1]), float(m[2])) if m else (1, 0, float(re.search(r"§ ([\d.]+)", cite)[1]))
        if cat == "Other Authorities":
            return (cite.split(",")[0].split()[-1].lower(),)
        return (cite.lower(),)

    cats = ("Cases", "Statutes", "Rules", "Other Authorities")
    toa: dict[str, list] = {c: [] for c in cats}
    for aid in sorted(pages, key=lambda a: (cats.index(full[a][0]), order(a))):
        cat, cite = full[aid]
        got = sorted(pages[aid])
        toa[cat].append({"authority": cite, "pages": "passim" if len(got) >= 5 else got})
    out.write_text(json.dumps(toa, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
