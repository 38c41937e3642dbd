"""PyPI toolchains (agents/pypi.py): a venv of Debian's python3 per agent and version, held to
its lock, that runs its harness from any mount point; its readiness follows the lock.

A tiny real package from the index stands in for a harness (the real ones are installed and
driven by `lastexam agents check`, tests/agents/test_conformance.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lastexam.agents import all_agents, get_agent
from lastexam.agents import pypi as pypi_mod
from lastexam.agents.pypi import PypiToolchain
from lastexam.errors import LastexamError
from lastexam.gateway.providers import parse_model
from lastexam.layout import AgentSandbox

from .conftest import COLUMN_TOTAL_SCRIPT

# A pure-Python module with no dependencies; its print_ stands in for a console script.
PACKAGE, VERSION, ENTRY = "six", "1.17.0", "six:print_"


@pytest.fixture
def chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PypiToolchain:
    monkeypatch.setenv("LASTEXAM_HOME", str(tmp_path / "home"))
    locks = tmp_path / "locks"
    locks.mkdir()
    (locks / "tiny.txt").write_text(f"{PACKAGE}=={VERSION}\n")
    monkeypatch.setattr(pypi_mod, "LOCKS", locks)
    return PypiToolchain("tiny", PACKAGE, VERSION, ENTRY, "tiny")


def test_install_runs_from_any_mount_point_and_follows_its_lock(chain: PypiToolchain,
                                                                tmp_path: Path) -> None:
    assert not chain.installed()
    assert any("lastexam agents install tiny" in m for m in chain.missing())
    chain.install(log=lambda m: None)
    assert chain.installed() and chain.missing() == []
    marker = json.loads((chain.root / pypi_mod.MARKER).read_text())
    assert marker == {"package": PACKAGE, "version": VERSION, "digest": chain.digest()}
    # No console script (pip's own included) is left beside the venv's Pythons.
    assert {p.name for p in (chain.root / "bin").iterdir()} <= {"python", "python3", "python3.11"}

    # The sandbox sees the venv elsewhere: moved, its python still finds the package, and the
    # harness gets its arguments with argv[0] the console script's name.
    moved = tmp_path / "elsewhere"
    shutil.copytree(chain.root, moved, symlinks=True)
    shutil.rmtree(chain.root)
    argv = chain.command("hello", "world")
    assert argv[0] == f"{AgentSandbox.TOOLCHAIN}/bin/python3"
    argv[0] = str(moved / "bin" / "python3")
    argv[2] = argv[2].replace("sys.exit(main())", "main(sys.argv)")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["['tiny',", "'hello',", "'world']"]
    assert not chain.installed()  # removed from its root: not ready any more


def test_a_changed_lock_makes_the_install_out_of_date(chain: PypiToolchain) -> None:
    chain.install(log=lambda m: None)
    assert chain.installed()
    chain.lock.write_text(f"{PACKAGE}=={VERSION}\nsetuptools==80.9.0\n")
    assert not chain.installed()
    assert any("is out of date" in m for m in chain.missing())


def test_a_harness_that_does_not_import_fails_the_install(chain: PypiToolchain) -> None:
    broken = PypiToolchain("tiny", PACKAGE, VERSION, "no_such_module:main", "tiny")
    with pytest.raises(Exception, match="import no_such_module"):
        broken.install(log=lambda m: None)
    assert not broken.installed() and not broken.root.exists()


def test_every_pypi_agent_pins_a_lock_that_holds_its_own_version() -> None:
    chains = [a.toolchain for a in all_agents() if isinstance(getattr(a, "toolchain", None), PypiToolchain)]
    assert {c.agent for c in chains} >= {"mini-swe-agent", "hermes-agent", "gptme", "cecli"}
    for c in chains:
        pins = [line for line in c.lock.read_text().splitlines() if line and not line.startswith("#")]
        assert f"{c.package}=={c.version}" in pins, c.lock
        assert all("==" in p for p in pins), c.lock


@pytest.mark.parametrize(("agent", "arg"), [("mini-swe-agent", "step_limit"), ("llm", "chain_limit")])
def test_a_count_argument_must_be_a_whole_number(agent: str, arg: str) -> None:
    model = parse_model(f"scripted:{COLUMN_TOTAL_SCRIPT}")
    adapter = get_agent(agent)
    adapter.check_args(model, {arg: "12"})
    for bad in ("abc", "0", "-3", "1.5"):
        with pytest.raises(LastexamError, match=f"{arg}='{re.escape(bad)}' must be a whole number"):
            adapter.check_args(model, {arg: bad})
