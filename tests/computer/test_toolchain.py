"""The desktop toolchain: installed by `lastexam agents install computer`, shown by `agents
list`, found stale when its sources change, and working where desktop trials mount it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli
from lastexam.computer import toolchain as tc

from .conftest import Computer, Display


def test_agents_list_shows_it_ready(toolchain: Path) -> None:
    out = run_cli("agents", "list", env={**os.environ, "COLUMNS": "300"}).stdout
    [row] = [line for line in out.splitlines() if "│ computer " in line]
    assert f"mcp {tc.locked_versions()['mcp']} ({tc.digest()})" in row
    assert row.rstrip("│ ").endswith("yes")
    marker = json.loads((toolchain / tc.MARKER).read_text())
    assert marker == {"digest": tc.digest(), "packages": tc.locked_versions()}


def test_it_is_missing_until_installed_from_the_current_sources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LASTEXAM_HOME", str(tmp_path))
    assert "is not installed: lastexam agents install computer" in tc.missing()[-1]
    root = tmp_path / "desktop" / "toolchain"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "computer-mcp").write_text(tc.LAUNCHER)
    (root / "bin" / "computer-mcp").chmod(0o755)
    (root / tc.MARKER).write_text(json.dumps({"digest": "0" * 16}))
    assert "is out of date: lastexam agents install computer" in tc.missing()[-1]
    (root / tc.MARKER).write_text(json.dumps({"digest": tc.digest()}))
    assert tc.missing() == []


def test_the_launcher_works_where_trials_mount_the_toolchain(toolchain: Path, display: Display,
                                                            screens: Path) -> None:
    # The place it was installed at is hidden, as in a sandbox.
    mounted = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/opt",
               "--tmpfs", str(toolchain.parent), "--ro-bind", str(toolchain), "/opt/desktop", "--bind", str(screens), str(screens),
               "--", "/opt/desktop/bin/computer-mcp"]
    computer = Computer(toolchain, display.env(LASTEXAM_SCREENS_DIR=str(screens)), mounted)
    assert computer("click", x=500, y=500)["text"] == "left click at 500,500"
    assert display.pointer() == (640, 400)
    assert computer("screenshot")["text"] == "saved screens/0001.png"
    computer.lines.stop()


def test_a_run_of_a_model_agent_on_a_gui_task_needs_it(tmp_path: Path) -> None:
    task = Path("tasks/education-information/semester-gradebook")
    script = Path("tests/agents/scripts/column-total.yaml")
    env = {"LASTEXAM_HOME": str(tmp_path / "home")}
    proc = run_cli("run", task, "--agent", "lastexam-agent", "--model", f"scripted:{script}",
                   "--out", tmp_path / "run", check=False, env=env)
    assert proc.returncode == 2 and "cannot start the run" in proc.stderr
    assert "lastexam agents install computer" in proc.stderr
    # the oracle works the screen with its own tools: the server is not asked for
    proc = run_cli("run", task, "--agent", "oracle", "--out", tmp_path / "run2", check=False, env=env)
    assert proc.returncode == 2 and "cannot start the run" in proc.stderr
    assert "agents install computer" not in proc.stderr


def test_every_copy_of_the_server_path_is_the_toolchain_launcher() -> None:
    # computer_tools.py runs in the sandbox with the standard library only: it keeps its own copy
    import importlib.util

    from lastexam.layout import AgentSandbox

    spec = importlib.util.spec_from_file_location(
        "computer_tools", Path(tc.__file__).parents[1] / "agents" / "sandbox_files" / "computer_tools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.SERVER == AgentSandbox.COMPUTER_MCP
    assert f"{AgentSandbox.DESKTOP_TOOLCHAIN}/bin/computer-mcp" == AgentSandbox.COMPUTER_MCP
