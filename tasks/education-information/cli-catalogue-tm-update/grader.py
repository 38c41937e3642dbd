"""Grader for cli-catalogue-tm-update.

Leverage has one right answer under the instruction's rules (reference/leverage.json, from the
generator's own scoring), so the catalogue is checked entry by entry and the analysis exactly.
Only the quality of the brand-new translations is beyond code: after every deterministic gate,
one narrow model probe for each of the three longest new singular messages asks whether it is
faithful, and a fourth asks it of the other new messages together, so that every new message is
reviewed. The excerpts quote the entries as PO text (escaped), so that a translation cannot
forge lines of its own excerpt.
"""

from __future__ import annotations

import re
import subprocess

from lastexam.grading import GradeContext, Outcome, Rubric, load_csv, rows_by

MAX_BYTES = 5_000_000  # the real catalogue is about 20 kB
BANDS = ["exact", "fuzzy-100", "95-99", "85-94", "75-84", "new"]
PLURAL_RULE = re.compile(r"nplurals\s*=\s*2\s*;\s*plural\s*=\s*\(?\s*n\s*!=\s*1\s*\)?\s*;?")
C_FORMAT = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|j|z|t|L)?[diouxXeEfgGcsp]"
                      r"|%<PRI[a-zA-Z0-9]+>")
QUESTION = ("Is the Spanish msgstr in the excerpt a faithful translation of the English msgid, with no "
            "meaning added, lost or reversed?")
QUESTION_REST = ("Is every Spanish msgstr in the excerpt (for msgid_plural, both msgstr[0] and msgstr[1]) a faithful "
                 "translation of the English msgid above it, with no meaning added, lost or reversed?")
N_PROBES = 3  # the longest new singular messages, each on its own; then the rest in one probe
ENGLISH_KEPT = 0.5  # a "translation" that keeps this share of the msgid's words is the English


def directives(s: str) -> list[str]:
    return sorted(C_FORMAT.findall(s or ""))


def forms_of(e, want: dict) -> list[str]:
    return [e.msgstr_plural.get(0, ""), e.msgstr_plural.get(1, "")] if want["msgid_plural"] else [e.msgstr]


