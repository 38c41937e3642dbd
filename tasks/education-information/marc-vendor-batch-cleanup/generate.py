"""Seeded generator of a vendor MARC batch (inputs/) and the expected clean catalogue (reference/).

    python3 generate.py --out DIR

Records are written byte by byte (ISO 2709) so that MARC-8 and UTF-8 records, wrong leader/09
values, short 008s, ISBN variants and messy 050s are exactly as planted. The reference applies
the cataloguing rules of instruction.md to the generated ground truth.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import unicodedata
from decimal import Decimal
from pathlib import Path

SEED = 5119
CANARY = "3db19887-48d1-460a-81ee-fdeb7d596c36"
N_WORKS = 470

# MARC-8 (ANSEL) combining diacritics, written before the base letter.
MARC8_COMBINING = {"\u0301": 0xE2, "\u0300": 0xE1, "\u0302": 0xE3, "\u0303": 0xE4, "\u0308": 0xE8,
                   "\u0327": 0xF0, "\u030a": 0xEA, "\u030c": 0xE9}
MARC8_SPACING = {"ø": 0xB2, "Ø": 0xA2, "æ": 0xB5, "Æ": 0xA5, "ł": 0xB1, "Ł": 0xA1}
ARTICLES = {
    "eng": ["The ", "A ", "An "],
    "fre": ["Les ", "Le ", "La ", "L'", "Une ", "Un "],
    "ger": ["Die ", "Der ", "Das ", "Eine ", "Ein "],
    "spa": ["Los ", "Las ", "El ", "La ", "Una ", "Un "],
}
WORDS = {
    "eng": ["history", "ocean", "machines", "winter", "cities", "river", "memory", "garden", "light", "theory",
            "northern", "silent", "empire", "mathematics", "voyage", "orchard", "letters", "harbour", "glass",
            "economics", "birds", "migration", "archive", "frontier"],
    "fre": ["histoire", "mer", "mémoire", "jardin", "lumière", "été", "forêt", "château", "écoles", "villes",
            "rêves", "fleuve", "âme", "liberté", "société", "poésie", "siècle", "frontières"],
    "ger": ["Geschichte", "Meer", "Gärten", "Städte", "Brücke", "Träume", "Wälder", "Musik", "Sprache",
            "Gesellschaft", "Flüsse", "Nächte", "Bücher", "Königin", "Reise", "Zeitalter"],
    "spa": ["historia", "mar", "memoria", "jardín", "ciudades", "río", "sueños", "montaña", "poesía",
            "canción", "frontera", "años", "niños", "corazón", "isla", "camino"],
}
AUTHORS = ["Müller, Jürgen", "García Márquez, Elena", "Lefèvre, Hélène", "Núñez, Tomás", "Okafor, Chidi",
           "Brandt, Sören", "Dvořák, Petra", "Smith, Laura", "Çelik, Ayşe", "Åberg, Nils", "Chen, Wei",
           "Nørgaard, Mette", "Rossi, Giulia", "Walker, James", "Fontaine, Gaëlle", "Peña, Álvaro",
           "Kowalski, Paweł", "Schröder, Anke", "Martín, Inés", "O'Brien, Siobhán", "Grün, Matthias",
           "Durand, François", "Ibáñez, José", "Hughes, Megan"]
CLASSES = ["PQ2603", "PQ6613", "PT2625", "PR6068", "PS3563", "QA76.73", "QA76.9", "QA9", "QA76", "QA402.5",
           "HD9710", "HD9710.5", "HB171", "E184", "DC35", "DP48", "DD89", "Z678.9", "GV1017", "ML410",
           "N6490", "QH541.5", "QH541.15", "BF109", "TK5105.888", "TK5105.88", "PN1995.9", "G149", "PQ2603.5"]
SUBJECTS = ["Economic history", "Rivers", "Computer programming", "Migration, Internal", "Gardens",
            "Libraries", "Poetry, Modern", "Shipping", "Urbanization", "Mathematics", "Birds", "Music",
            "Cities and towns", "Memory", "Forests and forestry"]
BRANCHES = ["MAIN", "EAST", "WEST", "MUSIC", "SCI"]
CUT = re.compile(r"^([A-Z]{1,3})(\d+(?:\.\d+)?)(?:\s*\.?\s*([A-Z]\d+))?(?:\s+\.?([A-Z]\d+))?(?:\s+(\d{4}))?$")


# --- ISO 2709 --------------------------------------------------------------------------------

def marc8(s: str) -> bytes:
    out = bytearray()
    decomposed = unicodedata.normalize("NFD", s)
    i = 0
    while i < len(decomposed):
        ch = decomposed[i]
        j = i + 1
        marks = []
        while j < len(decomposed) and unicodedata.combining(decomposed[j]):
            marks.append(decomposed[j])
            j += 1
        composed = unicodedata.normalize("NFC", ch + "".join(marks))
        if composed in MARC8_SPACING:
            out.append(MARC8_SPACING[composed])
        else:
            for m in marks:
                out.append(MARC8_COMBINING[m])
            if ord(ch) > 127:
                raise ValueError(f"no MARC-8 mapping for {ch!r}")
            out += ch.encode("ascii")
        i = j
    return bytes(out)


def iso2709(leader: str, fields: list[tuple], enc: str) -> bytes:
    """fields: (tag, data) for control fields, (tag, ind1, ind2, [(code, value)]) for data fields."""
    coder = (lambda s: s.encode("utf-8")) if enc == "utf8" else marc8
    directory, body = bytearray(), bytearray()
    for f in fields:
        if len(f) == 2:
            data = f[1].encode("ascii") + b"\x1e"
        else:
            data = (f[1] + f[2]).encode("ascii") + b"".join(b"\x1f" + c.encode("ascii") + coder(v) for c, v in f[3]) + b"\x1e"
        directory += f"{f[0]}{len(data):04d}{len(body):05d}".encode("ascii")
        body += data
    base = 24 + len(directory) + 1
    total = base + len(body) + 1
    lead = f"{total:05d}" + leader[5:12] + f"{base:05d}" + leader[17:]
    return lead.encode("ascii") + bytes(directory) + b"\x1e" + bytes(body) + b"\x1d"


# --- identifiers ------------------------------------------------------------------------------

def isbn13_check(d12: str) -> str:
    s = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(d12))
    return str((10 - s % 10) % 10)


def isbn10_check(d9: str) -> str:
    s = sum(int(c) * (10 - i) for i, c in enumerate(d9))
    r = (11 - s % 11) % 11
    return "X" if r == 10 else str(r)


def to13(isbn10: str) -> str:
    d12 = "978" + isbn10[:9]
    return d12 + isbn13_check(d12)


def hyphenate10(i: str, rng: random.Random) -> str:
    a = rng.randint(1, 2)
    b = rng.randint(2, 4)
    return f"{i[:a]}-{i[a:a + b]}-{i[a + b:9]}-{i[9]}"


# --- the catalogue's rules (the reference) -------------------------------------------------

def nonfiling(title: str, lang: str) -> int:
    for art in ARTICLES.get(lang, []):
        if title.startswith(art):
            return len(art)
    return 0


def title_key(title: str, nf: int) -> str:
    t = unicodedata.normalize("NFC", title[nf:]).lower()
    return " ".join(re.sub(r"[^\w\s]", " ", t).split())


def parse_call(a: str, b: str) -> tuple | None:
    s = " ".join(f"{a} {b}".upper().split())
    s = re.sub(r"^([A-Z]{1,3})\s+(\d)", r"\1\2", s)
    m = CUT.match(s)
    if not m:
        return None
    return m.groups()


def display_call(parts) -> str:
    cls, num, c1, c2, yr = parts
    out = f"{cls}{num}"
    if c1:
        out += f" .{c1}"
    if c2:
        out += f" {c2}"
    if yr:
        out += f" {yr}"
    return out


def call_sort_key(parts) -> tuple:
    cls, num, c1, c2, yr = parts

    def cutter(c):
        return (0, "", Decimal(0)) if not c else (1, c[0], Decimal("0." + c[1:]))
    return (cls, Decimal(num), cutter(c1), cutter(c2), int(yr) if yr else -1)


# --- generation ----------------------------------------------------------------------------

class Work:
    pass


def make_title(rng: random.Random, lang: str, with_article: bool) -> str:
    words = rng.sample(WORDS[lang], 2)
    conj = {"eng": "and", "fre": "et", "ger": "und", "spa": "y"}[lang]
    core = f"{words[0]} {conj} {words[1]}"
    if with_article:
        art = rng.choice(ARTICLES[lang])
        core = art + core
    return core[0].upper() + core[1:]


def build(rng: random.Random) -> tuple[list[dict], dict]:
    works = []
    used_isbn, used_oclc = set(), set()
    for _i in range(N_WORKS):
        w = Work()
        w.lang = rng.choices(["eng", "fre", "ger", "spa"], weights=[5, 2, 2, 2])[0]
        w.title = make_title(rng, w.lang, rng.random() < 0.45)
        w.subtitle = rng.choice(["", "", "a study", "essays", "new perspectives", "selected writings"])
        w.author = rng.choice(AUTHORS)
        w.year = rng.randint(1958, 2023)
        w.isbn10 = None
        if w.year >= 1972 and rng.random() < 0.85:
            while True:
                d9 = f"{rng.randint(0, 999999999):09d}"
                if d9 not in used_isbn:
                    used_isbn.add(d9)
                    break
            w.isbn10 = d9 + isbn10_check(d9)
        w.oclc = None
        if rng.random() < 0.75:
            while True:
                o = rng.randint(1000, 1_500_000_000)
                if o not in used_oclc:
                    used_oclc.add(o)
                    break
            w.oclc = o
        w.cls = rng.choice(CLASSES)
        # Cutter numbers are decimals and never end in 0.
        w.c1 = f"{chr(rng.randint(65, 90))}{rng.randint(1, 999)}".rstrip("0")
        w.c2 = f"{chr(rng.randint(65, 90))}{rng.randint(1, 99)}".rstrip("0") if rng.random() < 0.4 else None
        w.has_050 = rng.random() < 0.93
        w.subjects = rng.sample(SUBJECTS, rng.randint(1, 3))
        w.pages = rng.randint(90, 780)
        works.append(w)
    # Planted: cutters whose decimal order differs from integer order, and class numbers whose
    # numeric order differs from string order, on the same shelf.
    for k, (cls, c1) in enumerate([("QA76.73", "P98"), ("QA76.73", "P985"), ("QA76.73", "P9"), ("QA76.73", "P1"),
                                   ("QA9", "B7"), ("QA76", "B65"), ("QA76.9", "D3"), ("HD9710.5", "G7"),
                                   ("HD9710", "G65")]):
        works[k].cls, works[k].c1, works[k].c2, works[k].has_050 = cls, c1, None, True
    # Planted: two editions with the same title and year but different ISBNs (not duplicates).
    works[20].title, works[21].title = works[22].title, works[22].title
    works[20].lang = works[21].lang = works[22].lang
    works[20].year = works[21].year = works[22].year
    for k in (20, 21, 22):
        d9 = f"{900000000 + k:09d}"
        works[k].isbn10 = d9 + isbn10_check(d9)
    # Planted: an English title beginning with a foreign article, a Spanish "A la", a French L'.
    works[30].lang, works[30].title = "eng", "Die hard economics"
    works[31].lang, works[31].title = "spa", "A la sombra de los años"
    works[32].lang, works[32].title = "fre", "L'âme et la forêt"
    works[33].lang, works[33].title = "ger", "Das Meer und Nächte"
    works[34].lang, works[34].title = "eng", "An orchard and letters"
    # Planted: titles matched only by title key (no ISBN, no OCLC), one copy with the article.
    for k in (40, 41, 42):
        works[k].isbn10, works[k].oclc, works[k].year = None, None, 1961 + k

    records = []
    next_id = [1]

    def new_id():
        rid = f"vbk{next_id[0]:06d}"
        next_id[0] += 1
        return rid

    for wi, w in enumerate(works):
        copies = 1
        if wi in (40, 41, 42) or rng.random() < 0.12:
            copies = rng.choice([2, 2, 2, 3])
        for c in range(copies):
            r = {"work": wi, "id": None, "lang": w.lang, "title": w.title, "author": w.author, "year": w.year}
            r["enc"] = rng.choices(["marc8", "utf8"], weights=[2, 3])[0]
            r["leader9_lie"] = r["enc"] == "utf8" and rng.random() < 0.08
            r["short008"] = rng.random() < 0.07
            r["has041"] = w.lang != "eng" and rng.random() < 0.6
            r["isbns"] = []
            if w.isbn10:
                form = rng.choice(["10h", "10", "13", "13h", "10q"] if c else ["10h", "13", "10q", "13"])
                if form.startswith("13"):
                    v = to13(w.isbn10)
                    r["isbns"].append((f"{v[:3]}-{v[3:]}" if form == "13h" else v, None))
                else:
                    v = hyphenate10(w.isbn10, rng) if form == "10h" else w.isbn10
                    r["isbns"].append((v, rng.choice(["pbk.", "hbk.", "hbk. : alk. paper"]) if form == "10q" else None))
            r["oclc"] = None
            if w.oclc and (c == 0 or rng.random() < 0.7):
                r["oclc"] = rng.choice([f"(OCoLC){w.oclc}", f"(OCoLC)ocm{w.oclc:08d}", f"(OCoLC)ocn{w.oclc:09d}",
                                        f"(OCoLC)on{w.oclc:010d}"] if w.oclc < 10**8 else
                                       [f"(OCoLC){w.oclc}", f"(OCoLC)on{w.oclc}"])
            r["nf_given"] = rng.choice([0, 0, nonfiling(w.title, w.lang), 4])
            r["call"] = messy_call(rng, w) if w.has_050 else None
            r["holdings"] = [(rng.choice(BRANCHES), f"3{rng.randint(10**12, 10**13 - 1)}")
                             for _ in range(rng.randint(1, 2))]
            r["subjects"] = w.subjects
            r["pages"] = w.pages
            r["subtitle"] = w.subtitle
            records.append(r)
    # Planted: a work with a bad ISBN-10 check digit, and one with an X check digit.
    bad = next(r for r in records if r["isbns"] and len(r["isbns"][0][0].replace("-", "")) == 10
               and r["work"] > 50)
    digits = bad["isbns"][0][0].replace("-", "")
    wrong = digits[:9] + ("0" if digits[9] != "0" else "1")
    bad["isbns"].append((wrong, None))
    x_work = next(w for w in works[60:] if w.isbn10)
    while True:
        d9 = f"{rng.randint(0, 999999999):09d}"
        if isbn10_check(d9) == "X" and d9 not in used_isbn:
            break
    for r in records:
        if r["work"] == works.index(x_work):
            r["isbns"] = [(d9 + "X", None)]
    x_work.isbn10 = d9 + "X"
    # Planted transitive cluster: copy A shares OCLC with B, B shares ISBN with C.
    tw = next(i for i, w in enumerate(works) if w.isbn10 and w.oclc and i > 100)
    trio = [r for r in records if r["work"] == tw]
    while len(trio) < 3:
        extra = dict(trio[0])
        extra["holdings"] = [(rng.choice(BRANCHES), f"3{rng.randint(10**12, 10**13 - 1)}")]
        records.append(extra)
        trio.append(extra)
    trio[0]["isbns"], trio[0]["oclc"] = [], f"(OCoLC)ocm{works[tw].oclc:08d}" if works[tw].oclc < 10**8 else f"(OCoLC){works[tw].oclc}"
    trio[1]["oclc"] = f"(OCoLC){works[tw].oclc}"
    trio[1]["isbns"] = [(to13(works[tw].isbn10), None)]
    trio[2]["oclc"] = None
    trio[2]["isbns"] = [(hyphenate10(works[tw].isbn10, rng), None)]
    # Title-key copies: one with the article dropped by the vendor, the same work otherwise.
    for k in (40, 41, 42):
        copies = [r for r in records if r["work"] == k]
        for r in copies:
            r["short008"] = False
        w = works[k]
        if nonfiling(w.title, w.lang) == 0:
            w.title = ARTICLES[w.lang][0] + w.title[0].lower() + w.title[1:]
            for r in copies:
                r["title"] = w.title
        copies[-1]["title"] = w.title[nonfiling(w.title, w.lang):]
        copies[-1]["title"] = copies[-1]["title"][0].upper() + copies[-1]["title"][1:]
    rng.shuffle(records)
    for r in records:
        r["id"] = new_id()
    return records, {"works": works}


def messy_call(rng: random.Random, w) -> tuple[str, str]:
    cls_letters = re.match(r"[A-Z]+", w.cls).group(0)
    num = w.cls[len(cls_letters):]
    year = str(w.year)
    style = rng.randint(0, 5)
    c2 = f" {w.c2}" if w.c2 else ""
    if style == 0:
        return f"{w.cls}.{w.c1}", f"{c2.strip()} {year}".strip()
    if style == 1:
        return w.cls, f".{w.c1}{c2} {year}"
    if style == 2:
        return f"{cls_letters} {num}", f".{w.c1}{c2} {year}"
    if style == 3:
        return f"{w.cls.lower()} {w.c1.lower()}", f"{c2.strip().lower()} {year}".strip()
    if style == 4:
        return f"{w.cls}  .{w.c1}", f"{c2.strip()}  {year}".strip()
    return f"{w.cls}{w.c1}", f"{c2.strip()} {year}".strip()


def fields_for(r: dict) -> tuple[str, list[tuple]]:
    lang = r["lang"]
    books = "    " + "  " + "    " + " " + "000" + " " + "0" + " "  # 008/18-34 for books
    f008 = f"950101s{r['year']}    xx {books}{lang} d"
    assert len(f008) == 40, f008
    if r["short008"]:
        f008 = f008[:rng_len(r)]
    fields = [("001", r["id"]), ("003", "VnDr"), ("005", "20240115093000.0"), ("008", f008)]
    for isbn, q in r["isbns"]:
        fields.append(("020", " ", " ", [("a", isbn + (f" ({q})" if q else ""))]))
    if r["oclc"]:
        fields.append(("035", " ", " ", [("a", r["oclc"])]))
    if r["has041"]:
        fields.append(("041", "0", " ", [("a", lang)]))
    if r["call"]:
        a, b = r["call"]
        sub = [("a", a)] + ([("b", b)] if b else [])
        fields.append(("050", " ", "4", sub))
    fields.append(("100", "1", " ", [("a", r["author"] + ","), ("e", "author.")]))
    t = r["title"]
    sub = [("a", t + (" :" if r["subtitle"] else " /"))]
    if r["subtitle"]:
        sub.append(("b", r["subtitle"] + " /"))
    sub.append(("c", invert(r["author"]) + "."))
    fields.append(("245", "1", str(r["nf_given"]), sub))
    fields.append(("264", " ", "1", [("a", "London :"), ("b", "Harbour Press,"), ("c", f"{r['year']}.")]))
    fields.append(("300", " ", " ", [("a", f"{r['pages']} pages ;"), ("c", "24 cm")]))
    for s in r["subjects"]:
        fields.append(("650", " ", "0", [("a", s + ".")]))
    for branch, barcode in r["holdings"]:
        fields.append(("852", "0", " ", [("a", "HRL"), ("b", branch), ("p", barcode)]))
    leader = "00000nam a2200000 i 4500"
    if r["enc"] == "marc8" or r["leader9_lie"]:
        leader = leader[:9] + " " + leader[10:]
    return leader, fields


def rng_len(r: dict) -> int:
    return 30 + (int(r["id"][3:]) % 5)


def invert(name: str) -> str:
    last, first = name.split(", ")
    return f"{first} {last}"


def isbn_parts(value: str) -> tuple[str, list[str]]:
    m = re.match(r"^([0-9Xx\-]+)\s*(.*)$", value)
    quals = re.findall(r"\(([^)]*)\)", m.group(2)) if m else []
    return (m.group(1) if m else value), quals


def valid10(d: str) -> bool:
    return bool(re.fullmatch(r"\d{9}[\dX]", d)) and isbn10_check(d[:9]) == d[9]


def valid13(d: str) -> bool:
    return bool(re.fullmatch(r"\d{13}", d)) and isbn13_check(d[:12]) == d[12]


def expected(records: list[dict]) -> dict:
    # Language, nonfiling, ISBNs, keys.
    info = {}
    for r in records:
        lang = r["lang"]
        if r["short008"]:
            lang = r["lang"] if r["has041"] else "eng"
        nf = nonfiling(r["title"], lang)
        good, quals, invalid = [], [], []
        for isbn, q in r["isbns"]:
            raw, qs = isbn_parts(isbn + (f" ({q})" if q else ""))
            d = raw.replace("-", "").upper()
            if len(d) == 10 and valid10(d):
                good.append(to13(d))
            elif len(d) == 13 and valid13(d):
                good.append(d)
            else:
                invalid.append(d)
            quals += qs
        oclc = None
        if r["oclc"]:
            oclc = str(int(re.sub(r"^\(OCoLC\)(ocm|ocn|on)?", "", r["oclc"])))
        keys = [f"o:{oclc}"] if oclc else []
        keys += [f"i:{g}" for g in good]
        if not keys:
            keys = [f"t:{title_key(r['title'], nf)}|{r['year']}"]
        info[r["id"]] = {"lang": lang, "nf": nf, "isbn13": good, "q": quals, "z": invalid, "keys": keys}
    # Union-find over shared keys.
    parent = {r["id"]: r["id"] for r in records}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    owner = {}
    for r in sorted(records, key=lambda r: r["id"]):
        for k in info[r["id"]]["keys"]:
            if k in owner:
                a, b = find(owner[k]), find(r["id"])
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                owner[k] = r["id"]
    clusters = {}
    for r in sorted(records, key=lambda r: r["id"]):
        clusters.setdefault(find(r["id"]), []).append(r)
    survivors, removed, shelf = {}, [], []
    for _root, rs in sorted(clusters.items()):
        keep = min(rs, key=lambda r: r["id"])
        barcodes = sorted({b for r in rs for _, b in r["holdings"]})
        for r in rs:
            if r is not keep:
                removed.append({"kept_id": keep["id"], "removed_id": r["id"]})
        i = info[keep["id"]]
        call = parse_call(*keep["call"]) if keep["call"] else None
        survivors[keep["id"]] = {
            "title": unicodedata.normalize("NFC", keep["title"]), "author": unicodedata.normalize("NFC", keep["author"]),
            "lang": i["lang"], "nonfiling": i["nf"], "isbn13": sorted(i["isbn13"]), "q": sorted(i["q"]),
            "z": sorted(i["z"]), "barcodes": barcodes, "call_number": display_call(call) if call else "",
            "prefix008": None, "subjects": len(keep["subjects"]), "enc": keep["enc"],
            "leader9_lie": keep["leader9_lie"], "short008": keep["short008"],
        }
        shelf.append((call_sort_key(call) if call else None, keep["id"]))
    with_call = sorted((k, rid) for k, rid in shelf if k is not None)
    without = sorted(rid for k, rid in shelf if k is None)
    order = [rid for _, rid in with_call] + without
    return {"survivors": survivors, "removed": sorted(removed, key=lambda x: x["removed_id"]), "shelf_order": order}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    records, _ = build(rng)
    blob = bytearray()
    for r in records:
        leader, fields = fields_for(r)
        blob += iso2709(leader, fields, r["enc"])
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "inputs" / "vendor_batch.mrc").write_bytes(bytes(blob))
    exp = expected(records)
    for rid, s in exp["survivors"].items():
        r = next(x for x in records if x["id"] == rid)
        s["prefix008"] = fields_for(r)[1][3][1][:18]
    exp["canary"] = CANARY
    exp["record_count_in"] = len(records)
    exp["planted"] = {
        "marc8": sorted(rid for rid, s in exp["survivors"].items() if s["enc"] == "marc8"
                        and not unicodedata.normalize("NFC", s["title"] + s["author"]).isascii()),
        "leader9_lie": sorted(rid for rid, s in exp["survivors"].items() if s["leader9_lie"]),
        "short008": sorted(rid for rid, s in exp["survivors"].items() if s["short008"]),
    }
    (out / "reference" / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
