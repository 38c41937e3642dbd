"""The Ray backend's driver side: each trial is a Ray task holding its task's CPUs, memory and,
with a desktop, a `lastexam_gui` resource; it runs on a node of an existing cluster (workers:
run/backends/ray_worker.py) and comes back as a decided record plus its folder, which this
process records like a local trial. A trial whose node or worker is lost is retried as the
error policy's `node_lost` says, then recorded once as an infra_error."""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from lastexam import __version__
from lastexam.errors import LastexamError
from lastexam.run.backends.ray_models import TrialResources, WorkerJob, WorkerResult
from lastexam.run.backends.ray_worker import harness_identity, pack, unpack
from lastexam.run.policy import POLICY, RunAborted
from lastexam.run.probing import Prober
from lastexam.run.readiness import MachineNeeds, plan_problems, refuse
from lastexam.run.record import publish_trial
from lastexam.run.session import RunSession, git_commit
from lastexam.run.trial import TrialPlan
from lastexam.sandbox.base import SandboxProvider
from lastexam.store.db import now_iso
from lastexam.store.models import EarlierTry, PolicyDecision, Repro, RunConfig, TrialRecord

RAY_EXTRA = "pip install 'lastexam[ray]'"
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Ray colours the tracebacks it forwards


def connect(address: str) -> Any:
    """The ray module, connected to the cluster at `address` (empty: $RAY_ADDRESS, else a Ray
    instance started on this machine)."""
    try:
        import ray
    except ImportError:
        raise LastexamError(f"--backend ray needs Ray on this machine and every node: {RAY_EXTRA}") from None
    if not ray.is_initialized():
        try:
            ray.init(address=address or None, logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise LastexamError(f"cannot connect to the Ray cluster at {address or 'RAY_ADDRESS'}: {e}") from None
    return ray


@cache
def _remote(name: str) -> Any:
    import ray

    from lastexam.run.backends import ray_worker

    return ray.remote(getattr(ray_worker, name))


def trial_nodes(ray: Any) -> list[dict[str, Any]]:
    """The live nodes that can hold a trial (a head started with no CPUs holds none)."""
    return [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU", 0) > 0]


@dataclass
class Submission:
    plan: TrialPlan
    earlier: list[EarlierTry] = field(default_factory=list)
    started_at: str = field(default_factory=now_iso)


class RayBackend:
    def __init__(self, config: RunConfig):
        self.config = config

    def check(self, plans: list[TrialPlan], provider: SandboxProvider) -> None:
        """The run's own problems here; then, on every node that can hold trials, what the
        trials it may receive need (sandbox, environments, agents, desktop, model keys)."""
        problems = plan_problems(plans, self.config.probe_model)
        if self.config.probe_model:
            problems.append("--probe-model: graders' model probes run with --backend local only")
        sealed = sorted({p.task.id for p in plans if p.task.sealed})
        if sealed:
            problems.append(f"tasks of sealed pools run with --backend local only: {', '.join(sealed)}")
        refuse(problems)
        ray = connect(self.config.ray_address)
        nodes = trial_nodes(ray)
        if not nodes:
            refuse(["the Ray cluster has no live node with CPUs"])
        shapes = {TrialResources.of(p): p for p in plans}
        for shape, plan in shapes.items():
            if not any(shape.fits(n["Resources"]) for n in nodes):
                problems.append(f"no node of the Ray cluster can hold {plan.key.trial_id}: "
                                f"it needs {shape.describe()}")
        refuse(problems)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        refs = []
        for node in nodes:
            needs = MachineNeeds.of([p for p in plans if TrialResources.of(p).fits(node["Resources"])])
            strategy = NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
            refs.append(_remote("check_node").options(num_cpus=0, scheduling_strategy=strategy)
                        .remote(needs, self.config.sandbox, harness_identity()))
        for label, lacks in ray.get(refs):
            problems += [f"{label}: {m}" for m in lacks]
        refuse(problems)

    def run(self, plans: list[TrialPlan], session: RunSession,
            prober: Prober | None) -> Iterator[TrialRecord]:
        ray = connect(self.config.ray_address)
        archives: dict[str, Any] = {}
        queue = deque(Submission(p) for p in plans)
        inflight: dict[Any, Submission] = {}
        window = max(self.config.concurrency, 2 * int(ray.cluster_resources().get("CPU", 1)))
        try:
            while queue or inflight:
                while queue and len(inflight) < window:
                    sub = queue.popleft()
                    inflight[self._submit(ray, sub, session, archives)] = sub
                [ref], _ = ray.wait(list(inflight), num_returns=1)
                sub = inflight.pop(ref)
                try:
                    result: WorkerResult = ray.get(ref)
                except ray.exceptions.RayError as e:
                    # The node or its worker died, or the worker raised: not the agent's doing.
                    kind = "harness_error" if isinstance(e, ray.exceptions.RayTaskError) else "node_lost"
                    error = ANSI.sub("", f"{type(e).__name__}: {e}")[-2000:]
                    if min(POLICY[kind].retries, self.config.max_retries) > len(sub.earlier):
                        queue.appendleft(Submission(sub.plan, [*sub.earlier, EarlierTry(kind=kind, error=error)]))
                        continue
                    record = self._unrun(sub, kind, error, session)
                    publish_trial(session.run_dir, session.store, record, Path.mkdir)
                    yield record
                    continue
                if result.refused or result.aborted or result.record is None:
                    raise RunAborted(result.refused or f"{result.node}: {result.aborted}")
                record = result.record
                if record.key != sub.plan.key or record.trial_id != sub.plan.key.trial_id:
                    # Its name makes the trial's paths here: only the trial that was sent.
                    raise RunAborted(f"{result.node} sent back a record of {record.trial_id!r} "
                                     f"for the trial {sub.plan.key.trial_id}")
                record.run_id, record.task_path = session.run_id, str(sub.plan.task.path)
                archive = result.archive
                try:
                    publish_trial(session.run_dir, session.store, record,
                                  lambda folder, a=archive: unpack(a, folder))
                except LastexamError as e:
                    raise RunAborted(f"{result.node} sent back the folder of {record.trial_id} "
                                     f"as {e}") from None
                yield record
        finally:
            for ref in inflight:
                ray.cancel(ref, force=True)

    def _submit(self, ray: Any, sub: Submission, session: RunSession, archives: dict[str, Any]) -> Any:
        task = sub.plan.task
        if task.id not in archives:
            archives[task.id] = ray.put(pack(task.path))
        job = WorkerJob(session.run_id, self.config.sandbox, self.config.max_retries, sub.plan,
                        sub.earlier, harness_identity())
        options = TrialResources.of(sub.plan).ray_options()
        return _remote("run_trial").options(**options, max_retries=0).remote(job, archives[task.id])

    @staticmethod
    def _unrun(sub: Submission, kind: str, error: str, session: RunSession) -> TrialRecord:
        """The record of a trial whose every try was lost: nothing ran to an end, nothing graded."""
        plan, policy = sub.plan, POLICY[kind]
        return TrialRecord(
            trial_id=plan.key.trial_id, run_id=session.run_id, key=plan.key,
            task_path=str(plan.task.path), cluster=plan.task.spec.cluster,
            subdomain=plan.task.spec.subdomain, tier=plan.task.spec.tier, status=policy.status,
            score=None, full_pass=False, ended_by="not_started", run_error=error,
            started_at=sub.started_at, finished_at=now_iso(),
            # No node ran it to an end: the harness's part only (the driver may have no sandbox).
            repro=Repro(harness_version=__version__, git_commit=git_commit(),
                        environment=plan.env.name, agent=plan.agent.name, model=plan.key.model,
                        timeout_s=plan.timeout_s),
            policy=PolicyDecision(kind=kind, counts=policy.counts, retries=len(sub.earlier),
                                  earlier=sub.earlier),
        )
