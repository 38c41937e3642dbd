"""The lastexam side of an Inspect eval, without Inspect: one claimed work area and sandbox
provider per process, a staged workspace per sample, commands run in a fresh bwrap sandbox on
that workspace (each command its own sandbox: /task, $HOME persist between commands, /tmp does
not), and the grading of what the sample left in /task/output. inspect_sandbox.py wraps it in
Inspect's SandboxEnvironment."""

from __future__ import annotations

import itertools
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from lastexam.envs.manage import Environment
from lastexam.envs.manage import load as load_environment
from lastexam.errors import LastexamError
from lastexam.layout import AgentSandbox
from lastexam.run.collect import inputs_state, snapshot_output
from lastexam.run.grading import GradeRequest, grade
from lastexam.run.leftovers import RunClaim, claim_run, remove_leftovers, sweep_dead_runs
from lastexam.run.recorded_probes import load_recorded
from lastexam.run.session import check_sandbox, make_provider
from lastexam.run.workspace import RunWorkArea, TrialWorkspace
from lastexam.sandbox.base import Mount, SandboxLimits, SandboxProvider, SandboxRequest
from lastexam.store.models import GradeRecord
from lastexam.task.load import Task, load_task

STDIN = "/run/lastexam/stdin"
MAX_STREAM_BYTES = 10 * 1024 * 1024  # Inspect's default cap on each exec stream
MAX_READ_BYTES = 100 * 1024 * 1024  # and on a file read


@dataclass
class Ran:
    code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool  # stdout was longer than the cap asked for


@dataclass
class EvalArea:
    """The process's claim on a lastexam work area while an Inspect eval runs."""

    run_id: str
    area: RunWorkArea
    provider: SandboxProvider
    claim: RunClaim

    @classmethod
    def open(cls) -> EvalArea:
        run_id = f"inspect-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        area = RunWorkArea.for_run(run_id)
        claim = claim_run(area)
        try:
            sweep_dead_runs(area.root.parent, skip=run_id)
            remove_leftovers(area)
            provider = make_provider("bwrap", area.etc)
            check_sandbox(provider)
            area.prepare()
        except BaseException:
            claim.release()
            raise
        return cls(run_id, area, provider, claim)

    def close(self) -> None:
        self.area.remove()
        self.claim.release()


_lock = threading.Lock()
_open: list[EvalArea] = []


def eval_area() -> EvalArea:
    with _lock:
        if not _open:
            _open.append(EvalArea.open())
        return _open[0]


def close_eval_area() -> None:
    with _lock:
        while _open:
            _open.pop().close()


@dataclass
class SampleWorkspace:
    """One sample's task, environment and staged workspace (/task, $HOME) in the eval's area."""

    eval: EvalArea
    task: Task
    env: Environment
    ws: TrialWorkspace
    _calls: itertools.count = field(default_factory=itertools.count)

    @classmethod
    def stage(cls, task_path: Path) -> SampleWorkspace:
        ev = eval_area()
        task = load_task(task_path)
        env = load_environment(task.spec.environment, task.path)
        if missing := env.missing():
            raise LastexamError(f"environment {env.name!r} is not installed ({'; '.join(missing)}): "
                                f"lastexam env install {env.name}")
        ws = ev.area.trial(f"{task.id}-{secrets.token_hex(4)}")
        ws.stage(task, ev.provider.uid)
        (ws.root / "io").mkdir(mode=0o711)
        return cls(ev, task, env, ws)

    def run(self, argv: list[str], *, stdin: bytes | None = None, cwd: str | None = None,
            env: dict[str, str] | None = None, timeout: float | None = None,
            stdout_cap: int = MAX_STREAM_BYTES) -> Ran:
        n = next(self._calls)
        io = self.ws.root / "io"
        mounts = [
            Mount(self.ws.instruction, AgentSandbox.INSTRUCTION),
            Mount(self.ws.inputs, AgentSandbox.INPUTS, writable=True),
            Mount(self.ws.output, AgentSandbox.OUTPUT, writable=True),
            Mount(self.ws.home, AgentSandbox.HOME, writable=True),
            *self.env.mounts(),
        ]
        if stdin is not None:
            (io / f"{n}.in").write_bytes(stdin)
            (io / f"{n}.in").chmod(0o644)
            mounts.append(Mount(io / f"{n}.in", STDIN))
            argv = ["/bin/sh", "-c", f'exec "$@" < {STDIN}', "sh", *argv]
        limits = self.task.spec.limits
        out, err = io / f"{n}.out", io / f"{n}.err"
        result = self.eval.provider.run(SandboxRequest(
            name=f"{self.eval.run_id}.{self.ws.root.name}.{n}",
            argv=argv, mounts=mounts,
            env={**self.env.variables(), "HOME": AgentSandbox.HOME, "USER": "agent",
                 "TMPDIR": "/tmp", "LANG": "C.UTF-8", **(env or {})},
            cwd=cwd if cwd and cwd.startswith("/") else
            f"{AgentSandbox.TASK}/{cwd}" if cwd else AgentSandbox.TASK,
            limits=SandboxLimits(wall_s=timeout or self.task.spec.timeout_s,
                                 memory_mb=limits.memory_mb, max_processes=limits.max_processes,
                                 watch_bytes=limits.output_mb * 1024 * 1024 * 2),
            stdout=out, stderr=err,
            watch=[self.ws.output, self.ws.home, self.ws.inputs],
        ))
        stdout = _read(out, stdout_cap + 1)
        ran = Ran(result.exit_code, stdout[:stdout_cap], _read(err, MAX_STREAM_BYTES),
                  result.killed == "timeout", len(stdout) > stdout_cap)
        for p in (io / f"{n}.in", out, err):
            p.unlink(missing_ok=True)
        return ran

    def grade(self) -> GradeRecord:
        """Grade /task/output as a lastexam trial is graded (a copy of its regular files)."""
        trial = self.ws.trial
        snapshot_output(self.ws.output, trial.output,
                        max_bytes=self.task.spec.limits.output_mb * 1024 * 1024)
        after = inputs_state(self.task.inputs_dir, self.ws.inputs)
        return grade(self.eval.provider, self.eval.area, GradeRequest(
            self.task, self.env, trial.output, after, self.ws.grade,
            f"{self.eval.run_id}.{self.ws.root.name}.grade", probe_answers=load_recorded(self.task)))

    def remove(self) -> None:
        self.ws.remove()


def _read(path: Path, cap: int) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(cap)
    except FileNotFoundError:
        return b""



