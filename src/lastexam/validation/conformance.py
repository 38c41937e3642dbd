"""Conformance gates of `lastexam validate` (issue 11): a unique canary, positive and shortcut
fixtures, a tier rationale, graders that survive malformed outputs, and references that do not
depend on the BLAS kernel the machine picks. Each gate's name is a constant, for gate selection."""

from __future__ import annotations

import dataclasses
import random
import re
import shutil
import subprocess
import time
import tomllib
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from lastexam.envs.manage import Environment
from lastexam.grading.files import MAX_TEXT_BYTES
from lastexam.paths import default_tasks_dir
from lastexam.pool.canary import canary_key
from lastexam.run.trial import TrialRunner
from lastexam.sandbox.base import Mount
from lastexam.store.models import TrialRecord
from lastexam.task.load import Task
from lastexam.validation.blas_reach import rerun_changes_nothing
from lastexam.validation.fixtures import negative_fixtures, positive_fixtures
from lastexam.validation.script_sandbox import ScriptRun, run_script

if TYPE_CHECKING:
    from lastexam.validation.gates import GateOutcome, TaskReport, Validator

ORACLE_GATE = "oracle scores 1.0"  # run in gates.py; the BLAS gate reruns what passed
CANARY_UNIQUE = "canary unique"
CONFORMANCE_FIXTURES = "conformance fixtures"
TIER_RATIONALE = "tier rationale"
MALFORMED_OUTPUTS = "malformed outputs"
GENERATE_REPRODUCES = "generate.py reproduces inputs and reference"
BLAS_REPRODUCIBLE = "reproducible under other BLAS kernels"
STATIC_GATES = (CANARY_UNIQUE, CONFORMANCE_FIXTURES, TIER_RATIONALE)
# The expensive gate: it reruns the oracle and generate.py under one other BLAS setting, which
# differs from the machine's own choice in both the kernel and the thread count (a second
# setting, one kernel more, doubled its cost: 960 of the suite's 2039 gate-seconds).
BLAS_THREADS = "2"
MALFORMED_KINDS = ("empty file", "random bytes", "folder instead of file", "huge file")
# Past what the grading library reads as text: a grader using its loaders reports the size.
HUGE_BYTES = MAX_TEXT_BYTES + 1024**2
RANDOM_BYTES = 4096
# generate.py of the slowest task takes about 600 s wall on a loaded 2-core machine: 3x headroom.
GENERATE_WALL_S = 1800

T = TypeVar("T")

# canary (canonical) -> {resolved task folder: task id}
Canaries = dict[str, dict[Path, str]]


