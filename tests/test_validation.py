"""Every gate of `lastexam validate`, each failed by a task built to fail it and only it, next
to a control task that passes every gate. The tasks are generated here from the harness test
task (tests/data/tasks/other/column-total), each with its own id and canary and a generate.py
that reproduces its inputs and reference; one `lastexam validate --json` call checks them all.
The gates are reached only through the CLI's JSON, so the tests do not depend on where the
gate code lives."""

from __future__ import annotations

import json
import os
import shutil
import tomllib
import uuid
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import COLUMN_TOTAL, ROOT, run_cli
from lastexam.envs import manage as envs
from lastexam.envs.spec import EnvironmentSpec
from lastexam.validation import blas_reach
from lastexam.validation import conformance as cf

pytestmark = pytest.mark.usefixtures("base_env_ready")

BASE_CANARY = tomllib.loads((COLUMN_TOTAL / "task.toml").read_text())["canary"]
# Where a generate.py that appends to data.csv first differs from the committed file.
APPENDED_AT = f"inputs: data.csv first differs at byte {(COLUMN_TOTAL / 'inputs' / 'data.csv').stat().st_size}"
GENERATOR = '''"""Writes inputs/ and reference/ of this test task: python3 generate.py --out DIR."""
import argparse
from pathlib import Path

DATA = {data!r}
EXPECTED = {expected!r}

parser = argparse.ArgumentParser()
parser.add_argument("--out", type=Path, default=Path(__file__).parent)
out = parser.parse_args().out
(out / "inputs").mkdir(parents=True, exist_ok=True)
(out / "reference").mkdir(parents=True, exist_ok=True)
(out / "inputs" / "data.csv").write_text(DATA)
(out / "reference" / "expected.json").write_text(EXPECTED)
'''
# Gates the control task must pass, all of them run (generate.py included).
EVERY_GATE = {
    "schema and taxonomy", "required files", "canary present", "no reference leak",
    "environment installed", "oracle scores 1.0", "nop scores 0", "negative fixture partial",
    "negative fixture wrong-method", "positive fixture reordered", "grading is deterministic",
    "generate.py reproduces inputs and reference", "grader does not use solution/",
    "negative fixture placeholder", "canary unique", "conformance fixtures", "tier rationale",
    "malformed outputs", "reproducible under other BLAS kernels",
}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def make_task(tasks: Path, task_id: str, canary: str | None = None) -> Path:
    """A valid copy of the harness test task under a new id and canary, with a generate.py."""
    folder = tasks / "other" / task_id
    shutil.copytree(COLUMN_TOTAL, folder)
    canary = canary or str(uuid.uuid5(uuid.NAMESPACE_URL, f"lastexam-test/{task_id}"))
    for rel in ("task.toml", "instruction.md", "reference/expected.json"):
        _edit(folder / rel, BASE_CANARY, canary)
    _edit(folder / "task.toml", 'id = "column-total"', f'id = "{task_id}"')
    (folder / "generate.py").write_text(GENERATOR.format(
        data=(folder / "inputs" / "data.csv").read_text(),
        expected=(folder / "reference" / "expected.json").read_text(),
    ))
    return folder


# Each broken task: what is done to a valid copy, the one gate it must fail, and a fragment of
# that gate's message.
def edit(rel: str, old: str, new: str) -> Callable[[Path], None]:
    """A breakage that replaces `old` by `new` in the file `rel` of the task."""
    return lambda t: _edit(t / rel, old, new)


def _oracle_scores_095(t: Path) -> None:
    # A check worth 3/19 of the 3 points that only the pretty-printed positive fixture passes: the
    # oracle scores 3/(3+3/19) = 0.95, the negative fixtures stay inside their declared ranges
    # (0.317, 0.633 and 0).
    _edit(t / "grader.py", "    return r\n",
          '    out = ctx.out("result.json")\n'
          '    r.check("style", 3 / 19, out.is_file() and "\\n  " in out.read_text(errors="replace"))\n'
          "    return r\n")


def _nop_scores_above_zero(t: Path) -> None:
    # No gate, and a check that an empty output passes: nop scores 1/4. The fixtures' ranges
    # follow the new weights (partial 2/4, wrong-method 3/4) so that only the nop gate fails.
    _edit(t / "grader.py", '    r.gate("result.json parses as a JSON object", parsed)\n',
          '    r.check("no stray files", 1, True)\n')
    _edit(t / "fixtures/negative/partial/fixture.toml", "score_min = 0.3\nscore_max = 0.4",
          "score_min = 0.45\nscore_max = 0.55")
    _edit(t / "fixtures/negative/wrong-method/fixture.toml", "score_min = 0.6\nscore_max = 0.7",
          "score_min = 0.7\nscore_max = 0.8")


