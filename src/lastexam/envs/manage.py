"""Install and check environments: Debian packages system-wide, Python packages in a venv that
the sandbox's python3 runs from (apart from the harness's own dependencies)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lastexam.envs import locking
from lastexam.envs.spec import EnvironmentSpec, load_environment
from lastexam.envs.system import (
    APT_LISTS_FRESH_S,
    APT_UPDATE_STAMP,
    BASE_PYTHON,
    missing_apt,
    run_checked,
)
from lastexam.errors import LastexamError
from lastexam.paths import home_subdir, project_root
from lastexam.sandbox.base import Mount

MARKER = "lastexam-env.json"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_SITE_PACKAGES: dict[Path, list[Path]] = {}


@dataclass(frozen=True)
class Environment:
    spec: EnvironmentSpec
    source: Path

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def venv(self) -> Path:
        return home_subdir("envs") / self.name

    def site_packages(self) -> list[Path]:
        venv = self.venv
        found = _SITE_PACKAGES.get(venv)  # an installed venv's stay (a reinstall may change them)
        if found and found[0].is_dir():
            return list(found)
        found = sorted(venv.glob("lib/python3*/site-packages"))
        if found:
            _SITE_PACKAGES[venv] = found
        return list(found)

    def mounts(self) -> list[Mount]:
        return [Mount(self.venv, str(self.venv))]

    def path_var(self) -> str:
        return f"{self.venv}/bin:{SYSTEM_PATH}"

    def variables(self) -> dict[str, str]:
        """The environment variables of every sandbox that runs in this environment."""
        return {**self.spec.sandbox_env, "PATH": self.path_var()}

    def installed(self) -> dict[str, str]:
        """What the venv recorded when it was installed ({} if it was not)."""
        try:
            return json.loads((self.venv / MARKER).read_text())
        except (OSError, ValueError):
            return {}

    def missing(self, system: bool = True) -> list[str]:
        """What is not installed yet; empty when the environment is ready. `system=False`:
        the venv only (the Debian packages come from elsewhere, a container image)."""
        problems = []
        absent = missing_apt(self.spec.apt) if system else []
        if absent:
            problems.append(f"Debian packages not installed: {' '.join(absent)}")
        if not (self.venv / MARKER).is_file():
            problems.append(f"Python environment not created ({self.venv})")
        elif self.installed().get("digest") != self.spec.digest:
            problems.append("Python packages changed since install")
        return problems


def environments_dir(start: Path | None = None) -> Path:
    return project_root(start) / "environments"


def load(name: str, start: Path | None = None) -> Environment:
    path = environments_dir(start) / f"{name}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in environments_dir(start).glob("*.toml"))
        raise LastexamError(f"no environment named {name!r} (known: {', '.join(known)})", path=path)
    return Environment(spec=load_environment(path), source=path)


def load_all(start: Path | None = None) -> list[Environment]:
    return [load(p.stem, start) for p in sorted(environments_dir(start).glob("*.toml"))]


def install(env: Environment, *, log=print, force: bool = False) -> None:
    """Install from the environment's lock; from its toml, without hashes, when the lock is
    missing, stale or made for another Python."""
    os.umask(0o022)  # sandboxes run as another uid: what is installed must be world-readable
    state = locking.lock_state(env)
    if not force and _current(env, state):
        log("already installed")
        return
    # Another lastexam process (a second clone's install, a test run) may be building the same
    # venv: one at a time, and what it finished is not built again.
    with _exclusive(f"env-{env.name}.lock"):
        if not force and _current(env, state):
            log("installed meanwhile by another process")
            return
        _install_locked(env, state, log)


def _current(env: Environment, state: locking.LockState) -> bool:
    """Installed from this lock, and every locked package still there in its version (a venv
    whose files went, from a killed install or by hand, is built again)."""
    if env.missing() or env.installed().get("lock") != state.hash:
        return False
    try:
        return state.lock is None or not locking.python_drift(env, state.lock)
    except (OSError, ValueError, TypeError):  # a venv half removed under us: built again
        return False


def _install_locked(env: Environment, state: locking.LockState, log) -> None:
    apt_install(env.spec.apt, log)
    venv = env.venv
    if venv.exists():
        # A fresh venv, so that packages dropped from the environment are gone too.
        log(f"recreating {venv}")
        shutil.rmtree(venv)
    _SITE_PACKAGES.pop(venv, None)
    if not Path(BASE_PYTHON).exists():
        raise LastexamError(f"{BASE_PYTHON} is missing: apt-get install python3 python3-venv")
    log(f"creating {venv}")
    run_checked([BASE_PYTHON, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
    if state.lock:
        path = locking.lock_path(env)
        log(f"pip install from {path.name} ({len(state.lock.packages)} packages, hashes required)")
        run_checked([*pip, "--require-hashes", "--no-deps", "-r", str(path)])
    else:
        log(f"{state.problem}: installing from {env.source.name} without hashes "
            f"(to pin them: lastexam env lock {env.name})")
        run_checked([*pip, *env.spec.pip_all])
    (venv / MARKER).write_text(json.dumps({"name": env.name, "digest": env.spec.digest, "lock": state.hash}))


def apt_install(packages: list[str], log=print) -> None:
    """Install the Debian packages not installed yet (an environment's, or the harness's own
    such as socat for agent bridges), one lastexam process at a time."""
    absent = missing_apt(packages)
    if not absent:
        return
    if os.geteuid() != 0:
        raise LastexamError(f"installing Debian packages needs root: sudo apt-get install {' '.join(absent)}")
    with _apt_lock():
        absent = missing_apt(packages)
        if absent:
            _apt_update_once(log)
            log(f"apt-get install {' '.join(absent)}")
            try:
                run_checked(
                    ["apt-get", "install", "-y", "-q", "--no-install-recommends",
                     "-o", "DPkg::Lock::Timeout=600", *absent],
                    {**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                )
            except LastexamError:
                APT_UPDATE_STAMP.unlink(missing_ok=True)  # the next attempt updates the lists
                raise


@contextlib.contextmanager
def _exclusive(name: str):
    """Held by one lastexam process of the machine at a time (a file lock in the home's locks/)."""
    with open(home_subdir("locks") / name, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _apt_lock():
    """Serialises installs by concurrent lastexam processes (dpkg allows one at a time)."""
    return _exclusive("apt.lock")


def _apt_update_once(log, *, attempts: int = 10, pause_s: float = 15.0) -> None:
    """`apt-get update` unless the lists were updated less than APT_LISTS_FRESH_S ago (by this
    or scripts/apt-install.sh, which hold the same lock). Any error fails it, so the stamp
    means lists that are there; the lists' own lock, held by another updater (apt-daily), is
    waited for (DPkg::Lock::Timeout does not cover it)."""
    try:
        fresh = time.time() - APT_UPDATE_STAMP.stat().st_mtime < APT_LISTS_FRESH_S
    except OSError:
        fresh = False
    if fresh:
        return
    log("apt-get update")
    for attempt in range(1, attempts + 1):
        try:
            run_checked(["apt-get", "update", "-q", "-o", "APT::Update::Error-Mode=any"],
                        {**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
            break
        except LastexamError as e:
            if attempt == attempts or "Could not get lock" not in str(e):
                raise
            time.sleep(pause_s)
    APT_UPDATE_STAMP.touch()


def fingerprint(env: Environment) -> dict[str, str]:
    """Versions of the declared software, from the commands the environment file names."""
    out: dict[str, str] = {}
    for software, command in env.spec.versions.items():
        try:
            proc = subprocess.run(
                ["/bin/sh", "-c", command],
                capture_output=True,
                text=True,
                timeout=60,
                env={**os.environ, **env.variables(), "HOME": "/tmp"},
            )
            text = (proc.stdout or proc.stderr).strip().splitlines()
            out[software] = text[0][:200] if text else f"exit {proc.returncode}"
        except (OSError, subprocess.TimeoutExpired) as e:
            out[software] = f"unavailable: {e}"
    out["python-packages-digest"] = env.spec.digest
    lock = env.installed().get("lock")
    out["lock"] = (f"{locking.lock_path(env).name} sha256:{lock}" if lock
                   else "none: installed from the environment file without hashes")
    out["variables"] = " ".join(f"{k}={v}" for k, v in sorted(env.spec.sandbox_env.items()))
    return out
