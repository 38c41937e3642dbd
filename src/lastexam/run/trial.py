"""One trial, as a straight line: stage, run the agent, collect, grade, record."""

from __future__ import annotations

import json
import shutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lastexam.agents.base import Agent, AgentContext
from lastexam.desktop import launch as desktop_launch
from lastexam.desktop.collect import collect_desktop
from lastexam.desktop.spec import CAPS, DesktopSpec, desktop_for
from lastexam.envs.manage import Environment
from lastexam.gateway.models import Budget, SessionSummary
from lastexam.gateway.providers import ModelSpec
from lastexam.layout import AgentSandbox
from lastexam.run.collect import inputs_state, snapshot_output
from lastexam.run.faults import point
from lastexam.run.grading import GradeRequest, grade, warm_release, warm_up
from lastexam.run.model_access import ModelAccess, open_access, save_trajectory
from lastexam.run.policy import POLICY, RunAborted, agent_kind, infra_kind
from lastexam.run.probing import Prober
from lastexam.run.record import publish_trial
from lastexam.run.recorded_probes import RecordedProbes
from lastexam.run.workspace import RunWorkArea, TrialWorkspace
from lastexam.sandbox.base import (
    Mount,
    SandboxLimits,
    SandboxProvider,
    SandboxRequest,
)
from lastexam.store.db import Store, now_iso
from lastexam.store.models import (
    EarlierTry,
    ExecUsage,
    GradeRecord,
    PolicyDecision,
    Repro,
    Timings,
    TrialKey,
    TrialRecord,
)
from lastexam.task.load import Task
from lastexam.untrusted import remove_tree
from lastexam.usage.channel import ExecLogChannel, check_not_hidden, pythonpath_env
from lastexam.usage.gui import gui_use
from lastexam.usage.record import ShimNotLoaded, record_usage
from lastexam.usage.shim import build_shim

if TYPE_CHECKING:
    from lastexam.gateway.server import Gateway


SANDBOX_ENDS = frozenset({"exit", "timeout", "memory", "output_limit", "budget_exhausted"})


@dataclass
class TrialPlan:
    task: Task
    key: TrialKey
    agent: Agent
    agent_args: dict[str, str]
    timeout_s: int
    env: Environment
    model: ModelSpec | None = None  # key.model, parsed once when the run is planned
    budget: Budget = field(default_factory=Budget)
    force_desktop: bool = False  # `lastexam run --desktop`: a desktop even for a non-GUI task

    @property
    def desktop(self) -> DesktopSpec | None:
        return desktop_for(self.task.spec.gui, self.task.spec.desktop, self.force_desktop)


