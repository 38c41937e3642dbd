"""Agent toolchains installed from PyPI at pinned versions, seen read-only in sandboxes.

Each is a venv of Debian's python3 (the only Python the sandbox has), its dependencies held to
a lock (`locks/<agent>.txt`, a `pip freeze` of a fresh install):

LASTEXAM_HOME/agents/<name>/<version>/
    bin/python3, lib/...  the venv (works at any mount point); bin/ holds only its Pythons:
                          the console scripts, whose first lines name the install path, are
                          removed (a harness that puts its own bin/ first on its tools' PATH,
                          as Hermes Agent does, would give them the venv's python3)
    lastexam-agent.json   written last: the install is complete, and from which lock

In the sandbox the venv is at /opt/agent and the harness is started as its console script
would start it (`command`).
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
from dataclasses import dataclass
from pathlib import Path

from lastexam.agents.npm import MARKER, _world_readable, install_env
from lastexam.envs.system import BASE_PYTHON, python_tag, run_checked
from lastexam.errors import LastexamError
from lastexam.layout import AgentSandbox
from lastexam.paths import home_subdir

LOCKS = Path(__file__).resolve().parent / "locks"
PYTHON_TAG = "3.11 x86_64"  # what the locks were made for (Debian 12's python3)
LAYOUT = 2  # of an install; a change makes every install out of date


@dataclass(frozen=True)
class PypiToolchain:
    agent: str  # the lastexam agent name
    package: str  # the distribution's name on PyPI
    version: str
    entry: str  # `module:function` of the console script that starts the harness
    script: str  # that console script's name (the harness's argv[0])

    @property
    def root(self) -> Path:
        return home_subdir("agents") / self.agent / self.version

    @property
    def lock(self) -> Path:
        return LOCKS / f"{self.agent}.txt"

    def digest(self) -> str:
        """What an install is of: the pinned package and its lock."""
        lock = self.lock.read_bytes() if self.lock.is_file() else b""
        head = f"{self.package}=={self.version}\nlayout {LAYOUT}\n".encode()
        return hashlib.sha256(head + lock).hexdigest()[:16]

    def installed(self) -> bool:
        try:
            marker = json.loads((self.root / MARKER).read_text())
        except (OSError, ValueError):
            return False
        return (isinstance(marker, dict) and marker.get("digest") == self.digest()
                and (self.root / "bin" / "python3").exists())

    def missing(self) -> list[str]:
        problems = []
        tag = python_tag()
        if tag != PYTHON_TAG:
            problems.append(f"{BASE_PYTHON} is {tag}; the lock of {self.package} is for {PYTHON_TAG}")
        if not self.installed():
            state = "is out of date" if (self.root / MARKER).exists() else "is not installed"
            problems.append(f"{self.package}=={self.version} {state}: lastexam agents install {self.agent}")
        return problems

    def command(self, *args: str) -> list[str]:
        """The harness's command line inside the sandbox: its console script, run by the venv's
        python (the script itself names the host's install path)."""
        module, _, func = self.entry.partition(":")
        code = (f"import sys; from {module} import {func} as main; "
                f"sys.argv[0] = {self.script!r}; sys.exit(main())")
        return [f"{AgentSandbox.TOOLCHAIN}/bin/python3", "-c", code, *args]

    def install(self, log: Callable[[str], None] = print, force: bool = False) -> None:
        os.umask(0o022)  # sandboxes run as another uid: the toolchain must be world-readable
        lock_path = home_subdir("locks") / f"agent-{self.agent}.lock"
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.installed() and not force:
                log(f"{self.package}=={self.version} already installed in {self.root}")
                return
            tmp = self.root.with_name(f".{self.version}.tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            log(f"pip install {self.package}=={self.version} into {self.root}")
            run_checked([BASE_PYTHON, "-m", "venv", str(tmp)], env=install_env())
            python = str(tmp / "bin" / "python3")
            pins = ["-c", str(self.lock)] if self.lock.is_file() else []
            run_checked([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                         "--no-input", *pins, f"{self.package}=={self.version}"], env=install_env())
            module = self.entry.partition(":")[0]
            # The harness must at least import here: a broken install fails now, not a trial.
            check = subprocess.run([python, "-c", f"import {module}"], capture_output=True,
                                   text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp)})
            if check.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                raise LastexamError(f"{self.package}=={self.version} installed, but `import {module}` "
                                    f"fails:\n{check.stderr[-2000:]}")
            for entry in (tmp / "bin").iterdir():
                if entry.name.startswith("python"):
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            (tmp / MARKER).write_text(json.dumps({"package": self.package, "version": self.version,
                                                  "digest": self.digest()}))
            _world_readable(tmp)
            shutil.rmtree(self.root, ignore_errors=True)
            os.replace(tmp, self.root)
            log(f"installed {self.package}=={self.version}")


def freeze(toolchain: PypiToolchain) -> str:
    """A lock for `toolchain`: what pip installs for it today in a fresh venv of BASE_PYTHON."""
    with tempfile.TemporaryDirectory(prefix="lastexam-lock-") as tmp:
        run_checked([BASE_PYTHON, "-m", "venv", tmp], env=install_env())
        python = str(Path(tmp) / "bin" / "python3")
        run_checked([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                     f"{toolchain.package}=={toolchain.version}"], env=install_env())
        out = subprocess.run([python, "-m", "pip", "freeze", "--all", "--exclude", "pip"],
                             capture_output=True, text=True, check=True).stdout
    head = (f"# {toolchain.package}=={toolchain.version} and what it needs, for {PYTHON_TAG}.\n"
            f"# Regenerate: python -m lastexam.agents.pypi {toolchain.agent} > "
            f"src/lastexam/agents/locks/{toolchain.agent}.txt\n")
    return head + out


if __name__ == "__main__":
    from lastexam.agents import get_agent

    chain = getattr(get_agent(sys.argv[1]), "toolchain", None)
    if not isinstance(chain, PypiToolchain):
        sys.exit(f"{sys.argv[1]} is not installed from PyPI")
    sys.stdout.write(freeze(chain))
