"""The host's real keys (recognisable fake values here) reach no sandbox and no artifact.

The script's shell turns look for the key inside the sandbox: in every process's environment
and in every file the sandbox can write or was given. The key is never written in the script
(the search pattern is assembled at run time from its reverse, and reaches grep by a pipe), and a control value planted
in the sandbox shows that the search finds what is there."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
import yaml

from conftest import COLUMN_TOTAL, run_json, trial_dir

from .conftest import CLIENTS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("agents_ready")]

KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY",
            "LASTEXAM_LOCAL_API_KEY")
PLACES = "/home /task /tmp /run /opt /var"


def search(pattern_reversed: str, found: str) -> str:
    """A shell command listing where the pattern occurs. The pattern reaches grep through a
    pipe: never in an argv (the exec log records those) nor in a file of its own."""
    pattern = f"echo {pattern_reversed} | rev"
    return (
        f": > /task/output/{found}; "
        f"for f in /proc/[0-9]*/environ; do {pattern} | grep -l -a -F -f - $f 2>/dev/null; done "
        f">> /task/output/{found}; "
        f"{pattern} | grep -r -l -a -F -f - {PLACES} 2>/dev/null | grep -v '^/task/output/' "
        f">> /task/output/{found}; true"
    )


@pytest.mark.parametrize("agent", CLIENTS)
def test_real_keys_stay_on_the_host(agent: str, tmp_path: Path) -> None:
    key = f"sk-FAKE-lastexam-{secrets.token_hex(16)}"
    control = f"control-{secrets.token_hex(16)}"
    script = tmp_path / "leak.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"shell": f"echo {control[::-1]} | rev > /tmp/control.txt"},
        {"shell": search(control[::-1], "control-found.txt")},
        {"shell": search(key[::-1], "key-found.txt")},
        {"shell": "env > /task/output/env.txt"},
        {"text": "Done."},
    ]}))
    out = tmp_path / "run"
    env = dict.fromkeys(KEY_VARS, key)
    trial = run_json("run", COLUMN_TOTAL, "--agent", agent, "--model", f"scripted:{script}",
                     "--out", out, env=env)["trials"][0]
    assert trial["status"] == "completed", trial["error"]
    outputs = trial_dir(out, trial) / "output"
    assert "/tmp/control.txt" in (outputs / "control-found.txt").read_text()
    assert (outputs / "key-found.txt").read_text().strip() == ""
    sandbox_env = (outputs / "env.txt").read_text()
    assert "LASTEXAM_GATEWAY_TOKEN" in sandbox_env or "lxg-" in sandbox_env
    assert key not in sandbox_env
    leaks = [p for p in out.rglob("*") if p.is_file() and key.encode() in p.read_bytes()]
    assert leaks == []
