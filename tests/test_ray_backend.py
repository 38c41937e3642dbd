"""The Ray backend on a local multi-node cluster (ray.cluster_utils.Cluster): one cluster for
the module (a head without CPUs and two worker nodes of 1 CPU, each with LASTEXAM_HOME set in
its own environment). Outside CI these tests skip when Ray is not installed; in CI (CI=true)
they must run."""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

try:
    import ray
    from ray.cluster_utils import Cluster
except ImportError:
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("Ray is not installed (pip install -e '.[ray]'); CI runs these tests",
                allow_module_level=True)

from conftest import COLUMN_TOTAL, ROOT, TEST_TASKS, run_cli, run_json, run_watching
from lastexam.errors import LastexamError
from lastexam.paths import lastexam_home
from lastexam.run.leftovers import sweep_dead_runs
from lastexam.run.runner import RunOutcome, execute
from lastexam.store.db import Store
from lastexam.store.models import RunConfig

# Cheap public tasks (their oracles take 1 to 2 s), over four environments.
PUBLIC = [ROOT / "tasks" / p for p in (
    "agriculture-environment/oats-split-plot-eonr", "business-finance/dc-network-redesign",
    "visual-media-arts/reverse-tuck-carton-dieline", "life-sciences/ki67-index-ihc-tiles",
)]
GUI_TASK = ROOT / "tests" / "data" / "gui-tasks" / "other" / "gnumeric-cell"


@dataclass
class Fleet:
    cluster: Any
    workers: list[Any]  # the worker nodes, in the order added

    def add(self, home: Path) -> Any:
        node = self.cluster.add_node(num_cpus=1, env_vars={"LASTEXAM_HOME": str(home)})
        self.cluster.wait_for_nodes()
        return node


@pytest.fixture(scope="module")
def fleet() -> Any:
    started = time.monotonic()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    fleet = Fleet(cluster, [])
    for _ in range(2):
        fleet.workers.append(fleet.add(lastexam_home()))
    ray.init(address=cluster.address, logging_level=logging.WARNING, log_to_driver=False)
    print(f"cluster up in {time.monotonic() - started:.1f} s")
    yield fleet
    ray.shutdown()
    cluster.shutdown()
    sweep_dead_runs(lastexam_home() / "work")  # what a killed node's workers left


def scores(outcome: RunOutcome) -> dict[str, tuple[str, float | None, bool]]:
    return {t.trial_id: (t.status, t.score, t.full_pass) for t in outcome.trials}


def files(run_dir: Path, trial_id: str) -> set[str]:
    root = run_dir / "trials" / trial_id
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_the_oracle_scores_the_same_on_the_cluster_as_locally(fleet: Fleet, tmp_path: Path) -> None:
    paths = [str(TEST_TASKS), *map(str, PUBLIC)]
    local = execute(RunConfig(task_paths=paths, agent="oracle", concurrency=2), tmp_path / "local")
    on_ray = execute(RunConfig(task_paths=paths, agent="oracle", backend="ray"), tmp_path / "ray")
    assert len(on_ray.trials) == len(PUBLIC) + 2
    assert scores(on_ray) == scores(local)
    assert all(t.score == 1.0 for t in on_ray.trials)
    nodes = {n.node_id for n in fleet.workers}
    for t in on_ray.trials:
        assert t.run_id == on_ray.run_id and t.task_path == next(
            x.task_path for x in local.trials if x.trial_id == t.trial_id)
        assert t.repro.host.node in nodes  # decided on a worker node...
        # ...and its folder came back whole: the same files as the local trial's
        assert files(on_ray.run_dir, t.trial_id) == files(local.run_dir, t.trial_id)
    assert all(t.repro.host.node == "" for t in local.trials)


