"""The SIGKILL campaign, reduced for CI (7 kills spread over the phases; the full campaign is
`.venv/bin/python tests/faults/campaign.py --kills 27`). Its seed is printed (pytest shows it
with the failure); LASTEXAM_CAMPAIGN_SEED=N replays one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .campaign import PHASES, SEED_VAR, campaign, campaign_seed

pytestmark = pytest.mark.usefixtures("base_env_ready")


def test_sigkill_campaign_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    seed = campaign_seed()
    print(f"campaign seed {seed} (replay: {SEED_VAR}={seed})")
    figures = campaign(kills=7, seed=seed, workdir=tmp_path, log=lambda _: None)
    report = json.dumps(figures.__dict__, indent=1)
    assert figures.ok(), f"seed {seed}: {report}"
    assert figures.trials_recorded == figures.trials_planned > 0, report
    assert sum(1 for p in PHASES if figures.kills[p]) >= 5, report


def test_campaign_seed_is_settable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEED_VAR, "12345")
    assert campaign_seed() == 12345
    assert campaign_seed(7) == 7  # --seed wins
    monkeypatch.setenv(SEED_VAR, "twelve")
    with pytest.raises(SystemExit, match=SEED_VAR):
        campaign_seed()