def _grader_raises_on_no_output(t: Path) -> None:
    # nop must be graded 0, not a grader_error: a grader that cannot cope with no output fails.
    _edit(t / "grader.py", "    r = Rubric()\n",
          '    r = Rubric()\n    if not ctx.out("result.json").exists():\n'
          '        raise FileNotFoundError("result.json")\n')


def _nondeterministic_grader(t: Path) -> None:
    _edit(t / "grader.py", "    return r\n",
          '    import secrets\n    from lastexam.grading import Outcome\n'
          '    r.check("graded", 0, Outcome(True, "run " + secrets.token_hex(8)))\n    return r\n')


def _reference_line_in_instruction(t: Path) -> None:
    line = "The column adds up to 6.75 over three numbers."
    (t / "reference" / "notes.txt").write_text(line + "\n")
    (t / "instruction.md").write_text((t / "instruction.md").read_text() + f"\n{line}\n")
    (t / "generate.py").unlink()  # it does not write notes.txt


def _reference_file_in_inputs(t: Path) -> None:
    shutil.copy(t / "inputs" / "data.csv", t / "reference" / "data.csv")
    (t / "generate.py").unlink()  # it does not write reference/data.csv


def _canary_missing_from_reference(t: Path) -> None:
    text = (t / "reference" / "expected.json").read_text()
    (t / "reference" / "expected.json").write_text(json.dumps(
        {k: v for k, v in json.loads(text).items() if k != "canary"}) + "\n")
    (t / "generate.py").unlink()  # it would write the old reference back


def _no_solution(t: Path) -> None:
    (t / "solution" / "solve.sh").unlink()


def _solution_module(t: Path) -> None:
    (t / "solution" / "column.py").write_text("def count(path):\n"
                                              "    return len(open(path).read().split()) - 1\n")


def _grader_imports_solution(t: Path) -> None:
    _solution_module(t)
    _edit(t / "grader.py", "    return r\n",
          "    import sys\n    sys.path.insert(0, str(ctx.task))\n"
          "    from solution.column import count\n"
          '    r.check("count from the solution", 0, count(ctx.inputs / "data.csv") == 3)\n'
          "    return r\n")


def _grader_runs_solution_file(t: Path) -> None:
    _solution_module(t)
    _edit(t / "grader.py", "    return r\n",
          "    import runpy\n"
          '    count = runpy.run_path(str(ctx.task / "solution" / "column.py"))["count"]\n'
          '    r.check("count from the solution", 0, count(ctx.inputs / "data.csv") == 3)\n'
          "    return r\n")


def _no_positive_fixture(t: Path) -> None:
    shutil.rmtree(t / "fixtures" / "positive")


def _grader_raises_on_malformed_output(t: Path) -> None:
    # Reads result.json itself, without the library's loader: random bytes raise in json.loads.
    _edit(t / "grader.py", "    r = Rubric()\n",
          "    r = Rubric()\n    import json\n    if ctx.out(\"result.json\").is_file():\n"
          "        json.loads(ctx.out(\"result.json\").read_text())\n")


MAKE_WRONG_COUNT = """python3 - <<'EOF'
import json, os
result = json.load(open(os.path.join(os.environ["ORACLE_OUTPUT"], "result.json")))
json.dump({**result, "count": result["count"] + 1}, open(os.path.join(os.environ["OUT"], "result.json"), "w"))
EOF
"""


def _built_fixture(make_sh: str) -> Callable[[Path], None]:
    """A positive fixture "built" whose output is made by `make_sh` (no output/ committed)."""
    def breaks(t: Path) -> None:
        folder = t / "fixtures" / "positive" / "built"
        folder.mkdir()
        (folder / "fixture.toml").write_text('variant = "the oracle\'s output, rebuilt by make.sh"\n')
        (folder / "make.sh").write_text(make_sh)
    return breaks


def _built_fixture_from_lib(t: Path) -> None:
    """The same wrong count, made by code in fixtures/lib/ that make.sh calls through FIXTURE_LIB,
    once it has found the oracle's solve.sh in SOLUTION."""
    (t / "fixtures" / "lib").mkdir()
    (t / "fixtures" / "lib" / "bump.py").write_text(MAKE_WRONG_COUNT.split("\n", 1)[1].rsplit("EOF", 1)[0])
    _built_fixture('test -f "$SOLUTION/solve.sh" || exit 9\npython3 "$FIXTURE_LIB/bump.py"\n')(t)