def test_a_node_lost_mid_run_loses_and_duplicates_nothing(fleet: Fleet, tmp_path: Path) -> None:
    attempts = 4
    config = RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="command", attempts=attempts,
                       agent_args={"cmd": "sleep 4"}, backend="ray")
    outcome: list[RunOutcome | BaseException] = []

    def run() -> None:
        try:
            outcome.append(execute(config, tmp_path / "run"))
        except BaseException as e:
            outcome.append(e)

    victim = fleet.workers[1]
    busy = lastexam_home() / "work"
    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 120
    # The victim's worker has a trial's workspace: a trial is running there.
    while not list(busy.glob(f"*.{victim.node_id[:8]}.*/trials/*")):
        assert thread.is_alive() and time.monotonic() < deadline, outcome
        time.sleep(0.05)
    fleet.cluster.remove_node(victim, allow_graceful=False)
    fleet.workers[1] = fleet.add(lastexam_home())  # for the tests after this one
    thread.join(300)
    assert not thread.is_alive()
    [result] = outcome
    assert isinstance(result, RunOutcome), result
    ids = [t.trial_id for t in result.trials]
    assert len(ids) == attempts and len(set(ids)) == attempts
    assert sorted(p.name for p in (result.run_dir / "trials").iterdir()) == sorted(ids)
    lost = [t for t in result.trials if t.policy and any(e.kind == "node_lost" for e in t.policy.earlier)]
    assert lost, [t.policy for t in result.trials]
    for t in result.trials:  # retried elsewhere: every trial ran to its end once
        assert t.status == "completed" and t.repro.host.node != victim.node_id
    store = Store(result.run_dir)
    try:
        assert store.conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == attempts
    finally:
        store.close()


def test_a_node_without_the_environment_is_refused_by_name(fleet: Fleet, tmp_path: Path) -> None:
    empty = tmp_path / "empty-home"
    node = fleet.add(empty)
    try:
        proc = run_cli("run", COLUMN_TOTAL, "--agent", "oracle", "--backend", "ray",
                       "--ray-address", fleet.cluster.address, "--out", tmp_path / "run", check=False)
        assert proc.returncode != 0
        message = " ".join(proc.stderr.split())
        assert f"node {node.node_id[:12]}" in message
        assert f"LASTEXAM_HOME={empty.resolve()}" in message
        assert "environment 'base'" in message and "lastexam env install base" in message
        assert not (tmp_path / "run" / "results.db").exists()
    finally:
        fleet.cluster.remove_node(node)


def test_a_gui_trial_needs_a_node_with_a_desktop_slot(fleet: Fleet, tmp_path: Path) -> None:
    with pytest.raises(LastexamError, match="lastexam_gui"):
        execute(RunConfig(task_paths=[str(GUI_TASK)], agent="oracle", backend="ray"), tmp_path / "r")
    assert not (tmp_path / "r" / "results.db").exists()


def test_a_local_run_resumed_on_the_cluster_records_each_trial_once(fleet: Fleet, tmp_path: Path) -> None:
    out = tmp_path / "run"
    killed = run_watching(
        ["run", COLUMN_TOTAL, "--agent", "oracle", "--attempts", "3", "--out", out], tmp_path / "w",
        lambda point, proc: proc.kill() if point.phase == "cleanup" else None,
    )
    assert killed.returncode != 0
    store = Store(out)
    first = store.finished_ids()
    store.close()
    assert len(first) == 1
    result = run_json("run", "--resume", "--out", out, "--backend", "ray",
                      "--ray-address", fleet.cluster.address)
    ids = [t["trial_id"] for t in result["trials"]]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert all(t["score"] == 1.0 for t in result["trials"])
    store = Store(out)
    try:
        nodes = dict(store.conn.execute(
            "SELECT trial_id, json_extract(record_json, '$.repro.host.node') FROM trials"))
        assert store.run()[1].backend == "local"  # the stored plan; the backend is how it went
    finally:
        store.close()
    assert nodes[next(iter(first))] == ""
    assert {nodes[i] for i in ids if i not in first} <= {n.node_id for n in fleet.workers}


