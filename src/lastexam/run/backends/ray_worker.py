"""The Ray backend's worker side: what runs in a Ray task on a node. Each worker process keeps
one claimed work area per run in the node's own LASTEXAM_HOME (named run.node.pid, so that
workers of one node never share one), its sandbox provider and, for agents that use a model,
its own gateway, whose per-trial sessions enforce each trial's budget as the local one does.
The trial is decided here and its folder sent back; the driver alone records it."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import os
import tarfile
import time
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path, PurePosixPath

from lastexam import __version__
from lastexam.errors import LastexamError
from lastexam.gateway.server import Gateway
from lastexam.paths import home_subdir, lastexam_home, package_dir
from lastexam.run.backends.ray_models import WorkerJob, WorkerResult
from lastexam.run.policy import RunAborted
from lastexam.run.readiness import MachineNeeds, machine_problems
from lastexam.run.session import claimed_area, git_commit, host_facts
from lastexam.run.trial import TrialPlan, TrialRunner
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox.base import SandboxProvider
from lastexam.store.models import Repro
from lastexam.task.load import Task, load_task
from lastexam.untrusted import remove_tree


def node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def node_label() -> str:
    import ray

    return (f"node {node_id()[:12]} ({ray.util.get_node_ip_address()}, "
            f"LASTEXAM_HOME={lastexam_home()})")


def harness_identity() -> str:
    """The lastexam this process runs: its version and a digest of its code. The nodes decide
    and grade the trials, so each must run the driver's."""
    import lastexam  # the version read at call time (a test stands in another)

    return f"lastexam {lastexam.__version__} (code {_code_digest()})"


@cache
def _code_digest() -> str:
    h = hashlib.sha256()
    root = package_dir()
    for p in sorted(root.rglob("*.py")):
        if "__pycache__" not in p.parts:
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:16]


def other_harness(driver: str) -> str | None:
    """Why this node must not run the driver's trials, if its lastexam is not the driver's."""
    mine = harness_identity()
    if mine == driver:
        return None
    return f"runs {mine}, the driver {driver}: install the driver's lastexam on every node"


@dataclass
class NodeSession:
    run_id: str
    sandbox: str
    area: RunWorkArea
    provider: SandboxProvider
    runner: TrialRunner
    stack: contextlib.ExitStack
    checked: set[tuple[str, str, bool, str]] = field(default_factory=set)

    def problems(self, plan: TrialPlan) -> list[str]:
        """What this node lacks for the plan (checked once per environment, agent, desktop
        and model in this process)."""
        key = (plan.env.name, plan.agent.name, plan.desktop is not None,
               plan.model.text if plan.model else "")
        if key in self.checked:
            return []
        for pause in (0.2, 0.5, 0):
            problems = machine_problems(MachineNeeds.of([plan]), self.provider)
            if not problems:
                self.checked.add(key)
                break
            # The sandbox preflight sees the node's other workers forking their sandboxes (a
            # child runs as the sandbox uid before it execs): such a sighting passes.
            time.sleep(pause)
        return problems

    def gateway_for(self, plan: TrialPlan) -> None:
        if self.runner.gateway is None and plan.model is not None \
                and plan.agent.wire_for(plan.model) is not None:
            gateway = Gateway(self.area.gateway_socket())
            gateway.start()
            self.stack.callback(gateway.stop)
            self.runner.gateway = gateway

    def close(self) -> None:
        self.stack.close()


_session: NodeSession | None = None


def _node_session(job: WorkerJob) -> NodeSession:
    global _session
    if _session is not None and (_session.run_id, _session.sandbox) == (job.run_id, job.sandbox):
        return _session
    if _session is not None:
        _session.close()
        _session = None
    stack = contextlib.ExitStack()
    name = f"{job.run_id}.{node_id()[:8]}.{os.getpid()}"
    try:
        area, provider = stack.enter_context(claimed_area(name, job.sandbox, lambda _: None))
        area.prepare()
        repro = Repro(harness_version=__version__, git_commit=git_commit(),
                      sandbox=provider.settings(), host=host_facts(node=node_id()))
    except BaseException:
        stack.close()
        raise
    # Its decide() only: the driver records the trial, so it has no run folder or store here.
    runner = TrialRunner(run_id=name, run_dir=Path("/nonexistent"), store=None,  # type: ignore[arg-type]
                         provider=provider, area=area, repro=repro, max_retries=job.max_retries)
    _session = NodeSession(job.run_id, job.sandbox, area, provider, runner, stack)
    return _session


