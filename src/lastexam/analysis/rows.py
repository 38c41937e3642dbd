"""TrialRow: the flat view of a trial that metrics work on, loaded straight from SQLite so
that summarising 100,000 trials does not parse 100,000 JSON records into models."""

from __future__ import annotations

from dataclasses import dataclass

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
    run: str = ""  # the run directory the row came from, when several are combined

    @property
    def cell(self) -> str:
        """The agent x model cell of the row."""
        return f"{self.agent} / {self.model}" if self.model else self.agent


ROWS_SQL = """
SELECT t.trial_id, t.task_id, t.agent, t.model, t.attempt, t.tier, t.cluster, t.subdomain,
       t.status, t.score, t.full_pass,
       json_extract(t.record_json, '$.ended_by'),
       json_extract(t.record_json, '$.gateway.cost_usd'),
       COALESCE(json_extract(t.record_json, '$.gateway.usage.input_tokens'), 0),
       COALESCE(json_extract(t.record_json, '$.gateway.usage.output_tokens'), 0),
       COALESCE(json_extract(t.record_json, '$.gateway.usage.cache_read_tokens'), 0),
       COALESCE(json_extract(t.record_json, '$.gateway.usage.cache_write_tokens'), 0),
       COALESCE(json_extract(t.record_json, '$.gateway.model_calls'), 0),
       COALESCE(json_extract(t.record_json, '$.timings.agent'), 0),
       COALESCE(c.gates_failed, 0), COALESCE(c.total, 0), COALESCE(c.passed, 0),
       COALESCE(json_array_length(t.record_json, '$.missing_outputs'), 0),
       json_extract(t.record_json, '$.usage.used_declared'),
       json_extract(t.record_json, '$.usage.script_share')
FROM trials t
LEFT JOIN (
    SELECT g.trial_id,
           SUM(ch.gate AND NOT ch.passed) AS gates_failed,
           SUM(NOT ch.gate) AS total,
           SUM(NOT ch.gate AND ch.passed) AS passed
    FROM grades g JOIN checks ch ON ch.grade_id = g.grade_id
    WHERE g.grade_id = (SELECT MAX(grade_id) FROM grades WHERE trial_id = g.trial_id)
    GROUP BY g.trial_id
) c ON c.trial_id = t.trial_id
ORDER BY t.rowid
"""


def load_rows(store: Store, run: str = "") -> list[TrialRow]:
    return [
        TrialRow(
            trial_id=r[0], task_id=r[1], agent=r[2], model=r[3], attempt=r[4], tier=r[5],
            cluster=r[6], subdomain=r[7], status=r[8], score=r[9], full_pass=bool(r[10]),
            ended_by=r[11] or "exit", cost_usd=r[12], input_tokens=r[13], output_tokens=r[14],
            cache_read_tokens=r[15], cache_write_tokens=r[16], model_calls=r[17],
            duration_s=float(r[18]), gates_failed=int(r[19]), checks_total=int(r[20]),
            checks_passed=int(r[21]), missing_outputs=int(r[22]),
            used_software=None if r[23] is None else bool(r[23]), script_share=r[24], run=run,
        )
        for r in store.conn.execute(ROWS_SQL)
    ]
