"""Grader for semver-prerelease-regression.

reference/probe.py runs the agent's package in a subprocess on cases chosen here and records
its raw answers and the bytecode it executes on a private workload; this file judges that
record against its own SemVer 2.0.0 model. The package must be plain code (plain_problems),
so that it cannot reach the probe's state. The agent's own tests must pass on its fix and
fail on the 2.3.1 code of inputs/.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

RUN_TIMEOUT_S = 240
API = ["Version.__init__", "Version.parse", "Version.bump", "Range.__init__", "satisfies"]


ISSUE_TAGS = ["4.1.0-rc.9", "4.1.0-rc.10", "4.1.0-rc.11", "4.1.0"]
PRE_IDS = ["0", "1", "2", "9", "10", "11", "99", "alpha", "beta", "rc", "a", "a-b", "b", "1a",
           "-", "x-1", "RC", "Beta", "0a"]
WORKLOAD_RANGES = ["^2.1.0", "~1.3.2", ">=2.0.0-beta.1 <2.0.1", "^0.2.0 || ^1.4.0",
                   ">1.0.0-rc.3 <=1.2.0", "~0.5.0-dev.2"]

# ---------- the grader's own SemVer model (independent of the oracle) ----------

_NUM = r"0|[1-9]\d*"
_ID = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(rf"^({_NUM})\.({_NUM})\.({_NUM})(?:-({_ID}(?:\.{_ID})*))?"
                     r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$")


def ref_parse(text: str) -> tuple[int, int, int, tuple[str, ...]] | None:
    m = _SEMVER.match(text)
    if not m:
        return None
    return int(m[1]), int(m[2]), int(m[3]), tuple(m[4].split(".")) if m[4] else ()


def ref_cmp(a: tuple, b: tuple) -> int:
    """SemVer 2.0.0 section 11, written as the walk the specification describes."""
    if a[:3] != b[:3]:
        return -1 if a[:3] < b[:3] else 1
    pa, pb = a[3], b[3]
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb, strict=False):
        if x == y:
            continue
        xd, yd = x.isdigit(), y.isdigit()
        if xd and yd:
            return -1 if int(x) < int(y) else 1
        if xd != yd:
            return -1 if xd else 1
        return -1 if x < y else 1
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


def ref_range(text: str) -> list[list[tuple[str, tuple]]]:
    sets = []
    for part in text.split("||"):
        comps = []
        for tok in part.split() or ["*"]:
            if tok == "*":
                comps.append((">=", (0, 0, 0, ())))
            elif tok[0] in "^~":
                lo = ref_parse(tok[1:])
                hi = ((lo[0], lo[1] + 1, 0, ()) if tok[0] == "~" else (lo[0] + 1, 0, 0, ()) if lo[0]
                      else (0, lo[1] + 1, 0, ()) if lo[1] else (0, 0, lo[2] + 1, ()))
                comps += [(">=", lo), ("<", hi)]
            else:
                op = next((o for o in (">=", "<=", ">", "<", "=") if tok.startswith(o)), "=")
                comps.append((op, ref_parse(tok[len(op):] if tok.startswith(op) else tok)))
        sets.append(comps)
    return sets


def ref_satisfies(v: tuple, text: str) -> bool:
    tests = {">=": lambda c: c >= 0, "<=": lambda c: c <= 0, ">": lambda c: c > 0,
             "<": lambda c: c < 0, "=": lambda c: c == 0}
    for comps in ref_range(text):
        if all(tests[op](ref_cmp(v, b)) for op, b in comps) and (
                not v[3] or any(b[3] and b[:3] == v[:3] for _, b in comps)):
            return True
    return False


def random_range(rng: random.Random) -> str:
    def comp() -> str:
        op = rng.choice(["^", "~", ">=", "<", ">", "<=", ""])
        return op + random_version(rng, build=False)
    sets = [" ".join(comp() for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 2))]
    return " || ".join(sets)


def random_version(rng: random.Random, build: bool = True) -> str:
    text = f"{rng.randint(0, 2)}.{rng.randint(0, 3)}.{rng.randint(0, 3)}"
    if rng.random() < 0.7:
        text += "-" + ".".join(rng.choice(PRE_IDS) for _ in range(rng.randint(1, 3)))
    if build and rng.random() < 0.3:
        text += f"+b{rng.randint(0, 9)}.{rng.choice(['x', 'y-1'])}"
    return text


# ---------- cases (chosen here) and verdicts (judged here, from probe.py's record) ----------

def make_cases() -> dict:
    rng = random.Random(412)
    texts = [random_version(rng) for _ in range(500)]
    cases: dict = {"issue": list(reversed(ISSUE_TAGS)), "pairs": list(zip(texts, texts[1:], strict=False)),
                   "sort": texts[:200], "hash": [random_version(rng, build=False) for _ in range(150)]}
    cases["ranges"] = [(random_version(rng), random_range(rng)) for _ in range(400)]
    cases["max"], cases["invalid_range"] = [], ">=banana"
    for i in range(120):
        tags = [random_version(rng) for _ in range(rng.randint(0, 30))]
        tags += rng.sample(["latest", "v1.0.0", "1.2", "next", "1.0.0-", "01.1.1"], 2)
        rng.shuffle(tags)
        r = random_range(rng) if i % 3 else rng.choice(["^1.0.0", "*", "~0.2.0", ">=0.0.0-0"])
        cases["max"].append((tags, [j % 4 == 0 and ref_parse(t) is not None
                                    for j, t in enumerate(tags)], r))
    rng = random.Random(415)
    tags = [random_version(rng) for _ in range(700)] + ["latest", "v2.0.0", "stable"]
    return cases | {"workload_tags": tags, "workload_ranges": WORKLOAD_RANGES}


def _rows(value, n: int, width: int, kinds: tuple) -> bool:
    return (isinstance(value, list) and len(value) == n and all(
        isinstance(row, list) and len(row) == width and all(isinstance(x, kinds) for x in row)
        for row in value))


def _strs(value, n: int, none_ok: bool = False) -> bool:
    return _rows([value], 1, n, (str, type(None)) if none_ok else (str,))


def _verdict(bad: list[str]) -> dict:
    return {"ok": not bad, "failures": len(bad), "examples": bad[:4]}


def judge_issue(seen, cases) -> dict:
    if not _strs(seen, len(ISSUE_TAGS)):
        return {"ok": False, "error": "no sorted list of the issue's tags"}
    return {"ok": seen == ISSUE_TAGS, "seen": seen}


def judge_precedence(seen, cases) -> dict:
    if not (isinstance(seen, dict) and _rows(seen.get("pairs"), len(cases["pairs"]), 3, (bool,))
            and _strs(seen.get("sorted"), len(cases["sort"]))):
        return {"ok": False, "error": "the record of the precedence cases is malformed"}
    bad = []
    for (a, b), (lt, gt, eq) in zip(cases["pairs"], seen["pairs"], strict=True):
        want = ref_cmp(ref_parse(a), ref_parse(b))
        got = -1 if lt else 1 if gt else 0
        if got != want or eq != (want == 0) or (lt and gt):
            bad.append(f"{a} vs {b}: expected {want}, got {got}")
    keys = [ref_parse(t) for t in seen["sorted"]]
    if (None in keys or sorted(seen["sorted"]) != sorted(cases["sort"])
            or any(ref_cmp(x, y) > 0 for x, y in zip(keys, keys[1:], strict=False))):
        bad.append("sorted() order differs from SemVer precedence")
    return _verdict(bad)


def judge_hash(seen, cases) -> dict:
    if not _rows(seen, len(cases["hash"]), 3, (bool, int)):
        return {"ok": False, "error": "the record of the hash cases is malformed"}
    return _verdict([core for core, row in zip(cases["hash"], seen, strict=True)
                     if row != [True, True, 1]])


def judge_ranges(seen, cases) -> dict:
    if not _rows([seen], 1, len(cases["ranges"]), (bool,)):
        return {"ok": False, "error": "the record of the range cases is malformed"}
    return _verdict([f"satisfies({v!r}, {r!r})" for (v, r), got in zip(cases["ranges"], seen, strict=True)
                     if got != ref_satisfies(ref_parse(v), r)])


def judge_max(seen, cases) -> dict:
    if not (isinstance(seen, dict) and _strs(seen.get("results"), len(cases["max"]), none_ok=True)
            and isinstance(seen.get("invalid_range_raised"), bool)):
        return {"ok": False, "error": "the record of the max_satisfying cases is malformed"}
    bad = []
    for (tags, _, r), got in zip(cases["max"], seen["results"], strict=True):
        ok = [ref_parse(t) for t in tags if ref_parse(t) and ref_satisfies(ref_parse(t), r)]
        want = max(ok, key=functools.cmp_to_key(ref_cmp), default=None)
        key = None if got is None else ref_parse(got)
        if (want is None) != (got is None) or (want is not None and (
                key is None or ref_cmp(key, want) != 0)):
            bad.append(f"max_satisfying(..., {r!r}): expected {want}, got {got}")
    if not seen["invalid_range_raised"]:
        bad.append("an invalid range did not raise InvalidRange")
    return _verdict(bad)


JUDGES = {"issue": judge_issue, "precedence": judge_precedence, "hash": judge_hash,
          "ranges": judge_ranges, "max_satisfying": judge_max}


def judge(record, cases) -> dict:
    """Verdicts from the probe's raw record; anything off-schema fails, never raises."""
    if not isinstance(record, dict) or not isinstance(record.get("signatures"), dict):
        return {"error": "the probe's record is malformed"}
    res: dict = {"signatures": record["signatures"]}
    for name, fn in JUDGES.items():
        seen = record.get(name)
        res[name] = ({"ok": False, "error": str(seen["error"])[:300]}
                     if isinstance(seen, dict) and "error" in seen else fn(seen, cases))
    ops = record.get("opcodes")
    res["opcodes"] = ops if type(ops) is int and ops > 0 else None  # not a bool, not 0
    res["opcodes_error"] = str(ops.get("error") if isinstance(ops, dict) else ops)[:300]
    return res


