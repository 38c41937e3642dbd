"""The viewer driven in a real headless Chromium through Playwright: open a run, open a trial,
see its checks and its trajectory."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, LASTEXAM, ROOT, run_json

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCRIPT = ROOT / "tests" / "agents" / "scripts" / "column-total.yaml"
pytestmark = [
    pytest.mark.usefixtures("base_env_ready"),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed"),
]


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    run = tmp_path_factory.mktemp("v") / "agentrun"
    run_json("run", COLUMN_TOTAL, "--agent", "lastexam-agent", "--model", f"scripted:{SCRIPT}",
             "--out", run, timeout=300)
    proc = subprocess.Popen([*LASTEXAM, "view", str(run), "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def test_browse_run_trial_checks_and_trajectory(viewer: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        page = browser.new_page()
        page.goto(viewer)
        page.get_by_role("link", name="agentrun").click()
        page.get_by_role("link", name="column-total").click()
        assert page.locator("h1").inner_text().startswith("column-total__lastexam-agent")
        rubric = page.locator("table").nth(1)
        assert "inputs untampered" in rubric.inner_text()
        assert rubric.locator(".pass").count() == 4  # the gate, parse gate and two checks
        steps = page.locator(".step.agent")
        assert steps.count() >= 2
        text = page.locator(".step").all_inner_texts()
        assert any("awk -F," in t for t in text)  # the scripted shell call, as a tool call
        assert any("observation" in t for t in text)
        page.get_by_role("link", name="result.json").click()
        assert '"total": 6.750000' in page.content()
        assert page.evaluate("document.contentType") == "text/plain"  # an agent's file, never a page
        browser.close()


def test_a_client_gone_before_its_answer_prints_no_traceback(tmp_path: Path, capsys) -> None:
    from lastexam.viewer.server import serve

    server = serve([tmp_path])
    try:
        for error, printed in ((BrokenPipeError(32, "Broken pipe"), False), (ValueError("bug"), True)):
            try:
                raise error
            except Exception:
                server.handle_error(None, ("127.0.0.1", 1))
            assert ("Traceback" in capsys.readouterr().err) is printed, error
    finally:
        server.server_close()
