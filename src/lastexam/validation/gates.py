"""The task gates behind `lastexam validate`. A task enters the suite only if all pass."""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from lastexam.agents import get_agent
from lastexam.desktop import launch as desktop_launch
from lastexam.envs import manage as envs
from lastexam.errors import LastexamError
from lastexam.layout import RunPaths
from lastexam.run.grading import GradeRequest, grade
from lastexam.run.recorded_probes import RecordedProbes
from lastexam.run.trial import TrialPlan, TrialRunner
from lastexam.run.workspace import RunWorkArea
from lastexam.store.models import GradeRecord, TrialKey, TrialRecord
from lastexam.task.hygiene import solution_uses
from lastexam.task.load import Task, load_task
from lastexam.validation import conformance as cf
from lastexam.validation.fixture_build import build_fixture_output, has_make_script
from lastexam.validation.fixtures import Fixture, FixtureSpec, negative_fixtures, positive_fixtures
from lastexam.validation.selection import ALL_GATES, GateSelection

MIN_NEGATIVE_FIXTURES = 2
GATES_AT_ONCE = 2  # of one task's gates that grade the oracle's output, fixtures or generate.py
LEAK_LINE_MIN = 20
TEXT_SUFFIXES = {".txt", ".csv", ".json", ".md", ".tsv", ".xml", ".yaml", ".yml", ".toml", ".cir",
                 ".sp", ".net", ".vcf", ".sam", ".fa", ".fasta", ".bed", ".gff", ".py", ".r",
                 ".m", ".scad", ".html", ".tex", ".log", ".ini", ".cfg", ".sql", ".inp", ".dat"}


GateOutcome = tuple[str, bool, str]  # a gate's name, whether it passed, and why not


def _timed(gate: Callable[[], GateOutcome]) -> tuple[GateOutcome, float]:
    started = time.monotonic()
    outcome = gate()
    return outcome, round(time.monotonic() - started, 1)


@dataclass
class GateResult:
    name: str
    passed: bool
    detail: str = ""
    seconds: float = 0.0


@dataclass
class TaskReport:
    task: str
    path: str
    gates: list[GateResult] = field(default_factory=list)
    selection: GateSelection = ALL_GATES
    unchanged_since: str = ""  # the manifest's date, when only the static gates were run
    _mark: float = field(default_factory=time.monotonic, repr=False)

    @property
    def passed(self) -> bool:
        return bool(self.gates) and all(g.passed for g in self.gates)

    def mark(self) -> None:
        """Gates after this one are timed from now (gates that timed themselves came before)."""
        self._mark = time.monotonic()

    def add(self, name: str, passed: bool, detail: str = "", seconds: float | None = None) -> bool:
        """`seconds`: the gate's own, when it did not run in the time since the gate before."""
        now = time.monotonic()
        took = round(now - self._mark, 1) if seconds is None else seconds
        self.gates.append(GateResult(name, passed, detail, took))
        self._mark = now
        return passed


def static_gates(task: Task, report: TaskReport) -> None:
    """Gates that need no sandbox: required files, canary, reference leaks."""
    required = [task.instruction, task.grader, task.solution_dir / "solve.sh"]
    missing = [p.relative_to(task.path).as_posix() for p in required if not p.is_file()]
    for d in (task.inputs_dir, task.reference_dir):
        if not d.is_dir() or not any(d.iterdir()):
            missing.append(d.name + "/ (empty or missing)")
    fixtures = negative_fixtures(task)
    if len(fixtures) < MIN_NEGATIVE_FIXTURES:
        missing.append(f"fixtures/negative/ needs at least {MIN_NEGATIVE_FIXTURES} fixtures")
    report.add("required files", not missing, "; ".join(missing))
    if task.instruction.is_file() and task.reference_dir.is_dir():
        canary = task.spec.canary
        in_instruction = canary in task.instruction.read_text(errors="replace")
        in_reference = any(
            canary.encode() in p.read_bytes() for p in task.reference_dir.rglob("*") if p.is_file()
        )
        where = [n for n, ok in (("instruction.md", in_instruction), ("reference/", in_reference)) if not ok]
        report.add("canary present", not where, f"canary not found in {', '.join(where)}" if where else "")
        leaks = reference_leaks(task)
        report.add("no reference leak", not leaks, "; ".join(leaks[:5]))
    report.add("grader does not use solution/", not (uses := solution_uses(task.path)), "; ".join(uses[:5]))


