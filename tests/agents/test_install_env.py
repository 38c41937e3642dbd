"""Installing a harness runs its packages' install scripts (npm's postinstall, an sdist's
build) on the host: they get the host's environment without the model providers' keys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lastexam.agents import pypi as pypi_mod
from lastexam.agents.npm import NpmToolchain
from lastexam.agents.pypi import PypiToolchain
from lastexam.errors import LastexamError
from lastexam.gateway.providers import PROVIDERS

KEYS = sorted({p.key_env for p in PROVIDERS.values() if p.key_env})


@pytest.fixture
def keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LASTEXAM_HOME", str(tmp_path / "home"))
    for k in KEYS:
        monkeypatch.setenv(k, f"sk-host-{k}")


def test_npm_install_scripts_see_no_provider_key(keys: None, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    seen = tmp_path / "npm-env.txt"
    fake = tmp_path / "bin" / "npm"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nenv > "{seen}"\nexit 1\n')  # as a postinstall script would
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    with pytest.raises(LastexamError, match="npm install"):
        NpmToolchain("fake", "fake-pkg", "1.0.0", "fake-pkg/bin/fake").install(log=lambda _m: None)
    env = seen.read_text()
    assert "PATH=" in env and not [k for k in KEYS if f"{k}=" in env]


def test_pip_install_steps_see_no_provider_key(keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    envs: list[dict[str, str] | None] = []

    def record(argv: list[str], env: dict[str, str] | None = None) -> None:
        envs.append(env)
        raise LastexamError("stopped after the first step")

    monkeypatch.setattr(pypi_mod, "run_checked", record)
    with pytest.raises(LastexamError, match="stopped"):
        PypiToolchain("fake", "fake-pkg", "1.0", "fake:main", "fake").install(log=lambda _m: None)
    (env,) = envs
    assert env is not None and "PATH" in env and not set(KEYS) & set(env)
