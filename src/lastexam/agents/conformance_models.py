"""What `lastexam agents check` reports: one row per conformance check, and the whole."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class CheckRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    check: str
    ok: bool
    detail: str


class ConformanceReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str
    version: str
    wire: str | None
    task: str
    run_dirs: list[str]  # the solving run, then the budget run
    checks: list[CheckRow]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)
