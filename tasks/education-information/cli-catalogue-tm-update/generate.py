"""Seeded generator of a localisation update (inputs/) and its leverage reference (reference/).

    python3 generate.py --out DIR

The translation memory is a subset of the real Spanish coreutils catalogue (material/). The new
release's template is made from its msgids by seeded edits (unchanged, edited, dropped), a few
brand-new messages and two entries that gained a msgctxt. Three TM entries are planted as fuzzy
(unreviewed) translations. The reference applies the leverage rules of instruction.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from pathlib import Path

SEED = 15_2026
CANARY = "40cb567f-d4ad-4edb-adf8-a0d120d16a6b"
HERE = Path(__file__).resolve().parent
N_DROPPED, N_EDITED, N_TM_FUZZY, N_REWORDED = 14, 30, 3, 3
BANDS = (("95-99", 0.95), ("85-94", 0.85), ("75-84", 0.75))
MARGIN = 0.004  # edits whose similarity falls this close to a band limit are redrawn
C_FORMAT = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|j|z|t|L)?[diouxXeEfgGcsp]"
                      r"|%<PRI[a-zA-Z0-9]+>")

NEW = [  # brand-new messages of this release: no TM match reaches 75 %
    ("", "cannot verify the checksum of %s: the file is not readable", ""),
    ("", "%s: symbolic link points outside the destination directory", ""),
    ("", "preserve the timestamps of the source files unless --no-preserve is given", ""),
    ("", "%lu file was skipped because it already exists", "%lu files were skipped because they already exist"),
]
CONTEXTS = ["du --help", "df --help"]  # two msgids reused in a new context
SUFFIXES = [" (ignored)", ": %s", " for %s", "; use --help"]
SWAPS = {"cannot": "could not", "invalid": "unsupported", "unknown": "unrecognized", "file": "input file",
         "error": "failure", "failed": "could not", "read": "load", "directory": "folder",
         "the": "this", "missing": "absent", "too": "overly", "Invalid": "Unsupported"}

HEADER = (
    'msgid ""\nmsgstr ""\n"Project-Id-Version: GNU coreutils 9.9-pre\\n"\n'
    '"Report-Msgid-Bugs-To: bug-coreutils@gnu.org\\n"\n"POT-Creation-Date: 2026-11-02 09:00+0000\\n"\n'
    '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"\n"Last-Translator: FULL NAME <EMAIL@ADDRESS>\\n"\n'
    '"Language-Team: LANGUAGE <LL@li.org>\\n"\n"Language: \\n"\n"MIME-Version: 1.0\\n"\n'
    '"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n\n')


def similarity(a: str, b: str) -> float:
    """1 - Levenshtein(a, b) / max(len): the instruction's fuzzy-match measure."""
    if a == b:
        return 1.0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return 1.0 - prev[-1] / max(len(a), len(b))


def band_of(sim: float) -> str:
    return next((name for name, lo in BANDS if sim >= lo), "new")


def near_limit(sim: float) -> bool:
    return any(abs(sim - lo) < MARGIN for lo in (0.75, 0.85, 0.95, 1.0))


def po_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def read_po(path: Path) -> list[dict]:
    """The entries of a simple PO file (one-line strings, as material/ is written)."""
    entries, cur = [], {}
    key = None
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            if cur.get("msgid"):
                entries.append(cur)
            cur, key = {}, None
            continue
        if line.startswith("#"):
            continue
        m = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr\[\d\]|msgstr) (".*")$', line)
        if m:
            key = m.group(1)
            cur[key] = json.loads(m.group(2))
        elif line.startswith('"') and key:
            cur[key] += json.loads(line)
    return entries


def edit(rng: random.Random, msgid: str) -> str:
    """A release's wording change: a word or two replaced, or a qualifier appended."""
    words = msgid.split(" ")
    swappable = [i for i, w in enumerate(words) if w.strip(",.:;'()") in SWAPS]
    if swappable and rng.random() < 0.7:
        for i in rng.sample(swappable, min(len(swappable), rng.choice([1, 1, 2]))):
            bare = words[i].strip(",.:;'()")
            words[i] = words[i].replace(bare, SWAPS[bare])
        return " ".join(words)
    return msgid.rstrip(".") + rng.choice(SUFFIXES)


def directives(s: str) -> list[str]:
    return sorted(C_FORMAT.findall(s))


def forms(e: dict) -> list[str]:
    """The translation of a TM entry: [msgstr], or [msgstr[0], msgstr[1]] for a plural one."""
    return [e["msgstr[0]"], e["msgstr[1]"]] if e.get("msgid_plural") else [e.get("msgstr", "")]


