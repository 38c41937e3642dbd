"""Experiment files: a matrix of agents x models over a task list, as one run.

    name: compare-harnesses          # optional (default: the file's name)
    tasks: [../tasks/business]       # task folders, folders of tasks or .txt lists,
                                     # relative to the experiment file
    attempts: 3
    concurrency: 2
    timeout_s: 1800                  # optional: overrides each task's timeout_s
    budget: {max_cost_usd: 2.0, max_tokens: 3000000}     # per trial, for every cell
    agents:
      - name: claude-code
        args: {max_turns: 80}
        budget: {max_cost_usd: 3.0}  # overrides the experiment's budget for this agent
    models:
      - id: anthropic:claude-sonnet-4-5
        budget: {max_tokens: 5000000}  # overrides the agent's and the experiment's
    exclude:
      - {agent: codex, model: anthropic:claude-sonnet-4-5}
    backend: ray                     # optional: local (default) or ray (docs/scale.md)
    ray_address: ray://head:10001    # optional: the Ray cluster (default: $RAY_ADDRESS)

Agents that need no model (oracle, nop, command) run once each, without a model. Flags on
the command line override the file; unknown keys are errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lastexam.config_file import load_model
from lastexam.errors import LastexamError
from lastexam.store.models import RunCell, RunConfig


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BudgetSpec(_Strict):
    max_cost_usd: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)

    def over(self, base: BudgetSpec) -> BudgetSpec:
        return BudgetSpec(
            max_cost_usd=self.max_cost_usd if self.max_cost_usd is not None else base.max_cost_usd,
            max_tokens=self.max_tokens if self.max_tokens is not None else base.max_tokens,
        )


class AgentEntry(_Strict):
    name: str
    args: dict[str, str] = {}
    budget: BudgetSpec = BudgetSpec()

    @field_validator("args", mode="before")
    @classmethod
    def _stringify(cls, v: object) -> object:
        if isinstance(v, dict):
            return {str(k): str(x).lower() if isinstance(x, bool) else str(x) for k, x in v.items()}
        return v


class ModelEntry(_Strict):
    id: str
    budget: BudgetSpec = BudgetSpec()


class Pair(_Strict):
    agent: str
    model: str


class Experiment(_Strict):
    name: str | None = None
    tasks: list[str] = Field(min_length=1)
    attempts: int = Field(1, ge=1, le=100)
    concurrency: int = Field(1, ge=1, le=256)
    timeout_s: int | None = Field(None, ge=1, le=18000)
    budget: BudgetSpec = BudgetSpec()
    agents: list[AgentEntry] = Field(min_length=1)
    models: list[ModelEntry] = []
    exclude: list[Pair] = []
    backend: Literal["local", "ray"] = "local"
    ray_address: str = ""


def load_experiment(path: Path) -> Experiment:
    return load_model(path, Experiment, what="experiment file",
                      shape="a mapping (tasks:, agents:, models: ...)")


def experiment_config(path: Path, exp: Experiment, needs_model: dict[str, bool]) -> RunConfig:
    """The run an experiment asks for. `needs_model`: agent name -> whether it takes a model."""
    base = path.resolve().parent
    excluded = {(p.agent, p.model) for p in exp.exclude}
    cells = []
    for a in exp.agents:
        if a.name not in needs_model:
            raise LastexamError(f"unknown agent {a.name!r}", path=path, field="agents")
        models = exp.models if needs_model[a.name] else [ModelEntry(id="")]
        if not models:
            raise LastexamError(f"agent {a.name!r} needs a model: add `models:`", path=path)
        for m in models:
            if (a.name, m.id) in excluded:
                continue
            budget = m.budget.over(a.budget.over(exp.budget))
            cells.append(RunCell(agent=a.name, model=_model(m.id, base), agent_args=a.args,
                                 max_cost_usd=budget.max_cost_usd, max_tokens=budget.max_tokens))
    if not cells:
        raise LastexamError("the experiment's matrix is empty after `exclude`", path=path)
    return RunConfig(
        task_paths=[str((base / t).resolve()) if not Path(t).is_absolute() else t for t in exp.tasks],
        agent=exp.name or path.stem,
        attempts=exp.attempts,
        concurrency=exp.concurrency,
        timeout_s=exp.timeout_s,
        cells=cells,
        experiment=exp.name or path.stem,
        backend=exp.backend,
        ray_address=exp.ray_address,
    )


def _model(model: str, base: Path) -> str:
    """A script path in an experiment file is relative to the file."""
    kind, sep, rest = model.partition(":")
    if kind == "scripted" and sep and not Path(rest).is_absolute():
        return f"scripted:{(base / rest).resolve()}"
    return model
