"""Grade a set of output files in a grading sandbox of their own: forked by the run's warm grading
worker (sandbox/warm.py) when it can run here, else a fresh one (host side of the grading harness)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lastexam import background
from lastexam.envs.manage import Environment
from lastexam.grading.context import GradeContext
from lastexam.grading.harness import RESULT_FD_VAR
from lastexam.grading.probe import MAX_EXCERPT_CHARS, MAX_PROBES, MAX_QUESTION_CHARS
from lastexam.grading.rubric import Check, full_pass_of, score_of
from lastexam.layout import GRADER_STDERR, GRADER_STDOUT, GradingSandbox
from lastexam.run import recycle
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox import warm
from lastexam.sandbox.base import (
    Mount,
    SandboxError,
    SandboxLimits,
    SandboxProvider,
    SandboxRequest,
)
from lastexam.sandbox.warm import WarmWorker
from lastexam.store.db import now_iso
from lastexam.store.models import CheckResult, GradeRecord
from lastexam.task.grader_imports import grader_imports
from lastexam.task.load import Task
from lastexam.untrusted import remove_tree, tail

if TYPE_CHECKING:
    from lastexam.run.probing import Prober

MAX_RESULT_BYTES = 32 * 1024 * 1024
MAX_PROBE_ROUNDS = 3  # gradings per request: a grader may ask a probe after another's answer


@dataclass(frozen=True)
class GradeRequest:
    task: Task
    env: Environment
    output_dir: Path  # must be reachable by the sandbox uid (inside the run's work area)
    inputs_after: dict[str, str]
    workdir: Path  # context.json, result/, scratch/ and the grader's logs go here
    name: str  # unique sandbox name
    # Model probes (grading/probe.py): answers recorded earlier, by key, replayed as they are;
    # the prober asks the model those still pending (None: a pending probe fails the grading).
    probe_answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    prober: Prober | None = None
    task_dir: Path | None = None  # the hidden parts to mount (None: the run's copy of the task)


def grade(provider: SandboxProvider, area: RunWorkArea, req: GradeRequest) -> GradeRecord:
    """Grade req.output_dir; while the grader leaves model probes pending and a prober is set,
    ask them and grade again with the answers."""
    from lastexam.run.probing import ProbeFailed

    answers = dict(req.probe_answers)
    for _ in range(MAX_PROBE_ROUNDS):
        record, pending = _grade_once(provider, area, req, answers)
        if not pending:
            return record
        if req.prober is None:
            return record.model_copy(update={
                "ok": False, "score": None, "full_pass": False, "checks": [],
                "error": f"the grader asks {len(pending)} model probe(s) without a recorded answer "
                         "and no probe model is set (--probe-model)"})
        try:
            for p in pending:
                answers[p["key"]] = req.prober.ask(p["question"], p["excerpt"])
        except ProbeFailed as e:
            return record.model_copy(update={"ok": False, "score": None, "full_pass": False,
                                             "checks": [], "error": str(e)})
    return record.model_copy(update={"ok": False, "score": None, "full_pass": False, "checks": [],
                                     "error": f"model probes still pending after {MAX_PROBE_ROUNDS} gradings"})


# By environment spec (kept, so that its id stays its own) and the venv's site-packages as
# Environment.site_packages finds them now (a reinstall may name others): a trial needs them
# four times. Read-only: callers copy before adding to them.
_GRADING_ENVS: dict[tuple[int, tuple[Path, ...]], tuple[object, dict[str, str]]] = {}


def _grading_env(env: Environment) -> dict[str, str]:
    site = env.site_packages()
    key = (id(env.spec), tuple(site))
    if (known := _GRADING_ENVS.get(key)) is not None:
        return known[1]
    variables = {
        **env.variables(),
        "HOME": GradingSandbox.SCRATCH,
        "TMPDIR": "/tmp",
        "PYTHONPATH": ":".join([GradingSandbox.LIB, *map(str, site)]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    if site:  # an environment not installed yet may be by the next call
        _GRADING_ENVS[key] = (env.spec, variables)
    return variables


def _warm_worker(provider: SandboxProvider, area: RunWorkArea, env: Environment,
                 task: Task) -> WarmWorker | None:
    """The run's warm grading worker for env and the modules task's grader imports (None: each
    grading starts a fresh sandbox)."""
    # A sealed task's grader is never read on the host: nothing is preloaded for it.
    off = task.sealed or os.environ.get("LASTEXAM_GRADING_PRELOAD", "1") == "0"
    preload = () if off else grader_imports(task.path)
    return warm.worker(provider, area.root, env.name, _grading_env(env), area.lib, GradingSandbox.LIB,
                       preload)


def _limits(task: Task) -> SandboxLimits:
    limits = task.spec.limits
    return SandboxLimits(wall_s=limits.grader_timeout_s, memory_mb=limits.grader_memory_mb,
                         max_processes=256, watch_bytes=2 * 1024**3)


def warm_up(provider: SandboxProvider, area: RunWorkArea, env: Environment, task: Task, name: str) -> None:
    """Get the grading sandbox `name` ready now, while the agent works: the warm worker of env
    started and, in the grading's own cgroup, a child of it waiting for the job."""
    if (w := _warm_worker(provider, area, env, task)) is not None:
        # Ahead of time only: a failure here is met again, and reported, by the grading.
        with contextlib.suppress(SandboxError, OSError):
            # The worker compiles the grader before it forks (never a sealed task's: not read here).
            grader = None if task.sealed else area.task_copy(task) / "grader.py"
            w.prepare(name, _limits(task), grader)


