"""Grader for semver-prerelease-regression.

The agent's semverkit package is exercised in a subprocess (`python3 grader.py harness DIR`),
which imports it from DIR and compares it with this file's own SemVer 2.0.0 model on seeded
random cases: precedence, hashing, ranges, max_satisfying; it also counts the bytecode the
package executes on a private workload (deterministic, unlike timings). The agent's own
tests must pass on its fix and fail on the 2.3.1 code of inputs/.
"""

from __future__ import annotations

import contextlib
import inspect
import json
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


def random_version(rng: random.Random, build: bool = True) -> str:
    text = f"{rng.randint(0, 2)}.{rng.randint(0, 3)}.{rng.randint(0, 3)}"
    if rng.random() < 0.7:
        text += "-" + ".".join(rng.choice(PRE_IDS) for _ in range(rng.randint(1, 3)))
    if build and rng.random() < 0.3:
        text += f"+b{rng.randint(0, 9)}.{rng.choice(['x', 'y-1'])}"
    return text


# ---------- harness: runs in a subprocess with the agent's package importable ----------

def count_opcodes(package_dir: str, workload) -> int:
    total = 0
    own: dict[str, bool] = {}

    def local(frame, event, arg):
        nonlocal total
        if event == "opcode":
            total += 1
        return local

    def global_trace(frame, event, arg):
        name = frame.f_code.co_filename
        inside = own.get(name)
        if inside is None:
            inside = own[name] = str(Path(name).resolve()).startswith(package_dir)
        if not inside:
            return None
        frame.f_trace_opcodes = True
        return local

    sys.settrace(global_trace)
    try:
        workload()
        if sys.gettrace() is not global_trace:
            raise RuntimeError("the package changed the trace function during the workload")
    finally:
        sys.settrace(None)
    return total


def signature_of(sk, dotted: str) -> list | None:
    obj = sk
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, repr(p.default)] for p in sig.parameters.values()]


def harness(pkg_root: str) -> dict:
    sys.path.insert(0, pkg_root)
    import semverkit as sk

    res: dict = {"signatures": {name: signature_of(sk, name) for name in API + ["max_satisfying"]}}
    rng = random.Random(412)
    sections = {"issue": issue_section, "precedence": precedence_section, "hash": hash_section,
                "ranges": ranges_section, "max_satisfying": max_section}
    for name, fn in sections.items():
        try:
            res[name] = fn(sk, rng)
        except Exception as e:
            res[name] = {"ok": False, "error": f"{type(e).__name__}: {e}"[:300]}
    try:
        pkg_dir = str(Path(sk.__file__).resolve().parent)
        res["opcodes"] = count_opcodes(pkg_dir, lambda: workload(sk))
    except Exception as e:
        res["opcodes"] = None
        res["opcodes_error"] = f"{type(e).__name__}: {e}"[:300]
    return res


def issue_section(sk, rng) -> dict:
    got = [str(v) for v in sorted(sk.Version.parse(t) for t in reversed(ISSUE_TAGS))]
    return {"ok": got == ISSUE_TAGS, "seen": got}


def precedence_section(sk, rng) -> dict:
    bad = []
    texts = [random_version(rng) for _ in range(500)]
    for a, b in zip(texts, texts[1:], strict=False):
        va, vb = sk.Version.parse(a), sk.Version.parse(b)
        want = ref_cmp(ref_parse(a), ref_parse(b))
        got = -1 if va < vb else 1 if vb < va else 0
        if got != want or (va == vb) != (want == 0):
            bad.append(f"{a} vs {b}: expected {want}, got {got}")
    order = [str(v) for v in sorted(sk.Version.parse(t) for t in texts[:200])]
    keys = [ref_parse(t) for t in order]
    if any(ref_cmp(x, y) > 0 for x, y in zip(keys, keys[1:], strict=False)):
        bad.append("sorted() order differs from SemVer precedence")
    return {"ok": not bad, "failures": len(bad), "examples": bad[:4]}


def hash_section(sk, rng) -> dict:
    bad = []
    for _ in range(150):
        core = random_version(rng, build=False)
        a, b = sk.Version.parse(core + "+linux.1"), sk.Version.parse(core + "+darwin")
        if not (a == b and hash(a) == hash(b) and len({a, b, sk.Version.parse(core)}) == 1):
            bad.append(core)
    return {"ok": not bad, "failures": len(bad), "examples": bad[:4]}


