"""Faults other than a killed run: graders that crash, hang or blow their memory, the results
disk full, a sandbox that fails to start, a task folder deleted mid-run. Each ends in the right
status, infrastructure failures are retried as the error policy says, and the run goes on (or
stops with one clear message and resumes)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, Point, processes_named, run_cli, run_watching

pytestmark = pytest.mark.usefixtures("base_env_ready")

HONEST = ("awk -F, 'NR > 1 { s += $1; n++ } END { printf \"{\\\"total\\\": %.6f, \\\"count\\\": %d}\\n\", "
          "s, n }' /task/inputs/data.csv > /task/output/result.json")


def _copy(dest: Path, task_id: str, grader: str | None = None, limits: str = "") -> Path:
    folder = dest / task_id
    shutil.copytree(COLUMN_TOTAL, folder, ignore=shutil.ignore_patterns("fixtures"))
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace('id = "column-total"', f'id = "{task_id}"')
                    + (f"\n[limits]\n{limits}\n" if limits else ""))
    if grader is not None:
        (folder / "grader.py").write_text(grader)
    return folder


def _run_json(*args: str | Path, env: dict | None = None) -> dict:
    return json.loads(run_cli("run", *args, "--json", env=env).stdout)


def _by_task(result: dict) -> dict[str, dict]:
    return {t["task"]: t for t in result["trials"]}


@pytest.mark.parametrize("written", [
    "[]", '"ok"', '{"status": "ok", "rubric": []}',
    '{"status": "ok", "rubric": {"checks": [{"name": "x", "weight": "heavy", "gate": false,'
    ' "passed": true, "points": 1, "message": ""}]}}',
])
def test_a_result_that_is_not_a_rubric_is_a_grader_error(tmp_path: Path, written: str) -> None:
    """Whatever lands in the harness's result channel (grader code runs in the harness's
    process and can find the pipe) is the grader's failure, not the harness's."""
    grader = ("import os, stat\n\ndef grade(ctx):\n"
              "    for fd in range(3, 64):\n"
              "        try:\n"
              "            if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
              f"                os.write(fd, {written!r}.encode())\n"
              "        except OSError:\n"
              "            pass\n"
              "    os._exit(0)\n")
    task = _copy(tmp_path / "tasks" / "other", "grader-writes", grader)
    [t] = _run_json(task, "--agent", "command", "--agent-arg", f"cmd={HONEST}",
                    "--out", tmp_path / "run")["trials"]
    assert t["status"] == "grader_error" and "malformed" in t["error"], t


def test_graders_that_crash_hang_or_blow_memory(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks" / "other"
    # Each sleep a grader leaves behind is named by a unique duration.
    marks = {t: f"{100_000 + os.getpid()}.{n}{uuid.uuid4().int % 10**8:08d}" for n, t in
             enumerate(("grader-hangs", "grader-forks"), 1)}
    _copy(tasks, "grader-segfault", "import ctypes\n\ndef grade(ctx):\n    ctypes.string_at(0)\n")
    _copy(tasks, "grader-hangs", "import subprocess\n\ndef grade(ctx):\n"
          f"    subprocess.Popen(['sleep', '{marks['grader-hangs']}'])\n    while True:\n        pass\n",
          "grader_timeout_s = 5")
    _copy(tasks, "grader-memory", "def grade(ctx):\n    x = []\n    while True:\n        x.append(bytearray(50 << 20))\n",
          "grader_memory_mb = 128")
    _copy(tasks, "grader-exits", "import os\n\ndef grade(ctx):\n    os._exit(0)\n")
    _copy(tasks, "grader-forks", "import os, time\n\ndef grade(ctx):\n    if os.fork() == 0:\n"
          f"        os.setsid(); os.execvp('sleep', ['sleep', '{marks['grader-forks']}'])\n"
          "    raise RuntimeError('and fails')\n")
    _copy(tasks, "grader-good")
    left: dict[str, list[str]] = {}  # what each grader left running, once its trial is graded

    def on_point(point: Point, _proc: subprocess.Popen) -> None:
        task_id = point.trial_id.split("__")[0]
        if point.phase == "record" and task_id in marks:
            left[task_id] = processes_named(marks[task_id])

    watched = run_watching(["run", tmp_path / "tasks", "--agent", "command", "--agent-arg", f"cmd={HONEST}",
                            "--concurrency", "2", "--out", tmp_path / "run", "--json"],
                           tmp_path / "watch", on_point, delays={"record": 0.5})
    assert watched.returncode == 0, watched.stderr[-2000:]
    trials = _by_task(json.loads(watched.stdout))
    assert left == {"grader-hangs": [], "grader-forks": []}
    assert trials["grader-good"]["status"] == "completed" and trials["grader-good"]["score"] == 1.0
    expect = {"grader-segfault": "no result", "grader-hangs": "timeout limit",
              "grader-memory": "memory limit", "grader-exits": "no result", "grader-forks": "and fails"}
    for task_id, why in expect.items():
        t = trials[task_id]
        assert t["status"] == "grader_error" and t["score"] is None, t
        assert why in t["error"], (task_id, t["error"])
        assert t["policy"]["counts"] and t["policy"]["retries"] == 0  # deterministic: not retried
    shown = json.loads(run_cli("show", tmp_path / "run", "--json").stdout)
    overall = shown["metrics"]["overall"]
    assert overall["excluded"] == 0 and round(overall["ms"]["value"], 4) == round(1 / 6, 4)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs for the results disk")
def test_results_disk_full_stops_with_a_message_and_resumes(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1200k", "tmpfs", str(disk)], check=True)
    try:
        run = disk / "run"
        cmd = HONEST + "; head -c 300000 /dev/urandom > /task/output/blob.bin"
        argv = ["run", COLUMN_TOTAL, "--agent", "command", "--agent-arg", f"cmd={cmd}", "--attempts", "8",
                "--out", run]
        full = run_cli(*argv, check=False)
        assert full.returncode == 2, full.stderr[-2000:]
        message = full.stderr.strip().splitlines()[-1]
        assert message.startswith(f"error: {run}: the run stopped") and "results disk is full" in message
        assert "--resume" in message and "Traceback" not in full.stderr
        with sqlite3.connect(run / "results.db") as db:
            recorded = {r[0] for r in db.execute("SELECT trial_id FROM trials")}
        assert 0 < len(recorded) < 8
        assert {p.name for p in (run / "trials").iterdir()} == recorded  # no half-written trial
        subprocess.run(["mount", "-o", "remount,size=20m", str(disk)], check=True)
        resumed = _run_json("--resume", "--out", run)
        ids = [t["trial_id"] for t in resumed["trials"]]
        assert len(ids) == 8 == len(set(ids)) and recorded <= set(ids)
        assert all(t["score"] == 1.0 for t in resumed["trials"])
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _lastexam_home() -> Path:
    from lastexam.paths import lastexam_home

    return lastexam_home()


@pytest.mark.parametrize("heal", [True, False], ids=["healed-on-retry", "stays-broken"])
def test_sandbox_that_fails_to_start_is_retried(tmp_path: Path, heal: bool) -> None:
    """The run's usage-hook folder (a mount source of every agent sandbox) disappears just as
    the agent's sandbox starts: bwrap cannot set up, the policy retries; healed, the retry runs."""
    run = tmp_path / "run"
    hook: list[Path] = []

    def on_point(point: Point, _proc: subprocess.Popen) -> None:
        phase, lib = point.phase, _lastexam_home() / "work" / point.run_id / "lib"
        if phase == "agent" and not hook:
            hook.append(lib / "usage-hook")
            shutil.move(lib / "usage-hook", lib / "hook-away")
        elif phase == "stage" and hook and heal and (lib / "hook-away").exists():
            shutil.move(lib / "hook-away", lib / "usage-hook")

    watched = run_watching(["run", COLUMN_TOTAL, "--agent", "command", "--agent-arg", f"cmd={HONEST}",
                            "--max-retries", "1", "--out", run, "--json"], tmp_path / "watch", on_point,
                           delays={"agent": 0.5}, timeout=120)
    trial = json.loads(watched.stdout)["trials"][0]
    policy = trial["policy"]
    assert policy["earlier"][0]["kind"] == "sandbox_failed"
    assert "bwrap failed to set up the sandbox" in policy["earlier"][0]["error"]
    if heal:
        assert trial["status"] == "completed" and trial["score"] == 1.0 and policy["retries"] == 1
    else:
        assert trial["status"] == "infra_error" and trial["score"] is None
        assert policy["retries"] == 1 and not policy["counts"]  # --max-retries 1
        assert "bwrap failed to set up the sandbox" in trial["error"]


