"""Malformed inputs to the CLI, each with the message it must give. tests/faults/test_bad_input.py
runs them; docs/integrity.md shows them as a table (`python tests/faults/bad_inputs.py`
prints it, and a test keeps the two the same)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Case:
    id: str
    what: str  # for the table
    make: Callable[[Path, Path, Path], list[str | Path]]  # (tmp, task copy, run copy) -> argv
    says: tuple[str, ...]  # the message must hold each (with {task}, {run}, {tmp} filled in)


def _toml(task: Path, old: str, new: str) -> None:
    p = task / "task.toml"
    text = p.read_text()
    assert old in text, old
    p.write_text(text.replace(old, new))


def _run(*extra: str | Path) -> Callable[[Path, Path, Path], list[str | Path]]:
    return lambda tmp, task, run: ["run", task, "--agent", "nop", "--out", tmp / "new", *extra]


def _edit_then_run(edit: Callable[[Path], None], *extra: str) -> Callable[[Path, Path, Path], list[str | Path]]:
    def make(tmp: Path, task: Path, run: Path) -> list[str | Path]:
        edit(task)
        return ["run", task, "--agent", "nop", "--out", tmp / "new", *extra]
    return make


def _experiment(text: str) -> Callable[[Path, Path, Path], list[str | Path]]:
    def make(tmp: Path, task: Path, run: Path) -> list[str | Path]:
        (tmp / "exp.yaml").write_text(text.replace("{task}", str(task)))
        return ["run", "--config", tmp / "exp.yaml", "--out", tmp / "new"]
    return make


def _corrupt(run: Path) -> None:
    (run / "results.db").write_bytes(os.urandom(8192))
    for side in ("results.db-wal", "results.db-shm"):
        (run / side).unlink(missing_ok=True)


def _old_schema(run: Path) -> None:
    db = sqlite3.connect(run / "results.db")
    with db:
        db.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    db.close()


CASES: list[Case] = [
    Case("toml-syntax", "task.toml is not valid TOML",
         _edit_then_run(lambda t: (t / "task.toml").write_text((t / "task.toml").read_text() + "\ntier = [\n")),
         ("{task}/task.toml", "not valid TOML")),
    Case("toml-unknown-key", "task.toml has an unknown key",
         _edit_then_run(lambda t: _toml(t, 'gui = false', 'gui = false\ncolour = "red"')),
         ("{task}/task.toml", "field 'colour': unknown key")),
    Case("toml-missing-key", "task.toml lacks a required key",
         _edit_then_run(lambda t: _toml(t, 'title = "Column total of a small CSV (harness test task)"\n', '')),
         ("{task}/task.toml", "field 'title': required key is missing")),
    Case("toml-bad-tier", "task.toml has a tier that does not exist",
         _edit_then_run(lambda t: _toml(t, 'tier = "near-term"', 'tier = "easy"')),
         ("{task}/task.toml", "field 'tier'")),
    Case("toml-bad-taxonomy", "task.toml names a subdomain of another cluster",
         _edit_then_run(lambda t: _toml(t, 'subdomain = "sports"', 'subdomain = "genomics"')),
         ("{task}/task.toml", "genomics")),
    Case("toml-id-mismatch", "task.toml's id is not the folder's name",
         _edit_then_run(lambda t: _toml(t, 'id = "column-total"', 'id = "other-name"')),
         ("{task}/task.toml", "other-name")),
    Case("toml-timeout-range", "task.toml's timeout_s is over the 5-hour cap",
         _edit_then_run(lambda t: _toml(t, 'timeout_s = 60', 'timeout_s = 99999')),
         ("{task}/task.toml", "field 'timeout_s'")),
    Case("toml-limit-type", "task.toml's [limits] holds a value of the wrong type",
         _edit_then_run(lambda t: (t / "task.toml").write_text(
             (t / "task.toml").read_text() + '\n[limits]\nmemory_mb = "lots"\n')),
         ("{task}/task.toml", "field 'limits.memory_mb'")),
    Case("task-no-toml", "a task folder without task.toml",
         _edit_then_run(lambda t: (t / "task.toml").unlink()),
         ("{task}", "no task folders")),
    Case("task-no-instruction", "a task folder without instruction.md",
         _edit_then_run(lambda t: (t / "instruction.md").unlink()),
         ("{task}: missing instruction.md",)),
    Case("task-path-missing", "a task path that does not exist",
         lambda tmp, task, run: ["run", tmp / "nowhere", "--agent", "nop", "--out", tmp / "new"],
         ("{tmp}/nowhere", "no such")),
    Case("task-unknown-environment", "a task whose environment does not exist",
         _edit_then_run(lambda t: _toml(t, 'environment = "base"', 'environment = "no-such-env"')),
         ("no-such-env", "no environment named")),
    Case("experiment-yaml", "an experiment file that is not YAML",
         _experiment("tasks: [\nagents: {"), ("{tmp}/exp.yaml", "not a readable YAML file")),
    Case("experiment-unknown-key", "an experiment file with an unknown key",
         _experiment("tasks: [{task}]\nagents: [nop]\nspeed: fast\n"), ("{tmp}/exp.yaml", "speed")),
    Case("experiment-missing", "an experiment file that does not exist",
         lambda tmp, task, run: ["run", "--config", tmp / "none.yaml"], ("{tmp}/none.yaml", "no such experiment file")),
    Case("agent-unknown", "an agent that does not exist",
         _run("--agent", "superagent"), ("unknown agent 'superagent'",)),
    Case("agent-arg-unknown", "an argument the agent does not take",
         _run("--agent-arg", "turbo=1"), ("agent 'nop' takes no argument", "turbo")),
    Case("agent-arg-form", "an --agent-arg without KEY=VALUE",
         _run("--agent-arg", "turbo"), ("--agent-arg 'turbo'", "KEY=VALUE")),
    Case("model-unknown-provider", "a model of a provider that does not exist",
         lambda tmp, task, run: ["run", task, "--agent", "lastexam-agent", "--model", "acme:big",
                                 "--out", tmp / "new"], ("acme",)),
    Case("model-script-missing", "a scripted model whose script does not exist",
         lambda tmp, task, run: ["run", task, "--agent", "lastexam-agent", "--model",
                                 f"scripted:{tmp}/none.yaml", "--out", tmp / "new"], ("{tmp}/none.yaml",)),
    Case("flag-range", "a flag out of its range (--concurrency 0)",
         _run("--concurrency", "0"), ("--concurrency", "greater than or equal to")),
    Case("flag-unknown", "a flag that does not exist",
         _run("--turbo"), ("No such option", "--turbo")),
    Case("resume-no-out", "--resume without --out",
         lambda tmp, task, run: ["run", "--resume"], ("--resume needs --out",)),
    Case("resume-not-a-run", "--resume on a folder that holds no run",
         lambda tmp, task, run: ["run", "--resume", "--out", tmp], ("{tmp}", "not a run directory")),
    Case("run-dir-is-a-file", "a run directory that is a file",
         lambda tmp, task, run: (tmp / "afile").write_text("x") and
         ["run", task, "--agent", "nop", "--out", tmp / "afile"], ("{tmp}/afile", "not a folder")),
    Case("run-dir-taken", "a new run into a folder that holds a run",
         lambda tmp, task, run: ["run", task, "--agent", "nop", "--out", run], ("{run}", "already holds a run")),
    Case("store-corrupt", "a corrupted results.db (resume)",
         lambda tmp, task, run: _corrupt(run) or ["run", "--resume", "--out", run],
         ("{run}/results.db", "unreadable or corrupt")),
    Case("store-corrupt-show", "a corrupted results.db (show)",
         lambda tmp, task, run: _corrupt(run) or ["show", run], ("{run}/results.db", "unreadable or corrupt")),
    Case("store-old-schema", "a results.db of another schema version",
         lambda tmp, task, run: _old_schema(run) or ["show", run], ("{run}/results.db", "schema 1")),
    Case("show-not-a-run", "show on a folder that holds no run",
         lambda tmp, task, run: ["show", tmp], ("{tmp}", "not a run directory")),
    Case("regrade-corrupt", "regrade of a corrupted results.db",
         lambda tmp, task, run: _corrupt(run) or ["regrade", run], ("{run}/results.db", "unreadable or corrupt")),
]


def render() -> str:
    lines = ["| # | bad input | case | the message says (exit 2) |", "|---|---|---|---|"]
    for n, c in enumerate(CASES, 1):
        lines.append(f"| {n} | {c.what} | `{c.id}` | {' … '.join(c.says)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render())
