"""Oracle step: pre-translate the msgmerge'd catalogue by the project's leverage rules.

    python3 leverage.py MERGED.po TM.po NEW.po OUT_DIR

MERGED.po is `msgmerge --no-fuzzy-matching` of the TM onto the template (entries in template
order, exact matches carried over); this script recomputes every non-exact entry's best TM
match by the instruction's similarity, pre-fills and flags it, takes the translator's new
translations from NEW.po, and writes es.po and analysis.csv.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import polib

BANDS = (("95-99", 0.95), ("85-94", 0.85), ("75-84", 0.75))
ORDER = ["exact", "fuzzy-100", "95-99", "85-94", "75-84", "new"]


def levenshtein(a: str, b: str) -> int:
    """Edit distance with one row updated in place (diag keeps the previous row's j-1)."""
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diag, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            diag, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diag + cost)
    return row[-1]


def score(a: str, b: str) -> float:
    return 1.0 if a == b else 1.0 - levenshtein(a, b) / max(len(a), len(b))


def main() -> None:
    merged, tm, new = (polib.pofile(p, wrapwidth=0) for p in sys.argv[1:4])
    out = Path(sys.argv[4])
    tm_entries = [e for e in tm if not e.obsolete]
    approved = {(e.msgctxt or "", e.msgid): e for e in tm_entries if "fuzzy" not in e.flags}
    translations = {(e.msgctxt or "", e.msgid): e for e in new}
    counts = {b: [0, 0] for b in ORDER}
    for e in merged:
        if e.obsolete:
            continue
        key = (e.msgctxt or "", e.msgid)
        e.previous_msgid = e.previous_msgid_plural = e.previous_msgctxt = None
        if key in approved:
            band, src = "exact", approved[key]
        else:
            scored = [(score(e.msgid, t.msgid), i) for i, t in enumerate(tm_entries)]
            best, i = max(scored, key=lambda s: (s[0], -s[1]))  # first best in TM order
            band = "fuzzy-100" if best == 1.0 else next((n for n, lo in BANDS if best >= lo), "new")
            src = tm_entries[i] if band != "new" else translations[key]
        e.msgstr, e.msgstr_plural = src.msgstr, dict(src.msgstr_plural)
        e.flags = [f for f in e.flags if f != "fuzzy"] + (["fuzzy"] if band not in ("exact", "new") else [])
        if band not in ("exact", "new"):
            e.previous_msgid = src.msgid
        counts[band][0] += 1
        counts[band][1] += len(e.msgid.split())
    merged.metadata.update({"Language": "es", "Language-Team": "Spanish <es@tp.org.es>",
                            "Plural-Forms": "nplurals=2; plural=(n != 1);",
                            "Content-Type": "text/plain; charset=UTF-8",
                            "Last-Translator": "Oracle <oracle@example.org>",
                            "PO-Revision-Date": "2026-11-20 10:00+0000"})
    merged.save(str(out / "es.po"))
    with open(out / "analysis.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["band", "segments", "words"])
        w.writerows([b, *counts[b]] for b in ORDER)


if __name__ == "__main__":
    main()
