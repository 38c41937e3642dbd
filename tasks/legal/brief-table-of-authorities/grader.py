"""Grader for brief-table-of-authorities.

The generator laid the brief out page by page and resolved every full citation, short form and
"Id." itself, so the authority set, each printed page list, "passim" and the order within each
category have one right answer and are checked exactly. Which parenthetical misdescribes its
case is exact too; only whether the agent's one-sentence statement of the real holding says
what the opinion holds is beyond code: one narrow model probe, asked after every gate.
"""

from __future__ import annotations

import re
import unicodedata

from lastexam.grading import GradeContext, Outcome, Rubric, load_json

MIN_LISTED = 0.8  # of the brief's authorities, for the table to count as one
MIN_EXACT = 0.5   # of them with exact page lists: below this the pages were not resolved
MAX_HOLDING = 500  # characters: the instruction's "one or two sentences"
QUESTION = ("Does the excerpt state, as the court's holding, that an insurer paying the full policy limits within "
            "the statutory period does not act in bad faith merely because it first asked for a recorded statement, "
            "and attribute no contrary holding to the court?")


def norm(s: object) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", str(s or ""))).strip().lower()


def pages_of(value: object) -> object:
    """'passim', a sorted list of ints, or None when the entry's pages are not readable."""
    if isinstance(value, str) and norm(value) == "passim":
        return "passim"
    if isinstance(value, list) and value and all(isinstance(v, (int, str)) and str(v).strip().isdigit() for v in value):
        return sorted({int(str(v).strip()) for v in value})
    return None


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("toa.json")
    auths = {a["key"]: a for a in ref["authorities"]}
    toa, parsed = load_json(ctx.out("toa.json"))
    toa = toa if isinstance(toa, dict) else {}

    # Each entry matched to the one authority whose distinctive citation it contains.
    found: dict[str, dict] = {}
    placed: dict[str, str] = {}
    order: dict[str, list[str]] = {}
    unmatched, repeated = [], []
    for cat, entries in toa.items():
        for e in entries if isinstance(entries, list) else []:
            text = norm(e.get("authority")) if isinstance(e, dict) else ""
            keys = [k for k, a in auths.items() if norm(a["match"]) in text]
            if len(keys) != 1:
                unmatched.append(text[:60])
                continue
            if keys[0] in found:
                repeated.append(keys[0])
                continue
            found[keys[0]], placed[keys[0]] = e, cat
            order.setdefault(cat, []).append(keys[0])
    exact = [k for k, e in found.items()
             if pages_of(e.get("pages")) == ("passim" if auths[k]["passim"] else auths[k]["pages"])]
    r.gate(f"toa.json lists at least {MIN_LISTED:.0%} of the brief's authorities, at least half with exact page lists",
           Outcome(bool(parsed) and len(found) >= MIN_LISTED * len(auths) and len(exact) >= MIN_EXACT * len(auths),
                   parsed.message if not parsed else f"{len(found)} of {len(auths)} listed, {len(exact)} exact",
                   expected=len(auths), seen={"listed": len(found), "exact pages": len(exact)}))

    missing = sorted(set(auths) - set(found))
    r.check("every authority listed once and nothing else (Id. and short forms are not authorities)", 2,
            Outcome(not missing and not unmatched and not repeated, "",
                    seen={"missing": missing, "unmatched": unmatched[:4], "repeated": repeated} if
                    (missing or unmatched or repeated) else None))
    wrong_cat = [k for k, c in placed.items() if c != auths[k]["category"]]
    r.check("each authority under its category (Cases, Statutes, Rules, Other Authorities)", 1,
            Outcome(not wrong_cat and bool(found), "", seen=wrong_cat or None))
    wrong_pages = sorted(set(found) - set(exact))
    r.check("page lists exact for every authority (printed body page numbers, short forms and Id. resolved)", 4,
            Outcome(not wrong_pages and not missing, f"{len(wrong_pages)} wrong, {len(missing)} missing",
                    seen={k: found[k].get("pages") for k in wrong_pages[:4]} or None))
    wrong_passim = [k for k, e in found.items() if (pages_of(e.get("pages")) == "passim") != auths[k]["passim"]]
    r.check(f"'passim' exactly for the authorities cited on {ref['passim']} or more pages", 1,
            Outcome(not wrong_passim and bool(found), "", seen=wrong_passim or None))
    bad_order = [c for c, ks in order.items() if ks != sorted(ks, key=lambda k: auths[k]["sort"])]
    r.check("entries in order within each category", 1, Outcome(not bad_order and bool(found), "", seen=bad_order or None))

    mis = ref["misdescribed"]
    cc, cc_ok = load_json(ctx.out("cite_check.json"))
    cc = cc if isinstance(cc, dict) else {}
    cited = [k for k, a in auths.items() if norm(a["match"]) in norm(cc.get("citation"))]
    named = bool(cc_ok) and cited == [mis["key"]]  # that case alone, not a list of candidates
    r.check("cite check names the case whose parenthetical misstates its holding", 2,
            Outcome(named, cc_ok.message if not cc_ok else "", expected=mis["citation"], seen=cc.get("citation")))
    page = cc.get("page")
    r.check("cite check gives the printed page of that parenthetical", 1,
            Outcome(named and str(page).strip() == str(mis["page"]), "", expected=mis["page"], seen=page))
    holding = cc.get("holding")
    name = "cite check states the court's actual holding"
    if not all(c.passed for c in r.checks if c.gate) or not named or not isinstance(holding, str) or not holding.strip():
        r.check(name, 2, Outcome(False, "not asked: no table, the wrong case, or no holding sentence"))
    elif len(holding.strip()) > MAX_HOLDING:
        r.check(name, 2, Outcome(False, f"not asked: the holding is longer than {MAX_HOLDING} characters",
                                 expected=f"<= {MAX_HOLDING}", seen=len(holding.strip())))
    else:
        r.check(name, 2, ctx.probe(QUESTION, holding.strip()))
    return r
