"""Narrow, recorded yes/no questions to a model about a quoted piece of a deliverable: only for
what no code can decide, at most MAX_PROBES per grading.

The grader runs in a sandbox without network and never reaches a model. `ctx.probe()` looks the
question up in the answers the host recorded (context.json). An unanswered one comes back as a
failed, pending Outcome; the harness lists it in result.json, and the host asks the model
through the gateway and grades again with the answer (lastexam/run/probing.py). Every probe, its
excerpt, model, answer and raw response end up in the rubric's PROBES_CHECK evidence, from which
a regrade replays them.
"""

from __future__ import annotations

import hashlib

from lastexam.grading.rubric import Outcome

TYPE_CHECKING = False  # typing itself costs each grading's fresh Python an import
if TYPE_CHECKING:
    from typing import Any

MAX_PROBES = 4
MAX_QUESTION_CHARS = 300
MAX_EXCERPT_CHARS = 2000  # longer excerpts are clipped (agent output can be any size)
MAX_RAW_CHARS = 2000
PROBES_CHECK = "model probes (recorded answers)"


def probe_key(question: str, excerpt: str) -> str:
    return hashlib.sha256(f"{question}\x00{excerpt}".encode("utf-8", "replace")).hexdigest()[:32]


def ask(answers: dict[str, Any], asked: list[dict[str, Any]], question: str, excerpt: Any) -> Outcome:
    """The recorded answer to `question` about `excerpt`, as an Outcome that passes on "yes"."""
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUESTION_CHARS:
        raise ValueError(f"a probe's question is a non-empty string of at most {MAX_QUESTION_CHARS} chars")
    if not isinstance(excerpt, str):
        excerpt = "" if excerpt is None else str(excerpt)
    excerpt = excerpt[:MAX_EXCERPT_CHARS]
    key = probe_key(question, excerpt)
    record = next((p for p in asked if p["key"] == key), None)
    if record is None:
        if len(asked) >= MAX_PROBES:
            raise ValueError(f"a grader may ask at most {MAX_PROBES} model probes")
        record = {"key": key, "question": question, "excerpt": excerpt}
        found = answers.get(key)
        if isinstance(found, dict) and isinstance(found.get("answer"), bool):
            record.update(answer=found["answer"], model=str(found.get("model", ""))[:200],
                          raw=str(found.get("raw", ""))[:MAX_RAW_CHARS])
        else:
            record["pending"] = True
        asked.append(record)
    if record.get("pending"):
        return Outcome(False, f"model probe not answered yet: {question}", expected="yes")
    verdict = "yes" if record["answer"] else "no"
    return Outcome(record["answer"], f"model probe ({record['model']}): {question} -> {verdict}",
                   expected="yes", seen={"answer": verdict, "model": record["model"], "probe": key})


def answers_from_checks(checks: list[Any]) -> dict[str, dict[str, Any]]:
    """The answers recorded in a rubric's PROBES_CHECK (checks as dicts or objects), by key."""
    for c in checks:
        name = c.get("name") if isinstance(c, dict) else getattr(c, "name", None)
        if name != PROBES_CHECK:
            continue
        evidence = c.get("evidence") if isinstance(c, dict) else getattr(c, "evidence", None)
        probes = (evidence or {}).get("probes") or []
        return {p["key"]: {"answer": p["answer"], "model": p.get("model", ""), "raw": p.get("raw", "")}
                for p in probes if isinstance(p, dict) and isinstance(p.get("answer"), bool)
                and isinstance(p.get("key"), str)}
    return {}
