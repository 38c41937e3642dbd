"""The results store: one SQLite file per run directory.

A trial is recorded in one transaction (trial row, its grade and checks): the commit is the
moment it becomes finished, so a run killed at any moment and resumed records it exactly once.

The row is the trial's truth. Its status, score, full pass and error-policy decision live in
columns that a regrade updates together with the new grade; `record_json` holds what never
changes after the run (timings, outputs, usage, repro...), and `trial.json` is rendered from
the row (store/files.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from lastexam.errors import LastexamError
from lastexam.layout import DB_NAME
from lastexam.store.migrate import MIGRATIONS, migrate
from lastexam.store.models import (
    SCHEMA_VERSION,
    CheckResult,
    GradeRecord,
    RunConfig,
    TrialRecord,
    TrialStatus,
)

# Fields of a trial record held in their own columns (or tables), not in record_json.
ROW_FIELDS = {"status", "score", "full_pass", "policy", "grade", "error"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config_json TEXT NOT NULL,
    harness_version TEXT NOT NULL,
    git_commit TEXT
);
CREATE TABLE IF NOT EXISTS trials (
    trial_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    task_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    cluster TEXT NOT NULL,
    subdomain TEXT NOT NULL,
    tier TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    full_pass INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    -- Copies of record fields that metrics read, so summaries need no JSON parsing.
    ended_by TEXT NOT NULL,
    agent_s REAL NOT NULL,
    cost_usd REAL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    model_calls INTEGER NOT NULL,
    missing_outputs INTEGER NOT NULL,
    used_software INTEGER,
    script_share REAL,
    counts INTEGER NOT NULL,  -- the error policy: does the score count toward the metrics
    grade_id INTEGER,  -- the current (newest) grade
    record_json TEXT NOT NULL,  -- the rest of the record, without status, score or policy
    policy_kind TEXT NOT NULL,  -- the error policy's kind of ending (run/policy.py)
    retries INTEGER NOT NULL,  -- retries the error policy made
    earlier_json TEXT NOT NULL,  -- the retried attempts: [{kind, error}]
    gui_use TEXT,  -- a GUI trial's use of its declared app (used, opened...); NULL: not a GUI trial
    visibility TEXT NOT NULL DEFAULT 'public',  -- private: a sealed task not released on the run's day
    UNIQUE (task_id, agent, model, attempt)
);
CREATE TABLE IF NOT EXISTS grades (
    grade_id INTEGER PRIMARY KEY AUTOINCREMENT,
    trial_id TEXT NOT NULL REFERENCES trials(trial_id),
    grader_version TEXT NOT NULL,
    ok INTEGER NOT NULL,
    score REAL,
    full_pass INTEGER NOT NULL,
    error TEXT,
    created_at TEXT NOT NULL,
    duration_s REAL NOT NULL,
    gates_failed INTEGER NOT NULL,
    checks_total INTEGER NOT NULL,
    checks_passed INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    grade_id INTEGER NOT NULL REFERENCES grades(grade_id),
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    weight REAL NOT NULL,
    gate INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    points REAL NOT NULL,
    message TEXT NOT NULL,
    evidence_json TEXT NOT NULL,
    PRIMARY KEY (grade_id, idx)
);
CREATE INDEX IF NOT EXISTS grades_by_trial ON grades (trial_id, grade_id);
"""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def create_store(
    run_dir: Path, run_id: str, config: RunConfig, harness_version: str, git_commit: str | None
) -> Store:
    """A new run's store, published whole: results.db appears with its schema and run row, or
    not at all (a run killed while creating it leaves nothing to resume)."""
    run_dir = Path(run_dir)
    final = run_dir / DB_NAME
    tmp = run_dir / f".{DB_NAME}.{run_id}.tmp"
    # Left by a creation killed midway (a live one holds such a file for milliseconds only).
    for stale in run_dir.glob(f".{DB_NAME}.*.tmp*"):
        stale.unlink(missing_ok=True)
    store = Store(run_dir, create=True, path=tmp)
    store.create_run(run_id, config, harness_version, git_commit)
    store.close()  # checkpoints the WAL into the file
    try:
        os.link(tmp, final)  # fails if another run took the directory meanwhile
    except FileExistsError:
        raise LastexamError(
            "this run directory already holds a run: pass --resume to finish it, or another --out",
            path=run_dir,
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
    return Store(run_dir)


class Store:
    def __init__(self, run_dir: Path, *, create: bool = False, path: Path | None = None):
        self.path = path or Path(run_dir) / DB_NAME
        if not create and not self.path.is_file():
            raise LastexamError("not a run directory (no results.db)", path=run_dir)
        self._lock = threading.Lock()
        try:
            self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA busy_timeout=10000")
            if create:
                self.conn.executescript(SCHEMA)
                self.conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
            version = self.schema_version()
            if version in MIGRATIONS:
                self._migrate(version)
                version = self.schema_version()
        except sqlite3.DatabaseError as e:
            raise LastexamError(f"results store is unreadable or corrupt: {e}", path=self.path) from None
        if version != SCHEMA_VERSION:
            raise LastexamError(f"results store schema {version} is not {SCHEMA_VERSION}", path=self.path)

    def _migrate(self, version: int) -> None:
        try:
            migrate(self, self.path.parent)
        except (sqlite3.DatabaseError, OSError, ValueError) as e:
            raise LastexamError(
                f"cannot migrate the results store from schema {version} to {SCHEMA_VERSION}"
                f" (the store is left as it was): {e}", path=self.path,
            ) from None

    def schema_version(self) -> int | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row and str(row[0]).isdigit() else None

    def close(self) -> None:
        self.conn.close()

    # runs -------------------------------------------------------------------------------
    def create_run(self, run_id: str, config: RunConfig, harness_version: str, git_commit: str | None) -> None:
        with self._lock:
            self.conn.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?)",
                (run_id, now_iso(), config.model_dump_json(), harness_version, git_commit),
            )

    def created_at(self) -> str | None:
        row = self.conn.execute("SELECT MIN(created_at) FROM runs").fetchone()
        return row[0] if row else None

    def run(self) -> tuple[str, RunConfig] | None:
        row = self.conn.execute(
            "SELECT run_id, config_json FROM runs ORDER BY created_at LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        return row[0], RunConfig.model_validate_json(row[1])

    # trials -----------------------------------------------------------------------------
    def finished_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT trial_id FROM trials")}

    def record_trial(self, record: TrialRecord) -> None:
        """Insert the trial and its grade in one transaction (the trial's commit point)."""
        if record.policy is None:
            raise ValueError(f"{record.trial_id}: recorded without the error policy's decision")
        g = record.gateway
        usage = g.usage if g else None
        used = record.usage.used_declared
        row = {
            "trial_id": record.trial_id, "run_id": record.run_id, "task_id": record.key.task_id,
            "agent": record.key.agent, "model": record.key.model, "attempt": record.key.attempt,
            "cluster": record.cluster, "subdomain": record.subdomain, "tier": record.tier,
            "status": record.status, "score": record.score, "full_pass": int(record.full_pass),
            "started_at": record.started_at, "finished_at": record.finished_at,
            "ended_by": record.ended_by, "agent_s": record.timings.agent or 0.0,
            "cost_usd": g.cost_usd if g else None,
            "input_tokens": usage.input_tokens if usage else 0,
            "output_tokens": usage.output_tokens if usage else 0,
            "cache_read_tokens": usage.cache_read_tokens if usage else 0,
            "cache_write_tokens": usage.cache_write_tokens if usage else 0,
            "model_calls": g.model_calls if g else 0,
            "missing_outputs": len(record.missing_outputs),
            "used_software": None if used is None else int(used),
            "script_share": record.usage.script_share,
            "counts": int(record.policy.counts), "grade_id": None,
            "record_json": json.dumps(record.model_dump(mode="json", exclude=ROW_FIELDS)),
            "policy_kind": record.policy.kind, "retries": record.policy.retries,
            "earlier_json": json.dumps([e.model_dump() for e in record.policy.earlier]),
            "gui_use": record.gui.state if record.gui else None,
            "visibility": record.visibility,
        }
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.execute(
                    f"INSERT INTO trials ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
                if record.grade is not None:
                    self._insert_grade(record.trial_id, record.grade)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def add_grade(self, trial_id: str, grade: GradeRecord, kind: str, status: TrialStatus,
                  counts: bool) -> None:
        """A regrade: keep the old grade, make this one the trial's current score, and record
        the error policy's new decision (kind, status, counts) with it, in one transaction."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self._insert_grade(trial_id, grade)
                self.conn.execute(
                    "UPDATE trials SET score=?, full_pass=?, status=?, counts=?, policy_kind=?"
                    " WHERE trial_id=?",
                    (grade.score if grade.ok else None, int(grade.ok and grade.full_pass), status,
                     int(counts), kind, trial_id),
                )
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def _insert_grade(self, trial_id: str, g: GradeRecord) -> None:
        weighted = [c for c in g.checks if not c.gate]
        cur = self.conn.execute(
            "INSERT INTO grades (trial_id, grader_version, ok, score, full_pass, error, created_at,"
            " duration_s, gates_failed, checks_total, checks_passed) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (trial_id, g.grader_version, int(g.ok), g.score, int(g.full_pass), g.error,
             g.created_at, g.duration_s, sum(1 for c in g.checks if c.gate and not c.passed),
             len(weighted), sum(1 for c in weighted if c.passed)),
        )
        self.conn.execute("UPDATE trials SET grade_id=? WHERE trial_id=?", (cur.lastrowid, trial_id))
        self.conn.executemany(
            "INSERT INTO checks VALUES (?,?,?,?,?,?,?,?,?)",
            [
                (cur.lastrowid, i, c.name, c.weight, int(c.gate), int(c.passed), c.points,
                 c.message, json.dumps(c.evidence))
                for i, c in enumerate(g.checks)
            ],
        )

    def trials(self, *, with_checks: bool = True, trial_id: str | None = None) -> Iterator[TrialRecord]:
        """Every trial (or the one named) as its row says: status, score and policy decision
        from the columns, with its newest grade."""
        where, args = ("WHERE trial_id = ?", (trial_id,)) if trial_id else ("", ())
        rows = self.conn.execute(
            "SELECT record_json, status, score, full_pass, counts, policy_kind, retries,"
            f" earlier_json FROM trials {where} ORDER BY rowid", args
        ).fetchall()
        grades = self._newest_grades(with_checks, trial_id)
        for body, status, score, full_pass, counts, kind, retries, earlier in rows:
            record = TrialRecord.model_validate({
                **json.loads(body), "status": status, "score": score, "full_pass": bool(full_pass),
                "policy": {"kind": kind, "counts": bool(counts), "retries": retries,
                           "earlier": json.loads(earlier)},
            })
            record.grade = grades.get(record.trial_id)
            yield record

    def _newest_grades(self, with_checks: bool, trial_id: str | None = None) -> dict[str, GradeRecord]:
        only = "AND t.trial_id = ?" if trial_id else ""
        args = (trial_id,) if trial_id else ()
        rows = self.conn.execute(
            "SELECT g.grade_id, g.trial_id, g.grader_version, g.ok, g.score, g.full_pass, g.error,"
            " g.created_at, g.duration_s FROM grades g JOIN trials t ON t.grade_id = g.grade_id"
            f" WHERE 1 {only}", args
        ).fetchall()
        checks: dict[int, list[CheckResult]] = {}
        if with_checks and rows:
            # The newest grades' checks only: a regraded trial's older checks stay unread.
            for gid, name, weight, gate, passed, points, message, ev in self.conn.execute(
                "SELECT c.grade_id, c.name, c.weight, c.gate, c.passed, c.points, c.message,"
                " c.evidence_json FROM checks c JOIN trials t ON t.grade_id = c.grade_id"
                f" WHERE 1 {only} ORDER BY c.grade_id, c.idx", args
            ):
                checks.setdefault(gid, []).append(
                    CheckResult(
                        name=name, weight=weight, gate=bool(gate), passed=bool(passed),
                        points=points, message=message, evidence=json.loads(ev),
                    )
                )
        return {
            trial_id: GradeRecord(
                grader_version=version, ok=bool(ok), score=score, full_pass=bool(fp),
                checks=checks.get(gid, []), error=error, created_at=created, duration_s=dur,
            )
            for gid, trial_id, version, ok, score, fp, error, created, dur in rows
        }