@dataclass
class TrialRunner:
    run_id: str
    run_dir: Path
    store: Store
    provider: SandboxProvider
    area: RunWorkArea
    repro: Repro  # the run-wide part of each trial's reproducibility record
    gateway: Gateway | None = None  # the run's model gateway, when an agent needs a model
    fingerprints: dict[str, dict[str, str]] = field(default_factory=dict)

    max_retries: int = 2  # cap on the policy's retries (--max-retries)
    prober: Prober | None = None  # answers graders' model probes (--probe-model)
    # Probe answers recorded for a task (its probes.json), replayed in its gradings for their
    # exact excerpts; only excerpts never answered reach the prober.
    recorded_probes: Callable[[Task], dict[str, dict[str, Any]]] = field(
        default_factory=lambda: RecordedProbes().of)

    def run(self, plan: TrialPlan) -> TrialRecord:
        """Run the trial, retrying infrastructure failures as the error policy says, then
        record it (artifacts first, then the store: the commit point)."""
        record = self.decide(plan)
        ws = self.area.trial(record.trial_id)
        try:
            publish_trial(self.run_dir, self.store, record,
                          lambda folder: shutil.move(self.collected(ws, plan.task, record), folder))
        except RunAborted:
            ws.remove()
            raise
        point("cleanup", self.run_id, record.trial_id)
        # The agent's folders are kept for the next trial only once its sandbox ended with
        # every process gone, as a cgroup tells (not after survivors, nor when it never ran),
        # and not for a sealed task (whose trials never take kept folders).
        ws.remove(reuse=record.ended_by in SANDBOX_ENDS and not plan.task.sealed
                  and getattr(self.provider, "cgroups", None) is not None)
        return record

    def decide(self, plan: TrialPlan, earlier: list[EarlierTry] | None = None) -> TrialRecord:
        """Try the trial until the error policy stops retrying; the record carries the
        policy's decision, its files are in the workspace's trial folder (collected()).
        `earlier`: tries already made elsewhere (a lost node), counted against the cap."""
        earlier = list(earlier or [])
        while True:
            record, kind = self._attempt(plan)
            policy = POLICY[kind]
            retries_left = min(policy.retries, self.max_retries) - len(earlier)
            if policy.abort_run:
                self.area.trial(record.trial_id).remove()
                raise RunAborted(f"{record.trial_id}: {record.error}")
            if retries_left <= 0:
                break
            earlier.append(EarlierTry(kind=kind, error=(record.error or "")[-2000:]))
            self.area.trial(record.trial_id).remove()
            time.sleep(policy.backoff_s * 2 ** (len(earlier) - 1))
        record.policy = PolicyDecision(kind=kind, counts=policy.counts, retries=len(earlier),
                                       earlier=earlier)
        return record

    def _attempt(self, plan: TrialPlan) -> tuple[TrialRecord, str]:
        """One try: stage, run the agent, collect, grade. Returns the record (not yet saved)
        and its policy kind."""
        key, task = plan.key, plan.task
        trial_id = key.trial_id
        ws, grading = self.area.trial(trial_id), f"{self.run_id}.{trial_id}.grade"
        started_at = now_iso()
        timings: dict[str, float] = {}
        clock = time.monotonic()
        step = "stage"

        def lap(name: str) -> None:
            nonlocal clock
            now = time.monotonic()
            timings[name] = round(now - clock, 4)
            clock = now

        ended_by, exit_code, error, outputs = "not_started", None, None, {}
        missing: list[str] = []
        usage = ExecUsage()
        after: dict[str, str] = {}
        kind = "harness_error"
        grade_record: GradeRecord | None = None
        agent_version = ""
        model_usage: SessionSummary | None = None
        try:
            point("stage", self.run_id, trial_id)
            ws.stage(task, self.provider.uid)
            warm_up(self.provider, self.area, plan.env, task, grading)
            lap("stage")
            step = "agent"
            agent_version = plan.agent.version()
            access = self._open_access(plan, ws)
            point("agent", self.run_id, trial_id)
            shim = build_shim()
            uid = self.provider.uid
            channel = ExecLogChannel(shim, ws.exec_log, uid, log=ws.exec_copy) if shim else None
            exec_log = None
            try:
                request, first_program = self._agent_request(plan, ws, access, channel)
                if channel is not None:
                    channel.open()
                result = self.provider.run(request)
            finally:
                if channel is not None:
                    exec_log = channel.close()
                if access is not None and self.gateway is not None:
                    model_usage = self.gateway.close_session(access.session.token)
            lap("agent")
            step = "collect"
            ended_by = result.killed or "exit"
            exit_code = result.exit_code
            if model_usage is not None and model_usage.budget_exhausted:
                ended_by = "budget_exhausted"
                error = f"the gateway refused further model calls: {model_usage.budget_exhausted}"
            if result.survivors:
                ended_by = "survivors"
                error = f"{result.survivors} processes of the agent survived SIGKILL and the teardown"
            kind = agent_kind(ended_by, exit_code)
            point("collect", self.run_id, trial_id)
            outputs = snapshot_output(
                ws.output, ws.trial.output, max_bytes=task.spec.limits.output_mb * 1024 * 1024
            )
            after = inputs_state(task.input_sizes if task.sealed else task.inputs_dir, ws.inputs)
            if plan.desktop is not None:
                collect_desktop(ws.desktop, ws.trial)
            missing = [o for o in task.spec.outputs if not (ws.trial.output / o).is_file()]
            try:
                usage = ExecUsage.model_validate(record_usage(
                    exec_log, ws.trial.exec_log, task.spec.software, first_program
                ))
            except ShimNotLoaded as e:  # with a desktop: the agent's command never started
                if plan.desktop is None:
                    raise
                raise ShimNotLoaded(f"{e}: {desktop_launch.no_start(ws.trial)}") from None
            ws.free_agent_areas()
            lap("collect")
            step = "grade"
            point("grade", self.run_id, trial_id)
            if POLICY[kind].grade:
                grade_record = grade(
                    self.provider,
                    self.area,
                    GradeRequest(
                        task, plan.env, ws.trial.output, after, ws.grade, grading, prober=self.prober,
                        probe_answers=self.recorded_probes(task),
                        task_dir=ws.task_copy(self.area, task, self.provider.uid),
                    ),
                )
                remove_tree(ws.sealed_task)
                if not grade_record.ok:
                    kind = "grader_failed"  # the record's error is then the grade's
            lap("grade")
        except Exception as e:  # every failure becomes a recorded, classified trial
            kind = infra_kind(e, task.path.is_dir(), step)
            error = f"{step}: {type(e).__name__}: {e}"
            if kind == "harness_error":
                error += "\n" + traceback.format_exc(limit=8)
            grade_record = None
        warm_release(self.provider, self.area, plan.env, task, grading)
        if ws.root.is_dir():
            self._save_trajectory(plan, ws, agent_version, model_usage, timings.get("agent"))
            if ws.trial.agent.is_dir():  # kept with the trial so that a regrade sees the same inputs
                ws.trial.inputs_after.write_text(json.dumps(after))
        record = TrialRecord(
            trial_id=trial_id,
            run_id=self.run_id,
            key=key,
            task_path=str(task.path),
            cluster=task.spec.cluster,
            subdomain=task.spec.subdomain,
            tier=task.spec.tier,
            status=POLICY[kind].status,
            score=grade_record.score if grade_record and grade_record.ok else None,
            full_pass=bool(grade_record and grade_record.full_pass),
            agent_exit_code=exit_code,
            ended_by=ended_by,
            run_error=error,
            started_at=started_at,
            finished_at=now_iso(),
            timings=Timings(**timings),
            outputs=outputs,
            missing_outputs=missing,
            usage=usage,
            gui=gui_use(ws.trial.windows_log, plan.desktop.apps) if task.spec.gui and plan.desktop else None,
            repro=self.repro.model_copy(update={
                "task_hash": task.content_hash if task.path.is_dir() else None,
                "grader_version": task.grader_hash if task.path.is_dir() else None,
                "environment": plan.env.name,
                "environment_fingerprint": self._fingerprint(plan.env),
                "agent": plan.agent.name,
                "agent_version": agent_version,
                "model": key.model,
                "timeout_s": plan.timeout_s,
            }),
            gateway=model_usage,
            grade=grade_record,
            sealed=task.sealed,
            visibility="private" if task.private else "public",
        )
        return record, kind

    def _open_access(self, plan: TrialPlan, ws: TrialWorkspace) -> ModelAccess | None:
        if plan.model is None or plan.agent.wire_for(plan.model) is None:
            return None
        if self.gateway is None:
            raise RuntimeError(f"agent {plan.agent.name!r} needs the model gateway, which is not running")
        return open_access(self.gateway, plan.key.trial_id, plan.model, plan.budget,
                           ws.trial.gateway_log)

    def _save_trajectory(
        self, plan: TrialPlan, ws: TrialWorkspace, version: str,
        usage: SessionSummary | None, duration: float | None,
    ) -> None:
        save_trajectory(
            trial=ws.trial, trial_id=plan.key.trial_id, agent=plan.agent,
            agent_version=version, model=plan.key.model,
            instruction=ws.instruction.read_text(encoding="utf-8", errors="replace")
            if ws.instruction.exists() else "",
            summary=usage, duration_s=duration,
        )

    def _agent_request(
        self, plan: TrialPlan, ws: TrialWorkspace, access: ModelAccess | None,
        channel: ExecLogChannel | None,
    ) -> tuple[SandboxRequest, str]:
        """The agent's sandbox, and the program its exec log must start with (the agent's
        own first program: a desktop session before it runs without the shim)."""
        task, agent = plan.task, plan.agent
        instruction = ws.instruction.read_text(encoding="utf-8", errors="replace")
        solution = None
        if agent.sees_solution:
            solution = ws.task_copy(self.area, task, self.provider.uid) / "solution"
        launch = agent.launch(
            AgentContext(
                task_id=task.id,
                instruction=instruction,
                model=plan.model,
                args=plan.agent_args,
                timeout_s=plan.timeout_s,
                solution_dir=solution,
                home=ws.home,
                logs=ws.trial.agent,
                gateway=access.access if access else None,
                desktop=plan.desktop is not None,
            )
        )
        ws.own_home(self.provider.uid)  # config files the adapter wrote
        limits = task.spec.limits
        pythonpath = launch.env.get("PYTHONPATH", "")
        env = {
            **plan.env.variables(),
            "HOME": AgentSandbox.HOME,
            "USER": "agent",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "LASTEXAM_TASK_DIR": AgentSandbox.TASK,
            **launch.env,
            # The exec log's shim and the hook that records Python imports.
            **(channel.env(pythonpath) if channel else pythonpath_env(pythonpath)),
        }
        argv = launch.argv
        watch = [ws.output, ws.home, ws.inputs, ws.trial.agent]
        desktop_mounts: list[Mount] = []
        desktop_bytes = 0
        if plan.desktop is not None:
            desktop_bytes = CAPS.write_allowance  # the recording is written as the agent too
            ws.make_desktop(self.provider.uid)
            wrapped = desktop_launch.wrap(plan.desktop, argv, env, ws.desktop, plan.timeout_s)
            argv, env, desktop_mounts = wrapped.argv, wrapped.env, wrapped.mounts
            watch.append(ws.desktop)
        mounts = [
            Mount(ws.instruction, AgentSandbox.INSTRUCTION),
            Mount(ws.inputs, AgentSandbox.INPUTS, writable=True),
            Mount(ws.output, AgentSandbox.OUTPUT, writable=True),
            Mount(ws.home, AgentSandbox.HOME, writable=True),
            *plan.env.mounts(),
            *launch.mounts,
            *([access.mount] if access else []),
            *desktop_mounts,
            *(channel.mounts(self.area.usage_hook) if channel else []),
        ]
        check_not_hidden(mounts)
        request = SandboxRequest(
            name=f"{self.run_id}.{plan.key.trial_id}",
            argv=argv,
            mounts=mounts,
            env=env,
            cwd=AgentSandbox.TASK,
            limits=SandboxLimits(
                wall_s=plan.timeout_s,
                memory_mb=limits.memory_mb,
                max_processes=limits.max_processes,
                watch_bytes=limits.output_mb * 1024 * 1024 * 2 + desktop_bytes,
            ),
            stdout=ws.trial.agent_stdout,
            stderr=ws.trial.agent_stderr,
            watch=watch,
        )
        return request, launch.argv[0]

    def _fingerprint(self, env: Environment) -> dict[str, str]:
        if env.name not in self.fingerprints:
            from lastexam.envs.manage import fingerprint

            self.fingerprints[env.name] = fingerprint(env)
        return self.fingerprints[env.name]

    @staticmethod
    def collected(ws: TrialWorkspace, task: Task, record: TrialRecord) -> Path:
        """The trial's folder in its workspace, with the grading's result and logs moved in:
        what is recorded (layout.py's TrialPaths). A sealed task's folder is sealed and its
        record redacted here (pool/artifacts.py)."""
        ws.trial.root.mkdir(parents=True, exist_ok=True)  # absent when staging failed
        grader = ws.trial.grader
        if (ws.grade / "result").exists():
            shutil.move(ws.grade / "result", grader)
        for log in (ws.trial.grader_stdout, ws.trial.grader_stderr):
            if (ws.grade / log.name).exists():
                grader.mkdir(exist_ok=True)
                shutil.move(ws.grade / log.name, log)
        if task.sealed:  # sealed in the work area: nothing of it reaches the run in clear
            from lastexam.pool.artifacts import seal_trial

            seal_trial(ws.trial.root, record, task.recipients)
        return ws.trial.root
