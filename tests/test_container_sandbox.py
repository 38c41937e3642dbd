"""The container provider's own parts, without a container: its seccomp profile, how it
passes the environment, which image a request runs in, and how images are tagged. Its
isolation is tested in tests/test_sandbox.py (each case runs with both providers), and here
the starter task's oracle scores 1.0 with each provider."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import (
    COLUMN_TOTAL,
    ROOT,
    Point,
    need_podman,
    processes_named,
    run_cli,
    run_json,
    run_watching,
    trial_dir,
)
from lastexam.envs import manage
from lastexam.envs.image import debian_release, image_tag
from lastexam.paths import home_subdir
from lastexam.sandbox.base import Mount, SandboxError, SandboxLimits, SandboxRequest
from lastexam.sandbox.engine import CLONE_NEWUSER, EOPNOTSUPP, seccomp_profile
from lastexam.sandbox.podman import UID_RANGE, _split_env, environment_of, uid_range_problem

DEFAULT = {
    "defaultAction": "SCMP_ACT_ERRNO",
    "syscalls": [
        {"names": ["read", "fallocate", "clone", "clone3", "unshare", "io_uring_setup"],
         "action": "SCMP_ACT_ALLOW"},
        {"names": ["io_uring_enter"], "action": "SCMP_ACT_ALLOW"},
    ],
}


def _rules_for(profile: dict, name: str) -> list[dict]:
    return [r for r in profile["syscalls"] if name in r["names"]]


def test_seccomp_profile_refuses_fallocate_io_uring_and_new_user_namespaces(tmp_path: Path) -> None:
    default = tmp_path / "seccomp.json"
    default.write_text(json.dumps(DEFAULT))
    profile = seccomp_profile(default)
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    assert _rules_for(profile, "read") == [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]
    for name in ("fallocate", "io_uring_setup"):
        assert [(r["action"], r.get("errnoRet")) for r in _rules_for(profile, name)] == [
            ("SCMP_ACT_ERRNO", EOPNOTSUPP)]
    # Left to the default action: clone3 (whose flags cannot be filtered), io_uring_enter.
    assert _rules_for(profile, "clone3") == [] and _rules_for(profile, "io_uring_enter") == []
    for name in ("unshare", "clone"):
        rules = _rules_for(profile, name)
        assert rules and all(r["action"] == "SCMP_ACT_ALLOW" for r in rules)
        for r in rules:
            (arg,) = r["args"]
            assert (arg["op"], arg["value"], arg["valueTwo"]) == ("SCMP_CMP_MASKED_EQ", CLONE_NEWUSER, 0)


def test_seccomp_profile_needs_a_default_profile(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        seccomp_profile(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text('{"defaultAction": "SCMP_ACT_ALLOW"}')
    with pytest.raises(ValueError, match="no syscalls list"):
        seccomp_profile(tmp_path / "bad.json")


@pytest.mark.parametrize("uid", [1, 911, 999, 2**32 - 2 - (UID_RANGE - 1 - 1000) + 1])
def test_a_sandbox_uid_whose_container_range_leaves_the_host_uids_is_refused(uid: int) -> None:
    problem = uid_range_problem(uid)
    assert problem is not None and f"LASTEXAM_SANDBOX_UID={uid}" in problem


@pytest.mark.parametrize("uid", [None, 1000, 1_990_000_000, 2**32 - 2 - (UID_RANGE - 1 - 1000)])
def test_a_sandbox_uid_with_room_for_the_container_range_is_taken(uid: int | None) -> None:
    assert uid_range_problem(uid) is None


def test_the_environment_goes_by_file_or_by_name_never_on_the_command_line() -> None:
    in_file, by_name = _split_env({"PATH": "/usr/bin", "LD_PRELOAD": "/run/x.so",
                                   "LASTEXAM_INSTRUCTION": "line 1\nline 2"})
    assert in_file == {"PATH": "/usr/bin", "LD_PRELOAD": "/run/x.so"}
    assert by_name == {"LASTEXAM_INSTRUCTION": "line 1\nline 2"}
    # By name, a loader variable would reach the engine's own processes on the host.
    with pytest.raises(SandboxError, match="LD_PRELOAD"):
        _split_env({"LD_PRELOAD": "a\nb"})
    with pytest.raises(SandboxError, match="cannot be passed"):
        _split_env({"X": "a\0b"})


def _request(mounts: list[Mount]) -> SandboxRequest:
    return SandboxRequest(name="t", argv=["/bin/true"], mounts=mounts, env={}, cwd="/",
                          limits=SandboxLimits(wall_s=1, memory_mb=64, max_processes=8, watch_bytes=0),
                          stdout=Path("/dev/null"), stderr=Path("/dev/null"))


def test_a_request_runs_in_the_image_of_the_environment_it_mounts() -> None:
    venv = home_subdir("envs") / "chem"
    assert environment_of(_request([Mount(Path("/x"), "/task/inputs"), Mount(venv, str(venv))])) == "chem"
    assert environment_of(_request([Mount(Path("/x"), "/task/inputs")])) == "base"


def test_image_tags_follow_what_the_image_holds(tmp_path: Path) -> None:
    base = manage.load("base", ROOT)
    tag = image_tag(base)
    assert tag.startswith("lastexam-env-base:") and tag == image_tag(base)
    more = base.spec.model_copy(update={"apt": [*base.spec.apt, "jq"]})
    assert image_tag(manage.Environment(more, base.source)) != tag
    release = tmp_path / "os-release"
    release.write_text('ID=debian\nVERSION_CODENAME=trixie\n')
    assert debian_release(release) == "trixie"
    release.write_text('ID="fedora"\nVERSION_CODENAME="forty"\n')
    assert debian_release(release) == "bookworm"
    assert debian_release(tmp_path / "absent") == "bookworm"


@pytest.mark.usefixtures("base_env_ready")
def test_the_oracle_scores_full_marks(tmp_path: Path, sandbox: str) -> None:
    """The starter task's reference solution scores 1.0 with the agent and the grader each in a
    sandbox of the provider under test."""
    run = tmp_path / "run"
    trial = run_json("run", COLUMN_TOTAL, "--agent", "oracle", "--out", run)["trials"][0]
    assert trial["status"] == "completed" and trial["score"] == 1.0, trial
    record = json.loads((trial_dir(run, trial) / "trial.json").read_text())
    assert record["repro"]["sandbox"]["provider"] == sandbox
    if sandbox == "podman":
        assert record["repro"]["sandbox"]["images"] == {"base": image_tag(manage.load("base", ROOT))}


def test_podman_refuses_a_run_whose_image_is_missing(tmp_path: Path) -> None:
    """Before any trial starts and before the run folder exists, naming the command that
    builds the image."""
    need_podman(image=False)
    task = tmp_path / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('environment = "base"', 'environment = "sci"'))
    run = tmp_path / "run"
    proc = run_cli("run", task, "--agent", "oracle", "--sandbox", "podman", "--out", run, check=False)
    assert proc.returncode != 0
    assert "no image lastexam-env-sci:" in proc.stderr
    assert "lastexam env build-image sci" in proc.stderr
    assert not run.exists()


def test_podman_containers_of_a_killed_harness_are_removed_by_the_next_run(tmp_path: Path) -> None:
    """A container outlives a SIGKILLed harness (its engine holds it, unlike bwrap's
    --die-with-parent); the next run, once the sweep has removed the dead run's work area,
    removes the container and every process in it."""
    need_podman()
    marker = f"{100_000 + os.getpid()}.{uuid.uuid4().int % 10**9:09d}"
    cmd = f"A='{marker[:4]}'; B='{marker[4:]}'; sleep \"$A$B\""  # whole only inside

    def on_point(point: Point, proc: subprocess.Popen) -> None:
        if point.phase == "agent":
            end = time.monotonic() + 60
            while not processes_named(marker) and time.monotonic() < end:
                time.sleep(0.05)
            proc.kill()

    watched = run_watching(["run", COLUMN_TOTAL, "--agent", "command", "--agent-arg", f"cmd={cmd}",
                            "--sandbox", "podman", "--out", tmp_path / "killed", "--json"],
                           tmp_path / "watch", on_point)
    assert watched.returncode == -9
    assert processes_named(marker), "the container should have outlived its harness"
    run_cli("run", COLUMN_TOTAL, "--agent", "nop", "--sandbox", "podman", "--out", tmp_path / "next")
    assert processes_named(marker) == []
    from lastexam.sandbox.engine import detect

    engine = detect()
    assert engine is not None
    dead_run = watched.points[0].run_id
    area = home_subdir("work") / dead_run
    left = engine.call("ps", "-a", "--filter", f"label=lastexam.area={area}", "-q")
    assert left.returncode == 0 and left.stdout.split() == []



def test_podman_leaves_alone_the_containers_of_another_lastexam_home(tmp_path: Path) -> None:
    """Two LASTEXAM_HOMEs on one machine share the user's container storage (Ray nodes started
    side by side, a test run beside a real one): a run of one must not remove, as leftovers,
    the running containers of the other, whose work areas it cannot see."""
    need_podman()
    from concurrent.futures import ThreadPoolExecutor

    from lastexam.sandbox.podman import PodmanProvider, container_name

    other = PodmanProvider(tmp_path / "other" / "work" / "run-a" / "etc")
    other.etc_dir.mkdir(parents=True)
    name = f"elsewhere-{uuid.uuid4().hex[:8]}"
    req = SandboxRequest(name=name, argv=["/bin/sleep", "60"], mounts=[],
                         env={"PATH": "/usr/bin:/bin"}, cwd="/",
                         limits=SandboxLimits(wall_s=60, memory_mb=128, max_processes=8,
                                              watch_bytes=0),
                         stdout=tmp_path / "out", stderr=tmp_path / "err")
    engine = other.engine
    assert engine is not None

    def running() -> bool:
        return bool(engine.call("ps", "--filter", f"name={container_name(name)}", "-q").stdout.split())

    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(other.run, req)
        end = time.monotonic() + 60
        while not running() and time.monotonic() < end:
            time.sleep(0.1)
        assert running(), (tmp_path / "err").read_text()
        mine = PodmanProvider(tmp_path / "mine" / "work" / "run-b" / "etc")
        mine.etc_dir.mkdir(parents=True)
        mine._remove_leftovers()
        still = running()
        engine.call("kill", "--signal", "KILL", container_name(name))
        assert still, "a running container of another LASTEXAM_HOME was removed as a leftover"
        assert result.result(timeout=60).killed is None  # killed here, not by its own cap


def test_podman_sandboxes_whose_names_differ_only_in_odd_characters_stay_apart(tmp_path: Path) -> None:
    """Container names allow few characters: two sandboxes whose names differ only in others
    (an outside agent's module:Class, a model's non-ASCII letters) must not share a container
    name, or the teardown of one removes the other."""
    need_podman()
    from concurrent.futures import ThreadPoolExecutor

    from lastexam.sandbox.podman import PodmanProvider

    provider = PodmanProvider(tmp_path / "work" / "run" / "etc")
    provider.etc_dir.mkdir(parents=True)

    def request(name: str, script: str) -> SandboxRequest:
        return SandboxRequest(name=name, argv=["/bin/sh", "-c", script], mounts=[],
                              env={"PATH": "/usr/bin:/bin"}, cwd="/",
                              limits=SandboxLimits(wall_s=60, memory_mb=128, max_processes=8,
                                                   watch_bytes=0),
                              stdout=tmp_path / f"{len(script)}.out", stderr=tmp_path / f"{len(script)}.err")

    slow = request("run.task__pkg.mod:Agent__é__1", "sleep 3; echo slow")
    fast = request("run.task__pkg.mod_Agent__ü__1", "echo fast")
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(provider.run, slow)
        time.sleep(1.5)
        second = pool.submit(provider.run, fast)
        results = [first.result(timeout=120), second.result(timeout=120)]
    assert [(r.exit_code, r.killed) for r in results] == [(0, None), (0, None)], results
    assert slow.stdout.read_text() == "slow\n" and fast.stdout.read_text() == "fast\n"
