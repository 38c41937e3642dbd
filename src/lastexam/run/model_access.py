"""A trial's access to models: its gateway session while the agent runs, and afterwards its
trajectory, built from the agent's native log (or, without one, the conversation in the
gateway's log) and the gateway's call log.

In the trial's folder (layout.TrialPaths):
    gateway.jsonl      one line per request the gateway served for the trial
    trajectory.json    the ATIF-compatible trajectory
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lastexam.agents.base import Agent, GatewayAccess
from lastexam.gateway.models import Budget, SessionSummary
from lastexam.gateway.providers import ModelSpec
from lastexam.layout import AgentSandbox, TrialPaths
from lastexam.sandbox.base import Mount
from lastexam.trajectory import build_trajectory, read_calls, write_trajectory
from lastexam.trajectory.gateway_log import gateway_steps

if TYPE_CHECKING:
    from lastexam.gateway.server import Gateway
    from lastexam.gateway.session import Session


@dataclass
class ModelAccess:
    session: Session
    access: GatewayAccess
    mount: Mount


def open_access(
    gateway: Gateway, trial_id: str, spec: ModelSpec, budget: Budget, log: Path
) -> ModelAccess:
    session = gateway.open_session(trial_id, spec, budget, log)
    socket_name = gateway.socket_path.name
    access = GatewayAccess(
        socket=f"{AgentSandbox.GATEWAY_DIR}/{socket_name}",
        token=session.token,
        model=spec.text,
        model_id="" if spec.scripted else spec.model,
    )
    return ModelAccess(session, access, Mount(gateway.socket_path.parent, AgentSandbox.GATEWAY_DIR))


def save_trajectory(
    *,
    trial: TrialPaths,
    trial_id: str,
    agent: Agent,
    agent_version: str,
    model: str,
    instruction: str,
    summary: SessionSummary | None,
    duration_s: float | None,
) -> None:
    """Never fails the trial: a trajectory is evidence about the run, not part of its result
    (a trial whose trajectory could not be written has no trajectory.json)."""
    native = None
    with contextlib.suppress(Exception):
        native = agent.native_steps(trial.agent)
    with contextlib.suppress(Exception):
        _write(trial, trial_id, agent, agent_version, model, instruction, native, summary,
               duration_s)


def _write(
    trial: TrialPaths, trial_id: str, agent: Agent, agent_version: str, model: str, instruction: str,
    native: list | None, summary: SessionSummary | None, duration_s: float | None,
) -> None:
    from_gateway = native is None
    if from_gateway:
        native = gateway_steps(trial.gateway_log)
    trajectory = build_trajectory(
        session_id=trial_id,
        agent=agent.name,
        agent_version=agent_version,
        model=model,
        instruction=instruction,
        native=native,
        calls=read_calls(trial.gateway_log),
        summary=summary,
        duration_s=duration_s,
        trial_root=trial.root,
        from_gateway=from_gateway,
    )
    write_trajectory(trajectory, trial.trajectory)