def test_model_trials_keep_their_own_budget_on_the_nodes_gateways(fleet: Fleet, tmp_path: Path) -> None:
    script = tmp_path / "priced.yaml"
    script.write_text("""
price_as: claude-sonnet-4-5
turns:
  - shell: echo one
    usage: {input_tokens: 100000, output_tokens: 10000}
  - shell: echo two
    usage: {input_tokens: 100000, output_tokens: 10000}
  - text: Done.
""")
    outcome = execute(RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="lastexam-agent",
                                model=f"scripted:{script}", max_cost_usd=0.5, attempts=3,
                                backend="ray"), tmp_path / "run")
    assert len(outcome.trials) == 3
    for t in outcome.trials:  # $0.45 a call: each trial's second call crosses its own $0.50
        assert t.status == "budget_exhausted" and t.gateway is not None
        assert t.gateway.model_calls == 2 and t.gateway.refused_calls == 1
        assert t.gateway.cost_usd == pytest.approx(0.9)
        assert (outcome.run_dir / "trials" / t.trial_id / "gateway.jsonl").is_file()


def test_an_experiment_file_chooses_the_backend(tmp_path: Path) -> None:
    from lastexam.run.experiment import experiment_config, load_experiment

    exp = tmp_path / "exp.yaml"
    exp.write_text(f"tasks: [{COLUMN_TOTAL}]\nagents: [{{name: oracle}}]\n"
                   "backend: ray\nray_address: head:6379\n")
    config = experiment_config(exp, load_experiment(exp), {"oracle": False})
    assert (config.backend, config.ray_address) == ("ray", "head:6379")
    exp.write_text(f"tasks: [{COLUMN_TOTAL}]\nagents: [{{name: oracle}}]\nbackend: slurm\n")
    with pytest.raises(LastexamError, match="backend") as e:
        load_experiment(exp)
    assert str(exp) in str(e.value)


def test_a_trial_whose_every_worker_dies_is_recorded_once_as_infra_error(
        fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lastexam.run.backends import ray_backend

    def crash(job: Any, archive: bytes) -> None:
        os._exit(1)  # the worker process dies, as on a lost node

    crashing, real = ray.remote(crash), ray_backend._remote
    monkeypatch.setattr(ray_backend, "_remote", lambda name: crashing if name == "run_trial" else real(name))
    outcome = execute(RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="oracle", backend="ray",
                                max_retries=1), tmp_path / "run")
    [trial] = outcome.trials
    assert (trial.status, trial.score, trial.ended_by) == ("infra_error", None, "not_started")
    assert trial.policy is not None and not trial.policy.counts
    assert trial.policy.kind == "node_lost" and trial.policy.retries == 1
    assert [e.kind for e in trial.policy.earlier] == ["node_lost"]
    assert "WorkerCrashedError" in (trial.error or "")
    assert files(outcome.run_dir, trial.trial_id) == {"trial.json"}


def test_a_node_running_other_harness_code_is_refused_by_name(
        fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A node with another lastexam (version or code) would decide and grade trials with other
    code than the driver's, silently mixed in one run: it is refused before any trial starts."""
    import lastexam

    monkeypatch.setattr(lastexam, "__version__", "0.0.0+elsewhere")
    run = tmp_path / "run"
    with pytest.raises(LastexamError) as e:
        execute(RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="oracle", backend="ray"), run)
    assert "0.0.0+elsewhere" in str(e.value) and "node " in str(e.value), str(e.value)
    assert not run.exists()
    # A node that joins after the check refuses each trial itself.
    from lastexam.run.backends.ray_models import WorkerJob
    from lastexam.run.backends.ray_worker import run_trial

    monkeypatch.undo()
    job = WorkerJob("run", "bwrap", 0, None, harness="lastexam 0.0.0+elsewhere")  # type: ignore[arg-type]
    refused = run_trial(job, b"").refused
    assert refused is not None and "0.0.0+elsewhere" in refused


