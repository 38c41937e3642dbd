"""The container engine the container provider drives: Podman, or Docker when only Docker
is installed (and its daemon answers). Rootless when the harness is not root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# Where Podman's packages put the default seccomp profile the sandbox's profile starts from.
DEFAULT_SECCOMP = Path("/usr/share/containers/seccomp.json")
CLONE_NEWUSER = 0x10000000
EOPNOTSUPP = 95
# Refused with EOPNOTSUPP as in the bubblewrap sandbox (sandbox/seccomp.py says why).
REFUSED = ("fallocate", "io_uring_setup")
# Taken out of the default profile's allowances: clone3 then fails with ENOSYS (its flags
# cannot be filtered; glibc falls back to clone), clone and unshare are allowed back without
# CLONE_NEWUSER (no nested user namespaces, like bwrap's --disable-userns).
WITHDRAWN = (*REFUSED, "io_uring_enter", "io_uring_register", "clone", "clone3", "unshare")


@dataclass(frozen=True)
class Engine:
    name: str  # "podman" or "docker"
    binary: str

    def cmd(self, *args: str) -> list[str]:
        return [self.binary, *args]

    def call(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(self.cmd(*args), capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def image_exists(self, tag: str) -> bool:
        return self.call("image", "inspect", "--format", "{{.Id}}", tag).returncode == 0

    def version(self) -> str:
        proc = self.call("version", "--format", "{{.Client.Version}}")
        return f"{self.name} {proc.stdout.strip() or 'unknown'}"


@cache
def detect() -> Engine | None:
    """Podman when installed; else Docker when its daemon answers; else None."""
    if podman := shutil.which("podman"):
        return Engine("podman", podman)
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "info"], capture_output=True, timeout=30,
                                 stdin=subprocess.DEVNULL).returncode == 0:
        return Engine("docker", docker)
    return None


def missing_engine() -> str:
    return ("no container engine: install Podman (apt-get install podman), or Docker with its "
            "daemon running")


def rootless() -> bool:
    return os.geteuid() != 0


def seccomp_profile(default: Path = DEFAULT_SECCOMP) -> dict:
    """The engine's default profile with fallocate and io_uring refused and no new user
    namespaces. Raises OSError or ValueError when the default profile is missing or not one."""
    profile = json.loads(default.read_text())
    if not isinstance(profile.get("syscalls"), list):
        raise ValueError(f"{default} has no syscalls list")
    rules = []
    for rule in profile["syscalls"]:
        names = [n for n in rule.get("names", []) if n not in WITHDRAWN]
        if names:
            rules.append({**rule, "names": names})
    no_userns = {"index": 0, "value": CLONE_NEWUSER, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}
    rules += [
        {"names": list(REFUSED), "action": "SCMP_ACT_ERRNO", "errnoRet": EOPNOTSUPP},
        {"names": ["unshare"], "action": "SCMP_ACT_ALLOW", "args": [no_userns]},
        # s390 passes clone's flags second: there the rule is on index 1.
        {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "args": [no_userns],
         "excludes": {"arches": ["s390", "s390x"]}},
        {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "args": [{**no_userns, "index": 1}],
         "includes": {"arches": ["s390", "s390x"]}},
    ]
    return {**profile, "syscalls": rules}