def test_task_folder_deleted_mid_run(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks" / "other"
    _copy(tasks, "a-stays")
    doomed = _copy(tasks, "b-deleted")  # sorted after a-stays: it starts second
    def on_point(point: Point, _proc: subprocess.Popen) -> None:
        if point.phase == "agent" and point.trial_id.startswith("a-stays") and doomed.exists():
            shutil.rmtree(doomed)

    watched = run_watching(["run", tmp_path / "tasks", "--agent", "command", "--agent-arg", f"cmd={HONEST}",
                            "--out", tmp_path / "run", "--json"], tmp_path / "watch", on_point,
                           delays={"agent": 0.5}, timeout=120)
    assert watched.returncode == 0, watched.stderr[-2000:]
    trials = _by_task(json.loads(watched.stdout))
    assert trials["a-stays"]["status"] == "completed" and trials["a-stays"]["score"] == 1.0
    gone = trials["b-deleted"]
    assert gone["status"] == "infra_error" and gone["policy"]["kind"] == "task_missing"
    assert gone["policy"]["retries"] == 0 and "stage" in gone["error"]


def test_a_run_cannot_be_resumed_while_it_runs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    second: list[subprocess.CompletedProcess] = []

    def on_point(point: Point, _proc: subprocess.Popen) -> None:
        if point.phase == "agent" and not second:
            second.append(run_cli("run", "--resume", "--out", run, check=False))

    watched = run_watching(["run", COLUMN_TOTAL, "--agent", "command", "--agent-arg", f"cmd={HONEST}",
                            "--out", run, "--json"], tmp_path / "watch", on_point, delays={"agent": 2},
                           timeout=120)
    assert second[0].returncode == 2 and "being run by another lastexam process" in second[0].stderr
    trial = json.loads(watched.stdout)["trials"][0]
    assert trial["status"] == "completed" and trial["score"] == 1.0