# ---------- grade ----------

def load_plain(ctx):
    spec = importlib.util.spec_from_file_location("semver_plain", ctx.reference / "plain.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reap(ctx) -> None:
    """SIGKILL every process of the grading sandbox but this one and its ancestors: what the
    agent's tests left running could otherwise rewrite files after the grader returns. Only in
    the grading sandbox's own pid namespace (init bwrap, low pids): elsewhere it does nothing."""
    try:
        init = Path("/proc/1/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return
    if not (init.endswith(b"bwrap") and os.getpid() < 64 and str(ctx.scratch) == "/grade/scratch"):
        return
    keep, pid = {os.getpid()}, os.getpid()
    while pid > 1:
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        keep.add(pid)
    for _ in range(50):
        others = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
                  and int(p.name) not in keep]
        if not others:
            return
        for other in others:
            with contextlib.suppress(OSError):
                os.kill(other, 9)


def probe(ctx, root: Path) -> dict:
    cases = make_cases()
    (ctx.scratch / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    record_path = ctx.scratch / "record.json"
    code, out = run([sys.executable, str(ctx.reference / "probe.py"), str(root),
                     str(ctx.scratch / "cases.json"), str(record_path)], ctx.scratch)
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"error": f"exit {code}: {out[-400:]}"}
    return judge(record, cases)


def run(argv: list[str], cwd: Path, env_path: str | None = None) -> tuple[int, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None) if env_path is None else env.__setitem__("PYTHONPATH", env_path)
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace",
                           timeout=RUN_TIMEOUT_S, env=env, check=False)
    except subprocess.TimeoutExpired:
        return -1, f"did not finish within {RUN_TIMEOUT_S} s"
    except OSError as e:  # no process left to start one: the agent's tests left daemons
        return -1, f"could not start: {e}"
    return p.returncode, p.stdout + p.stderr