def suite_canaries(folders: Iterable[Path]) -> Canaries:
    """The canaries of the project's tasks/ and of the folders being validated (a sealed pool's
    tasks among them, unsealed)."""
    found: Canaries = {}
    suite = default_tasks_dir()
    for toml in [*(suite.glob("*/*/task.toml") if suite.is_dir() else []),
                 *(Path(f) / "task.toml" for f in folders)]:
        try:
            spec = tomllib.loads(toml.read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue  # the schema gate reports it
        canary, task_id = spec.get("canary"), spec.get("id", toml.parent.name)
        if isinstance(canary, str):
            found.setdefault(canary_key(canary), {})[toml.parent.resolve()] = str(task_id)
    return found


def static_conformance(task: Task, report: TaskReport, canaries: Canaries) -> None:
    # The same id is the same task: in another folder, it is a copy (a sealed task unsealed
    # for validation, or released into tasks/), not a clash.
    others = sorted({tid for tid in canaries.get(canary_key(task.spec.canary), {}).values()
                     if tid != task.id})
    report.add(CANARY_UNIQUE, not others, f"canary also used by {', '.join(others)}" if others else "")
    missing = []
    if not any(fx.spec is not None for fx in positive_fixtures(task)):
        missing.append("no positive fixture (fixtures/positive/<name>/)")
    if not any(getattr(fx.spec, "kind", "") == "shortcut" for fx in negative_fixtures(task)):
        missing.append('no negative fixture with kind = "shortcut"')
    report.add(CONFORMANCE_FIXTURES, not missing, "; ".join(missing))
    ok = bool(task.spec.tier_rationale.strip())
    report.add(TIER_RATIONALE, ok, "" if ok else "task.toml: tier_rationale is empty or missing")


def _malform(target: Path, kind: str, seed: str) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "folder instead of file":
        target.mkdir()
    elif kind == "random bytes":
        target.write_bytes(random.Random(seed).randbytes(RANDOM_BYTES))
    else:
        with target.open("wb") as f:
            f.truncate(HUGE_BYTES if kind == "huge file" else 0)


def malformed_gate(v: Validator, task: Task, env: Environment, oracle_output: Path) -> GateOutcome:
    """Every declared output malformed at once, one grading per kind; then each output alone
    emptied, the others the oracle's. None may raise in the grader or earn a full pass."""
    if not oracle_output.is_dir():
        return MALFORMED_OUTPUTS, False, "no oracle output to start from"
    variants = [(kind, task.spec.outputs, kind) for kind in MALFORMED_KINDS]
    if len(task.spec.outputs) > 1:
        variants += [(f"{o} empty", [o], "empty file") for o in task.spec.outputs]
    bad = []
    for i, (label, targets, kind) in enumerate(variants):
        # Malformed in place, in the folder the grader reads: a copy would write the huge
        # file's zeros to disk where truncate leaves a hole.
        copy = v._grading_copy(task, oracle_output, f"malformed-{i}")
        for out in targets:
            _malform(copy / out, kind, f"{task.id}/{out}")
        g = v._grade_copy(task, env, copy, f"malformed-{i}")
        # The huge files would otherwise stay until the run is removed (or forever with --keep).
        shutil.rmtree(copy, ignore_errors=True)
        if not g.ok:
            bad.append(f"{label}: grader error: {(g.error or '').strip()[-200:]}")
        elif g.score == 1.0:
            bad.append(f"{label}: full pass")
    return MALFORMED_OUTPUTS, not bad, "; ".join(bad)


def with_variables(env: Environment, extra: dict[str, str]) -> Environment:
    return dataclasses.replace(env, spec=env.spec.model_copy(update={"env": {**env.spec.env, **extra}}))


def first_difference(ours: Path, theirs: Path) -> str:
    """The first file (in sorted order) that differs between two trees, and the first byte."""
    def files(root: Path) -> dict[str, Path]:
        return {p.relative_to(root).as_posix(): p for p in root.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts} \
            if root.is_dir() else {}
    a, b = files(ours), files(theirs)
    for rel in sorted(a.keys() | b.keys()):
        if rel not in a:
            return f"{rel} not written"
        if rel not in b:
            return f"{rel} written but not in the task"
        x, y = a[rel].read_bytes(), b[rel].read_bytes()
        if x != y:
            at = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y)))
            return f"{rel} first differs at byte {at} ({len(x)} bytes written, {len(y)} committed)"
    return ""


def run_generator(runner: TrialRunner, task: Task, env: Environment, work: Path, tag: str) -> str:
    """Run generate.py in a sandbox; "" when it rewrites inputs/ and reference/ byte for byte,
    else what went wrong."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(task.path, work / "task", ignore=shutil.ignore_patterns("fixtures", "__pycache__"))
    out, why = run_script(runner.provider, env, ScriptRun(
        name=f"{runner.run_id}.{task.id}.{tag}",
        argv=["python3", "-B", "/gen/task/generate.py", "--out", "/gen/out"],
        work=work,
        mounts=[Mount(work / "task", "/gen/task")],
        out_at="/gen/out",
        cwd="/gen/out",
        wall_s=GENERATE_WALL_S,
        log="generate",
    ))
    if why:
        return why
    diffs = [f"differs: {part}: {d}" for part in ("inputs", "reference")
             if (d := first_difference(out / part, task.path / part))]
    return "; ".join(diffs)


def generator_gate(v: Validator, task: Task, env: Environment) -> GateOutcome:
    why = run_generator(v.runner, task, env, v.area.validation(task.id) / "generate", "generate")
    return GENERATE_REPRODUCES, not why, why


def blas_setting(env: Environment) -> tuple[str, dict[str, str]]:
    """The other BLAS setting for env: OpenBLAS's Sandybridge kernels (AVX, no FMA), or Nehalem's
    (SSE) on a machine whose own choice is Sandybridge, and two threads (the tasks pin one)."""
    default = env.spec.env.get("OPENBLAS_CORETYPE") or default_blas_core(env)
    core = "Nehalem" if default.lower() == "sandybridge" else "Sandybridge"
    return f"{core}, {BLAS_THREADS} threads", {
        "OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": BLAS_THREADS, "OMP_NUM_THREADS": BLAS_THREADS,
        # How long an idle OpenBLAS thread spins before it sleeps (2^4 cycles, from 2^28: about
        # 0.1 s of a core after start-up and after each threaded call, on a machine where the
        # validation's jobs already hold both cores). Changes no result.
        "OPENBLAS_THREAD_TIMEOUT": "4"}


@cache
def _core_of(python: str) -> str:
    try:
        # -I and cwd="/": no folder of the caller's (a task folder's numpy.py) shadows NumPy.
        proc = subprocess.run([python, "-I", "-c", "import numpy"], capture_output=True, text=True,
                              timeout=60, cwd="/", check=False,
                              env={"OPENBLAS_VERBOSE": "2", "PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"^Core: (\w+)", proc.stdout + proc.stderr, re.MULTILINE)
    return found.group(1) if found else ""


def default_blas_core(env: Environment) -> str:
    """The OpenBLAS kernel the environment's NumPy picks on this machine ("": no NumPy)."""
    return _core_of(str(env.venv / "bin" / "python3"))