def _with_openblas(breaks: Callable[[Path], None]) -> Callable[[Path], None]:
    """The breakage, in a task that ships a file named as OpenBLAS (the test environment has
    none): the BLAS gate reruns only where OpenBLAS can be loaded."""
    def both(t: Path) -> None:
        breaks(t)
        (t / "solution" / "libopenblas.so.0").write_bytes(b"")
    return both


PARTIAL = "fixtures/negative/partial/fixture.toml"
PARTIAL_RANGE = "score_min = 0.3\nscore_max = 0.4"
CASES: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "oracle-095": (_oracle_scores_095, "oracle scores 1.0", "score 0.95"),
    "nop-above-zero": (_nop_scores_above_zero, "nop scores 0", "score 0.25"),
    "nop-grader-error": (_grader_raises_on_no_output, "nop scores 0", "status grader_error"),
    "nondeterministic": (_nondeterministic_grader, "grading is deterministic",
                         "two gradings of the oracle output differ"),
    "leaked-line": (_reference_line_in_instruction, "no reference leak",
                    "reference/notes.txt: line 'The column adds up to 6.75"),
    "leaked-file": (_reference_file_in_inputs, "no reference leak",
                    "reference/data.csv is identical to inputs/data.csv"),
    "no-canary": (_canary_missing_from_reference, "canary present", "canary not found in reference/"),
    "no-solution": (_no_solution, "required files", "solution/solve.sh"),
    "bad-taxonomy": (edit("task.toml", 'subdomain = "sports"', 'subdomain = "astrology"'),
                     "schema and taxonomy", "astrology"),
    "bad-environment": (edit("task.toml", 'environment = "base"', 'environment = "no-such-environment"'),
                        "environment", "no environment named 'no-such-environment'"),
    "fixture-range": (edit(PARTIAL, PARTIAL_RANGE, "score_min = 0.5\nscore_max = 0.6"),
                      "negative fixture partial", "score 0.333333 (declared 0.5..0.6)"),
    "positive-fixture-wrong": (edit("fixtures/positive/reordered/output/result.json", '"count": 3', '"count": 4'),
                               "positive fixture reordered", "score 0.666667; failed: count"),
    "shortcut-too-generous": (edit("fixtures/negative/wrong-method/fixture.toml", 'mistake = "',
                                   'kind = "shortcut"\nmistake = "'),
                              "negative fixture wrong-method", "a shortcut may score at most 0.5"),
    "fixture-backwards": (edit(PARTIAL, PARTIAL_RANGE, "score_min = 0.4\nscore_max = 0.3"),
                          "negative fixture partial", "score_min is above score_max"),
    "generator-differs": (edit("generate.py", "write_text(DATA)",
                               'write_text(DATA + "%.6f\\n" % __import__("random").SystemRandom().random())'),
                          "generate.py reproduces inputs and reference", f"differs: {APPENDED_AT}"),
    "generator-fails": (edit("generate.py", "import argparse\n",
                             'raise SystemExit("generate.py broken on purpose")\n'),
                        "generate.py reproduces inputs and reference",
                        "exit 1: generate.py broken on purpose"),
    # The oracle still scores 1.0 with these graders: only the rule against sharing code fails.
    "grader-imports-solution": (_grader_imports_solution, "grader does not use solution/",
                                "imports solution.column from solution/"),
    "grader-runs-solution": (_grader_runs_solution_file, "grader does not use solution/",
                             "refers to solution/ in"),
    "no-positive-fixture": (_no_positive_fixture, "conformance fixtures", "no positive fixture"),
    "no-shortcut": (edit("fixtures/negative/placeholder/fixture.toml", 'kind = "shortcut"', 'kind = "mistake"'),
                    "conformance fixtures", 'no negative fixture with kind = "shortcut"'),
    "no-tier-rationale": (edit("task.toml", "tier_rationale = ", "# tier_rationale = "),
                          "tier rationale", "tier_rationale is empty or missing"),
    "grader-raises-on-malformed": (_grader_raises_on_malformed_output, "malformed outputs",
                                   "random bytes: grader error"),
    "generator-blas-dependent": (_with_openblas(edit(
                                     "generate.py", "write_text(DATA)",
                                     'write_text(DATA + __import__("os").environ.get("OPENBLAS_CORETYPE", ""))')),
                                 "reproducible under other BLAS kernels",
                                 f", 2 threads: generate.py differs: {APPENDED_AT}"),
    # The one other setting changes the thread count as well as the kernel (in an environment
    # that pins one thread, THREAD_ONE: the harness pins the rerun's count where none is set).
    "generator-thread-dependent": (_with_openblas(edit(
                                       "generate.py", "write_text(DATA)",
                                       'write_text(DATA + ("" if __import__("os").environ.get('
                                       '"OPENBLAS_NUM_THREADS", "1") == "1" else "threads"))')),
                                   "reproducible under other BLAS kernels",
                                   f"2 threads: generate.py differs: {APPENDED_AT}"),
    # make.sh builds the fixture from the oracle's output, which is then graded; or fails.
    "made-fixture-wrong": (_built_fixture(MAKE_WRONG_COUNT), "positive fixture built",
                           "score 0.666667; failed: count"),
    "made-fixture-fails": (_built_fixture('echo "make.sh broken on purpose" >&2\nexit 3\n'),
                           "positive fixture built", "make.sh: exit 3: make.sh broken on purpose"),
    "made-fixture-lib": (_built_fixture_from_lib, "positive fixture built", "score 0.666667; failed: count"),
}
NOT_INSTALLED = "env-not-installed"  # in a tree of its own, whose environments/ declares it
THREAD_ONE = ("generator-thread-dependent",)  # in a tree whose base environment pins one thread
DUPLICATES = ("dup-canary-a", "dup-canary-b")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("validation")
    tasks = root / "suite" / "tasks"
    make_task(tasks, "control")
    pinned = root / "pinned-envs"
    (pinned / "environments").mkdir(parents=True)
    (pinned / "environments" / "base.toml").write_text(
        (ROOT / "environments" / "base.toml").read_text()
        + '\n[env]\nOPENBLAS_NUM_THREADS = "1"\nOMP_NUM_THREADS = "1"\n')
    for task_id, (breaks, _, _) in CASES.items():
        breaks(make_task(pinned / "tasks" if task_id in THREAD_ONE else tasks, task_id))
    shared = str(uuid.uuid5(uuid.NAMESPACE_URL, "lastexam-test/shared-canary"))
    for task_id in DUPLICATES:
        make_task(tasks, task_id, canary=shared)
    # The "environment installed" gate: an environment that is declared but not installed.
    own = root / "own-envs"
    (own / "environments").mkdir(parents=True)
    shutil.copy(ROOT / "environments" / "base.toml", own / "environments")
    (own / "environments" / "never-installed.toml").write_text(
        'name = "never-installed"\ndescription = "declared by a test, never installed"\n'
        "apt = []\npip = []\n")
    folder = make_task(own / "tasks", NOT_INSTALLED)
    _edit(folder / "task.toml", 'environment = "base"', 'environment = "never-installed"')
    proc = run_cli("validate", tasks, pinned / "tasks", folder, "--json", check=False, timeout=1800)
    assert proc.returncode == 1, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["passed"] is False
    return {r["task"]: r for r in result["tasks"]}


