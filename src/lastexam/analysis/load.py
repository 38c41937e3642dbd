"""Load the trial rows of one or more run directories."""

from __future__ import annotations

from pathlib import Path

from lastexam.analysis.rows import TrialRow, load_rows
from lastexam.errors import LastexamError
from lastexam.store.db import Store


def rows_of(run_dirs: list[Path]) -> list[TrialRow]:
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
