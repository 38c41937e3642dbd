"""Environment locks: made offline from a folder of wheels, installed with hashes required,
stale and tampered locks caught, the lock named in the fingerprint; [env] variables reach the
agent's and the grader's sandboxes; every committed lock matches its environment file."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, LASTEXAM, ROOT, run_cli, run_json, trial_dir
from lastexam.envs import lockfile, locking, manage
from lastexam.envs.spec import EnvironmentSpec
from lastexam.errors import LastexamError

TINY_TOML = """name = "tiny"
description = "a test environment of made-up pure-Python packages"
apt = []
pip = ["tinypkg==1.0"]
"""


def make_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel holding `name/__init__.py`."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n",
        f"{dist}/METADATA": "Metadata-Version: 2.1\n" f"Name: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},{len(text.encode())}"
        for path, text in files.items()
    ]
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for member, text in files.items():
            z.writestr(member, text)
    return path


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A project with one environment, `tiny`, locked once from a folder of wheels (with
    stand-ins for the grading loaders every environment gets)."""
    base = tmp_path_factory.mktemp("locked")
    root, wheels = base / "project", base / "wheels"
    (root / "environments").mkdir(parents=True)
    wheels.mkdir()
    (root / "environments" / "tiny.toml").write_text(TINY_TOML)
    make_wheel(wheels, "tinypkg", "1.0", ("tinydep>=0.2",))
    make_wheel(wheels, "tinypkg", "2.0")
    make_wheel(wheels, "tinydep", "0.3")
    make_wheel(wheels, "openpyxl", "3.1.5")
    make_wheel(wheels, "pypdf", "5.0.0")
    # the machine's pip settings are not the lock's: a newer tinydep found through them is not taken
    decoy = base / "decoy"
    decoy.mkdir()
    make_wheel(decoy, "tinydep", "0.9")
    run_cli("env", "lock", "tiny", "--find-links", wheels, cwd=root,
            env={"LASTEXAM_HOME": str(base / "home"), "PIP_FIND_LINKS": str(decoy)})
    return {"root": root, "wheels": wheels}


