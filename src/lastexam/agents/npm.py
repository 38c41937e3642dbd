"""Agent toolchains installed from npm at pinned versions, seen read-only in sandboxes.

LASTEXAM_HOME/agents/<name>/<version>/
    node_modules/...      the package and its dependencies (npm install --prefix)
    lastexam-agent.json   written last: the install is complete
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lastexam.errors import LastexamError
from lastexam.paths import home_subdir

MARKER = "lastexam-agent.json"
STUB_BYTES = 64 * 1024  # a native binary is megabytes; a placeholder script is not
NODE = "/usr/bin/node"  # the sandbox sees the system's /usr only


@dataclass(frozen=True)
class NpmToolchain:
    agent: str  # the lastexam agent name
    package: str
    version: str
    bin: str  # path of the executable under node_modules/
    min_node: int = 20
    # A package's own postinstall script (under node_modules/) that puts a native binary in
    # place of a stub executable: run when npm skipped install scripts and the stub is left.
    place_binary: str | None = None

    @property
    def root(self) -> Path:
        return home_subdir("agents") / self.agent / self.version

    @property
    def executable(self) -> Path:
        return self.root / "node_modules" / self.bin

    def installed(self) -> bool:
        return (self.root / MARKER).is_file() and self.executable.exists()

    def missing(self) -> list[str]:
        problems = []
        major = node_major()
        if major is None:
            problems.append(f"{NODE} is missing (apt-get install nodejs, version {self.min_node}+)")
        elif major < self.min_node:
            problems.append(f"node {major} is too old for {self.package} (needs {self.min_node}+)")
        if not self.installed():
            problems.append(
                f"{self.package}@{self.version} is not installed: lastexam agents install {self.agent}"
            )
        return problems

    def install(self, log: Callable[[str], None] = print, force: bool = False) -> None:
        if not shutil.which("npm"):
            raise LastexamError("npm is not installed (apt-get install npm, or Node.js 20+)")
        os.umask(0o022)  # sandboxes run as another uid: the toolchain must be world-readable
        lock_path = home_subdir("locks") / f"agent-{self.agent}.lock"
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.installed() and not force:
                log(f"{self.package}@{self.version} already installed in {self.root}")
                return
            tmp = self.root.with_name(f".{self.version}.tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            log(f"npm install {self.package}@{self.version} into {self.root}")
            proc = subprocess.run(
                ["npm", "install", "--prefix", str(tmp), "--no-audit", "--no-fund",
                 "--omit=dev", "--loglevel=error", f"{self.package}@{self.version}"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                env={**install_env(), "npm_config_update_notifier": "false"},
            )
            if proc.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                raise LastexamError(f"npm install {self.package}@{self.version} failed:\n{proc.stdout[-3000:]}")
            exe = tmp / "node_modules" / self.bin
            if not exe.exists():
                raise LastexamError(f"{self.package}@{self.version} installed no {self.bin}")
            if self.place_binary and exe.stat().st_size < STUB_BYTES:
                script = tmp / "node_modules" / self.place_binary
                log(f"npm skipped install scripts: running {self.place_binary}")
                subprocess.run([NODE, str(script)], cwd=script.parent, check=False, env=install_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                if exe.stat().st_size < STUB_BYTES:
                    raise LastexamError(f"{self.bin} is still a stub after {self.place_binary}")
            (tmp / MARKER).write_text(json.dumps({"package": self.package, "version": self.version}))
            _world_readable(tmp)
            shutil.rmtree(self.root, ignore_errors=True)
            os.replace(tmp, self.root)
            log(f"installed {self.package}@{self.version}")


def install_env() -> dict[str, str]:
    """The environment of an install step: this process's, without the model providers' keys,
    which the install scripts of a harness's packages have no business reading."""
    from lastexam.gateway.providers import PROVIDERS

    keys = {p.key_env for p in PROVIDERS.values() if p.key_env}
    return {k: v for k, v in os.environ.items() if k not in keys}


def node_major() -> int | None:
    if not Path(NODE).exists():
        return None
    try:
        out = subprocess.run([NODE, "--version"], capture_output=True, text=True, timeout=20)
        return int(out.stdout.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def _world_readable(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, os.stat(dirpath).st_mode | 0o755)
        for name in files:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o444)
