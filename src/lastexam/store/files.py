"""trial.json: a trial's record as the store holds it, written beside the trial's files for
readers that have no SQLite (and for the HTML report's links). The store's row is the truth:
this file is rendered from it when the trial is recorded and again after every regrade."""

from __future__ import annotations

import os
from pathlib import Path

from lastexam.layout import TrialPaths
from lastexam.store.models import TrialRecord


def trial_document(record: TrialRecord) -> str:
    return record.model_dump_json(indent=2)


def write_trial_file(folder: Path, record: TrialRecord) -> None:
    """Replace the folder's trial.json whole (a reader never sees half a file)."""
    final = TrialPaths(folder).record
    tmp = final.with_name(f".{final.name}.tmp")
    tmp.write_text(trial_document(record))
    os.replace(tmp, final)
