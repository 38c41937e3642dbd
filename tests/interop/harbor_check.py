"""Run under the Harbor venv (scripts/harbor-venv.sh): loads task folders with Harbor's own task
model and trajectories with its ATIF model, and prints what it read as one JSON object.

    python harbor_check.py tasks DIR... | trajectories FILE...
"""

import json
import sys
from pathlib import Path

from harbor.models.task.task import Task
from harbor.models.trajectories import Trajectory


def task_facts(path: str) -> dict:
    task = Task(path)
    c = task.config
    return {
        "valid_dir": Task.is_valid_dir(path), "name": task.name, "instruction": task.instruction,
        "agent_timeout": c.agent.timeout_sec, "verifier_timeout": c.verifier.timeout_sec,
        "memory_mb": c.environment.memory_mb, "workdir": c.environment.workdir,
        "metadata": c.metadata, "test": str(task.paths.discovered_test_path),
        "solve": str(task.paths.discovered_solve_path),
    }


def trajectory_facts(path: str) -> dict:
    t = Trajectory.model_validate_json(Path(path).read_text())
    return {"steps": len(t.steps), "tool_calls": sum(len(s.tool_calls or []) for s in t.steps),
            "schema_version": t.schema_version}


if __name__ == "__main__":
    kind, paths = sys.argv[1], sys.argv[2:]
    facts = task_facts if kind == "tasks" else trajectory_facts
    print(json.dumps({p: facts(p) for p in paths}))
