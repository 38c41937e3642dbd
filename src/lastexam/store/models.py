"""Records of runs, trials and grades: pure data, versioned by SCHEMA_VERSION."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from lastexam.gateway.models import SessionSummary

SCHEMA_VERSION = 5
MAX_MODEL_IN_ID = 48

TrialStatus = Literal[
    "completed", "timeout", "budget_exhausted", "agent_error", "infra_error", "grader_error"
]
STATUSES: tuple[TrialStatus, ...] = (
    "completed",
    "timeout",
    "budget_exhausted",
    "agent_error",
    "infra_error",
    "grader_error",
)


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    weight: float
    gate: bool
    passed: bool
    points: float
    message: str = ""
    evidence: dict[str, Any] = {}


class GradeRecord(BaseModel):
    """One grading of a trial's stored outputs. A trial may be regraded; the newest counts."""

    model_config = ConfigDict(extra="forbid")

    grader_version: str
    ok: bool  # False: the grader raised, hung or broke its limits (grader_error)
    score: float | None
    full_pass: bool
    checks: list[CheckResult] = []
    error: str | None = None
    created_at: str
    duration_s: float


class EarlierTry(BaseModel):
    """An attempt the error policy retried: its kind and the end of its error."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    error: str = ""


class PolicyDecision(BaseModel):
    """The error policy's decision on a trial (run/policy.py): the kind of ending, whether
    the score counts, and the retries. The status it gives is the trial's own `status`."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    counts: bool
    retries: int = 0
    earlier: list[EarlierTry] = []


class Timings(BaseModel):
    """Seconds each step of a trial took (None: the trial did not reach it)."""

    model_config = ConfigDict(extra="forbid")

    stage: float | None = None
    agent: float | None = None
    collect: float | None = None
    grade: float | None = None
    record: float | None = None


class ExecUsage(BaseModel):
    """What the agent ran, from its exec log (usage/record.py)."""

    model_config = ConfigDict(extra="forbid")

    traced: bool = False  # False: no exec log (the agent never started, or the shim failed)
    tampered: bool = False  # the log was altered from inside the sandbox (usage unknown)
    tamper_reason: str | None = None
    execs: int = 0
    script_execs: int = 0
    programs: dict[str, int] = {}  # the 40 most run
    python_imports: dict[str, int] = {}  # the 40 most imported
    declared_software: dict[str, bool | None] = {}  # task.toml's software -> used (None: unknowable)
    # True when every declared software whose use can be seen was used; None: unknowable
    used_declared: bool | None = None
    script_share: float | None = None


GuiState = Literal["used", "opened", "bypassed", "unknown"]


class GuiAppUse(BaseModel):
    """One declared GUI application in a trial's window log (usage/gui.py)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    wm_class: str
    mapped: int = 0  # map events of windows of its WM_CLASS
    input_events: int = 0  # input events (keys or buttons) while one of them had focus
    keys: int = 0
    buttons: int = 0
    state: Literal["used", "opened", "bypassed"] = "bypassed"


class GuiUse(BaseModel):
    """Whether a GUI trial used its task's declared GUI application, from the window log the
    desktop wrote inside the sandbox (so an agent could fake it: it never moves a score)."""

    model_config = ConfigDict(extra="forbid")

    state: GuiState  # used if any declared app was used, opened if any was mapped
    reason: str = ""  # why the state is unknown
    apps: list[GuiAppUse] = []
    events: int = 0  # well-formed lines read
    malformed: int = 0  # lines skipped: not JSON, or not an event of the log's format
    truncated: bool = False  # the log was longer than the harness reads


class HostFacts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpus: int | None = None
    memory_bytes: int | None = None
    kernel: str = ""
    machine: str = ""
    python: str = ""
    node: str = ""  # the Ray node that ran the trial (--backend ray); empty: the local machine


class Repro(BaseModel):
    """What a trial's result depends on. The run-wide part (harness, sandbox, host) is the
    same for every trial of a run; the rest is the trial's own."""

    model_config = ConfigDict(extra="forbid")

    harness_version: str = ""
    git_commit: str | None = None
    sandbox: dict[str, Any] = {}  # the sandbox provider's settings()
    host: HostFacts | None = None
    task_hash: str | None = None  # None: the task folder was gone
    grader_version: str | None = None
    environment: str = ""
    environment_fingerprint: dict[str, str] = {}
    agent: str = ""
    agent_version: str = ""
    model: str = ""
    timeout_s: int | None = None