@atexit.register
def _close_session() -> None:
    if _session is not None:
        _session.close()


def local_task(task: Task, archive: bytes) -> Task:
    """This node's copy of the task folder, unpacked once per content, and again when the
    copy kept no longer holds that content (altered since: its trials would be graded
    against other files than the driver's)."""
    dest = home_subdir("ray-tasks") / task.content_hash[:24] / task.id
    for _ in range(2):
        if not dest.is_dir():
            tmp = dest.parent / f".{task.id}.{os.getpid()}.tmp"
            remove_tree(tmp)
            dest.parent.mkdir(parents=True, exist_ok=True)
            unpack(archive, tmp)
            try:
                os.rename(tmp, dest)
            except OSError:  # another worker of this node unpacked it first
                remove_tree(tmp)
        local = load_task(dest)
        if local.content_hash == task.content_hash:
            return local
        remove_tree(dest)
    raise LastexamError(f"the task folder {task.path} does not arrive whole on this node "
                        f"({dest}): its files differ from the driver's")


def pack(folder: Path) -> bytes:
    """A folder as an uncompressed tar (a task folder to a node, a trial folder back)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(folder, arcname=".", filter=lambda t: None if "__pycache__" in t.name else t)
    return buf.getvalue()


def unpack(archive: bytes, folder: Path) -> None:
    """Create `folder` from pack()'s archive: its plain files and folders, inside `folder`,
    owned by this process (the other machine's uids, its sandbox's, mean nothing here)."""
    folder.mkdir()
    try:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            members = []
            for m in tar.getmembers():
                parts = PurePosixPath(m.name).parts
                if (m.isfile() or m.isdir()) and not m.name.startswith("/") and ".." not in parts:
                    m.mode &= 0o755
                    m.uid, m.gid, m.uname, m.gname = os.getuid(), os.getgid(), "", ""
                    members.append(m)
            tar.extractall(folder, members=members)
    except tarfile.TarError as e:
        remove_tree(folder)
        raise LastexamError(f"an unreadable archive ({len(archive)} bytes): {e}") from None


def run_trial(job: WorkerJob, task_archive: bytes) -> WorkerResult:
    """A Ray task: decide one trial on this node."""
    label = node_label()
    if other := other_harness(job.harness):
        return WorkerResult(label, refused=f"{label}: {other}")
    try:
        session = _node_session(job)
    except LastexamError as e:
        return WorkerResult(label, refused=f"{label}: {e}")
    try:
        plan = replace(job.plan, task=local_task(job.plan.task, task_archive))
    except LastexamError as e:
        return WorkerResult(label, refused=f"{label}: {e}")
    problems = session.problems(plan)
    if problems:
        return WorkerResult(label, refused=f"{label} cannot run {plan.key.trial_id}:\n- "
                                            + "\n- ".join(problems))
    session.gateway_for(plan)
    try:
        record = session.runner.decide(plan, job.earlier)
    except RunAborted as e:
        return WorkerResult(label, aborted=str(e))
    ws = session.area.trial(record.trial_id)
    try:
        archive = pack(TrialRunner.collected(ws, plan.task, record))
    finally:
        ws.remove()
    return WorkerResult(label, record=record, archive=archive)


def check_node(needs: MachineNeeds, sandbox: str, driver: str) -> tuple[str, list[str]]:
    """A Ray task pinned to one node before the run starts: what the node lacks. `driver`:
    the driver's harness_identity()."""
    if other := other_harness(driver):
        return node_label(), [other]
    problems: list[str] = []
    name = f"preflight.{node_id()[:8]}.{os.getpid()}"
    try:
        with claimed_area(name, sandbox, lambda _: None) as (_, provider):
            problems = machine_problems(needs, provider)
    except LastexamError as e:
        problems = [str(e)]
    return node_label(), problems