def reference_leaks(task: Task) -> list[str]:
    """Reference files whose bytes, or text lines of 20+ characters, appear in the inputs or the
    instruction. Lines holding the canary are exempt (it is meant to be in both)."""
    visible = [task.instruction, *(p for p in task.inputs_dir.rglob("*") if p.is_file())]
    visible_hashes = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in visible}
    visible_text = "\n".join(
        p.read_text(errors="replace") for p in visible if _is_text(p) and p.stat().st_size < 50_000_000
    )
    leaks = []
    for ref in sorted(p for p in task.reference_dir.rglob("*") if p.is_file()):
        rel = ref.relative_to(task.path).as_posix()
        data = ref.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest in visible_hashes:
            leaks.append(f"{rel} is identical to {visible_hashes[digest].relative_to(task.path)}")
            continue
        if _is_text(ref):
            for line in data.decode(errors="replace").splitlines():
                line = line.strip()
                if len(line) >= LEAK_LINE_MIN and task.spec.canary not in line and line in visible_text:
                    leaks.append(f"{rel}: line {line[:60]!r} appears in the inputs or instruction")
                    break
    return leaks


def _is_text(p: Path) -> bool:
    return p.suffix.lower() in TEXT_SUFFIXES or p.name == "instruction.md"


@dataclass
class Validator:
    """Runs the sandboxed gates of tasks, within one run's work area and store."""

    runner: TrialRunner
    canaries: cf.Canaries = field(default_factory=dict)
    probes: RecordedProbes = field(default_factory=RecordedProbes)

    @property
    def area(self) -> RunWorkArea:
        return self.runner.area

    def validate(self, path: Path, select: GateSelection = ALL_GATES) -> TaskReport:
        report = TaskReport(task=path.name, path=str(path), selection=select)
        try:
            task = load_task(path)
        except LastexamError as e:
            report.add("schema and taxonomy", False, e.render())
            return report
        report.task = task.id
        report.add("schema and taxonomy", True)
        if select.runs("static"):
            static_gates(task, report)
            cf.static_conformance(task, report, self.canaries)
        if not select.sandboxed:
            return report
        try:
            env = envs.load(task.spec.environment, task.path)
        except LastexamError as e:
            report.add("environment", False, e.render())
            return report
        try:
            self.probes.of(task)
        except LastexamError as e:
            report.add("recorded probe answers", False, e.render())
            return report
        missing = env.missing()
        if task.spec.gui:  # its trials run on a desktop: the machine's part of its environment
            missing += [f"desktop: {m}" for m in desktop_launch.missing()]
        if not report.add("environment installed", not missing, "; ".join(missing) + (
            f" (lastexam env install {env.name})" if missing else "")):
            return report
        if not (task.solution_dir / "solve.sh").is_file() or not task.grader.is_file():
            return report
        side = ThreadPoolExecutor(1, thread_name_prefix=f"blas-{task.id}")
        try:
            blas = cf.BlasReruns.start(self, task, env, side) if select.runs("blas") else None
            self._sandboxed_gates(task, env, select, report)
            if blas is not None:
                cf.blas_gate(task, report, blas)
        except BaseException:
            side.shutdown(wait=True, cancel_futures=True)  # a queued generate rerun never starts
            raise
        side.shutdown(wait=True)
        if saved := self.probes.save(task):
            # The folder changed under the validation: its result must not be recorded as is.
            report.add("probe answers recorded beforehand", False,
                       f"the probe model answered new questions, written to {saved}: review them, "
                       "then validate again")
        return report

    def _sandboxed_gates(self, task: Task, env: envs.Environment, select: GateSelection,
                         report: TaskReport) -> None:
        if select.runs("oracle"):
            oracle = self._trial(task, env, "oracle")
            report.add(
                cf.ORACLE_GATE,
                oracle.status == "completed" and oracle.score == 1.0,
                cf.describe_trial(oracle),
            )
            oracle_output = RunPaths(self.runner.run_dir).trial(oracle.trial_id).output
        if select.runs("nop"):
            nop = self._trial(task, env, "nop")
            report.add("nop scores 0", nop.status == "completed" and nop.score == 0.0, cf.describe_trial(nop))
        gates: list[Callable[[], GateOutcome]] = [
            *(partial(self._fixture_gate, task, env, fx, oracle_output)
              for fx in (negative_fixtures(task) if select.runs("negative") else [])),
            *(partial(self._positive_gate, task, env, fx, oracle_output)
              for fx in (positive_fixtures(task) if select.runs("positive") else [])),
        ]
        if select.runs("determinism"):
            gates.append(partial(self._determinism_gate, task, env, oracle))
        if select.runs("malformed"):
            gates.append(partial(cf.malformed_gate, self, task, env, oracle_output))
        if select.runs("generate") and task.generator.is_file():
            gates.append(partial(cf.generator_gate, self, task, env))
        # Two at a time: a task's gates otherwise hold one core while the task validated
        # beside it may be a desktop oracle that mostly waits. The longest (the last ones:
        # several gradings or a generator each) start first; the report keeps this order.
        pool = ThreadPoolExecutor(GATES_AT_ONCE, thread_name_prefix=f"gates-{task.id}")
        try:
            futures = {i: pool.submit(_timed, gate) for i, gate in reversed(list(enumerate(gates)))}
            results = [futures[i].result() for i in range(len(gates))]
        finally:  # a gate that raised: the queued ones do not start
            pool.shutdown(wait=True, cancel_futures=True)
        report.mark()
        for (name, passed, detail), seconds in results:
            report.add(name, passed, detail, seconds=seconds)

    def _trial(self, task: Task, env: envs.Environment, agent_name: str, attempt: int = 1):
        agent = get_agent(agent_name)
        key = TrialKey(task_id=task.id, agent=agent_name, attempt=attempt)
        record = self.runner.run(TrialPlan(task, key, agent, {}, task.spec.timeout_s, env))
        self.probes.add(task, record.grade)
        return record

    def _grade_dir(self, task: Task, env: envs.Environment, output: Path, tag: str) -> GradeRecord:
        return self._grade_copy(task, env, self._grading_copy(task, output, tag), tag)

    def _grading_copy(self, task: Task, output: Path, tag: str) -> Path:
        """A copy of `output` in the folder of grading `tag`, for _grade_copy."""
        work = self.area.validation(task.id) / tag
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        copy = work / "output"
        shutil.copytree(output, copy, symlinks=True)
        return copy

    def _grade_copy(self, task: Task, env: envs.Environment, copy: Path, tag: str) -> GradeRecord:
        """Grade a folder made by _grading_copy (and maybe altered since)."""
        work = copy.parent
        for d in (work, work.parent, work.parent.parent):
            d.chmod(0o711)
        for p in [copy, *copy.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        pristine = dict(task.input_hashes)  # a fixture's inputs are the task's own
        req = GradeRequest(task, env, copy, pristine, work / "grade", f"{self.runner.run_id}.{task.id}.{tag}",
                           probe_answers=self.probes.of(task), prober=self.runner.prober)
        g = grade(self.runner.provider, self.area, req)
        self.probes.add(task, g)
        return g

    def _fixture_output(
        self, task: Task, env: envs.Environment, fx: Fixture, oracle_output: Path, tag: str
    ) -> tuple[Path | None, str]:
        """The fixture's committed output/, or the one its make.sh builds from the oracle's."""
        if not has_make_script(fx.path):
            return fx.output, ""
        return build_fixture_output(
            self.runner.provider, env, name=f"{self.runner.run_id}.{task.id}.make-{tag}",
            fixture_dir=fx.path, oracle_output=oracle_output, inputs=task.inputs_dir,
            solution=task.solution_dir, lib=task.fixtures_lib_dir,
            work=self.area.validation(task.id) / f"make-{tag}",
        )

    def _grade_fixture(
        self, task: Task, env: envs.Environment, fx: Fixture, oracle_output: Path, tag: str
    ) -> GradeRecord | str:
        """The fixture's grade, or why it could not be graded (a failed gate either way)."""
        if fx.spec is None:
            return fx.error
        output, why = self._fixture_output(task, env, fx, oracle_output, tag)
        if output is None:
            return why
        g = self._grade_dir(task, env, output, tag)
        return g if g.ok else f"grader error: {g.error}"

    def _positive_gate(
        self, task: Task, env: envs.Environment, fx: Fixture, oracle_output: Path
    ) -> GateOutcome:
        name = f"positive fixture {fx.name}"
        g = self._grade_fixture(task, env, fx, oracle_output, f"positive-{fx.name}")
        if isinstance(g, str):
            return name, False, g
        failed = [c.name for c in g.checks if not c.passed]
        return name, g.score == 1.0, f"score {g.score}; failed: {', '.join(failed)}" if failed else ""

    def _fixture_gate(
        self, task: Task, env: envs.Environment, fx: Fixture, oracle_output: Path
    ) -> GateOutcome:
        name = f"negative fixture {fx.name}"
        g = self._grade_fixture(task, env, fx, oracle_output, f"fixture-{fx.name}")
        if isinstance(g, str) or not isinstance(fx.spec, FixtureSpec):
            return name, False, g if isinstance(g, str) else fx.error
        lo, hi = fx.spec.score_min, fx.spec.score_max
        ok = g.score is not None and lo <= g.score <= hi and g.score < 1.0
        return name, ok, f"score {g.score} (declared {lo}..{hi})"

    def _determinism_gate(self, task: Task, env: envs.Environment, oracle: TrialRecord) -> GateOutcome:
        """Two gradings of the oracle's output give the same rubric: the oracle trial's own and
        one more (two more for a sealed task, whose trial keeps only a redacted rubric)."""
        name = "grading is deterministic"
        output = RunPaths(self.runner.run_dir).trial(oracle.trial_id).output
        if not output.is_dir():
            return name, False, "no oracle output to grade"
        first = oracle.grade if oracle.grade is not None and oracle.grade.ok and not task.sealed \
            else self._grade_dir(task, env, output, "determinism-1")
        second = self._grade_dir(task, env, output, "determinism-2")
        same = first.ok and second.ok and [c.model_dump() for c in first.checks] == [
            c.model_dump() for c in second.checks
        ]
        return name, same, "" if same else "two gradings of the oracle output differ"