def _failed(report: dict) -> dict[str, str]:
    return {g["name"]: g["detail"] for g in report["gates"] if not g["passed"]}


def test_control_task_passes_every_gate(reports: dict[str, dict]) -> None:
    control = reports["control"]
    assert _failed(control) == {} and control["passed"] is True
    assert {g["name"] for g in control["gates"]} >= EVERY_GATE


def test_blas_gate_reruns_only_where_the_setting_can_change_a_run(reports: dict[str, dict]) -> None:
    """The control task (environment base, no OpenBLAS in its folder) is not rerun where the
    machine has no OpenBLAS and two CPUs; the blas-dependent tasks ship a copy and were rerun."""
    gate = next(g for g in reports["control"]["gates"] if g["name"] == cf.BLAS_REPRODUCIBLE)
    env = envs.load("base")
    same = not (blas_reach._system_openblas() or blas_reach._venv_openblas(str(env.venv))) \
        and blas_reach.openmp_threads_fixed(env, cf.BLAS_THREADS) != ""
    assert gate["passed"] is True
    assert ("not rerun: no OpenBLAS" in gate["detail"]) is same, gate


def test_blas_library_found_in_the_system_the_environment_or_the_task(tmp_path, monkeypatch) -> None:
    system, venv, task = (tmp_path / n for n in ("usr", "venv", "task"))
    for d in (system / "lib" / "blas", system / "lib" / "openblas-pthread", venv / "lib", task / "solution"):
        d.mkdir(parents=True)
    (system / "lib" / "blas" / "libblas.so.3").write_bytes(b"")
    (system / "lib" / "openblas-pthread" / "libblas.so.3").write_bytes(b"")
    link = system / "lib" / "libblas.so.3"
    link.symlink_to(system / "lib" / "blas" / "libblas.so.3")
    (task / "solution" / "solve.sh").write_text("#!/bin/sh\n")
    env, folder = SimpleNamespace(venv=venv, name="e"), SimpleNamespace(path=task)
    monkeypatch.setattr(blas_reach, "_system_openblas", lambda: blas_reach._walk(str(system / "lib"), False))
    monkeypatch.setattr(blas_reach, "_venv_openblas", lambda v: blas_reach._walk(v, False))  # uncached
    # The system's own folder named openblas-pthread is OpenBLAS; a reference BLAS is not.
    assert "openblas-pthread" in blas_reach.openblas_seen(env, folder)
    (system / "lib" / "openblas-pthread" / "libblas.so.3").unlink()
    assert blas_reach.openblas_seen(env, folder) == ""
    # libblas.so.3 pointed at OpenBLAS elsewhere (Debian's alternatives): seen through the link.
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "libopenblasp-r0.3.so").write_bytes(b"")
    link.unlink()
    link.symlink_to(tmp_path / "elsewhere" / "libopenblasp-r0.3.so")
    assert blas_reach.openblas_seen(env, folder) == str(link)
    link.unlink()
    assert blas_reach.openblas_seen(env, folder) == ""
    # NumPy's wheel in the environment.
    (venv / "lib" / "numpy.libs").mkdir()
    (venv / "lib" / "numpy.libs" / "libscipy_OpenBLAS64_-1.so").write_bytes(b"")
    assert blas_reach.openblas_seen(env, folder).startswith(str(venv))
    shutil.rmtree(venv / "lib" / "numpy.libs")
    # In the task's folder, an archive or a compiled program may bring it in unseen.
    for name, data in (("vendor/numpy-2.0-cp311.whl", b"PK"), ("bin/tool", b"\x7fELF\x02\x01")):
        (task / name).parent.mkdir(exist_ok=True)
        (task / name).write_bytes(data)
        assert blas_reach.openblas_seen(env, folder) == str(task / name)
        (task / name).unlink()
    # A FIFO is not opened (it would wait for a writer).
    os.mkfifo(task / "solution" / "pipe")
    assert blas_reach.openblas_seen(env, folder) == ""
    # A fixture's output is graded, never run under the setting.
    (task / "fixtures" / "negative" / "x" / "output").mkdir(parents=True)
    (task / "fixtures" / "negative" / "x" / "output" / "calls.vcf.gz").write_bytes(b"")
    assert blas_reach.openblas_seen(env, folder) == ""