def english_words(s: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", s)}


def po_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def excerpt_of(e, key: tuple[str, str], want: dict) -> str:
    """The entry as PO text, the agent's strings escaped as in the file."""
    if not want["msgid_plural"]:
        return f"msgid {po_quote(key[1])}\nmsgstr {po_quote(e.msgstr)}"
    f0, f1 = forms_of(e, want)
    return (f"msgid {po_quote(key[1])}\nmsgid_plural {po_quote(want['msgid_plural'])}\n"
            f"msgstr[0] {po_quote(f0)}\nmsgstr[1] {po_quote(f1)}")


def read_po(path) -> tuple[dict | None, object, str]:
    """(entries by (msgctxt, msgid), the polib file, problem)."""
    if not path.is_file():
        return None, None, "es.po is missing"
    if path.stat().st_size > MAX_BYTES:
        return None, None, "es.po is too large"
    try:
        import polib

        po = polib.pofile(str(path), encoding="utf-8")
    except Exception as e:  # polib raises IOError, ValueError, UnicodeDecodeError... on garbage
        return None, None, f"es.po does not parse: {type(e).__name__}: {str(e)[:200]}"
    entries: dict = {}
    for e in po:
        if not e.obsolete and e.msgid:
            entries.setdefault((e.msgctxt or "", e.msgid), e)
    return entries, po, ""


def msgfmt_check(path) -> Outcome:
    try:
        proc = subprocess.run(["msgfmt", "-c", "-o", "/dev/null", str(path)], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Outcome(False, f"msgfmt could not run: {e}")
    errors = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if "warning" not in ln]
    return Outcome(proc.returncode == 0, "; ".join(errors[:3]) or "clean", expected="exit 0", seen=proc.returncode)


def term_pattern(es: str) -> re.Pattern:
    """The Spanish term with an optional plural ending on each word."""
    return re.compile(r"\b" + r"\s+".join(re.escape(w) + r"(?:s|es)?" for w in es.split()) + r"\b", re.I)


def translated_ok(e, want: dict) -> str:
    """'' when a new entry is translated by the rules; else why not."""
    forms = forms_of(e, want)
    source = english_words(f"{want['msgid']} {want['msgid_plural']}")
    if "fuzzy" in e.flags:
        return "flagged fuzzy"
    if any(not f.strip() for f in forms):
        return "untranslated"
    if any(f.strip() in (want["msgid"], want["msgid_plural"]) for f in forms):
        return "the English copied"
    if any(len(english_words(f) & source) >= ENGLISH_KEPT * len(source) > 0 for f in forms):
        return "mostly the English words"
    if any("\n" in f and "\n" not in want["msgid"] for f in forms):
        return "a line break the English has not"
    if any(directives(f) != want["directives"] for f in forms):
        return "format directives differ"
    return ""


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("leverage.json")
    want = {(w["msgctxt"], w["msgid"]): w for w in ref["entries"]}
    got, po, why = read_po(ctx.out("es.po"))
    fmt = msgfmt_check(ctx.out("es.po")) if got is not None else Outcome(False, why)
    same = got is not None and set(got) == set(want) and all(
        (got[k].msgid_plural or "") == w["msgid_plural"] for k, w in want.items())
    r.gate("es.po parses, passes msgfmt -c and holds exactly the template's entries",
           Outcome(bool(fmt) and same, f"{why or fmt.message}; {len(got or {})} entries, {len(want)} in the template",
                   expected=len(want), seen=len(set(got or {}) & set(want))))
    got = got or {}

    new_keys = [k for k, w in want.items() if w["band"] == "new"]
    bad_new = {k[1]: translated_ok(got[k], want[k]) for k in new_keys if k in got and translated_ok(got[k], want[k])}
    bad_new.update({k[1]: "missing" for k in new_keys if k not in got})
    r.gate("every new message is translated: not fuzzy, not the English, same format directives and line breaks, "
           "all forms",
                      Outcome(not bad_new, f"{len(bad_new)} of {len(new_keys)} new messages wrong",
                              expected="all translated", seen=dict(list(bad_new.items())[:4]) or None))

    def mismatches(test) -> list[str]:
        return [k[1] for k, w in want.items() if k in got and not test(got[k], w)]

    exact_bad = mismatches(lambda e, w: w["band"] != "exact" or (
        "fuzzy" not in e.flags and forms_of(e, w) in w["tm_forms"]))
    r.check("exact matches carried over from the approved TM entry unchanged, not fuzzy", 3,
            Outcome(not exact_bad, f"{len(exact_bad)} wrong", expected=0, seen=exact_bad[:4] or None))
    flag_bad = mismatches(lambda e, w: ("fuzzy" in e.flags) == (w["band"] not in ("exact", "new")))
    r.check("#, fuzzy exactly on the entries of the fuzzy bands (fuzzy-100 to 75-84)", 3,
            Outcome(not flag_bad, f"{len(flag_bad)} entries flagged wrongly", expected=0, seen=flag_bad[:4] or None))
    fill_bad = mismatches(lambda e, w: w["band"] in ("exact", "new") or forms_of(e, w) in w["tm_forms"])
    r.check("fuzzy entries pre-filled with the translation of a best-scoring TM entry", 2,
            Outcome(not fill_bad, f"{len(fill_bad)} wrong", expected=0, seen=fill_bad[:4] or None))

    meta = getattr(po, "metadata", {}) or {}
    header_ok = (meta.get("Language", "").strip() in ("es", "es_ES") and "utf-8" in meta.get("Content-Type", "").lower()
                 and bool(PLURAL_RULE.fullmatch(meta.get("Plural-Forms", "").strip())))
    r.check("header: Language es, UTF-8, Plural-Forms nplurals=2; plural=(n != 1)", 1,
            Outcome(header_ok, "", seen={k: meta.get(k) for k in ("Language", "Plural-Forms")}))

    term_bad = []
    for k in new_keys:
        if k not in got:
            continue
        text = " ".join([got[k].msgstr, *got[k].msgstr_plural.values()])
        source = f"{k[1]} {want[k]['msgid_plural']}".lower()
        term_bad += [f"{en} -> {es}" for en, es in ref["termbase"].items()
                     if re.search(rf"\b{re.escape(en)}", source) and not term_pattern(es).search(text)]
        term_bad += [f"{bad} used" for en, bad in ref["forbidden"].items() if re.search(rf"\b{bad}", text, re.I)]
    r.check("new translations follow the termbase", 1,
            Outcome(not term_bad and bool(new_keys) and not bad_new, "; ".join(term_bad[:4]) or "all terms"))

    rows, loaded = load_csv(ctx.out("analysis.csv"), required_columns=["band", "segments", "words"])
    by_band = rows_by(rows, "band") if loaded else {}
    wrong = [b for b in BANDS if str((by_band.get(b) or {}).get("segments", "")).strip() != str(
        ref["analysis"].get(b, {}).get("segments", 0)) or str((by_band.get(b) or {}).get("words", "")).strip() != str(
        ref["analysis"].get(b, {}).get("words", 0))]
    r.check("analysis.csv: segments and words per band exact", 2,
            Outcome(bool(loaded) and not wrong, loaded.message if not loaded else f"wrong bands: {wrong}",
                    expected=ref["analysis"], seen=wrong or None))

    # The reviewer's questions, only for a catalogue that passed every gate.
    longest = sorted((k for k in new_keys if not want[k]["msgid_plural"]), key=lambda k: (-len(k[1]), k))[:N_PROBES]
    rest = [k for k in new_keys if k not in longest]
    asks = [(f"reviewer: new message {i} is a faithful translation", 3, QUESTION, [k])
            for i, k in enumerate((k for k in new_keys if k in longest), 1)]
    asks.append((f"reviewer: the other {len(rest)} new messages are faithful translations", 4, QUESTION_REST, rest))
    gates_ok = all(c.passed for c in r.checks if c.gate)
    for name, weight, question, keys in asks:
        if not gates_ok:
            r.check(name, weight, Outcome(False, "not asked: a gate failed"))
            continue
        r.check(name, weight, ctx.probe(question, "\n\n".join(excerpt_of(got[k], k, want[k]) for k in keys)))
    return r
