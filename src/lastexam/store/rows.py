"""TrialRow: the flat view of a trial that metrics work on, loaded straight from the store's
columns so that summarising 100,000 trials does not parse 100,000 JSON records into models."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lastexam.errors import LastexamError
from lastexam.store.db import Store


@dataclass(frozen=True, slots=True)
class TrialRow:
    trial_id: str
    task_id: str
    agent: str
    model: str
    attempt: int
    tier: str
    cluster: str
    subdomain: str
    status: str
    score: float | None
    full_pass: bool
    ended_by: str = "exit"
    cost_usd: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    model_calls: int = 0
    duration_s: float = 0.0
    gates_failed: int = 0
    checks_total: int = 0
    checks_passed: int = 0
    missing_outputs: int = 0
    used_software: bool | None = None  # every declared software seen in the exec log
    script_share: float | None = None  # share of execs that were ad hoc interpreter runs
    counts: bool = True  # the error policy: the score counts toward FPR and MS
    grader_version: str = ""
    gui_use: str | None = None  # a GUI trial's use of its declared app; None: not a GUI trial
    visibility: str = "public"  # private: a sealed task not yet released on the run's day
    run: str = ""  # the run directory the row came from, when several are combined

    @property
    def cell(self) -> str:
        """The agent x model cell of the row."""
        return f"{self.agent} / {self.model}" if self.model else self.agent


ROWS_SQL = """
SELECT t.trial_id, t.task_id, t.agent, t.model, t.attempt, t.tier, t.cluster, t.subdomain,
       t.status, t.score, t.full_pass, t.ended_by, t.cost_usd, t.input_tokens, t.output_tokens,
       t.cache_read_tokens, t.cache_write_tokens, t.model_calls, t.agent_s,
       COALESCE(g.gates_failed, 0), COALESCE(g.checks_total, 0), COALESCE(g.checks_passed, 0),
       t.missing_outputs, t.used_software, t.script_share, t.counts,
       COALESCE(g.grader_version, ''), t.gui_use, t.visibility
FROM trials t LEFT JOIN grades g ON g.grade_id = t.grade_id
ORDER BY t.rowid
"""


def load_rows(store: Store, run: str = "") -> list[TrialRow]:
    """The store's trials as rows, in the order they were recorded."""
    # ROWS_SQL selects TrialRow's fields in declaration order, `run` last.
    rows = []
    for r in store.conn.execute(ROWS_SQL):
        rows.append(TrialRow(*r[:10], bool(r[10]), r[11] or "exit", *r[12:23],
                             None if r[23] is None else bool(r[23]), r[24], bool(r[25]), r[26], r[27],
                             r[28], run))
    return rows


def rows_of(run_dirs: list[Path]) -> list[TrialRow]:
    """The rows of one or more run directories, each tagged with its directory's name."""
    rows: list[TrialRow] = []
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise LastexamError("no such run directory", path=run_dir)
        store = Store(run_dir)
        try:
            rows.extend(load_rows(store, run=run_dir.name))
        finally:
            store.close()
    return rows
