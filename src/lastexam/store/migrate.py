"""Migrations of results.db files written by older versions of lastexam, applied in one
transaction when a store is opened, so that every reader sees the current schema.

Version 3 (from 2): the error policy's decision moves from record_json into columns
(policy_kind, retries, earlier_json) beside status, score and full_pass, and record_json
keeps no copy of them. A version-2 regrade updated the columns but not record_json nor
trial.json; the columns (and the newest grade) are taken as the truth, and every trial.json
is rendered again from them.

Version 4 (from 3): a GUI trial's use of its declared application gets a column, gui_use;
no earlier trial is a GUI trial (there was no desktop), so it is NULL for all of them.

Version 5 (from 4): a trial's visibility (public, or private: a sealed task not yet released
on the run's day) gets a column; no earlier trial ran a sealed task, so all are public.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lastexam.layout import RunPaths
from lastexam.store.files import write_trial_file

if TYPE_CHECKING:
    from lastexam.store.db import Store

# The error policy's kinds (run/policy.py) as version 2 recorded them, for trials whose
# policy was never recorded or whose status a regrade changed: status -> kind.
_KIND_OF_STATUS = {
    "completed": "completed", "timeout": "timeout", "budget_exhausted": "budget_exhausted",
    "grader_error": "grader_failed", "infra_error": "harness_error",
}
_AGENT_ERROR_KIND = {"memory": "agent_memory", "output_limit": "agent_output_limit"}


def _kind(status: str, ended_by: str) -> str:
    if status == "agent_error":
        return _AGENT_ERROR_KIND.get(ended_by, "agent_exit")
    return _KIND_OF_STATUS.get(status, "harness_error")


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    for column in ("policy_kind TEXT NOT NULL DEFAULT ''", "retries INTEGER NOT NULL DEFAULT 0",
                   "earlier_json TEXT NOT NULL DEFAULT '[]'"):
        conn.execute(f"ALTER TABLE trials ADD COLUMN {column}")
    updates = []
    for trial_id, status, ended_by, body in conn.execute(
        "SELECT trial_id, status, ended_by, record_json FROM trials"
    ).fetchall():
        fields = json.loads(body)
        policy = fields.pop("policy", None) or {}
        error = fields.pop("error", None)
        for key in ("status", "score", "full_pass"):
            fields.pop(key, None)
        # The record's error was the grader's when the grader failed; that one is in its grade.
        fields["run_error"] = None if policy.get("kind") == "grader_failed" else error
        same = policy.get("status") == status and policy.get("kind")
        kind = policy["kind"] if same else _kind(status, ended_by)
        updates.append((kind, int(policy.get("retries", 0)), json.dumps(policy.get("earlier", [])),
                        json.dumps(fields), trial_id))
    conn.executemany(
        "UPDATE trials SET policy_kind=?, retries=?, earlier_json=?, record_json=? WHERE trial_id=?",
        updates,
    )


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE trials ADD COLUMN gui_use TEXT")


def _v4_to_v5(conn: sqlite3.Connection) -> None:
    columns = {r[1] for r in conn.execute("PRAGMA table_info(trials)")}
    if "visibility" not in columns:
        conn.execute("ALTER TABLE trials ADD COLUMN visibility TEXT NOT NULL DEFAULT 'public'")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5,
}


def migrate(store: Store, run_dir: Path) -> None:
    """Bring the store to the current schema (a no-op if another process just did), then
    render every trial.json again from the migrated rows."""
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = store.schema_version()
        migrated = version in MIGRATIONS
        while version in MIGRATIONS:
            MIGRATIONS[version](conn)
            version += 1
            conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))
        for record in store.trials() if migrated else ():
            folder = RunPaths(run_dir).trial(record.trial_id).root
            if folder.is_dir():
                write_trial_file(folder, record)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
