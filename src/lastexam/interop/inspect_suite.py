"""lastexam's tasks as an Inspect task: `inspect eval lastexam/suite --model M [--solver S]`.

Each sample is a lastexam task: its instruction as the input, its id, tier and cluster as
metadata, run in the "lastexam" sandbox (its workspace: /task/instruction.md, /task/inputs,
/task/output) and scored by its own grader in lastexam's grading sandbox, with every check in
the score's metadata. `lastexam/oracle` is a solver that runs the task's solve.sh there."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from lastexam.interop.inspect_sandbox import TASK_PATH, LastexamSandbox
from lastexam.layout import AgentSandbox
from lastexam.paths import default_tasks_dir
from lastexam.task.load import Task as LastexamTask
from lastexam.task.load import discover_tasks

ORACLE_DIR = f"{AgentSandbox.HOME}/oracle"  # where lastexam/oracle copies solution/


def sample_of(t: LastexamTask) -> Sample:
    s = t.spec
    return Sample(
        id=s.id, input=t.instruction.read_text(encoding="utf-8"),
        metadata={"task_id": s.id, "tier": s.tier, "cluster": s.cluster, "subdomain": s.subdomain,
                  "software": s.software, TASK_PATH: str(t.path)},
    )


@task
def suite(tasks: str = "", ids: str = "") -> Task:
    """tasks: task folders, folders of tasks or .txt lists, comma-separated (default: the
    project's tasks/); ids: only these task ids, comma-separated."""
    paths = [Path(p) for p in tasks.split(",") if p] or [default_tasks_dir()]
    wanted = {i for i in ids.split(",") if i}
    found = [t for t in discover_tasks(paths) if not wanted or t.id in wanted]
    return Task(dataset=[sample_of(t) for t in found], scorer=lastexam_grader(),
                sandbox="lastexam")


@scorer(metrics=[mean(), stderr()])
def lastexam_grader():
    """The task's grader on what the sample left in /task/output. A grader that fails raises
    (the sample errors), as lastexam records a grader_error rather than a score of 0."""

    async def score(state: TaskState, target: Target) -> Score:
        record = await sandbox().as_type(LastexamSandbox).grade()
        if not record.ok:
            raise RuntimeError(f"grader error: {record.error}")
        failed = [c.name for c in record.checks if not c.passed]
        return Score(
            value=record.score,
            explanation=f"full pass: {record.full_pass}; failed: {', '.join(failed) or 'none'}",
            metadata={"full_pass": record.full_pass, "grader_version": record.grader_version,
                      "checks": [c.model_dump() for c in record.checks]},
        )

    return score


@solver
def oracle() -> Solver:
    """The calibration agent: copies the task's solution/ into the sandbox and runs solve.sh."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        folder = Path(state.metadata[TASK_PATH]) / "solution"
        box = sandbox()
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        for f in files:
            await box.write_file(f"{ORACLE_DIR}/{f.relative_to(folder).as_posix()}", f.read_bytes())
        if runnable := [f"{ORACLE_DIR}/{f.relative_to(folder).as_posix()}" for f in files
                        if f.stat().st_mode & 0o100]:
            await box.exec(["/bin/chmod", "+x", "--", *runnable])
        ran = await box.exec(["/bin/bash", f"{ORACLE_DIR}/solve.sh"])
        state.metadata["oracle_exit"] = ran.returncode
        return state

    return solve
