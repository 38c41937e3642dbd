"""pool.toml as a data model: a sealed pool's public face. Each task's card is in clear; the
task itself is in its bundle folder, encrypted (pool/bundle.py)."""

from __future__ import annotations

import datetime as dt
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lastexam.task.spec import SLUG, Tier

POOL_FILE = "pool.toml"
POOL_FORMAT = 1
HEX64 = re.compile(r"^[0-9a-f]{64}$")
RECIPIENT = re.compile(r"^age1[0-9a-z]{58}$")

# The parts of a bundle, each its own age file in the bundle folder: the spec, what the agent
# is given (instruction.md, inputs/), and what only grading and validation see (the rest).
PARTS = ("spec", "agent", "hidden")
PART_FILES = {"spec": "task.toml.age", "agent": "agent.tar.age", "hidden": "hidden.tar.age"}


class TaskCard(BaseModel):
    """What anyone may know of a sealed task: enough to plan, price and report a run, and to
    check a bundle before decrypting it, nothing of its instruction or reference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    cluster: str
    subdomain: str
    tier: Tier
    software: list[str]
    environment: str
    timeout_s: int
    gui: bool = False
    probes: bool = False  # the grader asks model probes: a run needs a probe model
    canary: str
    release_date: dt.date  # due for `lastexam pool release` on and after this day
    content_hash: str  # lastexam.task.load.tree_hash of the task folder before sealing
    grader_version: str  # Task.grader_hash: grader.py and reference/
    bundle: dict[str, str]  # part -> sha256 of its age file

    @field_validator("id", "environment")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not SLUG.match(v):
            raise ValueError("must be lowercase letters, digits and '-' (2 to 63 characters)")
        return v

    @field_validator("content_hash", "grader_version")
    @classmethod
    def _hex(cls, v: str) -> str:
        if not HEX64.match(v):
            raise ValueError("must be 64 lowercase hex digits (sha256)")
        return v

    @model_validator(mode="after")
    def _parts(self) -> TaskCard:
        if set(self.bundle) != set(PARTS) or not all(HEX64.match(h) for h in self.bundle.values()):
            raise ValueError(f"field 'bundle': needs the sha256 of each of {', '.join(PARTS)}")
        return self

    def is_private_on(self, day: dt.date) -> bool:
        return day < self.release_date


def utc_day(stamp: str | None = None) -> dt.date:
    """The UTC day of an ISO time (a run's created_at), or today's: the day a run's
    visibility is decided on, the same on every machine."""
    if stamp is None:
        return dt.datetime.now(dt.UTC).date()
    return dt.datetime.fromisoformat(stamp).astimezone(dt.UTC).date()


class PoolManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: int = Field(POOL_FORMAT, ge=1, le=POOL_FORMAT)
    recipients: list[str] = Field(min_length=1)  # who can open the bundles (and sealed results)
    task: list[TaskCard] = []

    @field_validator("recipients")
    @classmethod
    def _recipients(cls, v: list[str]) -> list[str]:
        bad = [r for r in v if not RECIPIENT.match(r)]
        if bad:
            raise ValueError(f"not age X25519 recipients (age1...): {bad}")
        return v

    @model_validator(mode="after")
    def _unique(self) -> PoolManifest:
        for field in ("id", "canary"):
            seen: set[str] = set()
            for card in self.task:
                value = getattr(card, field).lower()  # a GUID in any letter case is one GUID
                if value in seen:
                    raise ValueError(f"two tasks share the {field} {value!r}")
                seen.add(value)
        return self
