"""Shared fixtures: the real CLI in a subprocess, the harness test task, run helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_TASKS = ROOT / "tests" / "data" / "tasks"
COLUMN_TOTAL = TEST_TASKS / "other" / "column-total"
LASTEXAM = [sys.executable, "-m", "lastexam"]


def run_cli(*args: str | Path, check: bool = True, timeout: float = 600, env: dict | None = None,
            cwd: Path = ROOT) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [*LASTEXAM, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"lastexam {args} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return proc


def run_json(*args: str | Path, **kw) -> dict:
    proc = run_cli(*args, "--json", **kw)
    return json.loads(proc.stdout)


def run_command_agent(cmd: str, out: Path, task: Path = COLUMN_TOTAL, *extra: str) -> dict:
    """Run the `command` agent with a shell command on a task; return the single trial."""
    result = run_json("run", task, "--agent", "command", "--agent-arg", f"cmd={cmd}", "--out", out, *extra)
    assert len(result["trials"]) == 1
    return result["trials"][0]


def trial_dir(run_dir: Path, trial: dict) -> Path:
    return run_dir / "trials" / trial["trial_id"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from sampling import sample_per_client

    sample_per_client(config, items, ROOT)


@pytest.fixture(scope="session")
def base_env_ready() -> None:
    proc = run_cli("env", "check", "base", check=False)
    if proc.returncode != 0:
        run_cli("env", "install", "base", timeout=1200)


SANDBOXES = ("bwrap", "podman")
# The podman cases: "1" (scripts/podman-tests.sh) they fail, not skip, when podman is not ready;
# "0" (the main CI run, which leaves them to that script) they skip; unset, they run when ready.
PODMAN_CASES = "LASTEXAM_TEST_PODMAN"


def podman_problem(image: bool = True) -> str | None:
    """Why the podman provider cannot run here (None: it can); `image`: the base image too."""
    from lastexam.envs import manage
    from lastexam.envs.image import image_tag
    from lastexam.sandbox.engine import detect, missing_engine

    engine = detect()
    if engine is None:
        return missing_engine()
    tag = image_tag(manage.load("base", ROOT))
    if image and not engine.image_exists(tag):
        return f"no image {tag}: lastexam env build-image base"
    return None


def need_podman(image: bool = True) -> None:
    """Skip (or fail, under LASTEXAM_TEST_PODMAN=1) a podman case that cannot run here."""
    wanted = os.environ.get(PODMAN_CASES)
    if wanted == "0":
        pytest.skip(f"{PODMAN_CASES}=0: run by scripts/podman-tests.sh")
    if problem := podman_problem(image):
        if wanted == "1":
            pytest.fail(problem)
        pytest.skip(problem)


@pytest.fixture(params=SANDBOXES)
def sandbox(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test that uses it runs once per sandbox provider (`lastexam run --sandbox`)."""
    if request.param == "podman":
        need_podman()
    monkeypatch.setenv("LASTEXAM_SANDBOX", request.param)
    return request.param


# Running the CLI with the harness's fault points on (src/lastexam/run/faults.py), to act at its
# phases as they are reached rather than after guessed sleeps: the harness appends each phase to
# a trace file and, when asked, waits there a moment, so a test can look at the machine (or
# kill the run) while the harness is at a known point.
POLL_S = 0.01


@dataclass
class Point:
    phase: str
    run_id: str
    trial_id: str


@dataclass
class Watched:
    returncode: int
    stdout: str
    stderr: str
    points: list[Point]


def run_watching(args: list[str | Path], scratch: Path, on_point: Callable[[Point, subprocess.Popen], None],
                 delays: dict[str, float] | None = None, timeout: float = 600) -> Watched:
    """`lastexam ARGS`, calling on_point(point, process) at each fault point as it is reached
    (the harness waits delays[phase] seconds there). on_point may kill the process."""
    scratch.mkdir(parents=True, exist_ok=True)
    trace = scratch / "trace.log"
    trace.write_bytes(b"")
    env = {**os.environ, "LASTEXAM_FAULT_TRACE": str(trace)}
    if delays:
        env["LASTEXAM_FAULT_DELAY"] = ",".join(f"{k}={v}" for k, v in delays.items())
    out, err = scratch / "stdout", scratch / "stderr"
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen([*LASTEXAM, *map(str, args)], cwd=ROOT, env=env, stdout=o, stderr=e)
    points: list[Point] = []
    done = 0  # bytes of whole lines handled
    end = time.monotonic() + timeout
    try:
        while True:
            finished = proc.poll() is not None
            data = trace.read_bytes()[done:]
            whole = data[: data.rfind(b"\n") + 1]  # a line still being written waits
            for line in whole.decode().splitlines():
                _, phase, run_id, trial_id = line.split()
                points.append(Point(phase, run_id, trial_id))
                if proc.poll() is None:
                    on_point(points[-1], proc)
            done += len(whole)
            if finished or time.monotonic() > end:
                break
            time.sleep(POLL_S)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return Watched(proc.returncode, out.read_text(errors="replace"), err.read_text(errors="replace"), points)


def processes_named(marker: str) -> list[str]:
    """Processes whose command line holds marker."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(cmdline.parent.name)
        except OSError:
            continue
    return found