@dataclass
class BlasReruns:
    """The BLAS gate's two reruns, started alongside the default runs they repeat (a desktop
    task's oracle mostly waits on its applications: the two runs overlap). Their results count
    only for what passed under the default setting; each future gives (result, seconds).
    `not_run`: why there are no reruns (blas_reach.py: they would repeat the default runs)."""

    label: str
    oracle: Future[tuple[TrialRecord, float]] | None
    generate: Future[tuple[str, float]] | None
    not_run: str = ""

    @classmethod
    def start(cls, v: Validator, task: Task, env: Environment, pool: Executor) -> BlasReruns:
        if why := rerun_changes_nothing(env, task, BLAS_THREADS):
            return cls("", None, None, not_run=why)
        label, extra = blas_setting(env)
        variant = with_variables(env, extra)

        def timed(fn: Callable[[], T]) -> tuple[T, float]:
            started = time.monotonic()
            return fn(), round(time.monotonic() - started, 1)

        oracle = pool.submit(timed, lambda: v._trial(task, variant, "oracle", 2))
        generate = None
        if task.generator.is_file():
            work = v.area.validation(task.id) / "generate-blas"
            generate = pool.submit(timed, lambda: run_generator(v.runner, task, variant, work, "generate-blas"))
        return cls(label, oracle, generate)


def blas_gate(task: Task, report: TaskReport, reruns: BlasReruns) -> None:
    """The oracle scores 1.0 and generate.py reproduces the task under the other BLAS setting.
    Only what passed under the default setting counts: a failure there is reported once. The
    gate's seconds are its reruns' own (they ran beside the other gates)."""
    passed = {g.name for g in report.gates if g.passed}
    oracle, generate = ORACLE_GATE in passed, task.generator.is_file() and GENERATE_REPRODUCES in passed
    if not (oracle or generate):
        return
    if reruns.not_run:
        report.add(BLAS_REPRODUCIBLE, True, reruns.not_run, seconds=0.0)
        return
    bad, seconds = [], 0.0
    if oracle and reruns.oracle is not None:
        trial, took = reruns.oracle.result()
        seconds += took
        if not (trial.status == "completed" and trial.score == 1.0):
            bad.append(f"{reruns.label}: oracle {describe_trial(trial)}")
    if generate and reruns.generate is not None:
        why, took = reruns.generate.result()
        seconds += took
        if why:
            bad.append(f"{reruns.label}: generate.py {why}")
    report.add(BLAS_REPRODUCIBLE, not bad, "; ".join(bad), seconds=seconds)


def describe_trial(t: TrialRecord) -> str:
    failed = [c.name for c in (t.grade.checks if t.grade else []) if not c.passed]
    detail = f"status {t.status}, score {t.score}"
    if t.error:
        detail += f", error: {t.error.strip().splitlines()[-1][:300]}"
    if failed:
        detail += f", failed checks: {failed[:6]}"
    return detail