def entry_text(e: dict, flags: list[str]) -> str:
    lines = [f"#, {', '.join(flags)}"] if flags else []
    if e.get("msgctxt"):
        lines.append(f"msgctxt {po_str(e['msgctxt'])}")
    lines.append(f"msgid {po_str(e['msgid'])}")
    if e.get("msgid_plural"):
        lines += [f"msgid_plural {po_str(e['msgid_plural'])}", 'msgstr[0] ""', 'msgstr[1] ""']
    else:
        lines.append('msgstr ""')
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=HERE)
    out = ap.parse_args().out
    rng = random.Random(SEED)
    tm = read_po(HERE / "material" / "coreutils-es.po")
    idx = list(range(len(tm)))
    rng.shuffle(idx)
    dropped = set(idx[:N_DROPPED])
    edited_pool = [i for i in idx[N_DROPPED:] if not tm[i].get("msgid_plural")]
    tm_fuzzy = set(edited_pool[N_EDITED + 2: N_EDITED + 2 + N_TM_FUZZY])
    contexts = edited_pool[N_EDITED: N_EDITED + 2]
    # Reworded beyond the 75 % limit (msgmerge still offers them as fuzzy): new translations.
    reworded = edited_pool[N_EDITED + 2 + N_TM_FUZZY: N_EDITED + 2 + N_TM_FUZZY + N_REWORDED]
    tm_ids = [e["msgid"] for e in tm]

    pot: list[dict] = []
    for i, e in enumerate(tm):
        if i in dropped:
            continue
        new = {k: v for k, v in e.items() if k in ("msgid", "msgid_plural")}
        if i in edited_pool[:N_EDITED]:
            for _ in range(40):
                cand = edit(rng, e["msgid"])
                best = max(similarity(cand, t) for t in tm_ids)
                if cand not in tm_ids and not near_limit(best) and best >= 0.75:
                    new["msgid"] = cand
                    break
        if i in reworded:
            for _ in range(80):
                cand = edit(rng, edit(rng, e["msgid"]))
                best = max(similarity(cand, t) for t in tm_ids)
                if 0.62 <= best < 0.75 - MARGIN:
                    new["msgid"] = cand
                    break
        pot.append(new)
        if i in contexts:  # the plain entry stays; a second, context-qualified one appears
            pot.append({**new, "msgctxt": CONTEXTS[contexts.index(i)]})
    for ctxt, msgid, plural in NEW:
        e = {"msgid": msgid, **({"msgid_plural": plural} if plural else {}), **({"msgctxt": ctxt} if ctxt else {})}
        assert max(similarity(msgid, t) for t in tm_ids) < 0.75 - MARGIN
        pot.insert(rng.randrange(len(pot)), e)

    # The reference leverage of each template entry against the TM.
    approved = {(e.get("msgctxt", ""), e["msgid"]) for i, e in enumerate(tm) if i not in tm_fuzzy}
    ref_entries, counts = [], {}
    for e in pot:
        key = (e.get("msgctxt", ""), e["msgid"])
        sims = [similarity(e["msgid"], t) for t in tm_ids]
        best = max(sims)
        if key in approved:
            band = "exact"
        elif best == 1.0:
            band = "fuzzy-100"
        else:
            band = band_of(best)
        matches = [j for j, s in enumerate(sims) if s == best] if band != "new" else []
        if band == "exact":
            matches = [j for j, t in enumerate(tm) if (t.get("msgctxt", ""), t["msgid"]) == key]
        ref_entries.append({"msgctxt": key[0], "msgid": e["msgid"], "msgid_plural": e.get("msgid_plural", ""),
                            "band": band, "similarity": round(best, 6),
                            "tm_forms": [forms(tm[j]) for j in matches],
                            "directives": directives(e["msgid"])})
        c = counts.setdefault(band, [0, 0])
        c[0] += 1
        c[1] += len(e["msgid"].split())

    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    pot_text = f"# Template for GNU coreutils 9.9-pre. canary {CANARY}\n" + HEADER
    for e in pot:
        flags = ["c-format"] if directives(e["msgid"]) else []
        pot_text += entry_text(e, flags) + "\n"
    (out / "inputs" / "coreutils.pot").write_text(pot_text, encoding="utf-8")

    tm_text = (HERE / "material" / "coreutils-es.po").read_text(encoding="utf-8")
    for i in sorted(tm_fuzzy):  # planted unreviewed translations in the memory
        line = f"msgid {po_str(tm[i]['msgid'])}\n"
        assert tm_text.count(line) == 1
        tm_text = tm_text.replace(line, "#, fuzzy\n" + line)
    (out / "inputs" / "tm-es.po").write_text(tm_text, encoding="utf-8")

    with open(out / "inputs" / "termbase.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["en", "es", "note"])
        w.writerows([["file", "fichero", "house term of the Spanish team; never 'archivo'"],
                     ["checksum", "suma de comprobación", ""],
                     ["symbolic link", "enlace simbólico", ""],
                     ["timestamp", "marca de tiempo", ""],
                     ["directory", "directorio", "never 'carpeta'"]])

    ref = {"canary": CANARY, "entries": ref_entries,
           "analysis": {b: {"segments": c[0], "words": c[1]} for b, c in sorted(counts.items())},
           "termbase": {"file": "fichero", "checksum": "suma de comprobación", "symbolic link": "enlace simbólico",
                        "timestamp": "marca de tiempo", "directory": "directorio"},
           "forbidden": {"file": "archivo", "directory": "carpeta"}}
    (out / "reference" / "leverage.json").write_text(json.dumps(ref, indent=1, ensure_ascii=False) + "\n",
                                                     encoding="utf-8")


if __name__ == "__main__":
    main()
