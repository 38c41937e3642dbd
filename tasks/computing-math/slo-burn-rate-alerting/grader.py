"""Grader for slo-burn-rate-alerting.

The agent's rule file is judged by behaviour, not text: promtool checks it, then runs the
hidden unit-test files of reference/hidden/ against it (synthetic series of the checkout
service with its traps: a duplicate scrape job, probe traffic, 429s, a counter reset, a
neighbouring service). Each file is one check; the agent's own tests are run last.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, read_text

PROMTOOL_TIMEOUT_S = 180
EVIDENCE_CHARS = 500
# hidden test file -> (check name, weight); the crux gate is pages-on-outage.
CHECKS = {
    "availability-sli-values": ("availability SLI ratios of every window (relative 1e-6)", 2.0),
    "latency-sli-values": ("latency SLI ratios of every window (relative 1e-6)", 2.0),
    "multi-day-sli-values": ("availability SLI ratios over two days of 10-minute samples", 1.0),
    "hard-outage-alerts": ("hard outage: pages, keeps paging on the 6h/30m row, resets, tickets", 2.0),
    "slow-burn-alerts": ("4.5x slow burn: a ticket, never a page", 1.5),
    "creeping-burn-alerts": ("1.5x creeping burn: a ticket on the 3d/6h row only, once the budget share is reached", 1.5),
    "quiet-period-alerts": ("quiet: 429 storm, pod restart, probe failures and a small blip stay silent", 1.5),
    "latency-regression-alerts": ("latency regression: latency ticket, then page, then ticket only", 2.0),
    "scrape-duplicates-alerts": ("duplicate scrape job and probe traffic: pages only on real user errors", 2.0),
    "short-spike-alerts": ("4-minute error spike: hot short windows alone do not page", 1.5),
}


def run(argv: list[str], cwd: Path) -> tuple[bool, str]:
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace",
                           timeout=PROMTOOL_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return False, f"promtool did not finish within {PROMTOOL_TIMEOUT_S} s"
    except OSError as e:
        return False, f"promtool could not run: {e}"
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def failure_excerpt(text: str) -> str:
    at = text.find("FAILED")
    return (text[at:] if at >= 0 else text)[:EVIDENCE_CHARS]


def hidden_test(ctx: GradeContext, name: str, rules: Path, placeholder: str) -> Outcome:
    text = ctx.ref(f"hidden/{name}.yml").read_text(encoding="utf-8")
    test = ctx.scratch / "hidden" / f"{name}.yml"
    test.write_text(text.replace(placeholder, str(rules)), encoding="utf-8")
    ok, out = run(["promtool", "test", "rules", str(test)], test.parent)
    if ok and "SUCCESS" in out:
        return Outcome(True, "promtool test rules: SUCCESS")
    return Outcome(False, "promtool test rules failed", expected="SUCCESS", seen=failure_excerpt(out))


def own_tests(ctx: GradeContext, rules_text: str) -> Outcome:
    src = ctx.out("tests/slo_test.yml")
    text, loaded = read_text(src)
    if text is None:
        return Outcome(False, f"tests/slo_test.yml: {loaded.message}")
    missing = [w for w in ("alert_rule_test", "page", "ticket", "availability", "latency")
               if w not in text]
    if missing:
        return Outcome(False, "the tests do not cover both severities and SLOs",
                       expected="alert_rule_test with page and ticket, availability and latency",
                       seen=f"missing: {', '.join(missing)}")
    own = ctx.scratch / "own"
    (own / "tests").mkdir(parents=True)
    (own / "rules").mkdir()
    (own / "rules" / "slo.yml").write_text(rules_text, encoding="utf-8")
    (own / "tests" / "slo_test.yml").write_text(text, encoding="utf-8")
    ok, out = run(["promtool", "test", "rules", "tests/slo_test.yml"], own)
    if not (ok and "SUCCESS" in out):
        return Outcome(False, "the agent's own tests fail", expected="SUCCESS", seen=failure_excerpt(out))
    # tests that still pass on a rule file without rules test nothing
    (own / "rules" / "slo.yml").write_text("groups: []\n", encoding="utf-8")
    vacuous, out = run(["promtool", "test", "rules", "tests/slo_test.yml"], own)
    return Outcome(not vacuous, "SUCCESS on the rules, failures on an empty rule file" if not vacuous
                   else "the tests also pass on an empty rule file", expected="FAILED without rules",
                   seen=out[:EVIDENCE_CHARS])


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    text, loaded = read_text(ctx.out("rules/slo.yml"))
    r.gate("rules/slo.yml is a readable text file", loaded)
    rules = ctx.scratch / "rules" / "slo.yml"
    check_ok, lint_ok, out = False, False, ""
    if text is not None:
        rules.parent.mkdir(parents=True)
        rules.write_text(text, encoding="utf-8")
        check_ok, out = run(["promtool", "check", "rules", str(rules)], rules.parent)
        check_ok = check_ok and "SUCCESS" in out
        lint_ok = check_ok and "FAILED" not in out
    gates_ok = r.gate("promtool check rules passes", Outcome(check_ok, out[:EVIDENCE_CHARS]))
    (ctx.scratch / "hidden").mkdir()
    crux = Outcome(False, "not run: the rule file does not load")
    if check_ok:
        crux = hidden_test(ctx, "pages-on-outage", rules, ref["placeholder"])
    # Crux, coarse: a page for availability 10 minutes into a 13 % 5xx outage.
    gates_ok = r.gate("pages for availability during a hard outage", crux) and gates_ok
    r.check("no promtool lint findings (duplicate rules)", 0.5,
            Outcome(lint_ok, "clean" if lint_ok else failure_excerpt(out)))
    if not gates_ok or text is None:  # the hidden tests cannot change a score of 0
        for name, weight in CHECKS.values():
            r.check(name, weight, Outcome(False, "not run: a gate failed"))
        r.check("own promtool tests pass and cover page, ticket and both SLOs", 1.0,
                Outcome(False, "not run: a gate failed"))
        return r
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(hidden_test, ctx, name, rules, ref["placeholder"])
                   for name in CHECKS}
        results = {name: f.result() for name, f in futures.items()}
    for name, (label, weight) in CHECKS.items():
        r.check(label, weight, results[name])
    r.check("own promtool tests pass and cover page, ticket and both SLOs", 1.0, own_tests(ctx, text))
    return r
