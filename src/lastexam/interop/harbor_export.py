"""`lastexam export harbor`: a lastexam task as a Harbor task folder.

    <id>/task.toml            Harbor's fields; lastexam's own under [metadata.lastexam]
    <id>/instruction.md       the instruction as it is (Harbor strips the canary line)
    <id>/environment/         Dockerfile: Debian 12, the task environment's packages (from its
                              lock), the instruction and inputs at /task as lastexam stages them
    <id>/tests/               test.sh + verify.py, the grading library, grader.py, reference/,
                              the pristine inputs: copied in by Harbor only to verify
    <id>/solution/            the oracle (solve.sh and its files)
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

from lastexam.envs import lockfile
from lastexam.envs.locking import lock_path
from lastexam.envs.manage import Environment
from lastexam.envs.manage import load as load_environment
from lastexam.errors import LastexamError
from lastexam.interop.toml_out import dumps
from lastexam.paths import package_dir
from lastexam.run.recorded_probes import PROBES_FILE
from lastexam.task.load import Task

BASE_IMAGE = "debian:bookworm-slim"  # the Debian release lastexam's environments are locked on
VENV = "/opt/lastexam/env"
BUILD_TIMEOUT_S = 3600  # the largest environments (LibreOffice, Blender) take long to install
# Harbor's difficulty words for lastexam's tiers (its metadata convention, from Terminal-Bench).
DIFFICULTY = {"near-term": "medium", "full-spectrum": "hard", "last-exam": "hard"}
GRADER_PARTS = ("task.toml", "grader.py", "reference", "inputs", PROBES_FILE)


def export_task(task: Task, out: Path) -> Path:
    """Write task as out/<id>/ (which must not exist yet)."""
    dest = out / task.id
    if dest.exists():
        raise LastexamError("already exists: remove it or choose another --out", path=dest)
    env = load_environment(task.spec.environment, task.path)
    dest.mkdir(parents=True)
    (dest / "task.toml").write_text(dumps(task_toml(task)))
    shutil.copyfile(task.instruction, dest / "instruction.md")
    _environment(task, env, dest / "environment")
    _tests(task, dest / "tests")
    shutil.copytree(task.solution_dir, dest / "solution", ignore=_NO_CACHE)
    return dest


def task_toml(task: Task) -> dict:
    s = task.spec
    return {
        "source": "lastexam",
        "task": {
            "name": f"lastexam/{s.id}",
            "description": s.summary,
            "keywords": [s.cluster, s.subdomain, s.tier, *s.software],
        },
        "metadata": {
            "difficulty": DIFFICULTY[s.tier],
            "category": s.cluster,
            "tags": [s.subdomain, *s.software],
            "lastexam": {
                "id": s.id, "title": s.title, "summary": s.summary, "cluster": s.cluster,
                "subdomain": s.subdomain, "soc": s.soc, "tier": s.tier,
                "tier_rationale": s.tier_rationale, "software": s.software,
                "environment": s.environment, "outputs": s.outputs, "gui": s.gui,
            },
        },
        "verifier": {"timeout_sec": float(s.limits.grader_timeout_s + 60)},
        "agent": {"timeout_sec": float(s.timeout_s)},
        "environment": {
            "build_timeout_sec": float(BUILD_TIMEOUT_S),
            "memory_mb": s.limits.memory_mb,
            "workdir": "/task",
        },
    }


def dockerfile(env: Environment, locked: bool) -> str:
    apt = sorted({"python3", "python3-venv", "ca-certificates", *env.spec.apt})
    pip = ("--require-hashes --no-deps -r /opt/lastexam/requirements.txt" if locked
           else "-r /opt/lastexam/requirements.txt")
    lines = [
        f"# The lastexam environment {env.name!r}: {env.spec.description}",
        f"FROM {BASE_IMAGE}",
        "ENV DEBIAN_FRONTEND=noninteractive",
        "RUN apt-get update && apt-get install -y --no-install-recommends \\",
        *(f"    {p} \\" for p in apt),
        "    && rm -rf /var/lib/apt/lists/*",
        "COPY requirements.txt /opt/lastexam/requirements.txt",
        f"RUN python3 -m venv {VENV} && {VENV}/bin/pip install --no-cache-dir {pip}",
        f"ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        *(f"ENV {k}={json.dumps(v)}" for k, v in sorted(env.spec.sandbox_env.items())),
        "ENV LANG=C.UTF-8",
        "# What a lastexam agent finds: /task/instruction.md, /task/inputs/, an empty /task/output/",
        "COPY task/ /task/",
        "RUN mkdir -p /task/output && chmod 444 /task/instruction.md",
        "WORKDIR /task",
    ]
    return "\n".join(lines) + "\n"


def _environment(task: Task, env: Environment, dest: Path) -> None:
    (dest / "task").mkdir(parents=True)
    shutil.copyfile(task.instruction, dest / "task" / "instruction.md")
    if task.inputs_dir.is_dir():
        shutil.copytree(task.inputs_dir, dest / "task" / "inputs")
    else:
        (dest / "task" / "inputs").mkdir()
    lock = lock_path(env)
    locked = lock.is_file() and lockfile.parse(lock, env.name).source == env.spec.package_digest
    if locked:
        shutil.copyfile(lock, dest / "requirements.txt")
    else:  # no lock, or a stale one: the toml's list, unpinned where it is
        (dest / "requirements.txt").write_text("\n".join(env.spec.pip_all) + "\n")
    (dest / "Dockerfile").write_text(dockerfile(env, locked))


def _tests(task: Task, dest: Path) -> None:
    files = resources.files("lastexam.interop").joinpath("harbor_files")
    dest.mkdir()
    for name in ("test.sh", "verify.py"):
        (dest / name).write_text(files.joinpath(name).read_text())
    (dest / "test.sh").chmod(0o755)
    lib = dest / "lib" / "lastexam"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    shutil.copytree(package_dir() / "grading", lib / "grading", ignore=_NO_CACHE)
    for part in GRADER_PARTS:
        src = task.path / part
        if src.is_dir():
            shutil.copytree(src, dest / "task" / part, ignore=_NO_CACHE)
        elif src.is_file():
            (dest / "task").mkdir(exist_ok=True)
            shutil.copyfile(src, dest / "task" / part)
    (dest / "lastexam.json").write_text(json.dumps({
        "id": task.id, "canary": task.spec.canary,
        "grader_timeout_s": task.spec.limits.grader_timeout_s}, indent=1))


_NO_CACHE = shutil.ignore_patterns("__pycache__")
