"""Seeded generator of an appellate brief (PDF), the cited opinions (material/), and the reference
Table of Authorities with the one misdescribed holding (reference/).

    python3 generate.py --out DIR

The authorities are fictional (no published answers). The brief is laid out page by page, so
the printed page of every citation is known: the generator tracks each full citation, short
form and "Id." to its authority as a cite-checker resolves it.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SEED = 15_1983
CANARY = "a19e5c29-88c1-427e-8f8e-ac6ec1abfdb7"
HERE = Path(__file__).resolve().parent
BODY_PAGES = 12
PASSIM = 5
MISDESCRIBED = "okafor"
ID_RATE = 0.25  # chance that a citation repeats the one before it

# key: (category, full citation without pin, short form with "{pin}", sort key, pin range)
AUTH = {
    "harlan-mercer": ("Cases", "Harlan v. Mercer Freight Co., 512 F.3d 877 (9th Cir. 2008)",
                      "Harlan, 512 F.3d at {pin}", "harlan v. mercer freight", (878, 896)),
    "harlan-doyle": ("Cases", "Harlan v. Doyle, 88 F.4th 301 (9th Cir. 2023)",
                     "Harlan, 88 F.4th at {pin}", "harlan v. doyle", (302, 318)),
    "okafor": ("Cases", "Okafor v. Pinecrest Mut. Ins. Co., 204 Cal. App. 4th 1150 (2012)",
               "Okafor, 204 Cal. App. 4th at {pin}", "okafor v. pinecrest", (1152, 1171)),
    "sandoval": ("Cases", "Sandoval v. City of Ridgecrest, 39 F.4th 1205 (9th Cir. 2022)",
                 "Sandoval, 39 F.4th at {pin}", "sandoval v. city", (1207, 1224)),
    "tallis": ("Cases", "In re Tallis Shipping Corp., 617 B.R. 44 (Bankr. N.D. Cal. 2020)",
               "Tallis Shipping, 617 B.R. at {pin}", "in re tallis", (46, 61)),
    "whitcombe": ("Cases", "Whitcombe v. Arvane Labs., Inc., 3 Cal. 5th 221 (2017)",
                  "Whitcombe, 3 Cal. 5th at {pin}", "whitcombe v. arvane", (223, 240)),
    "usc1291": ("Statutes", "28 U.S.C. § 1291", "28 U.S.C. § 1291", "1-28-01291", None),
    "usc1983": ("Statutes", "42 U.S.C. § 1983", "§ 1983", "1-42-01983", None),
    "ccp425": ("Statutes", "Cal. Civ. Proc. Code § 425.16", "§ 425.16", "2-cal-0425.16", None),
    "frcp12": ("Rules", "Fed. R. Civ. P. 12(b)(6)", "Rule 12(b)(6)", "fed. r. civ. p.", None),
    "frap4": ("Rules", "Fed. R. App. P. 4(a)(1)(A)", "Fed. R. App. P. 4(a)(1)(A)", "fed. r. app. p.", None),
    "tribe": ("Other Authorities", "Laurence H. Tribe, American Constitutional Law (3d ed. 2000)",
              "Tribe, supra, at {pin}", "tribe", (1180, 1215)),
    "marsh": ("Other Authorities", "Evelyn Marsh, Notice and Its Discontents, 71 Stan. L. Rev. 455 (2019)",
              "Marsh, supra, at {pin}", "marsh", (460, 498)),
}
WEIGHTS = {"harlan-mercer": 6, "harlan-doyle": 4, "okafor": 3, "sandoval": 4, "tallis": 2, "whitcombe": 3,
           "usc1291": 1, "usc1983": 4, "ccp425": 2, "frcp12": 2, "frap4": 1, "tribe": 2, "marsh": 2}

MATCH = {"harlan-mercer": "512 F.3d 877", "harlan-doyle": "88 F.4th 301", "okafor": "204 Cal. App. 4th 1150",
         "sandoval": "39 F.4th 1205", "tallis": "617 B.R. 44", "whitcombe": "3 Cal. 5th 221",
         "usc1291": "28 U.S.C. § 1291", "usc1983": "42 U.S.C. § 1983", "ccp425": "§ 425.16",
         "frcp12": "Civ. P. 12", "frap4": "App. P. 4", "tribe": "Tribe", "marsh": "Marsh"}

# What each opinion holds (material/<key>.txt) and what the brief's parenthetical says it holds.
OPINIONS = {
    "harlan-mercer": ("a carrier's written notice of termination is effective when mailed, not when received",
                      "holding that notice of termination is effective upon mailing"),
    "harlan-doyle": ("a municipal employee's speech made pursuant to official duties is not protected by the First "
                     "Amendment even when it concerns public safety",
                     "holding that speech pursuant to official duties is unprotected"),
    "okafor": ("an insurer that pays the full policy limits within the statutory period does not act in bad faith "
               "merely because it first requested a recorded statement",
               "holding that an insurer's demand for a recorded statement before paying policy limits is bad faith"),
    "sandoval": ("qualified immunity does not shield officers who ignored a clearly posted notice of a pending "
                 "injunction", "holding that officers who ignored a posted injunction notice lacked qualified immunity"),
    "tallis": ("a creditor who receives actual notice of the bankruptcy filing is bound by the claims bar date "
               "even without formal service", "holding that actual notice binds a creditor to the bar date"),
    "whitcombe": ("a plaintiff's claim arises from protected activity under the anti-SLAPP statute only if the "
                  "protected activity supplies an element of the claim",
                  "holding that protected activity must supply an element of the claim"),
}

FILLER = [
    "The district court did not engage with this line of authority.",
    "Appellee's contrary reading finds no support in the text.",
    "The record on this point is undisputed.",
    "That conclusion follows from the statute's structure as well as its text.",
    "Nothing in the order below addresses the argument.",
    "The same principle governs here.",
    "Appellee offers no reason to depart from that rule.",
    "The point was preserved below and is reviewed de novo.",
]
SIGNALS = ["See", "See also", "Cf.", "", "", ""]


def roman(n: int) -> str:
    return ["i", "ii", "iii", "iv"][n - 1]


def build(rng: random.Random) -> tuple[list[list[str]], dict[str, set[int]], list[tuple[int, str, bool]]]:
    """Body pages as lists of paragraphs, the pages on which each authority is cited, and the
    citations in order as (page, authority, is "Id.")."""
    keys = list(AUTH)
    cited: set[str] = set()
    pages: dict[str, set[int]] = {k: set() for k in keys}
    last = None
    body = []
    seq: list[tuple[int, str, bool]] = []
    for p in range(1, BODY_PAGES + 1):
        paras = []
        for _ in range(rng.randint(3, 4)):
            sentences = [rng.choice(FILLER)]
            for _ in range(rng.randint(1, 2)):
                k = rng.choices(keys, weights=[WEIGHTS[x] for x in keys])[0]
                if last is not None and rng.random() < ID_RATE:
                    k = last  # cited again at once: "Id."
                cat, full, short, _, pins = AUTH[k]
                pin = rng.randint(*pins) if pins else None
                if k not in cited:
                    sep = " " if cat == "Other Authorities" and "L. Rev." not in full else ", "
                    cite = full if not pins else full.replace(" (", f"{sep}{pin} (", 1)
                    if k in OPINIONS:
                        cite += f" ({OPINIONS[k][1]})"
                    cited.add(k)
                elif last == k:
                    cite = f"Id. at {pin}" if pins else "Id."
                else:
                    cite = short.format(pin=pin)
                signal = rng.choice(SIGNALS)
                if signal and cite.startswith("Id."):
                    cite = "i" + cite[1:]  # "See id. at 5" (Bluebook)
                end = "" if cite.endswith(".") else "."
                sentences.append(f"{signal} {cite}{end}".strip())
                sentences.append(rng.choice(FILLER))
                pages[k].add(p)
                seq.append((p, k, cite.lower().startswith("id.")))
                last = k
            paras.append(" ".join(sentences))
        body.append(paras)
    return body, pages, seq


def table(seq: list[tuple[int, str, bool]], id_to: str) -> dict[str, object]:
    """The page lists (or passim) of a table whose "Id." resolves to the preceding citation
    ("previous"), to the last case cited ("last-case"), or is skipped ("skip")."""
    pages: dict[str, set[int]] = {}
    last_case = None
    for p, k, is_id in seq:
        if is_id and id_to == "skip":
            continue
        got = last_case if is_id and id_to == "last-case" else k
        pages.setdefault(got, set()).add(p)
        if AUTH[k][0] == "Cases":
            last_case = k
    return {k: "passim" if len(v) >= PASSIM else sorted(v) for k, v in pages.items() if k is not None}


def traps_hold(seq: list[tuple[int, str, bool]], pages: dict[str, set[int]]) -> bool:
    """Every authority cited; passim decided at the boundary (one authority on exactly PASSIM pages,
    one on PASSIM - 1); skipping "Id." changes at least two entries and resolving it to the last
    case at least two."""
    right = table(seq, "previous")
    counts = sorted(len(v) for v in pages.values())
    changed = {how: sum(table(seq, how).get(k) != v for k, v in right.items()) for how in ("skip", "last-case")}
    return (all(pages.values()) and PASSIM in counts and PASSIM - 1 in counts
            and changed["skip"] >= 2 and changed["last-case"] >= 2)


def write_pdf(path: Path, body: list[list[str]]) -> None:
    from reportlab import rl_config

    rl_config.invariant = 1  # no creation date or random document id: byte-reproducible
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.utils import simpleSplit
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    w, h = letter
    font, size, lead = "Times-Roman", 11.5, 16

    def lines(text_blocks: list[str], top: float) -> None:
        y = top
        for block in text_blocks:
            for ln in simpleSplit(block, font, size, w - 144):
                c.drawString(72, y, ln)
                y -= lead
            y -= lead * 0.6

    c.setFont("Times-Bold", 11)
    for i, t in enumerate(["No. 25-16204", "IN THE UNITED STATES COURT OF APPEALS FOR THE NINTH CIRCUIT",
                           "DARA WELLSTONE, Plaintiff-Appellant,", "v.", "CITY OF RIDGECREST, et al., Defendants-Appellees.",
                           "On Appeal from the United States District Court for the Eastern District of California",
                           "APPELLANT'S OPENING BRIEF"]):
        c.drawCentredString(w / 2, h - 150 - 40 * i, t)
    c.showPage()
    c.setFont("Times-Bold", 13)
    c.drawCentredString(w / 2, h - 72, "TABLE OF CONTENTS")
    c.setFont(font, size)
    lines(["TABLE OF AUTHORITIES ........ ii", "JURISDICTIONAL STATEMENT ........ 1", "STATEMENT OF THE CASE ........ 2",
           "ARGUMENT ........ 4", "CONCLUSION ........ 12"], h - 110)
    c.drawCentredString(w / 2, 40, roman(1))
    c.showPage()
    for p, paras in enumerate(body, 1):
        c.setFont(font, size)
        lines(paras, h - 72)
        c.drawCentredString(w / 2, 40, str(p))
        c.showPage()
    c.save()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=HERE)
    out = ap.parse_args().out
    for attempt in range(1000):  # the first seeded draw in which every trap is live
        body, pages, seq = build(random.Random(SEED + attempt))
        if traps_hold(seq, pages):
            break
    else:
        raise SystemExit("no draw sets every trap")
    (out / "inputs" / "opinions").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    write_pdf(out / "inputs" / "brief.pdf", body)
    for k in OPINIONS:  # the opinions' texts are the author's (material/), headed by their citation
        body = (HERE / "material" / f"{k}.txt").read_text(encoding="utf-8")
        (out / "inputs" / "opinions" / f"{k}.txt").write_text(f"{AUTH[k][1]}\n\nOPINION\n\n{body}", encoding="utf-8")

    used = {k: sorted(v) for k, v in pages.items() if v}
    ref = {"canary": CANARY, "passim": PASSIM, "categories": ["Cases", "Statutes", "Rules", "Other Authorities"],
           "authorities": [{"key": k, "category": AUTH[k][0], "citation": AUTH[k][1], "sort": AUTH[k][3], "match": MATCH[k],
                            "pages": used[k], "passim": len(used[k]) >= PASSIM} for k in AUTH if k in used],
           "misdescribed": {"key": MISDESCRIBED, "citation": AUTH[MISDESCRIBED][1],
                            "page": min(used[MISDESCRIBED]), "holding": OPINIONS[MISDESCRIBED][0],
                            "brief_says": OPINIONS[MISDESCRIBED][1]}}
    (out / "reference" / "toa.json").write_text(json.dumps(ref, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