def warm_release(provider: SandboxProvider, area: RunWorkArea, env: Environment, task: Task,
                 name: str) -> None:
    """Drop what warm_up prepared for `name` if no grading used it."""
    if (w := _warm_worker(provider, area, env, task)) is not None:
        w.release(name)


def _pending_probes(data: dict[str, Any]) -> list[dict[str, str]]:
    """The harness's list of unanswered probes, checked: it comes out of the sandbox."""
    pending = data.get("pending_probes") or []
    if not isinstance(pending, list) or len(pending) > MAX_PROBES:
        raise ValueError(f"pending_probes is not a list of at most {MAX_PROBES}")
    for p in pending:
        if not (isinstance(p, dict) and isinstance(p.get("key"), str) and len(p["key"]) == 32
                and isinstance(p.get("question"), str) and len(p["question"]) <= MAX_QUESTION_CHARS
                and isinstance(p.get("excerpt"), str) and len(p["excerpt"]) <= MAX_EXCERPT_CHARS):
            raise ValueError("a pending probe is malformed")
    return pending


def _grade_once(provider: SandboxProvider, area: RunWorkArea, req: GradeRequest,
                answers: dict[str, dict[str, Any]]) -> tuple[GradeRecord, list[dict[str, str]]]:
    task = req.task
    task_copy = req.task_dir or area.task_copy(task)
    result_dir, scratch = req.workdir / "result", req.workdir / "scratch"
    # A workspace's folder kept from an earlier trial (run/recycle.py): only its scratch/,
    # empty, both as made; otherwise made again.
    if not (req.workdir.is_dir() and recycle.grading_folder_ready(req.workdir)):
        remove_tree(req.workdir)
        for d in (req.workdir, scratch):
            d.mkdir(parents=True)
    result_dir.mkdir()
    scratch.chmod(recycle.FOLDER_MODE)
    recycle.renew(scratch)
    if provider.uid is not None:
        for d in (result_dir, scratch):
            os.chown(d, provider.uid, provider.uid)
        req.workdir.chmod(recycle.PRIVATE_MODE)
    context = GradeContext(
        output=Path(GradingSandbox.OUTPUT),
        reference=Path(GradingSandbox.REFERENCE),
        inputs=Path(GradingSandbox.INPUTS),
        task=Path(GradingSandbox.TASK),
        scratch=Path(GradingSandbox.SCRATCH),
        canary=task.spec.canary,
        inputs_after=req.inputs_after,
        # computed here, once per task: hashing in each grading would cost it hashlib's import
        inputs_pristine=task.input_hashes,
        probe_answers=answers,
    )
    context_file = _write_context(area, req, json.dumps(context.to_json()))
    channel_r, channel_w = os.pipe()
    sreq = SandboxRequest(
        name=req.name,
        argv=[
            # -S: no site initialisation (a few ms per grading); the environment's packages
            # come from PYTHONPATH instead. Every grader runs under this in `validate`.
            "python3", "-S", "-B", f"{GradingSandbox.LIB}/lastexam/grading/harness.py",
            GradingSandbox.CONTEXT, GradingSandbox.RESULT,
        ],
        mounts=[
            Mount(req.output_dir, GradingSandbox.OUTPUT),
            Mount(task_copy, GradingSandbox.TASK),
            Mount(context_file, GradingSandbox.CONTEXT),
            Mount(result_dir, GradingSandbox.RESULT_DIR, writable=True),
            Mount(scratch, GradingSandbox.SCRATCH, writable=True),
            Mount(area.lib, GradingSandbox.LIB),
            *req.env.mounts(),
        ],
        env={**_grading_env(req.env), RESULT_FD_VAR: str(channel_w)},
        pass_fds=(channel_w,),
        cwd=GradingSandbox.SCRATCH,
        limits=_limits(task),
        stdout=req.workdir / GRADER_STDOUT,
        stderr=req.workdir / GRADER_STDERR,
        watch=[scratch, result_dir],
    )
    started = time.monotonic()
    reader = _ChannelReader(channel_r)
    try:
        result = (_warm_worker(provider, area, req.env, task) or provider).run(sreq)
    finally:
        os.close(channel_w)  # with the sandbox gone, the reader now sees the end
        raw, overflow = reader.finish()
        remove_tree(context_file)
    duration = time.monotonic() - started
    if result.survivors != 0:  # unknown, or a process may still write there
        recycle.forbid(req.workdir.parent)

    def failed(why: str) -> tuple[GradeRecord, list[dict[str, str]]]:
        return GradeRecord(
            grader_version=task.grader_hash, ok=False, score=None, full_pass=False,
            error=why, created_at=now_iso(), duration_s=duration,
        ), []

    if result.killed:
        return failed(f"grader ended by its {result.killed} limit")
    if overflow:
        return failed("grader result is too large")
    if not raw:
        tail = _tail(sreq.stderr)
        return failed(f"grader wrote no result (exit {result.exit_code}): {tail}")
    # Only what came through the harness's channel counts; a result.json left in the folder
    # by any process of the sandbox is replaced (kept as the trial's artifact).
    result_file = result_dir / "result.json"
    remove_tree(result_file)
    result_file.write_bytes(raw)
    try:
        data = json.loads(raw.decode())
        if not isinstance(data, dict):
            raise TypeError(f"a JSON {type(data).__name__}, not an object")
        if data.get("status") != "ok":
            return failed(str(data.get("error", "grader failed")))
        checks = [Check(**c) for c in data["rubric"]["checks"]]
        pending = _pending_probes(data)
        return GradeRecord(
            grader_version=task.grader_hash,
            ok=True,
            score=score_of(checks),  # recomputed here: the harness, not the sandbox, decides
            full_pass=full_pass_of(checks),
            checks=[CheckResult(**c.as_dict()) for c in checks],
            created_at=now_iso(),
            duration_s=duration,
        ), pending
    except (ValueError, KeyError, TypeError) as e:  # pydantic's ValidationError is a ValueError
        return failed(f"grader result is malformed: {e}")