class TrialKey(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    agent: str
    model: str = ""
    attempt: int = 1

    @property
    def trial_id(self) -> str:
        """Folder, cgroup and row name of the trial. Long models (scripted:/abs/path.yaml)
        are shortened with a hash so that names stay far below the 255-byte limit."""
        model = "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in self.model)
        if len(model) > MAX_MODEL_IN_ID:
            digest = hashlib.sha256(self.model.encode()).hexdigest()[:10]
            model = f"{model[:MAX_MODEL_IN_ID - 11]}-{digest}"
        return f"{self.task_id}__{self.agent}__{model or 'none'}__{self.attempt}"


class TrialRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trial_id: str
    run_id: str
    key: TrialKey
    task_path: str
    cluster: str
    subdomain: str
    tier: str
    status: TrialStatus
    score: float | None  # None only when not graded (infra_error)
    full_pass: bool
    agent_exit_code: int | None = None
    ended_by: str = "exit"  # exit | timeout | memory | output_limit | budget_exhausted | not_started
    run_error: str | None = None  # the agent's or the harness's; a grader's is in its grade
    started_at: str
    finished_at: str
    timings: Timings = Timings()
    outputs: dict[str, Any] = {}  # snapshot manifest: files, bytes, dropped entries
    missing_outputs: list[str] = []  # required outputs (task.toml) absent from the snapshot
    usage: ExecUsage = ExecUsage()
    gui: GuiUse | None = None  # None: not a GUI trial (the task is not gui = true)
    policy: PolicyDecision | None = None  # None until the trial's ending is decided
    repro: Repro = Repro()
    gateway: SessionSummary | None = None  # model calls, tokens, cost, budget (model agents)
    grade: GradeRecord | None = None  # the newest grade; older ones stay in the store
    # A task of a sealed pool: the trial's files are sealed (sealed.tar.age) and its rubric here
    # keeps no names, messages or evidence (pool/artifacts.py).
    sealed: bool = False
    visibility: Literal["public", "private"] = "public"  # private: sealed, not yet released

    @computed_field  # type: ignore[prop-decorator]
    @property
    def error(self) -> str | None:
        """What went wrong, as of the newest grade: the grader's failure, else the run's."""
        if self.grade is not None and not self.grade.ok:
            return self.grade.error
        return self.run_error


class RunConfig(BaseModel):
    """What a run was asked to do; stored so that --resume needs no flags."""

    model_config = ConfigDict(extra="forbid")

    task_paths: list[str]
    agent: str
    model: str = ""
    agent_args: dict[str, str] = {}
    attempts: int = 1
    concurrency: int = 1
    timeout_s: int | None = None  # overrides each task's timeout_s when set
    sandbox: str = "bwrap"
    # Where trials run: this machine, or a Ray cluster (run/backends/). Either may finish a run.
    backend: Literal["local", "ray"] = "local"
    ray_address: str = ""  # the cluster (ray.init's address); empty: $RAY_ADDRESS or a local Ray
    max_cost_usd: float | None = Field(None, gt=0)  # per trial, enforced by the gateway
    max_tokens: int | None = Field(None, gt=0)  # per trial, enforced by the gateway
    max_retries: int = Field(2, ge=0, le=10)  # cap on the error policy's retries per trial
    desktop: bool = False  # a desktop in every trial, GUI task or not (`lastexam run --desktop`)
    probe_model: str = ""  # PROVIDER:MODEL that answers graders' model probes (grading/probe.py)
    # An experiment's agent x model matrix; empty: the one cell agent/model/agent_args above.
    cells: list[RunCell] = []
    experiment: str | None = None  # the experiment file's name, when run from one

    def matrix(self) -> list[RunCell]:
        return self.cells or [
            RunCell(agent=self.agent, model=self.model, agent_args=self.agent_args,
                    max_cost_usd=self.max_cost_usd, max_tokens=self.max_tokens)
        ]


class RunCell(BaseModel):
    """One agent with one model, its arguments and its per-trial budget."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    model: str = ""
    agent_args: dict[str, str] = {}
    max_cost_usd: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)
