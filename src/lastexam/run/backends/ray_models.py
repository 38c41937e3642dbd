"""What the Ray backend's driver and its workers exchange: a trial's resource request, the job
a worker receives, and what it sends back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lastexam.run.trial import TrialPlan
from lastexam.store.models import EarlierTry, TrialRecord

GUI_RESOURCE = "lastexam_gui"  # a node's number of desktops it can run at once
MIB = 1024 * 1024


@dataclass(frozen=True)
class TrialResources:
    """What one trial holds on its node while it runs: its task's CPUs, the larger of its
    agent's and its grader's memory caps (they run one after the other), and a desktop slot
    when it has a desktop."""

    cpus: int
    memory_mb: int
    gui: bool

    @classmethod
    def of(cls, plan: TrialPlan) -> TrialResources:
        limits = plan.task.spec.limits
        return cls(limits.cpus, max(limits.memory_mb, limits.grader_memory_mb),
                   plan.desktop is not None)

    def ray_options(self) -> dict[str, Any]:
        return {"num_cpus": self.cpus, "memory": self.memory_mb * MIB,
                "resources": {GUI_RESOURCE: 1} if self.gui else {}}

    def fits(self, node: dict[str, float]) -> bool:
        """Whether a node with these total resources (ray.nodes()'s "Resources") can hold it."""
        return (node.get("CPU", 0) >= self.cpus and node.get("memory", 0) >= self.memory_mb * MIB
                and (not self.gui or node.get(GUI_RESOURCE, 0) >= 1))

    def describe(self) -> str:
        gui = f" and one {GUI_RESOURCE}" if self.gui else ""
        return f"{self.cpus} CPU, {self.memory_mb} MB of memory{gui}"


@dataclass
class WorkerJob:
    """One trial for a worker: the plan as the driver made it (the worker runs it on its own
    copy of the task folder, sent once per task as an archive) and the tries already lost."""

    run_id: str
    sandbox: str
    max_retries: int
    plan: TrialPlan
    earlier: list[EarlierTry] = field(default_factory=list)
    harness: str = ""  # the driver's harness_identity(): a node running another refuses


@dataclass
class WorkerResult:
    """A decided trial and its folder as an uncompressed tar, or why the node could not run it
    (`refused`: the node is not ready; `aborted`: the error policy stops the run)."""

    node: str  # "node <id> (<ip>, LASTEXAM_HOME=<path>)"
    record: TrialRecord | None = None
    archive: bytes = b""
    refused: str | None = None
    aborted: str | None = None
