"""task.toml as a data model. Pure: no I/O beyond what pydantic validation needs."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lastexam.desktop.spec import DesktopSpec
from lastexam.taxonomy import load_taxonomy

Tier = Literal["near-term", "full-spectrum", "last-exam"]
TIERS: tuple[Tier, ...] = ("near-term", "full-spectrum", "last-exam")

MAX_TIMEOUT_S = 18_000  # the 5-hour cap of the benchmark
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
SOC = re.compile(r"^\d{2}-\d{4}\.\d{2}$")


class Limits(BaseModel):
    """Per-trial resource limits; the defaults suit desktop-class professional software."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(4096, ge=64, le=65536)
    cpus: int = Field(1, ge=1, le=256)  # what a trial asks a cluster's scheduler for (--backend ray)
    max_processes: int = Field(512, ge=8, le=65536)
    output_mb: int = Field(1024, ge=1, le=65536)
    grader_timeout_s: int = Field(600, ge=5, le=3600)
    grader_memory_mb: int = Field(4096, ge=64, le=65536)


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    title: str = Field(min_length=3, max_length=200)
    summary: str = Field(min_length=10, max_length=2000)
    cluster: str
    subdomain: str
    soc: list[str] = Field(min_length=1)
    tier: Tier
    # Why this tier: what makes the task hard for an expert, or what keeps it in reach.
    tier_rationale: str = Field("", max_length=1000)
    software: list[str] = Field(min_length=1)
    environment: str
    gui: bool = False
    desktop: DesktopSpec | None = None  # the [desktop] table: screen size, apps (needs gui)
    timeout_s: int = Field(7200, ge=10, le=MAX_TIMEOUT_S)
    outputs: list[str] = Field(min_length=1)
    canary: str
    limits: Limits = Limits()

    @field_validator("id", "environment")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not SLUG.match(v):
            raise ValueError("must be lowercase letters, digits and '-' (2 to 63 characters)")
        return v

    @field_validator("soc")
    @classmethod
    def _soc(cls, v: list[str]) -> list[str]:
        bad = [c for c in v if not SOC.match(c)]
        if bad:
            raise ValueError(f"not O*NET-SOC codes (NN-NNNN.NN): {bad}")
        return v

    @field_validator("outputs")
    @classmethod
    def _outputs(cls, v: list[str]) -> list[str]:
        for p in v:
            parts = p.split("/")
            if p.startswith("/") or ".." in parts or "" in parts or p.strip() != p:
                raise ValueError(f"output path {p!r} must be relative to /task/output, without '..'")
        if len(set(v)) != len(v):
            raise ValueError("output paths repeat")
        return v

    @field_validator("canary")
    @classmethod
    def _canary(cls, v: str) -> str:
        # the 8-4-4-4-12 form only: the one `lastexam canary scan` finds (pool/canary.py)
        if not GUID.match(v):
            raise ValueError("must be a GUID such as 3f2b9c1e-8d4a-4f6b-9c2e-1a7d5e0b4c93")
        return v

    @field_validator("cluster")
    @classmethod
    def _cluster(cls, v: str) -> str:
        if load_taxonomy().cluster(v) is None:
            known = ", ".join(c.id for c in load_taxonomy().clusters)
            raise ValueError(f"unknown cluster {v!r}; known: {known}")
        return v

    @model_validator(mode="after")
    def _desktop_needs_gui(self) -> TaskSpec:
        if self.desktop is not None and not self.gui:
            raise ValueError("field 'desktop': a [desktop] table needs gui = true")
        return self

    @model_validator(mode="after")
    def _subdomain_in_cluster(self) -> TaskSpec:
        sub = load_taxonomy().subdomain(self.subdomain)
        cluster = load_taxonomy().cluster(self.cluster)
        if sub is None or sub.cluster != self.cluster:
            known = ", ".join(s.id for s in cluster.subdomains) if cluster else ""
            raise ValueError(
                f"field 'subdomain': {self.subdomain!r} is not a subdomain of cluster "
                f"{self.cluster!r}; known: {known}"
            )
        return self
