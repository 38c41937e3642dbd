"""environments/<name>.toml as a data model."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lastexam.config_file import load_model
from lastexam.errors import LastexamError

APT_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Set by the harness in every sandbox: an environment file may not change them.
HARNESS_VARS = frozenset({"PATH", "HOME", "USER", "TMPDIR", "LANG", "PYTHONPATH", "PYTHONHASHSEED",
                          "PYTHONDONTWRITEBYTECODE"})
HARNESS_VAR_PREFIXES = ("LASTEXAM_", "LD_")
# Every environment's venv gets these: the grading library's XLSX and PDF loaders use them.
GRADING_PIP = ("openpyxl>=3.1,<4", "pypdf>=4,<6")
# Where an environment sets no thread count of its own: OpenMP and OpenBLAS otherwise start one
# thread per CPU, so a grader's, generator's or oracle's figures could depend on the machine.
THREAD_PINS = {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}


class EnvironmentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = Field(min_length=3)
    apt: list[str] = []
    pip: list[str] = []
    # software name -> shell command that prints its version (the environment fingerprint)
    versions: dict[str, str] = {}
    # variables set in every sandbox of the environment (agent, grader, generator)
    env: dict[str, str] = {}

    @field_validator("apt")
    @classmethod
    def _apt(cls, v: list[str]) -> list[str]:
        bad = [p for p in v if not APT_NAME.match(p)]
        if bad:
            raise ValueError(f"not Debian package names: {bad}")
        return v

    @field_validator("env")
    @classmethod
    def _env(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k in v if not VAR_NAME.match(k)]
        if bad:
            raise ValueError(f"not environment variable names: {bad}")
        reserved = [k for k in v if k in HARNESS_VARS or k.startswith(HARNESS_VAR_PREFIXES)]
        if reserved:
            raise ValueError(f"set by the harness, not by an environment: {reserved}")
        return v

    @property
    def sandbox_env(self) -> dict[str, str]:
        """The variables of every sandbox of the environment: `env` over the thread pins."""
        return {**THREAD_PINS, **self.env}

    @property
    def pip_all(self) -> list[str]:
        return [*GRADING_PIP, *self.pip]

    @property
    def digest(self) -> str:
        """Changes when what the venv must contain changes (apt is checked with dpkg)."""
        return hashlib.sha256("\n".join(self.pip_all).encode()).hexdigest()[:16]

    @property
    def package_digest(self) -> str:
        """The package lists a lock was made from: a lock recording another is stale."""
        lists = {"apt": sorted(self.apt), "pip": sorted(self.pip_all)}
        return hashlib.sha256(json.dumps(lists).encode()).hexdigest()[:16]


def load_environment(path: Path) -> EnvironmentSpec:
    spec = load_model(path, EnvironmentSpec, what="environment file")
    if spec.name != path.stem:
        raise LastexamError(f"name {spec.name!r} must equal the file name {path.stem!r}", path=path, field="name")
    return spec