def _write_context(area: RunWorkArea, req: GradeRequest, text: str) -> Path:
    """The grading's context.json, in the run's fast folder when it has one (made and removed
    by every grading); a full /dev/shm is not the run's disk being full: then in the workdir."""
    if area.fast.is_dir():
        fast = area.fast / f"{req.name}.context.json"
        try:
            fast.write_text(text)
            fast.chmod(0o644)
            return fast
        except OSError:
            remove_tree(fast)
    path = req.workdir / "context.json"
    path.write_text(text)
    path.chmod(0o644)
    return path


class _ChannelReader:
    """Drains the harness's result pipe in a thread while the sandbox runs (a result larger
    than the pipe's buffer would otherwise block the harness): at most MAX_RESULT_BYTES kept."""

    def __init__(self, fd: int):
        self._fd = fd
        self._chunks: list[bytes] = []
        self._size = 0
        self._job = background.run(self._drain)

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, 1 << 16):
                self._size += len(chunk)
                if self._size <= MAX_RESULT_BYTES:
                    self._chunks.append(chunk)
        finally:
            os.close(self._fd)

    def finish(self) -> tuple[bytes, bool]:
        self._job.join()
        return b"".join(self._chunks), self._size > MAX_RESULT_BYTES


def _tail(path: Path, n: int = 1500) -> str:
    return tail(path, n)
