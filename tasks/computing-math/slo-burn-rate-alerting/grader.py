"""Grader for slo-burn-rate-alerting.

The agent's rule file is judged by behaviour, not text: promtool checks it, then runs the
hidden unit-test files of reference/hidden/ against it (synthetic series of the checkout
service with its traps: a duplicate scrape job, probe traffic, 429s, a counter reset, a
neighbouring service). Each file is one check; the agent's own tests are run last.

Several files replay the same scenario. Their test groups of one scenario are run as one
group: the rules are evaluated once per step instead of once per file, and each expression
test carries a PromQL comment naming its file, so that promtool's failures are told apart.
A rule evaluation at step t reads only samples up to t, and every expression test reads
recorded samples at or before its own eval_time, so a longer run changes no result. A merged
run whose output is not expression-test failures alone (an evaluation error ends a run early)
has its files run again one by one.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, read_text

PROMTOOL_TIMEOUT_S = 180
EVIDENCE_CHARS = 500
# Go collects garbage less often (promtool's heap here is tens of MB); the soft limit keeps a
# heap that would pass 1 GiB no larger than the default GOGC=100 would let it grow.
PROMTOOL_ENV = {**os.environ, "GOGC": "400", "GOMEMLIMIT": "1GiB"}
GROUP_START = "  - name: "
EXPR_TESTS = "    promql_expr_test:"
EXPR_START = "      - expr: '"
GROUP_FIELDS = ("    interval: ", "    input_series:", "      - series: '", "        values: '")
# promtool prints each failed expression test as `    expr: "<Go-quoted expr>", time: ...`
TAGGED_FAILURE = re.compile(r'    expr: ".*? #part(\d+)-(\d+)", time: ')
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


def run_streams(argv: list[str], cwd: Path) -> tuple[bool, str, str]:
    """Exit status 0, stdout, stderr; a promtool that did not run has its reason as stdout."""
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace",
                           timeout=PROMTOOL_TIMEOUT_S, check=False, env=PROMTOOL_ENV)
    except subprocess.TimeoutExpired:
        return False, f"promtool did not finish within {PROMTOOL_TIMEOUT_S} s", ""
    except OSError as e:
        return False, f"promtool could not run: {e}", ""
    return p.returncode == 0, p.stdout, p.stderr


def run(argv: list[str], cwd: Path) -> tuple[bool, str]:
    ok, stdout, stderr = run_streams(argv, cwd)
    return ok, (stdout + stderr).strip()


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


def file_groups(text: str) -> tuple[str, list[tuple[str, str, list[list[str]]]]] | None:
    """A hidden test file in generate.py's layout: its head (up to `tests:`) and per test group
    its name line, its interval and input series, and its expression tests (lines each);
    None for any other layout."""
    lines = text.splitlines()
    if "tests:" not in lines:
        return None
    at = lines.index("tests:") + 1
    starts = [i for i in range(at, len(lines)) if lines[i].startswith(GROUP_START)]
    if not starts or starts[0] != at:
        return None
    groups = []
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        block = lines[start:end]
        if EXPR_TESTS not in block:
            return None
        split = block.index(EXPR_TESTS)
        if not all(line.startswith(GROUP_FIELDS) for line in block[1:split]):
            return None
        tests: list[list[str]] = []
        for line in block[split + 1:]:
            if line.startswith(EXPR_START) and line.endswith("'"):
                tests.append([line])
            elif line.startswith("        ") and tests:
                tests[-1].append(line)
            else:
                return None
        groups.append((block[0], "\n".join(block[1:split]), tests))
    return "\n".join(lines[:at]), groups


def merged_failures(ok: bool, stdout: str, stderr: str) -> dict[tuple[int, int], list[str]] | None:
    """The failures of a merged run by (part, group index), each as promtool prints it for the
    part's own file; None unless the run ended in expression-test failures alone (an evaluation
    error stops a run early, and any other output is not read)."""
    if ok and "SUCCESS" in stdout:
        return {}
    lines = stderr.splitlines()
    if ok or not lines or lines[0] != "  FAILED:":
        return None
    failures: dict[tuple[int, int], list[str]] = {}
    last: list[str] | None = None
    for line in lines[1:]:
        tagged = TAGGED_FAILURE.match(line)
        if tagged:
            key = int(tagged.group(1)), int(tagged.group(2))
            line = line.replace(f' #part{key[0]}-{key[1]}", time: ', '", time: ', 1)
            last = failures.setdefault(key, [])
            last.append(line)
        elif line.startswith("        ") and last is not None:
            last[-1] += "\n" + line
        else:
            return None
    return failures or None


def hidden_checks(ctx: GradeContext, rules: Path, placeholder: str) -> dict[str, Outcome]:
    """Each file of CHECKS graded as `promtool test rules` on it alone would grade it."""
    names = list(CHECKS)
    # (file head, interval and input series) -> [(part, group index, name line, expr tests)]
    scenarios: dict[tuple[str, str], list[tuple[int, int, str, list[list[str]]]]] = {}
    for part, name in enumerate(names):
        text = ctx.ref(f"hidden/{name}.yml").read_text(encoding="utf-8")
        layout = file_groups(text.replace(placeholder, str(rules)))
        if layout is None:
            continue
        head, groups = layout
        for index, (name_line, series, tests) in enumerate(groups):
            scenarios.setdefault((head, series), []).append((part, index, name_line, tests))
    parts_of = [{m[0] for m in members} for members in scenarios.values()]
    shared = {part for parts in parts_of if len(parts) > 1 for part in parts}
    merged_dir = ctx.scratch / "merged"
    merged_dir.mkdir()
    runs: list[tuple[Path, list[tuple[int, int]]]] = []
    for (head, series), members in scenarios.items():
        if not {m[0] for m in members} & shared:
            continue
        lines = [head, members[0][2], series, EXPR_TESTS]
        for part, index, _, tests in members:
            for test in tests:
                lines += [f"{test[0][:-1]} #part{part}-{index}'", *test[1:]]
        path = merged_dir / f"scenario-{len(runs)}.yml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        runs.append((path, [(m[0], m[1]) for m in members]))
    alone = [name for part, name in enumerate(names) if part not in shared]
    with ThreadPoolExecutor(max_workers=2) as pool:
        merged = [pool.submit(run_streams, ["promtool", "test", "rules", str(path)], merged_dir)
                  for path, _ in runs]
        single = {name: pool.submit(hidden_test, ctx, name, rules, placeholder) for name in alone}
        results = {name: f.result() for name, f in single.items()}
        # (part, group index) -> its failures; a part in a run that cannot be read is rerun
        failures: dict[tuple[int, int], list[str]] = {}
        unread: set[int] = set()
        for (_, groups), future in zip(runs, merged, strict=True):
            found = merged_failures(*future.result())
            if found is None:
                unread |= {part for part, _ in groups}
                continue
            for key in groups:
                failures[key] = found.get(key, [])
        rerun = {names[part]: pool.submit(hidden_test, ctx, names[part], rules, placeholder)
                 for part in sorted(unread)}
        results |= {name: f.result() for name, f in rerun.items()}
    for part in sorted(shared - unread):
        # promtool reports a file's test groups in order, each group's failures in order
        seen = [f for key in sorted(k for k in failures if k[0] == part) for f in failures[key]]
        if seen:
            results[names[part]] = Outcome(False, "promtool test rules failed", expected="SUCCESS",
                                           seen=("FAILED:\n" + "\n".join(seen))[:EVIDENCE_CHARS])
        else:
            results[names[part]] = Outcome(True, "promtool test rules: SUCCESS")
    return results


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
    results = hidden_checks(ctx, rules, ref["placeholder"])
    for name, (label, weight) in CHECKS.items():
        r.check(label, weight, results[name])
    r.check("own promtool tests pass and cover page, ticket and both SLOs", 1.0, own_tests(ctx, text))
    return r
