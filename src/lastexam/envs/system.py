"""What the machine has: Debian package versions (dpkg) and the Python that venvs are made from."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from lastexam.errors import LastexamError

BASE_PYTHON = "/usr/bin/python3"  # Debian's: inside the sandbox, host-only Pythons are unseen
BASE_PYTHON_PACKAGE = "python3"  # the Debian package it comes from, recorded in every lock
# Touched after each `apt-get update` by lastexam and scripts/apt-install.sh: lists updated less
# than APT_LISTS_FRESH_S ago are not updated again (CI updates them once).
APT_UPDATE_STAMP = Path("/var/lib/apt/lists/lastexam-updated")
APT_LISTS_FRESH_S = 3600


def installed_versions(packages: list[str]) -> dict[str, str]:
    """Debian package -> installed version, for those of `packages` that are installed."""
    if not packages or not shutil.which("dpkg-query"):
        return {}
    proc = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${Version}\t${db:Status-Status}\n", *packages],
        capture_output=True,
        text=True,
    )
    versions = {}
    for line in proc.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[2] == "installed":
            versions[parts[0]] = parts[1]
    return versions


def missing_apt(packages: list[str]) -> list[str]:
    installed = installed_versions(packages)
    return [p for p in packages if p not in installed]


def python_tag(python: str = BASE_PYTHON) -> str:
    """'3.11 x86_64': what decides which wheels a lock may hold."""
    try:
        proc = subprocess.run(
            [python, "-c", "import sys, platform; print(*sys.version_info[:2], platform.machine())"],
            capture_output=True, text=True, timeout=60,
        )
    except OSError:
        return "unavailable"
    major, minor, machine = [*proc.stdout.split(), "?", "?", "?"][:3]
    return f"{major}.{minor} {machine}"


def run_checked(argv: list[str], env: dict[str, str] | None = None) -> None:
    """Run an install or lock step (`env`: its whole environment; default, this process's);
    a LastexamError with the end of its output when it fails."""
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise LastexamError(f"`{' '.join(argv[:6])} ...` failed:\n{proc.stdout[-3000:]}")