def test_a_record_for_another_trial_than_the_one_sent_is_refused(
        fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver records what a node sends back under the trial it sent: a record naming
    another trial (a node's bug, another harness) is neither written over that trial nor,
    with a path in its name, written outside the run folder."""
    from lastexam.run.backends import ray_backend, ray_worker

    def misnamed(job: Any, archive: bytes) -> Any:
        result = ray_worker.run_trial(job, archive)
        if job.plan.key.attempt == 2:  # once the first is in: trials/ exists
            time.sleep(3)
            result.record.trial_id = "../../escaped"
        return result

    fake, real = ray.remote(misnamed), ray_backend._remote
    monkeypatch.setattr(ray_backend, "_remote", lambda name: fake if name == "run_trial" else real(name))
    run, bystander = tmp_path / "a" / "run", tmp_path / "a" / "escaped"  # run/trials/../../escaped
    bystander.mkdir(parents=True)
    (bystander / "keep").write_text("not the run's")
    with pytest.raises(LastexamError, match="escaped") as e:
        execute(RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="nop", backend="ray",
                          attempts=2), run)
    assert "node " in str(e.value)
    assert (bystander / "keep").read_text() == "not the run's"
    assert list(bystander.iterdir()) == [bystander / "keep"]
    assert [p.name for p in (run / "trials").iterdir()] == ["column-total__nop__none__1"]


def test_a_node_whose_copy_of_a_task_was_altered_grades_with_the_drivers_files(
        fleet: Fleet, tmp_path: Path) -> None:
    """A node keeps the task folders it received (LASTEXAM_HOME/ray-tasks, by content hash):
    a copy altered since (a partial cleanup, a hand edit) must not be graded against, the
    trial's record claiming the driver's task."""
    import shutil

    from lastexam.paths import home_subdir
    from lastexam.task.load import load_task
    from lastexam.untrusted import remove_tree

    task = load_task(COLUMN_TOTAL)
    cached = home_subdir("ray-tasks") / task.content_hash[:24] / task.id
    remove_tree(cached)
    cached.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(COLUMN_TOTAL, cached)
    (cached / "reference" / "expected.json").write_text('{"total": 1, "count": 1}')
    try:
        outcome = execute(RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="oracle", backend="ray"),
                          tmp_path / "run")
    finally:
        remove_tree(cached)
    [trial] = outcome.trials
    assert (trial.status, trial.score) == ("completed", 1.0), trial.error
    assert trial.repro.task_hash == task.content_hash


def test_a_task_folder_that_cannot_travel_whole_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only plain files and folders travel to a node: a task folder holding a symlink would
    arrive without the file, and is refused rather than run without it."""
    import shutil

    from lastexam.run.backends.ray_worker import local_task, pack
    from lastexam.task.load import load_task

    monkeypatch.setenv("LASTEXAM_HOME", str(tmp_path / "home"))
    folder = tmp_path / "column-total"
    shutil.copytree(COLUMN_TOTAL, folder)
    task = load_task(folder)
    assert local_task(task, pack(folder)).content_hash == task.content_hash
    (folder / "inputs" / "more.csv").symlink_to(folder / "inputs" / "data.csv")
    task = load_task(folder)
    with pytest.raises(LastexamError, match="differ from the driver's"):
        local_task(task, pack(folder))


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's extraction sets owners")
def test_a_trial_folder_unpacked_on_the_driver_belongs_to_the_driver(tmp_path: Path) -> None:
    """Files a node's sandbox uid owns there (the grading's result folder) must not, on the
    driver, belong to that uid: it may be anyone's account on the driver's machine."""
    from lastexam.run.backends.ray_worker import pack, unpack

    folder = tmp_path / "trial"
    (folder / "grader").mkdir(parents=True)
    (folder / "grader" / "result.json").write_text("{}")
    for p in (folder / "grader", folder / "grader" / "result.json"):
        os.chown(p, 1000, 1000)
    unpack(pack(folder), tmp_path / "driver")
    owners = {(p.stat().st_uid, p.stat().st_gid) for p in (tmp_path / "driver").rglob("*")}
    assert owners == {(os.getuid(), os.getgid())}


def test_an_unreadable_trial_folder_from_a_node_stops_the_run_with_a_message(
        fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lastexam.run.backends import ray_backend, ray_worker

    def damaged(job: Any, archive: bytes) -> Any:
        result = ray_worker.run_trial(job, archive)
        result.archive = result.archive[:700]  # cut short in transit
        return result

    fake, real = ray.remote(damaged), ray_backend._remote
    monkeypatch.setattr(ray_backend, "_remote", lambda name: fake if name == "run_trial" else real(name))
    run = tmp_path / "run"
    with pytest.raises(LastexamError, match="unreadable") as e:
        execute(RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="nop", backend="ray"), run)
    assert "node " in str(e.value) and "--resume" in str(e.value)
    assert list((run / "trials").iterdir()) == []