@pytest.fixture()
def project(locked: dict, tmp_path: Path) -> dict:
    """A copy of the locked project with its own LASTEXAM_HOME; pip finds the wheels there
    and nowhere else (no index, no machine pip settings)."""
    root, home = tmp_path / "project", tmp_path / "home"
    shutil.copytree(locked["root"], root)
    env = {"LASTEXAM_HOME": str(home), "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(locked["wheels"])}
    return {"root": root, "wheels": locked["wheels"], "home": home, "env": env,
            "lock": root / "environments" / "tiny.lock.txt", "venv": home / "envs" / "tiny"}


def cli(project: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=project["root"], env=project["env"], check=check)


def installed_version(project: dict, package: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    return subprocess.run([str(project["venv"] / "bin" / "python3"), "-c", code],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_lock_pins_every_package_with_its_wheel_hash(project: dict) -> None:
    lock = lockfile.parse(project["lock"], "tiny")
    pinned = {p.name: p.version for p in lock.packages}
    assert pinned == {"tinypkg": "1.0", "tinydep": "0.3", "openpyxl": "3.1.5", "pypdf": "5.0.0"}
    for p in lock.packages:
        wheel = project["wheels"] / f"{p.name}-{p.version}-py3-none-any.whl"
        assert p.sha256 == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert "python3" in lock.apt  # the Debian Python the venv is made from


def test_install_from_the_lock_then_check(project: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = cli(project, "env", "install", "tiny")
    assert "pip install from tiny.lock.txt (4 packages, hashes required)" in proc.stderr
    assert installed_version(project, "tinypkg") == "1.0"
    assert cli(project, "env", "check", "tiny").returncode == 0
    # the trial fingerprint names the lock the venv was installed from
    monkeypatch.setenv("LASTEXAM_HOME", str(project["home"]))
    env = manage.load("tiny", project["root"])
    assert manage.fingerprint(env)["lock"] == f"tiny.lock.txt sha256:{lockfile.file_hash(project['lock'])}"
    # a Debian version that moved since the lock is a warning
    text = project["lock"].read_text()
    project["lock"].write_text(text.replace("# apt: python3 ", "# apt: python3 0~old"))
    proc = cli(project, "env", "check", "tiny")
    assert "warning: Debian package python3" in proc.stdout and "(lock: 0~old" in proc.stdout
    # a Python package that moved away from the lock is a failure
    subprocess.run([str(project["venv"] / "bin" / "pip"), "install", "-q", "tinypkg==2.0"],
                   env={**os.environ, **project["env"]}, check=True, capture_output=True)
    proc = cli(project, "env", "check", "tiny", check=False)
    assert proc.returncode == 1 and "tinypkg 2.0 (lock: 1.0)" in proc.stdout


def test_concurrent_installs_of_one_environment_build_it_once(project: dict) -> None:
    """Two clones' `env install` at once (main.sh beside CI): the second waits for the first
    and does not remove the venv it is building."""
    argv = [*LASTEXAM, "env", "install", "tiny"]
    env = {**os.environ, **project["env"]}
    procs = [subprocess.Popen(argv, cwd=project["root"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    said = "".join(err for _, err in outs)
    assert len(re.findall(r"\b(?:re)?creating\b", said)) == 1, said
    assert "installed meanwhile by another process" in said or "already installed" in said, said
    assert installed_version(project, "tinypkg") == "1.0"


def test_install_rebuilds_a_venv_whose_packages_went(project: dict) -> None:
    """A venv marked installed whose files are gone (an install killed or removed under
    another) is not "already installed": it is built again from the lock."""
    cli(project, "env", "install", "tiny")
    assert "already installed" in cli(project, "env", "install", "tiny").stderr
    site = next(project["venv"].glob("lib/python3*/site-packages"))
    for gone in [site / "tinydep", *site.glob("tinydep-*.dist-info")]:
        shutil.rmtree(gone)
    proc = cli(project, "env", "install", "tiny")
    assert "already installed" not in proc.stderr and "recreating" in proc.stderr, proc.stderr
    assert installed_version(project, "tinydep") == "0.3"
    # a dist-info left without its METADATA (a removal cut short) is not an installed package
    (next(site.glob("tinydep-*.dist-info")) / "METADATA").unlink()
    proc = cli(project, "env", "install", "tiny")
    assert "recreating" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert installed_version(project, "tinydep") == "0.3"


def test_package_lists_are_updated_once_an_hour_and_only_stamped_when_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamp = tmp_path / "lastexam-updated"
    monkeypatch.setattr(manage, "APT_UPDATE_STAMP", stamp)
    calls: list[list[str]] = []
    answers: list[str] = []

    def fake_run(argv: list[str], env: dict | None = None) -> None:
        calls.append(argv)
        if answers and (answer := answers.pop(0)):
            raise LastexamError(answer)

    monkeypatch.setattr(manage, "run_checked", fake_run)
    manage._apt_update_once(lambda _: None, pause_s=0)
    assert len(calls) == 1 and "APT::Update::Error-Mode=any" in calls[0] and stamp.is_file()
    manage._apt_update_once(lambda _: None, pause_s=0)  # fresh: not again
    assert len(calls) == 1
    os.utime(stamp, (0, 0))  # an old stamp: updated again; another updater's lock is waited for
    answers[:] = ["E: Could not get lock /var/lib/apt/lists/lock", ""]
    manage._apt_update_once(lambda _: None, pause_s=0)
    assert len(calls) == 3 and stamp.stat().st_mtime > 0
    stamp.unlink()  # an update with errors (a mirror unreachable) fails and stamps nothing
    answers[:] = ["W: Failed to fetch ... E: Some index files failed to download"]
    with pytest.raises(LastexamError):
        manage._apt_update_once(lambda _: None, pause_s=0)
    assert not stamp.exists()


def test_stale_lock_is_detected_and_install_falls_back(project: dict) -> None:
    toml = project["root"] / "environments" / "tiny.toml"
    toml.write_text(TINY_TOML.replace('pip = ["tinypkg==1.0"]', 'pip = ["tinypkg==2.0"]'))
    proc = cli(project, "env", "check", "tiny", check=False)
    assert "warning: tiny.lock.txt is stale" in proc.stdout
    proc = cli(project, "env", "install", "tiny")
    assert "tiny.lock.txt is stale" in proc.stderr and "without hashes" in proc.stderr
    assert installed_version(project, "tinypkg") == "2.0"
    assert json.loads((project["venv"] / manage.MARKER).read_text())["lock"] is None


def test_tampered_hash_refuses_install(project: dict) -> None:
    wheel = project["wheels"] / "tinypkg-1.0-py3-none-any.whl"
    good = hashlib.sha256(wheel.read_bytes()).hexdigest()
    text = project["lock"].read_text()
    assert good in text
    project["lock"].write_text(text.replace(good, "0" * 64))
    proc = cli(project, "env", "install", "tiny", check=False)
    assert proc.returncode != 0
    assert "DO NOT MATCH THE HASHES" in proc.stderr and "Traceback" not in proc.stderr
    assert not (project["venv"] / manage.MARKER).exists()


def test_malformed_lock_names_file_and_line(project: dict) -> None:
    text = project["lock"].read_text()
    project["lock"].write_text(text + "tinypkg>=1\n")
    proc = cli(project, "env", "install", "tiny", check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    line = len(text.splitlines()) + 1
    assert f"tiny.lock.txt: line {line} is not" in proc.stderr


def test_env_table_may_not_set_harness_variables() -> None:
    with pytest.raises(ValueError, match="set by the harness"):
        EnvironmentSpec(name="x", description="xyz", env={"PYTHONPATH": "/evil"})
    with pytest.raises(ValueError, match="not environment variable names"):
        EnvironmentSpec(name="x", description="xyz", env={"A-B": "1"})


def test_env_table_error_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "environments").mkdir()
    (tmp_path / "environments" / "bad.toml").write_text(
        'name = "bad"\ndescription = "bad env"\n[env]\nLD_PRELOAD = "/x.so"\n')
    with pytest.raises(LastexamError, match=r"bad.toml: field 'env': .*LD_PRELOAD"):
        manage.load("bad", tmp_path)


@pytest.mark.parametrize("env", manage.load_all(ROOT), ids=lambda e: e.name)
def test_committed_lock_matches_its_environment_file(env: manage.Environment) -> None:
    lock = lockfile.parse(locking.lock_path(env), env.name)
    assert lock.source == env.spec.package_digest, f"run: lastexam env lock {env.name}"
    pinned = {p.name: p.version for p in lock.packages}
    for requirement in env.spec.pip:
        name, _, version = requirement.partition("==")
        assert pinned.get(lockfile.normalise(name)) == version, requirement
    assert set(lock.apt) == set(locking.recorded_apt(env))
    numeric = any(r.startswith(("numpy", "scipy")) for r in env.spec.pip)
    if numeric:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            assert env.spec.env.get(var) == "1", f"{env.name}: {var}"


@pytest.mark.usefixtures("base_env_ready")
def test_env_variables_reach_agent_and_grader(tmp_path: Path) -> None:
    """A copy of the project's base environment with an [env] table, and a task whose oracle
    and grader both fail unless they see its variable, and OpenMP's thread count pinned by the
    harness (the environment sets none: otherwise one thread per CPU of the machine)."""
    root = tmp_path / "project"
    (root / "environments").mkdir(parents=True)
    base = (ROOT / "environments" / "base.toml").read_text()
    (root / "environments" / "base.toml").write_text(base + '\n[env]\nOPENBLAS_NUM_THREADS = "3"\n')
    task = root / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text().replace("set -euo pipefail\n",
                                               'set -euo pipefail\ntest "$OPENBLAS_NUM_THREADS" = 3\n'
                                               'test "$OMP_NUM_THREADS" = 2\n'))
    grader = task / "grader.py"
    grader.write_text("import os\n" + grader.read_text().replace(
        "    return r\n",
        '    r.check("blas", 1, equal(os.environ.get("OPENBLAS_NUM_THREADS"), "3"))\n'
        '    r.check("openmp", 1, equal(os.environ.get("OMP_NUM_THREADS"), "2"))\n    return r\n'))
    result = run_json("run", task, "--agent", "oracle", "--out", tmp_path / "run", cwd=root)
    trial = result["trials"][0]
    assert trial["status"] == "completed" and trial["score"] == 1.0, trial
    record = json.loads((trial_dir(tmp_path / "run", trial) / "trial.json").read_text())
    fingerprint = record["repro"]["environment_fingerprint"]
    assert fingerprint["variables"] == "OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=3" and "lock" in fingerprint
