"""environments/<name>.lock.txt: a pip requirements file that pins every Python package of an
environment with its hash, so that `pip install --require-hashes --no-deps -r` installs it,
and records in `# key: value` comments what pip does not read: the digest of the package
lists it was made from, the Python it was made for and the Debian package versions."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from lastexam.errors import LastexamError

PACKAGE_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) --hash=sha256:([0-9a-f]{64})$")
META_LINE = re.compile(r"^# (source|python|apt): (.+)$")


class LockedPackage(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str  # normalised as in PEP 503
    version: str
    sha256: str


class EnvironmentLock(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    source: str  # EnvironmentSpec.package_digest at lock time
    python: str  # "3.11 x86_64": the interpreter version and machine the wheels are for
    apt: dict[str, str]  # Debian package -> version
    packages: list[LockedPackage]


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def file_hash(path: Path) -> str:
    """What a trial's fingerprint and an installed venv record of the lock."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def render(lock: EnvironmentLock) -> str:
    lines = [
        f"# Lock of environments/{lock.name}.toml. Regenerate: lastexam env lock {lock.name}",
        f"# Install: lastexam env install {lock.name} (pip install --require-hashes --no-deps -r)",
        f"# source: {lock.source}",
        f"# python: {lock.python}",
        *(f"# apt: {pkg} {version}" for pkg, version in sorted(lock.apt.items())),
        *(f"{p.name}=={p.version} --hash=sha256:{p.sha256}"
          for p in sorted(lock.packages, key=lambda p: p.name)),
    ]
    return "\n".join(lines) + "\n"


def parse(path: Path, name: str) -> EnvironmentLock:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LastexamError(f"cannot read the lock: {e}", path=path) from None
    meta: dict[str, str] = {}
    apt: dict[str, str] = {}
    packages: list[LockedPackage] = []
    for number, line in enumerate(text.splitlines(), 1):
        if m := META_LINE.match(line):
            key, value = m.groups()
            if key == "apt":
                pkg, _, version = value.partition(" ")
                apt[pkg] = version.strip()
            else:
                meta[key] = value.strip()
        elif m := PACKAGE_LINE.match(line.strip()):
            packages.append(LockedPackage(name=normalise(m[1]), version=m[2], sha256=m[3]))
        elif line.strip() and not line.startswith("#"):
            raise LastexamError(
                f"line {number} is not `name==version --hash=sha256:<64 hex>`: {line[:80]!r}",
                path=path,
            )
    for key in ("source", "python"):
        if key not in meta:
            raise LastexamError(f"no `# {key}: ...` line", path=path)
    return EnvironmentLock(name=name, source=meta["source"], python=meta["python"], apt=apt,
                           packages=packages)
