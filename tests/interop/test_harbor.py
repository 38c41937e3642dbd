"""Harbor interop: exported task folders load in Harbor's own package (its Task model, in the
venv of scripts/harbor-venv.sh), keep the hidden parts under tests/, and come back through
`lastexam import harbor` as tasks that pass the gates; a Terminal-Bench style task imports too;
lastexam's trajectories validate against Harbor's ATIF model."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, ROOT, run_cli, run_json, trial_dir
from lastexam.task.load import load_task
from lastexam.trajectory import build_trajectory, write_trajectory
from tests.interop.conftest import harbor_read

PROBED = ROOT / "tasks" / "legal" / "brief-table-of-authorities"  # another env, probes.json
AGENT_DATA = ROOT / "tests" / "agents" / "data"
SCRIPT = ROOT / "tests" / "agents" / "scripts" / "column-total.yaml"


def _export(out: Path, *tasks: Path) -> list[Path]:
    run_cli("export", "harbor", *tasks, "--out", out)
    return [out / load_task(t).id for t in tasks]


def _gates(task: Path, gates: str) -> dict[str, dict]:
    report = run_json("validate", task, "--gates", gates, check=False)
    return {g["name"]: g for g in report["tasks"][0]["gates"]}


def test_exported_tasks_load_in_harbor(harbor: Path, tmp_path: Path) -> None:
    tasks = [COLUMN_TOTAL, *([PROBED] if PROBED.is_dir() else [])]
    exported = _export(tmp_path, *tasks)
    facts = harbor_read(harbor, "tasks", *exported)
    for src, dest in zip(tasks, exported, strict=True):
        spec, got = load_task(src).spec, facts[str(dest)]
        assert got["valid_dir"] and got["name"] == f"lastexam/{spec.id}"
        assert got["agent_timeout"] == spec.timeout_s and got["memory_mb"] == spec.limits.memory_mb
        assert got["verifier_timeout"] > spec.limits.grader_timeout_s
        assert got["metadata"]["lastexam"]["outputs"] == spec.outputs
        assert got["test"] == str(dest / "tests" / "test.sh")
        assert got["solve"] == str(dest / "solution" / "solve.sh")
        body = (src / "instruction.md").read_text().split("\n", 1)[1].strip()
        assert body in got["instruction"] and spec.canary not in got["instruction"]


def test_the_reference_is_only_under_tests(tmp_path: Path) -> None:
    (dest,) = _export(tmp_path, COLUMN_TOTAL)
    reference = {p.read_bytes() for p in (COLUMN_TOTAL / "reference").rglob("*") if p.is_file()}
    seen_by_agent = [p for d in ("environment", "solution") for p in (dest / d).rglob("*")
                     if p.is_file()] + [dest / "instruction.md", dest / "task.toml"]
    assert not [p for p in seen_by_agent if p.read_bytes() in reference]
    assert (dest / "tests" / "task" / "reference" / "expected.json").read_bytes() in reference
    assert (dest / "tests" / "task" / "grader.py").is_file()
    docker = (dest / "environment" / "Dockerfile").read_text()
    assert "COPY task/ /task/" in docker and "--require-hashes" in docker
    assert "reference" not in docker and "tests" not in docker
    assert all(f"    {p} \\" in docker for p in ("python3", "python3-venv", "poppler-utils"))


def test_round_trip_passes_the_gates(tmp_path: Path, base_env_ready: None) -> None:
    (exported,) = _export(tmp_path / "harbor", COLUMN_TOTAL)
    run_cli("import", "harbor", exported, "--out", tmp_path / "back")
    back = tmp_path / "back" / "column-total"
    spec, original = load_task(back).spec, load_task(COLUMN_TOTAL).spec
    assert spec.canary != original.canary
    assert spec.model_dump(exclude={"canary", "limits"}) == original.model_dump(exclude={"canary", "limits"})
    assert original.canary not in "".join(p.read_text(errors="replace") for p in back.rglob("*") if p.is_file())
    gates = _gates(back, "static,oracle,nop,negative,positive,determinism,malformed")
    assert all(g["passed"] for g in gates.values()), gates
    assert "score 0.0" in gates["nop scores 0"]["detail"]


def test_an_exported_task_gets_its_own_fields_back(tmp_path: Path) -> None:
    if not PROBED.is_dir():
        pytest.skip("the suite task is not in this checkout")
    (exported,) = _export(tmp_path / "harbor", PROBED)
    run_cli("import", "harbor", exported, "--out", tmp_path / "back")
    back = tmp_path / "back" / PROBED.name
    spec, original = load_task(back).spec, load_task(PROBED).spec
    assert spec.model_dump(exclude={"canary", "limits"}) == original.model_dump(exclude={"canary", "limits"})
    assert spec.cluster == "legal" and spec.environment == original.environment
    assert (back / "reference" / "tests" / "task" / "probes.json").is_file()
    gates = _gates(back, "static")
    assert all(g["passed"] for g in gates.values()), gates


def _terminal_bench_task(root: Path) -> Path:
    """A Harbor task as Terminal-Bench writes them: WORKDIR /app, reward.txt from test.sh."""
    task = root / "hello-world"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "task.toml").write_text(
        'version = "1.0"\n[metadata]\ndifficulty = "easy"\ncategory = "file-operations"\n'
        '[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 300.0\n'
        '[environment]\nmemory_mb = 2048\n')
    (task / "instruction.md").write_text("Create a file /app/hello.txt that holds `Hello, world!`.\n")
    (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    (task / "tests" / "test.sh").write_text(
        '#!/bin/bash\nif [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ]; then\n'
        '  echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n')
    (task / "solution" / "solve.sh").write_text('#!/bin/bash\necho "Hello, world!" > /app/hello.txt\n')
    return task


def test_a_terminal_bench_task_imports_and_grades(harbor: Path, tmp_path: Path,
                                                  base_env_ready: None) -> None:
    src = _terminal_bench_task(tmp_path / "harbor")
    assert harbor_read(harbor, "tasks", src)[str(src)]["valid_dir"]  # a real Harbor task
    run_cli("import", "harbor", src, "--out", tmp_path / "back", "--cluster", "computing-math")
    back = tmp_path / "back" / "hello-world"
    spec = load_task(back).spec
    assert (spec.cluster, spec.tier, spec.timeout_s, spec.limits.memory_mb) == \
        ("computing-math", "near-term", 300, 2048)
    assert "/task/output/hello.txt" in (back / "instruction.md").read_text()
    assert "/task/output/hello.txt" in (back / "solution" / "solve.sh").read_text()
    gates = _gates(back, "static,oracle,nop,negative,positive,determinism,malformed")
    assert all(g["passed"] for g in gates.values()), gates


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: (t / "tests" / "test.sh").unlink(), "a Harbor task needs tests/test.sh"),
    (lambda t: (t / "task.toml").write_text("[agent]\ntimeout_sec = -1\n"), "field 'agent.timeout_sec'"),
    (lambda t: (t / "task.toml").write_text("[metadata.lastexam]\nid = 'x'\n"), "field 'metadata.lastexam.title'"),
    (lambda t: (t / "task.toml").write_text("[agent\n"), "not valid TOML"),
])
def test_bad_harbor_tasks_are_named_not_tracebacks(tmp_path: Path, edit, message: str) -> None:
    src = _terminal_bench_task(tmp_path)
    edit(src)
    proc = run_cli("import", "harbor", src, "--out", tmp_path / "back", check=False)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    assert str(src) in proc.stderr
    assert not (tmp_path / "back").exists()


def test_trajectories_validate_against_harbors_atif_model(harbor: Path, tmp_path: Path,
                                                          base_env_ready: None) -> None:
    out = tmp_path / "run"
    result = run_json("run", COLUMN_TOTAL, "--agent", "lastexam-agent", "--model", f"scripted:{SCRIPT}",
                      "--out", out)
    files = [trial_dir(out, result["trials"][0]) / "trajectory.json"]
    # Every client's converter, on its recorded native log of a desktop trial (image parts too).
    from tests.test_trajectory_computer import PARSERS

    for agent, parse in PARSERS.items():
        root = tmp_path / agent
        (root / "screens").mkdir(parents=True)
        (root / "screens" / "0001.png").write_bytes(b"\x89PNG\r\n\x1a\n")
        steps = parse(AGENT_DATA / f"{agent}.computer.jsonl")
        traj = build_trajectory(session_id=agent, agent=agent, agent_version="1", model="m",
                                instruction="do it", native=steps, calls=[], summary=None,
                                duration_s=1.0, trial_root=root)
        write_trajectory(traj, root / "trajectory.json")
        files.append(root / "trajectory.json")
    facts = harbor_read(harbor, "trajectories", *files)
    for f in files:
        mine = json.loads(f.read_text())
        got = facts[str(f)]
        assert got["steps"] == len(mine["steps"]) and got["schema_version"] == mine["schema_version"]
        assert got["tool_calls"] == sum(len(s.get("tool_calls") or []) for s in mine["steps"]) > 0


def test_pyproject_pins_what_the_venv_has(harbor: Path) -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pin = next(r for r in extra["interop"] if r.startswith("harbor=="))
    import subprocess

    version = subprocess.run([str(harbor), "-c", "import importlib.metadata as m; print(m.version('harbor'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert pin.split(";")[0] == f"harbor=={version}"
