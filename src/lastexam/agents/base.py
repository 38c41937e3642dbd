"""The agent adapter contract.

An adapter says what to mount, which environment variables to set and which command to run
inside the trial's sandbox. It never runs anything on the host itself: everything the agent
does happens in the sandbox, under the trial's limits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from lastexam.errors import LastexamError
from lastexam.gateway.providers import ModelSpec
from lastexam.sandbox.base import Mount
from lastexam.trajectory.schema import Step


@dataclass(frozen=True)
class AgentContext:
    """What an adapter may use to build its command."""

    task_id: str
    instruction: str
    model: ModelSpec | None  # the trial's model (None: the agent takes none)
    args: dict[str, str]
    timeout_s: int
    solution_dir: Path | None  # the task's solution/ (given to the oracle only)
    home: Path  # host path of the sandbox's HOME, for config files written before start
    logs: Path  # host folder for the agent's native logs (not visible in the sandbox)
    gateway: GatewayAccess | None = None  # set when the agent speaks to a model
    desktop: bool = False  # the sandbox has a desktop (DISPLAY=:0, /run/lastexam/desktop)


@dataclass(frozen=True)
class GatewayAccess:
    """How a sandbox reaches the model gateway: a unix socket and a per-trial token. A client
    that speaks only TCP gets a bridge on loopback inside the sandbox (see `bridge_argv`)."""

    socket: str  # path of the gateway's unix socket inside the sandbox
    token: str  # the trial's gateway token (never a provider key)
    model: str  # the trial's model as given (PROVIDER:MODEL or scripted:PATH)
    model_id: str  # the model name to put in requests (the gateway answers with the trial's)
    tcp_port: int = 8765  # loopback port of the in-sandbox bridge

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.tcp_port}"


@dataclass
class AgentLaunch:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    mounts: list[Mount] = field(default_factory=list)


class Agent(ABC):
    name: str
    description: str
    needs_model: bool = False
    wire: str | None = None  # the model API the harness speaks; None: no model traffic
    sees_solution: bool = False  # only the oracle
    # oracle and nop: their outputs are the task's own, whose model probes (if any) the task's
    # recorded probes.json answers, so they need no --probe-model
    calibration: bool = False
    accepted_args: tuple[str, ...] = ()

    def check_args(self, model: ModelSpec | None, args: dict[str, str]) -> None:
        unknown = sorted(set(args) - set(self.accepted_args))
        if unknown:
            allowed = ", ".join(self.accepted_args) or "none"
            raise LastexamError(f"agent {self.name!r} takes no argument {unknown} (accepted: {allowed})")
        if self.needs_model and not model:
            raise LastexamError(f"agent {self.name!r} needs --model")

    def version(self) -> str:
        from lastexam import __version__

        return f"lastexam-{__version__}"

    def missing(self) -> list[str]:
        """What must be installed before this agent can run; empty when ready."""
        return []

    def wire_for(self, model: ModelSpec | None) -> str | None:
        """The model API this harness speaks with `model` (None: it needs no gateway)."""
        return self.wire

    def wires(self) -> tuple[str, ...]:
        """Every model API this harness can speak (what `agents list` shows)."""
        return (self.wire,) if self.wire else ()

    @abstractmethod
    def launch(self, ctx: AgentContext) -> AgentLaunch: ...

    def native_steps(self, logs: Path) -> list[Step] | None:
        """The trajectory steps read from the agent's native log, after the run (None: no
        native log; the trajectory is then built from the gateway log alone)."""
        return None