def test_openmp_threads_the_same_only_where_the_pin_is_the_reruns(monkeypatch) -> None:
    def env(pins: dict[str, str]) -> SimpleNamespace:
        spec = EnvironmentSpec(name="e", description="an environment", env=pins)
        return SimpleNamespace(spec=spec, name="e")

    assert blas_reach.openmp_threads_fixed(env({}), "2")  # the harness's pin
    assert blas_reach.openmp_threads_fixed(env({"OMP_NUM_THREADS": "1"}), "2") == ""  # the rerun changes it
    assert blas_reach.openmp_threads_fixed(env({"OMP_NUM_THREADS": "2"}), "2")
    # Not the machine's CPU count: that no longer reaches a sandbox.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    assert blas_reach.openmp_threads_fixed(env({}), "2")


@pytest.mark.parametrize("task_id", list(CASES))
def test_each_gate_fails_on_a_task_built_to_fail_it(reports: dict[str, dict], task_id: str) -> None:
    _, gate, message = CASES[task_id]
    report = reports[task_id]
    failed = _failed(report)
    assert report["passed"] is False
    assert list(failed) == [gate], failed  # that gate, and no other
    assert message in failed[gate], failed


def test_environment_declared_but_not_installed(reports: dict[str, dict]) -> None:
    failed = _failed(reports[NOT_INSTALLED])
    assert list(failed) == ["environment installed"], failed
    assert "Python environment not created" in failed["environment installed"]
    assert "lastexam env install never-installed" in failed["environment installed"]


def test_canary_shared_by_two_tasks_fails(reports: dict[str, dict]) -> None:
    for task_id in DUPLICATES:
        failed = _failed(reports[task_id])
        assert len(failed) == 1, failed
        other = next(t for t in DUPLICATES if t != task_id)
        assert any("canary" in (n + d) and other in d for n, d in failed.items()), failed
