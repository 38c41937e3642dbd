"""The part of Harbor's task.toml that lastexam writes and reads, as data models.

Harbor's own model (harbor.models.task.config.TaskConfig) has many more fields; these models
ignore what they do not name, as Harbor's does, so that any Harbor task.toml can be read.
What lastexam knows of the task it exported is kept under [metadata.lastexam]."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_WORKDIR = "/app"  # Terminal-Bench's usual WORKDIR, when a task names none
# The verifier's own folders, which the imported grader maps apart from the working folder.
VERIFIER_DIRS = ("/tests", "/logs")


def checked_workdir(path: str) -> str:
    """A task's working folder as the imported grader can map it (its instruction and tests
    name it): an absolute path, not the root, without `..`, apart from the verifier's folders."""
    p = PurePosixPath(path)
    if not p.is_absolute() or path.startswith("//") or ".." in p.parts or p == PurePosixPath("/"):
        raise ValueError(f"{path!r} is not an absolute folder below / without '..'")
    if any(p == PurePosixPath(d) or p.is_relative_to(d) for d in VERIFIER_DIRS):
        raise ValueError(f"{path!r} is inside the verifier's folders {', '.join(VERIFIER_DIRS)}")
    return str(p)


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class HarborPackage(_Loose):
    name: str | None = None
    description: str = ""
    keywords: list[str] = []


class HarborAgent(_Loose):
    timeout_sec: float | None = Field(None, gt=0, allow_inf_nan=False)


class HarborVerifier(_Loose):
    timeout_sec: float = Field(600.0, gt=0, allow_inf_nan=False)


class HarborEnvironment(_Loose):
    memory_mb: int | None = Field(None, gt=0)
    workdir: str | None = None
    docker_image: str | None = None

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, v: str | None) -> str | None:
        return None if v is None else checked_workdir(v)


class HarborTaskConfig(_Loose):
    task: HarborPackage | None = None
    metadata: dict[str, Any] = {}
    agent: HarborAgent = HarborAgent()
    verifier: HarborVerifier = HarborVerifier()
    environment: HarborEnvironment = HarborEnvironment()


class ExportedFrom(BaseModel):
    """[metadata.lastexam] of an exported task: the lastexam fields Harbor has no place for."""

    model_config = ConfigDict(extra="ignore")

    id: str
    title: str
    summary: str
    cluster: str
    subdomain: str
    soc: list[str]
    tier: str
    tier_rationale: str = ""
    software: list[str]
    environment: str
    outputs: list[str]
    gui: bool = False


class ImportedGrading(BaseModel):
    """reference/harbor.json of an imported task: what its grader needs to run the Harbor
    verifier in the grading sandbox."""

    model_config = ConfigDict(extra="forbid")

    canary: str
    source: str  # the Harbor task's name
    # Harbor container path -> "output" (the agent's deliverables) or "inputs" (pristine inputs)
    paths: dict[str, str]
    timeout_s: float
