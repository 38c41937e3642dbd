"""`lastexam agents check NAME`: an adapter's conformance, run through the scripted model.

Two trials of the adapter on a real task, in the real sandbox, through the real gateway:

- **solve**: the script's shell turn carries out the task's oracle through the client's own
  shell tool, then a text turn. The trial must score 1.0, its model calls must reach the
  gateway in the adapter's wire, and its trajectory must hold every tool call the script made.
- **budget**: a first shell turn claims more tokens than `--max-tokens` allows, then the same
  oracle turn. The trial must end `budget_exhausted`, with a call refused and the oracle's
  turn never carried out (the task is not solved).

Both run with a recognisable fake key in every provider's key variable of the host's
environment: neither that key nor any gateway token may appear in any file of either run.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lastexam.agents import get_agent
from lastexam.agents.base import Agent
from lastexam.agents.conformance_models import CheckRow, ConformanceReport
from lastexam.errors import LastexamError
from lastexam.gateway.models import Script, ScriptTurn, TurnUsage
from lastexam.gateway.providers import PROVIDERS, ModelSpec, parse_model
from lastexam.gateway.scripted import oracle_script
from lastexam.gateway.session import TOKEN_PATTERN
from lastexam.layout import RunPaths
from lastexam.paths import project_root
from lastexam.store.models import RunConfig, TrialRecord

DEFAULT_TASK = Path("tests") / "data" / "tasks" / "other" / "column-total"
BUDGET_TOKENS = 1000  # the budget run's --max-tokens; its first turn claims twice as many
BUDGET_TIMEOUT_S = 300  # a client that goes on after its calls are refused is stopped here
KEY_VARS = tuple(sorted({p.key_env for p in PROVIDERS.values() if p.key_env}))


@dataclass
class TrialRun:
    record: TrialRecord
    folder: Path  # the trial's folder in its run directory
    run_dir: Path


def default_task() -> Path:
    task = project_root() / DEFAULT_TASK
    if not task.is_dir():
        raise LastexamError(f"the default task {DEFAULT_TASK} is not here: give --task TASK "
                            "(any task folder with solution/solve.sh)")
    return task


def scripts(task: Path) -> tuple[Script, Script]:
    """The solving script (the task's oracle through the shell tool, then a text turn) and the
    budget script (a turn over the budget first)."""
    solve = oracle_script(task)
    over = ScriptTurn(shell="echo lastexam budget check",
                      usage=TurnUsage(input_tokens=2 * BUDGET_TOKENS, output_tokens=10))
    return solve, Script(turns=[over, *solve.turns])


def check_agent(name: str, task: Path, args: dict[str, str], out: Path,
                log: Callable[[str], None] = print) -> ConformanceReport:
    """Runs the two trials into `out` and reports each check."""
    agent = get_agent(name)
    taken = [p for p in (out / "solve", out / "budget") if p.exists()]
    if taken:
        raise LastexamError("a check's runs are already there: give another --out", path=taken[0])
    model = parse_model(f"scripted:{out / 'solve.yaml'}")
    report = ConformanceReport(agent=agent.name, version=agent.version(),
                               wire=agent.wire_for(model), task=str(task), run_dirs=[], checks=[])
    missing = agent.missing()
    report.checks.append(CheckRow(check="installed", ok=not missing,
                                  detail="; ".join(missing) or agent.version()))
    if not agent.needs_model:
        report.checks.append(CheckRow(check="talks to a model", ok=False,
                                      detail="the agent takes no model: nothing to check"))
    if agent.sees_solution:  # it could solve the task without the model
        report.checks.append(CheckRow(check="does not see the solution", ok=False,
                                      detail="the adapter is handed the task's solution/ (sees_solution)"))
    if not report.passed:
        return report
    solve_script, budget_script = scripts(task)
    out.mkdir(parents=True, exist_ok=True)
    key = f"sk-lastexam-check-{secrets.token_hex(16)}"
    with planted(dict.fromkeys(KEY_VARS, key)):
        log(f"{agent.name}: solving {task.name} with the oracle's turn")
        solve = _run(name, task, args, _write(out / "solve.yaml", solve_script), out / "solve")
        log(f"{agent.name}: the same with --max-tokens {BUDGET_TOKENS}")
        budget = _run(name, task, args, _write(out / "budget.yaml", budget_script), out / "budget",
                      max_tokens=BUDGET_TOKENS, timeout_s=BUDGET_TIMEOUT_S)
    report.run_dirs = [str(solve.run_dir), str(budget.run_dir)]
    report.checks += [
        solved(solve),
        through_gateway(solve, agent, model),
        tool_calls_kept(solve, solve_script, agent),
        stopped_by_budget(budget),
        no_secrets([solve.run_dir, budget.run_dir], key),
    ]
    return report


def solved(run: TrialRun) -> CheckRow:
    r = run.record
    ok = r.status == "completed" and r.score == 1.0
    detail = f"status {r.status}, score {r.score}"
    if r.run_error:
        detail += f": {r.run_error.splitlines()[0][:300]}"
    return CheckRow(check="scores 1.0 with the oracle's turn", ok=ok, detail=detail)


def through_gateway(run: TrialRun, agent: Agent, model: ModelSpec) -> CheckRow:
    expected = agent.wire_for(model)
    calls = _gateway_calls(run.folder)
    wires = sorted({c.get("wire") for c in calls if c.get("wire")})
    answered = sum(1 for c in calls if c.get("counted"))
    ok = answered >= 2 and wires == [expected]
    return CheckRow(check="calls the model through the gateway", ok=ok,
                    detail=f"{answered} answered calls, wire {', '.join(wires) or 'none'} "
                           f"(the adapter's: {expected})")


def reads_native_log(agent: Agent) -> bool:
    """The adapter converts its client's own log (else the gateway log is its trajectory)."""
    return type(agent).native_steps is not Agent.native_steps


def tool_calls_kept(run: TrialRun, script: Script, agent: Agent) -> CheckRow:
    commands = [t.shell for t in script.turns if t.shell is not None]
    path = run.folder / "trajectory.json"
    if not path.is_file():
        return CheckRow(check="trajectory has every tool call", ok=False, detail="no trajectory.json")
    traj = json.loads(path.read_text(encoding="utf-8"))
    values = [s for step in traj.get("steps") or [] for call in step.get("tool_calls") or []
              for s in _strings(call.get("arguments"))]
    found = sum(1 for c in commands if any(c.strip() in v for v in values))
    notes = traj.get("notes") or ""
    from_gateway = "no native agent log" in notes
    source = "from the gateway log" if from_gateway else "from the native log"
    # An adapter whose converter could not read its client's log falls back on the gateway log,
    # which holds every call the model asked for: that would pass a broken converter.
    lost = from_gateway and reads_native_log(agent)
    return CheckRow(check="trajectory has every tool call", ok=found == len(commands) and not lost,
                    detail=f"{found} of {len(commands)} scripted tool calls, steps {source}"
                           + (" (the adapter reads a native log: its steps were lost)" if lost else ""))


def stopped_by_budget(run: TrialRun) -> CheckRow:
    r = run.record
    refused = r.gateway.refused_calls if r.gateway else 0
    ok = r.ended_by == "budget_exhausted" and refused >= 1 and r.score != 1.0
    return CheckRow(check=f"stops at --max-tokens {BUDGET_TOKENS}", ok=ok,
                    detail=f"ended by {r.ended_by}, status {r.status}, {refused} refused calls, "
                           f"score {r.score}")


def no_secrets(run_dirs: list[Path], key: str) -> CheckRow:
    found = []
    for run_dir in run_dirs:
        for path in sorted(run_dir.rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes().decode("utf-8", errors="replace")
            what = [w for w, hit in (("provider key", key in data),
                                     ("gateway token", TOKEN_PATTERN.search(data))) if hit]
            if what:
                found.append(f"{' and '.join(what)} in {path.relative_to(run_dir.parent)}")
    return CheckRow(check="no key or token in any artifact", ok=not found,
                    detail="; ".join(found[:5]) or f"{len(KEY_VARS)} provider keys planted, none found")


@contextmanager
def planted(values: dict[str, str]) -> Iterator[None]:
    """The host's environment with these variables set, restored after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run(name: str, task: Path, args: dict[str, str], script: Path, out: Path,
         max_tokens: int | None = None, timeout_s: int | None = None) -> TrialRun:
    from lastexam.run.runner import execute

    config = RunConfig(task_paths=[str(task)], agent=name, model=f"scripted:{script}",
                       agent_args=args, max_tokens=max_tokens, timeout_s=timeout_s, max_retries=0)
    outcome = execute(config, out)
    record = outcome.trials[0]
    return TrialRun(record, RunPaths(outcome.run_dir).trial(record.trial_id).root, outcome.run_dir)


def _write(path: Path, script: Script) -> Path:
    data = script.model_dump(exclude_none=True, exclude_defaults=True)
    path.write_text(yaml.safe_dump(data, width=1 << 20, sort_keys=False), encoding="utf-8")
    return path


def _gateway_calls(folder: Path) -> list[dict[str, Any]]:
    path = folder / "gateway.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
        try:  # arguments a client kept as a JSON string
            parsed = json.loads(value)
        except ValueError:
            return
        yield from _strings(parsed)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
