"""Recording a decided trial in the run folder: its files are moved in under a temporary
name, trial.json is written, the folder renamed into place, then the store commits the row.
The driver of a run is the only process that does this, whichever backend ran the trial."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from lastexam.layout import RunPaths
from lastexam.run.faults import point
from lastexam.run.policy import RunAborted, disk_full
from lastexam.store.db import Store
from lastexam.store.files import write_trial_file
from lastexam.store.models import TrialRecord
from lastexam.untrusted import remove_tree


def publish_trial(run_dir: Path, store: Store, record: TrialRecord,
                  fill: Callable[[Path], None]) -> None:
    """`fill(folder)` creates `folder` holding the trial's files (from its workspace, or
    unpacked from a worker's archive). A trial folder either is complete or does not exist,
    and a folder without its row is removed (and the trial rerun) by --resume."""
    started = time.monotonic()
    run = RunPaths(run_dir)
    tmp, final = run.staging(record.trial_id), run.trial(record.trial_id).root
    point("record", record.run_id, record.trial_id)
    try:
        remove_tree(tmp)
        remove_tree(final)
        run.trials.mkdir(parents=True, exist_ok=True)
        fill(tmp)
        record.timings.record = round(time.monotonic() - started, 4)
        write_trial_file(tmp, record)
        os.replace(tmp, final)
        point("commit", record.run_id, record.trial_id)
        store.record_trial(record)
    except (OSError, sqlite3.Error) as e:
        if not disk_full(e):
            raise
        for folder in (tmp, final):  # not recorded: not kept
            remove_tree(folder)
        raise RunAborted(f"the results disk is full ({e})") from None
