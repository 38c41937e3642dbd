"""Whether a run can start: what its trials need of the run itself (task files, probe
answers) and of each machine that runs them (sandbox, environments, agents, desktop, model
keys). The local backend checks both here; the Ray backend checks the second on every node."""

from __future__ import annotations

from dataclasses import dataclass, field

from lastexam.agents.base import Agent
from lastexam.computer import toolchain as computer_toolchain
from lastexam.desktop import launch as desktop_launch
from lastexam.envs.manage import Environment
from lastexam.errors import LastexamError
from lastexam.gateway.providers import PROVIDERS, ModelSpec
from lastexam.run.recorded_probes import load_recorded
from lastexam.run.trial import TrialPlan
from lastexam.sandbox.base import SandboxProvider


@dataclass
class MachineNeeds:
    """What the trials need installed on the machine that runs them."""

    envs: dict[str, Environment] = field(default_factory=dict)
    agents: dict[str, Agent] = field(default_factory=dict)
    desktop: bool = False
    computer: bool = False  # the computer-use toolchain: a model agent with a desktop
    models: dict[str, ModelSpec] = field(default_factory=dict)  # real (not scripted) models

    @classmethod
    def of(cls, plans: list[TrialPlan]) -> MachineNeeds:
        needs = cls()
        for p in plans:
            needs.envs.setdefault(p.env.name, p.env)
            needs.agents.setdefault(p.agent.name, p.agent)
            needs.desktop |= p.desktop is not None
            needs.computer |= p.desktop is not None and p.model is not None
            if p.model is not None and p.agent.wire_for(p.model) and not p.model.scripted:
                needs.models.setdefault(p.model.text, p.model)
        return needs


def plan_problems(plans: list[TrialPlan], probe_model: str = "") -> list[str]:
    """What is wrong with the trials wherever they run."""
    problems = []
    for task in {p.task.id: p.task for p in plans if p.task.uses_probes}.values():
        try:
            load_recorded(task)
        except LastexamError as e:
            problems.append(f"task {task.id}: {e}")
    probing = sorted({p.task.id for p in plans if p.task.uses_probes and not p.agent.calibration})
    if probing and not probe_model:
        problems.append(f"tasks {', '.join(probing)} grade with model probes: give --probe-model "
                        "PROVIDER:MODEL (docs/task-format.md, 'Model probes')")
    for task in {p.task.id: p.task for p in plans}.values():
        needed = ["instruction.md", "grader.py"]
        if any(p.agent.sees_solution for p in plans if p.task is task):
            needed.append("solution/solve.sh")
        if task.sealed:
            from lastexam.pool.model import PART_FILES

            needed = list(PART_FILES.values())
        absent = [n for n in needed if not (task.path / n).is_file()]
        if absent:
            problems.append(f"task {task.path}: missing {', '.join(absent)}")
    return problems


def machine_problems(needs: MachineNeeds, provider: SandboxProvider) -> list[str]:
    """What is missing on this machine for trials that need `needs`."""
    problems = [f"sandbox: {p}" for p in provider.preflight()]
    if needs.desktop:
        problems += [f"desktop: {m}" for m in desktop_launch.missing()]
    # Agents that work through a model use the screen through the computer tools.
    if needs.computer:
        problems += [f"desktop: {m}" for m in computer_toolchain.missing()]
    for env in needs.envs.values():
        missing = provider.environment_problems(env)
        if missing:
            problems.append(
                f"environment {env.name!r}: {'; '.join(missing)}\n"
                f"  install it with: lastexam env install {env.name}"
            )
    for agent in needs.agents.values():
        problems += [f"agent {agent.name!r}: {m}" for m in agent.missing()]
    for spec in sorted(needs.models.values(), key=lambda s: s.text):
        problems += [f"model {spec.text!r}: {m}" for m in PROVIDERS[spec.provider].missing()]
    return problems


def refuse(problems: list[str]) -> None:
    if problems:
        raise LastexamError("cannot start the run:\n- " + "\n- ".join(problems))


def check_ready(plans: list[TrialPlan], provider: SandboxProvider, probe_model: str = "") -> None:
    """Stop before any agent starts if something the trials need is missing here."""
    refuse(plan_problems(plans, probe_model) + machine_problems(MachineNeeds.of(plans), provider))
