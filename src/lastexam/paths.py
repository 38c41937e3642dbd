"""Where lastexam keeps things on this machine, and where the project's folders are.

LASTEXAM_HOME (default /var/lib/lastexam as root, else ~/.local/share/lastexam):
    envs/<name>/          one Python venv per environment, seen read-only in sandboxes
    agents/<name>/<ver>/  agent toolchains installed from npm, seen read-only in sandboxes
    desktop/toolchain/    the computer-use toolchain (a venv), seen read-only at /opt/desktop
    work/<run-id>/        trial workspaces while a run is under way (removed after)

Sandboxes run as an unprivileged uid, so these folders must be reachable by it: they sit
outside any home directory and are created world-traversable.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path


def lastexam_home() -> Path:
    if env := os.environ.get("LASTEXAM_HOME"):
        return Path(env).resolve()
    if os.geteuid() == 0:
        return Path("/var/lib/lastexam")
    return Path.home() / ".local" / "share" / "lastexam"


_SUBDIRS: dict[tuple[str | None, str | None, int, str], Path] = {}


def home_subdir(name: str) -> Path:
    """LASTEXAM_HOME/name, made and traversable by others (the sandbox's uid passes it)."""
    # A trial asks for these dozens of times: the folder made once is remembered for as long
    # as it exists (one stat instead of a resolve, a mkdir and two stats).
    raw = os.environ.get("LASTEXAM_HOME")
    # A relative LASTEXAM_HOME resolves against the current folder, which may change.
    key = (raw, os.environ.get("HOME"), os.geteuid(), name) if not raw or os.path.isabs(raw) else None
    if key is not None and (known := _SUBDIRS.get(key)) is not None and os.path.isdir(known):
        return known
    path = lastexam_home() / name
    path.mkdir(parents=True, exist_ok=True)
    for p in (lastexam_home(), path):
        if p.stat().st_mode & 0o011 != 0o011:
            p.chmod(p.stat().st_mode | 0o011)
    if key is not None:
        _SUBDIRS[key] = path
    return path


def desktop_toolchain_dir() -> Path:
    """Where the computer-use toolchain is installed (not created here: it may be absent)."""
    return lastexam_home() / "desktop" / "toolchain"


def published_copy(src: Path, parent: Path) -> Path:
    """A world-readable copy of the regular files of src (the sandbox's uid cannot read a
    checkout under a private home) in parent/, named by its content so that runs never share
    a stale copy. .sh and .py files are executable."""
    files = sorted(p for p in src.iterdir() if p.is_file())
    digest = hashlib.sha256()
    for p in files:
        digest.update(p.name.encode() + b"\0" + p.read_bytes())
    dest = parent / digest.hexdigest()[:16]
    if not dest.is_dir():
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for p in files:
            shutil.copyfile(p, tmp / p.name)
            (tmp / p.name).chmod(0o755 if p.suffix in (".sh", ".py") else 0o644)
        tmp.chmod(0o755)
        tmp.parent.chmod(0o755)
        try:
            os.replace(tmp, dest)
        except OSError:  # another process installed the same content first
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def package_dir() -> Path:
    return Path(__file__).resolve().parent


def project_root(start: Path | None = None) -> Path:
    """The nearest folder, from `start` (or the working directory) upwards, that holds
    `environments/`; else the source checkout this package was installed from."""
    for base in [start, Path.cwd()]:
        if base is None:
            continue
        for p in [base.resolve(), *base.resolve().parents]:
            if (p / "environments").is_dir():
                return p
    return package_dir().parent.parent


def default_tasks_dir() -> Path:
    return project_root() / "tasks"
