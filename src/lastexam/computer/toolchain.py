"""The desktop toolchain: a venv of Debian's python3 with the computer-use MCP server and the
packages it needs (hash-pinned in requirements.lock.txt), installed by `lastexam agents
install` into desktop_toolchain_dir() and mounted read-only at /opt/desktop in desktop trials.

<LASTEXAM_HOME>/desktop/toolchain/
    bin/python3, lib/...      the venv (works at any mount point: nothing runs its scripts)
    bin/computer-mcp          the server's launcher: Contract B's start command
    share/computer_mcp.py     the server (a copy of computer_mcp.py beside this module)
    lastexam-toolchain.json   written last: the install is complete, and of which sources
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from lastexam.agents.npm import _world_readable
from lastexam.envs.locking import PYPI, _pip_env
from lastexam.envs.system import BASE_PYTHON, run_checked
from lastexam.errors import LastexamError
from lastexam.paths import desktop_toolchain_dir, home_subdir

SERVER_NAME = "computer"  # its name in `lastexam agents install` and `list`
HERE = Path(__file__).resolve().parent
SERVER = HERE / "computer_mcp.py"
LOCK = HERE / "requirements.lock.txt"
# The top-level packages; requirements.lock.txt pins them and what they need.
REQUIREMENTS = ("mcp==2.3.0", "pillow==13.0.0", "python-xlib==0.33")
MARKER = "lastexam-toolchain.json"
# -I: the agent sets this process's environment, so PYTHONPATH and the like are ignored.
LAUNCHER = """#!/bin/sh
# lastexam's computer-use MCP server (stdio), from the venv this script sits in.
root="$(cd "$(dirname "$0")/.." && pwd -P)"
exec "$root/bin/python3" -I "$root/share/computer_mcp.py"
"""
APT = ("xdotool",)  # the server's input tool


def digest() -> str:
    """What an install is of: the lock, the server and its launcher."""
    h = hashlib.sha256()
    for part in (LOCK.read_bytes(), SERVER.read_bytes(), LAUNCHER.encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


def locked_versions() -> dict[str, str]:
    out = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, rest = line.partition("==")
            out[name] = rest.split()[0]
    return out


def version() -> str:
    return f"mcp {locked_versions().get('mcp', '?')} ({digest()})"


def recorded() -> dict[str, str]:
    """The marker of the installed toolchain ({} when none is complete)."""
    try:
        data = json.loads((desktop_toolchain_dir() / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def installed() -> bool:
    root = desktop_toolchain_dir()
    return recorded().get("digest") == digest() and os.access(root / "bin" / "computer-mcp", os.X_OK)


def missing() -> list[str]:
    """What desktop trials lack to give agents the computer tools; empty when ready."""
    problems = [f"{p} is not installed (apt-get install {p})" for p in APT if not shutil.which(p)]
    if not installed():
        state = "is out of date" if recorded() else "is not installed"
        problems.append(f"the computer-use MCP server (desktop toolchain, {desktop_toolchain_dir()}) "
                        f"{state}: lastexam agents install computer")
    return problems


def install(log: Callable[[str], None] = print, force: bool = False) -> None:
    from lastexam.envs.manage import apt_install

    apt_install(list(APT), log)
    os.umask(0o022)  # sandboxes run as another uid: the toolchain must be world-readable
    home_subdir("desktop")  # world-traversable, as the sandbox's uid must pass it
    root = desktop_toolchain_dir()
    with open(home_subdir("locks") / "desktop-toolchain.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed() and not force:
            log(f"computer-use MCP server already installed in {root}")
            return
        tmp = root.with_name(f".{root.name}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        log(f"creating the desktop toolchain in {root} ({len(locked_versions())} packages, hashes required)")
        run_checked([BASE_PYTHON, "-m", "venv", str(tmp)])
        python = str(tmp / "bin" / "python3")
        run_checked([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                     "--require-hashes", "--no-deps", "-r", str(LOCK)])
        (tmp / "share").mkdir(exist_ok=True)
        shutil.copyfile(SERVER, tmp / "share" / "computer_mcp.py")
        launcher = tmp / "bin" / "computer-mcp"
        launcher.write_text(LAUNCHER)
        launcher.chmod(0o755)
        # The server must at least import here: a broken wheel fails the install, not a trial.
        check = subprocess.run([str(launcher)], input="", capture_output=True, text=True,
                               timeout=120, env={"PATH": "/usr/bin:/bin", "DISPLAY": ":lastexam-none"})
        if check.returncode != 0:
            raise LastexamError(f"the computer-use MCP server does not start:\n{check.stderr[-2000:]}")
        (tmp / MARKER).write_text(json.dumps({"digest": digest(), "packages": locked_versions()}))
        _world_readable(tmp)
        shutil.rmtree(root, ignore_errors=True)
        os.replace(tmp, root)
        log(f"installed the computer-use MCP server: {root / 'bin' / 'computer-mcp'}")


def make_lock(index_url: str = PYPI) -> str:
    """requirements.lock.txt resolved by pip for BASE_PYTHON (run on a change of REQUIREMENTS)."""
    with tempfile.TemporaryDirectory(prefix="lastexam-lock-") as tmp:
        venv, report = Path(tmp) / "venv", Path(tmp) / "report.json"
        run_checked([BASE_PYTHON, "-m", "venv", str(venv)])
        run_checked([str(venv / "bin" / "python3"), "-m", "pip", "install", "--dry-run",
                     "--ignore-installed", "--quiet", "--report", str(report),
                     "--index-url", index_url, *REQUIREMENTS], _pip_env())
        resolved = json.loads(report.read_text())["install"]
    lines = ["# The desktop toolchain (computer-use MCP server), for Debian's python3.",
             "# Regenerate: python -m lastexam.computer.toolchain > src/lastexam/computer/requirements.lock.txt"]
    for item in sorted(resolved, key=lambda i: i["metadata"]["name"].lower()):
        sha = item.get("download_info", {}).get("archive_info", {}).get("hashes", {}).get("sha256")
        if not sha:
            raise LastexamError(f"pip resolved {item['metadata']['name']} without a hash")
        lines.append(f"{item['metadata']['name']}=={item['metadata']['version']} --hash=sha256:{sha}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(make_lock())
