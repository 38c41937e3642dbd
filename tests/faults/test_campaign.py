"""The SIGKILL campaign, reduced for CI (7 kills spread over the phases; the full campaign is
`.venv/bin/python tests/faults/campaign.py --kills 27`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from .campaign import PHASES, campaign

pytestmark = pytest.mark.usefixtures("base_env_ready")


def test_sigkill_campaign_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    figures = campaign(kills=7, seed=seed, workdir=tmp_path, log=lambda _: None)
    report = json.dumps(figures.__dict__, indent=1)
    assert figures.ok(), f"seed {seed}: {report}"
    assert figures.trials_recorded == figures.trials_planned > 0, report
    assert sum(1 for p in PHASES if figures.kills[p]) >= 5, report