def grade(ctx):
    from lastexam.grading import Outcome, Rubric, all_of, read_text

    r = Rubric()
    ref = ctx.reference_json("expected.json")
    pkg = ctx.out("semverkit")
    files = sorted(pkg.glob("*.py")) if pkg.is_dir() else []
    r.gate("semverkit/ package with its modules", Outcome(
        {p.name for p in files} >= {"__init__.py", "version.py", "ranges.py"},
        f"found {[p.name for p in files]}"))
    root = ctx.scratch / "agent"
    res: dict = {}
    sources = {p.name: read_text(p)[0] or "" for p in files}
    problems = load_plain(ctx).plain_problems(sources)
    # the package runs in the probe's process: only plain code may, so that it cannot reach
    # the probe's state, its trace function or its record (see PLAIN_IMPORTS)
    r.gate("the package is plain Python on the allowed standard-library modules (house rule 5)",
           Outcome(not problems, "; ".join(problems[:4]) or "imports and names are plain"))
    if files and not problems:
        (root / "semverkit").mkdir(parents=True)
        for name, text in sources.items():
            (root / "semverkit" / name).write_text(text, encoding="utf-8")
        res = probe(ctx, root)
    r.gate("the package imports", Outcome(bool(res.get("signatures")), str(res.get("error", "ok"))[:400]))
    issue = res.get("issue", {})
    # Crux, coarse: the issue's own example sorts as SemVer says.
    r.gate("issue #412 example sorts rc.9 < rc.10 < rc.11 < 4.1.0", Outcome(
        bool(issue.get("ok")), "sorted as expected" if issue.get("ok") else "wrong order",
        ISSUE_TAGS, issue.get("seen", issue.get("error"))))
    sigs = res.get("signatures") or {}
    r.check("public signatures unchanged (house rule 1)", 1.0, all_of(
        {name: Outcome(sigs.get(name) == want, "", want, sigs.get(name))
         for name, want in ref["signatures"].items()}))

    def section(name: str) -> Outcome:
        s = res.get(name, {})
        return Outcome(bool(s.get("ok")), f"{s.get('failures', '?')} failures" if not s.get("ok")
                       else "all cases agree", "agreement with SemVer 2.0.0", s.get("examples", s.get("error")))

    r.check("precedence of 500 random prerelease pairs and sort order (SemVer 11)", 3.0, section("precedence"))
    r.check("equal versions hash alike (build metadata ignored)", 1.0, section("hash"))
    r.check("ranges behave as before on 400 random cases", 1.5, section("ranges"))
    r.check("max_satisfying on 120 random tag lists (skips junk, prerelease rule, InvalidRange)",
            2.0, section("max_satisfying"))
    ms = sigs.get("max_satisfying")
    r.check("max_satisfying(versions, range_text) signature", 0.5, Outcome(
        ms is not None and [p[:2] for p in ms] == ref["max_satisfying_params"], "",
        ref["max_satisfying_params"], ms))
    ops, budget = res.get("opcodes"), ref["budget_factor"] * ref["reference_opcodes"]
    # the budget is a factor over the maintainers' count on the same private workload
    r.check(f"private workload within {ref['budget_factor']} x the maintainers' bytecode count", 2.0,
            Outcome(ops is not None and ops <= budget, f"{ops} instructions, budget {budget:.0f}",
                    budget, ops if ops is not None else res.get("opcodes_error")))
    r.check("regression tests fail on 2.3.1 and pass on the fix", 1.0, own_tests(ctx, root))
    readme, _ = read_text(ctx.out("README.md"))
    r.check("max_satisfying documented in README.md", 0.5, Outcome(
        readme is not None and "max_satisfying" in readme, "README.md mentions max_satisfying"
        if readme and "max_satisfying" in readme else "README.md missing or silent"))
    return r


def own_tests(ctx, root: Path):
    from lastexam.grading import Outcome, read_text

    tests = sorted(ctx.out("tests").glob("test_*.py")) if ctx.out("tests").is_dir() else []
    if not tests or not (root / "semverkit").is_dir():
        return Outcome(False, "no tests/test_*.py or no package")
    work = ctx.scratch / "own" / "tests"
    work.mkdir(parents=True)
    for t in tests:
        text, _ = read_text(t)
        (work / t.name).write_text(text or "", encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(work)]
    new_code, new_out = run(argv, work.parent, env_path=str(root))
    old_code, old_out = run(argv, work.parent, env_path=str(ctx.inputs))
    reap(ctx)
    ok = new_code == 0 and old_code not in (0, -1)
    # pytest's last line without its timing, so that the evidence is the same run to run
    summary = [re.sub(r" in [0-9.]+s", "", (o.strip().splitlines() or [""])[-1])
               for o in (new_out, old_out)]
    return Outcome(ok, f"pytest exit {new_code} on the fix, {old_code} on 2.3.1",
                   "0 on the fix, a failure on 2.3.1", {"fix": summary[0], "2.3.1": summary[1]})