def random_range(rng: random.Random) -> str:
    def comp() -> str:
        op = rng.choice(["^", "~", ">=", "<", ">", "<=", ""])
        return op + random_version(rng, build=False)
    sets = [" ".join(comp() for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 2))]
    return " || ".join(sets)


def ranges_section(sk, rng) -> dict:
    bad = []
    for _ in range(400):
        v, r = random_version(rng), random_range(rng)
        if sk.satisfies(v, r) != ref_satisfies(ref_parse(v), r):
            bad.append(f"satisfies({v!r}, {r!r})")
    return {"ok": not bad, "failures": len(bad), "examples": bad[:4]}


def max_section(sk, rng) -> dict:
    if not hasattr(sk, "max_satisfying"):
        return {"ok": False, "error": "semverkit.max_satisfying is missing"}
    bad = []
    for i in range(120):
        tags = [random_version(rng) for _ in range(rng.randint(0, 30))]
        tags += rng.sample(["latest", "v1.0.0", "1.2", "next", "1.0.0-", "01.1.1"], 2)
        rng.shuffle(tags)
        r = random_range(rng) if i % 3 else rng.choice(["^1.0.0", "*", "~0.2.0", ">=0.0.0-0"])
        items = [sk.Version.parse(t) if j % 4 == 0 and ref_parse(t) else t
                 for j, t in enumerate(tags)]
        ok = [ref_parse(t) for t in tags if ref_parse(t) and ref_satisfies(ref_parse(t), r)]
        want = None
        for k in ok:
            if want is None or ref_cmp(k, want) > 0:
                want = k
        got = sk.max_satisfying(iter(items), r)
        got_key = None if got is None else ref_parse(str(got))
        if (want is None) != (got is None) or (want is not None and ref_cmp(got_key, want) != 0):
            bad.append(f"max_satisfying(..., {r!r}): expected {want}, got {got}")
    try:
        sk.max_satisfying(["1.0.0"], ">=banana")
        bad.append("an invalid range did not raise InvalidRange")
    except sk.InvalidRange:
        pass
    return {"ok": not bad, "failures": len(bad), "examples": bad[:4]}


def workload(sk) -> None:
    rng = random.Random(415)
    tags = [random_version(rng) for _ in range(700)] + ["latest", "v2.0.0", "stable"]
    versions = []
    for t in tags:
        with contextlib.suppress(sk.InvalidVersion):
            versions.append(sk.Version.parse(t))
    ordered = sorted(versions)
    for r in WORKLOAD_RANGES:
        for v in ordered[::9]:
            sk.satisfies(v, r)
        sk.max_satisfying(tags, r)


# ---------- grade ----------

def run(argv: list[str], cwd: Path, env_path: str | None = None) -> tuple[int, str]:
    import os

    env = dict(os.environ)
    env.pop("PYTHONPATH", None) if env_path is None else env.__setitem__("PYTHONPATH", env_path)
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace",
                           timeout=RUN_TIMEOUT_S, env=env, check=False)
    except subprocess.TimeoutExpired:
        return -1, f"did not finish within {RUN_TIMEOUT_S} s"
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
    if files:
        (root / "semverkit").mkdir(parents=True)
        for p in files:
            text, _ = read_text(p)
            (root / "semverkit" / p.name).write_text(text or "", encoding="utf-8")
        # the harness prints JSON after a marker: the agent's code may print too
        code, out = run([sys.executable, str(ctx.task / "grader.py"), "harness", str(root)],
                        ctx.scratch)
        if "@@RESULT@@" in out:
            res = json.loads(out.rsplit("@@RESULT@@", 1)[1])
        else:
            res = {"error": out[-400:]}
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
    ok = new_code == 0 and old_code not in (0, -1)
    # pytest's last line without its timing, so that the evidence is the same run to run
    summary = [re.sub(r" in [0-9.]+s", "", (o.strip().splitlines() or [""])[-1])
               for o in (new_out, old_out)]
    return Outcome(ok, f"pytest exit {new_code} on the fix, {old_code} on 2.3.1",
                   "0 on the fix, a failure on 2.3.1", {"fix": summary[0], "2.3.1": summary[1]})


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "harness":
    import os  # bound before the agent's package is imported

    dumps, fd = json.dumps, sys.stdout.fileno()
    result = harness(sys.argv[2])
    sys.stdout.flush()
    os.write(fd, ("@@RESULT@@" + dumps(result)).encode())
    os._exit(0)  # no atexit handler of the agent's code runs after the result
