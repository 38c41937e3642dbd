"""Make an environment's lock, and compare a lock with its environment file and the machine.

A lock is resolved by pip itself (`pip install --dry-run --report`) in a throwaway venv of the
Python the environment's venv is made from, so it holds exactly the wheel pip would install
on this kind of machine, one hash each. The machine's pip configuration (mirrors, local wheel
folders, constraints) is ignored: the lock must install anywhere from the index it names."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from lastexam.envs import lockfile
from lastexam.envs.lockfile import EnvironmentLock, LockedPackage
from lastexam.envs.system import (
    BASE_PYTHON,
    BASE_PYTHON_PACKAGE,
    installed_versions,
    python_tag,
    run_checked,
)
from lastexam.errors import LastexamError

if TYPE_CHECKING:
    from lastexam.envs.manage import Environment

PYPI = "https://pypi.org/simple"
# pip settings that say how to reach an index, not which packages to take: kept when locking
KEPT_PIP_VARS = ("PIP_CERT", "PIP_CLIENT_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_PROXY")
# put in every venv by `python3 -m venv`, not by the lock
VENV_OWN = frozenset({"pip", "setuptools"})


@dataclass(frozen=True)
class LockState:
    """The lock `install` uses, or why there is none (then it installs from the toml)."""

    lock: EnvironmentLock | None
    hash: str | None
    problem: str


def lock_path(env: Environment) -> Path:
    return env.source.with_suffix(".lock.txt")


def lock_hash(env: Environment) -> str | None:
    """The hash of the environment's committed lock (None without one), as install records it."""
    path = lock_path(env)
    return lockfile.file_hash(path) if path.is_file() else None


def recorded_apt(env: Environment) -> list[str]:
    return sorted({*env.spec.apt, BASE_PYTHON_PACKAGE})


def make_lock(env: Environment, *, index_url: str = PYPI, find_links: Path | None = None) -> EnvironmentLock:
    """Resolve the environment's packages for BASE_PYTHON and record the apt versions.
    `find_links`: a folder of wheels to resolve from instead of an index (offline)."""
    apt = installed_versions(recorded_apt(env))
    absent = [p for p in recorded_apt(env) if p not in apt]
    if absent:
        raise LastexamError(
            f"Debian packages not installed, so their versions cannot be recorded: {' '.join(absent)}"
            f" (lastexam env install {env.name})", path=env.source)
    source = ["--no-index", "--find-links", str(find_links)] if find_links else ["--index-url", index_url]
    with tempfile.TemporaryDirectory(prefix="lastexam-lock-") as tmp:
        venv, report = Path(tmp) / "venv", Path(tmp) / "report.json"
        run_checked([BASE_PYTHON, "-m", "venv", str(venv)])
        run_checked([str(venv / "bin" / "python3"), "-m", "pip", "install", "--dry-run", "--ignore-installed",
                     "--quiet", "--report", str(report), *source, *env.spec.pip_all], _pip_env())
        resolved = json.loads(report.read_text())["install"]
        python = python_tag(str(venv / "bin" / "python3"))
    return EnvironmentLock(
        name=env.name, source=env.spec.package_digest, python=python, apt=apt,
        packages=[_locked(item, env) for item in resolved],
    )


def _locked(item: dict, env: Environment) -> LockedPackage:
    name = lockfile.normalise(item["metadata"]["name"])
    info = item.get("download_info", {})
    sha = info.get("archive_info", {}).get("hashes", {}).get("sha256")
    url = urlparse(info.get("url", ""))
    if not sha and url.scheme == "file":  # a local wheel: pip knows no hash for it
        sha = hashlib.sha256(Path(unquote(url.path)).read_bytes()).hexdigest()
    if not sha:
        raise LastexamError(f"pip resolved {name} from {info.get('url')!r}, which has no hash: "
                            "only index and wheel-file packages can be locked", path=env.source)
    return LockedPackage(name=name, version=item["metadata"]["version"], sha256=sha)


def write_lock(env: Environment, lock: EnvironmentLock) -> Path:
    path = lock_path(env)
    path.write_text(lockfile.render(lock), encoding="utf-8")
    return path


def lock_state(env: Environment) -> LockState:
    path = lock_path(env)
    if not path.is_file():
        return LockState(None, None, f"no lock {path.name}")
    lock = lockfile.parse(path, env.name)
    if lock.source != env.spec.package_digest:
        return LockState(None, None, f"{path.name} is stale: the package lists of "
                                     f"{env.source.name} changed since it was made")
    machine = python_tag()
    if lock.python != machine:
        return LockState(None, None, f"{path.name} was made for Python {lock.python}, "
                                     f"{BASE_PYTHON} is {machine}")
    return LockState(lock, lock_hash(env), "")


def python_drift(env: Environment, lock: EnvironmentLock) -> list[str]:
    """How the packages in the environment's venv differ from the lock."""
    installed = {
        lockfile.normalise(d.metadata["Name"]): d.version
        for d in metadata.distributions(path=[str(p) for p in env.site_packages()])
        if d.metadata["Name"]  # a dist-info without METADATA (half removed): not installed
    }
    locked = {p.name: p.version for p in lock.packages}
    problems = [
        f"{name} {installed.get(name, 'not installed')} (lock: {version})"
        for name, version in sorted(locked.items()) if installed.get(name) != version
    ]
    problems += [f"{name} {version} (not in the lock)" for name, version in sorted(installed.items())
                 if name not in locked and name not in VENV_OWN]
    return problems


def apt_drift(lock: EnvironmentLock) -> list[str]:
    """Debian packages whose installed version is not the one recorded in the lock."""
    now = installed_versions(sorted(lock.apt))
    return [f"{pkg} {now.get(pkg, 'not installed')} (lock: {version})"
            for pkg, version in sorted(lock.apt.items()) if now.get(pkg) != version]


def _pip_env() -> dict[str, str]:
    """This process's environment without the machine's pip configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in KEPT_PIP_VARS}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
