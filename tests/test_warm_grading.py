"""Gradings forked by the run's warm grading worker (sandbox/warm.py): one grading cannot see
another's files, and a grader that crashes or hangs is its trial's grader_error while the
worker goes on grading the next trials."""

from __future__ import annotations

import os
import secrets
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL
from lastexam.envs import manage as envs
from lastexam.run.grading import GradeRequest, _warm_worker, grade, warm_release, warm_up
from lastexam.run.session import new_run_id, open_run
from lastexam.sandbox import warm
from lastexam.sandbox.cgroups import Cgroup
from lastexam.store.models import GradeRecord, RunConfig
from lastexam.task.load import load_task
from lastexam.validation.conformance import with_variables

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="warm gradings need root and cgroups")

# Reads every path named in the output's paths.txt (another grading's files, by their host
# path and by the path a grading sees) and lists what it finds; a check fails per path read.
PEEKING_GRADER = '''
import os
from lastexam.grading import Outcome, Rubric


def grade(ctx):
    r = Rubric()
    r.check("own secret seen", 1, (ctx.output / "secret.txt").is_file())
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    r.check("no other process", 1, Outcome(not others, str(others)))
    for path in (ctx.output / "paths.txt").read_text().split():
        try:
            found = os.listdir(path) if os.path.isdir(path) else [open(path).read()]
        except OSError:
            found = []
        r.check(f"nothing at {path}", 1, Outcome(not found, str(found)[:200]))
    return r
'''


def _task(tmp_path: Path, grader: str, limits: str = "") -> Path:
    task = tmp_path / "tasks" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task, ignore=shutil.ignore_patterns("fixtures"))
    (task / "grader.py").write_text(grader)
    if limits:
        toml = task / "task.toml"
        toml.write_text(toml.read_text() + f"\n[limits]\n{limits}\n")
    return task


def _request(area_root: Path, task, name: str, files: dict[str, str]) -> GradeRequest:
    folder = area_root / "trials" / name
    output = folder / "output"
    output.mkdir(parents=True)
    folder.chmod(0o755)
    for file, text in files.items():
        (output / file).write_text(text)
        (output / file).chmod(0o644)
    return GradeRequest(task, envs.load(task.spec.environment, task.path), output, {},
                        folder / "grade", f"{area_root.name}.{name}.grade")


def _session(tmp_path: Path):
    run_id = new_run_id("warm-test")
    return open_run(run_id, tmp_path / "run", create=RunConfig(task_paths=[], agent="nop"))


def _grade_at_once(session, requests: dict[str, GradeRequest]) -> dict[str, GradeRecord]:
    """Each request graded in a thread of its own, all at once."""
    graded: dict[str, GradeRecord] = {}
    threads = [threading.Thread(target=lambda n=n: graded.setdefault(n, grade(
        session.provider, session.area, requests[n]))) for n in requests]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return graded


def test_one_grading_cannot_see_another_gradings_files(tmp_path: Path) -> None:
    task = load_task(_task(tmp_path, PEEKING_GRADER))
    with _session(tmp_path) as session:
        assert warm.usable(session.provider)
        area = session.area.root
        secrets_ = {n: secrets.token_hex(8) for n in ("a", "b")}
        requests = {}
        for me, other in (("a", "b"), ("b", "a")):
            other_output = area / "trials" / other / "output"
            paths = [str(other_output), str(other_output / "secret.txt"),
                     str(area / "trials" / other / "grade" / "scratch"), str(area / "trials")]
            requests[me] = _request(area, task, me, {"secret.txt": secrets_[me],
                                                     "paths.txt": "\n".join(paths)})
        for d in ("a", "b"):  # both gradings' files exist while either one runs
            (area / "trials" / d / "grade").mkdir()
        graded = _grade_at_once(session, requests)
    for name, record in graded.items():
        assert record.ok, record.error
        checks = {c.name: c for c in record.checks}
        assert checks["own secret seen"].passed
        leaked = {c.name: c.message for c in record.checks if not c.passed}
        assert not leaked, (name, leaked)
        assert len(checks) == 7  # the tamper gate, the own secret, no process, four paths


# Crashes, hangs (with a child of its own) or grades, as the output's mode.txt says.
MOODY_GRADER = '''
import ctypes
import subprocess
from lastexam.grading import Rubric


def grade(ctx):
    mode = (ctx.output / "mode.txt").read_text()
    if mode == "crash":
        ctypes.string_at(0)
    if mode == "hang":
        subprocess.Popen(["sleep", "600"])
        while True:
            pass
    r = Rubric()
    r.check("graded", 1, True)
    return r
'''


def test_a_crashing_or_hanging_grader_leaves_the_worker_grading(tmp_path: Path) -> None:
    task = load_task(_task(tmp_path, MOODY_GRADER, "grader_timeout_s = 5"))
    with _session(tmp_path) as session:
        area = session.area
        seen_pids = set()
        outcomes = []
        for name, mode in (("a", "crash"), ("b", "good"), ("c", "hang"), ("d", "good")):
            record = grade(session.provider, area, _request(area.root, task, name, {"mode.txt": mode}))
            running = warm.pool(area.root)
            assert running is not None
            seen_pids.update(pid for label, pid in running.pids().items()
                             if label.startswith(f"{task.spec.environment}."))
            outcomes.append((mode, record.ok, record.score, record.error or ""))
    assert outcomes[0][1] is False and "no result" in outcomes[0][3]
    assert outcomes[1][1:3] == (True, 1.0)
    assert outcomes[2][1] is False and "timeout" in outcomes[2][3]
    assert outcomes[3][1:3] == (True, 1.0)
    assert len(seen_pids) == 1 and None not in seen_pids  # one worker, alive after each grading


def test_a_prepared_grading_that_no_trial_takes_leaves_nothing(tmp_path: Path) -> None:
    """warm_up's slot (a cgroup with a child of the worker waiting in it) is gone once
    released: no cgroup, no process."""
    task = load_task(_task(tmp_path, PEEKING_GRADER))
    env = envs.load(task.spec.environment, task.path)
    with _session(tmp_path) as session:
        name = f"{session.area.root.name}.unused.grade"
        warm_up(session.provider, session.area, env, task, name)
        manager = session.provider.cgroups
        assert manager is not None
        slot = Cgroup(manager.version, [base / name for base in manager.bases])
        deadline = time.monotonic() + 30
        while not slot.pids() and time.monotonic() < deadline:  # the worker starts, its child joins
            time.sleep(0.05)
        waiting = slot.pids()
        assert waiting
        warm_release(session.provider, session.area, env, task, name)
        assert not any(d.exists() for d in slot.dirs)
        deadline = time.monotonic() + 10  # killed at once, reaped by the worker soon after
        while [pid for pid in waiting if Path(f"/proc/{pid}").exists()] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not [pid for pid in waiting if Path(f"/proc/{pid}").exists()]


# Runs a program as graders do with the agent's code (the same uid as the harness): it tries
# to trace the harness, read its memory and environment, and reopen its descriptors.
REACHING_GRADER = r'''
import subprocess
import sys
from lastexam.grading import Outcome, Rubric

PROGRAM = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
harness, reached = os.getppid(), []
if libc.ptrace(0x4206, harness, None, None) == 0:  # PTRACE_SEIZE (the harness is not stopped)
    reached.append("ptrace")
for name in ("mem", "environ", "fd/0"):
    try:
        open(f"/proc/{harness}/{name}", "rb").close()
        reached.append(name)
    except OSError:
        pass
print(" ".join(reached))
"""


def grade(ctx):
    done = subprocess.run([sys.executable, "-S", "-c", PROGRAM], capture_output=True, text=True)
    r = Rubric()
    r.check("harness out of reach", 1, Outcome(done.returncode == 0 and not done.stdout.strip(),
                                                done.stdout + done.stderr[-300:]))
    return r
'''


@pytest.mark.parametrize("warm_mode", ["1", "0"])
def test_code_a_grader_runs_cannot_reach_the_harness(tmp_path: Path, warm_mode: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader that runs the agent's code (a package's tests, a script) runs it as the
    harness's uid: it must not trace the harness, nor read its memory, environment or
    descriptors, through which it could write the result itself."""
    monkeypatch.setenv("LASTEXAM_WARM_GRADING", warm_mode)
    task = load_task(_task(tmp_path, REACHING_GRADER))
    with _session(tmp_path) as session:
        assert warm.usable(session.provider) == (warm_mode == "1")
        record = grade(session.provider, session.area, _request(session.area.root, task, "a", {}))
    assert record.ok, record.error
    check = next(c for c in record.checks if c.name == "harness out of reach")
    assert check.passed, check.message


# Leaves a FIFO where the host writes result.json (a program a grader runs could do the same).
FIFO_GRADER = '''
import os
from lastexam.grading import Rubric


def grade(ctx):
    os.mkfifo("/grade/result/result.json")
    r = Rubric()
    r.check("graded", 1, True)
    return r
'''


def test_a_fifo_left_in_the_result_folder_does_not_block_the_host(tmp_path: Path) -> None:
    """The host replaces result.json once the sandbox is gone: opening a FIFO left there
    would block it forever (as shutil.rmtree does, opening what it removes)."""
    task = load_task(_task(tmp_path, FIFO_GRADER))
    with _session(tmp_path) as session:
        done: list = []
        worker = threading.Thread(target=lambda: done.append(grade(
            session.provider, session.area, _request(session.area.root, task, "a", {}))), daemon=True)
        worker.start()
        worker.join(60)
        assert done, "the grading never ended"
    assert done[0].ok and done[0].score == 1.0, done[0].error


# Tells whether pypdf (a package of the base environment that the grading library never loads)
# was loaded before this grading imported it: the worker preloads what the grader imports.
PRELOAD_GRADER = '''
import sys
from lastexam.grading import Outcome, Rubric


def grade(ctx):
    r = Rubric()
    already = "pypdf" in sys.modules
    import pypdf  # noqa: F401
    r.check("pypdf loaded before the grading", 1, Outcome(already, str(already)))
    return r
'''


@pytest.mark.parametrize("preload", ["1", "0"])
def test_the_worker_preloads_what_the_grader_imports(tmp_path: Path, preload: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LASTEXAM_GRADING_PRELOAD", preload)
    task = load_task(_task(tmp_path, PRELOAD_GRADER))
    with _session(tmp_path) as session:
        record = grade(session.provider, session.area, _request(session.area.root, task, "a", {}))
    assert record.ok, record.error
    assert record.score == (1.0 if preload == "1" else 0.0)


# Tells whether it runs from the code the worker compiled before the fork (grading/harness.py's
# _COMPILED, by file name and source), and which version of its source it is.
COMPILED_GRADER = '''
import sys
from lastexam.grading import Outcome, Rubric


def grade(ctx):
    r = Rubric()
    compiled = sys.modules["lastexam.grading.harness"]._COMPILED.values()
    ran = any(c is grade.__code__ for code in compiled for c in code.co_consts)
    r.check("run from the worker's compile", 1, Outcome(ran, str(len(compiled))))
    r.check(f"version {VERSION}", 1, True)
    return r


VERSION = "a"
'''


def _prepared_grading(session, task, name: str) -> GradeRecord:
    """A grading prepared as a trial's is (warm_up while its agent works), then run."""
    request = _request(session.area.root, task, name, {})
    warm_up(session.provider, session.area, request.env, task, request.name)
    return grade(session.provider, session.area, request)


def test_a_prepared_grading_runs_the_grader_the_worker_compiled(tmp_path: Path) -> None:
    task = load_task(_task(tmp_path, COMPILED_GRADER))
    with _session(tmp_path) as session:
        records = [_prepared_grading(session, task, name) for name in ("a", "b")]
    for record in records:
        assert record.ok, record.error
        assert [(c.name, c.passed) for c in record.checks[1:]] == [
            ("run from the worker's compile", True), ("version a", True)]


def test_a_grader_changed_after_the_worker_compiled_it_runs_as_changed(tmp_path: Path) -> None:
    """The worker's compile is found by the grader's whole source: a grader.py changed since
    (the same path, the same worker) is compiled again by its grading, never run as it was."""
    task = load_task(_task(tmp_path, COMPILED_GRADER))
    with _session(tmp_path) as session:
        first = _prepared_grading(session, task, "a")
        copy = session.area.task_copy(task) / "grader.py"
        copy.chmod(0o644)
        copy.write_text(COMPILED_GRADER.replace('VERSION = "a"', 'VERSION = "b"'))
        second = _prepared_grading(session, task, "b")
    assert [c.name for c in first.checks if c.passed][1:] == ["run from the worker's compile", "version a"]
    assert second.ok, second.error
    assert [(c.name, c.passed) for c in second.checks[1:]] == [
        ("run from the worker's compile", False), ("version b", True)]


def test_gradings_under_other_variables_get_a_worker_of_their_own(tmp_path: Path) -> None:
    """A preloaded module keeps what the worker's variables made of it (OpenBLAS reads
    OPENBLAS_CORETYPE as NumPy loads it): the BLAS gate's gradings must not share a worker."""
    task = load_task(_task(tmp_path, PRELOAD_GRADER))
    with _session(tmp_path) as session:
        env = envs.load(task.spec.environment, task.path)
        other = with_variables(env, {"OPENBLAS_CORETYPE": "Sandybridge"})
        for name, e in (("a", env), ("b", other), ("c", env)):
            request = _request(session.area.root, task, name, {})
            record = grade(session.provider, session.area, replace(request, env=e))
            assert record.ok and record.score == 1.0, record.error
        running = warm.pool(session.area.root)
        assert running is not None
        labels = [label for label in running.pids() if label.startswith(f"{task.spec.environment}.")]
    assert len(labels) == 2


def test_a_worker_closed_while_slots_are_being_made_leaves_nothing(tmp_path: Path) -> None:
    """Slots are made in the background: a worker closed while some are being made and
    others wait in its queue drops every one (no cgroup, no process: neither a slot made
    before nor the worker), and makes none after."""
    task = load_task(_task(tmp_path, PEEKING_GRADER))
    env = envs.load(task.spec.environment, task.path)
    with _session(tmp_path) as session:
        manager = session.provider.cgroups
        assert manager is not None
        worker = _warm_worker(session.provider, session.area, env, task)
        assert worker is not None
        made = f"{session.area.root.name}.made.grade"
        warm_up(session.provider, session.area, env, task, made)
        made_cgroup = Cgroup(manager.version, [base / made for base in manager.bases])
        deadline = time.monotonic() + 30
        while not made_cgroup.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        children, worker_pid = made_cgroup.pids(), worker.pid
        assert children and worker_pid
        gate, entered = threading.Event(), threading.Semaphore(0)
        real = worker._new_slot

        def held(name: str, limits, grader=None):  # each preparation waits here until the worker is closing
            entered.release()
            gate.wait(30)
            return real(name, limits, grader)

        worker._new_slot = held  # type: ignore[method-assign]
        names = [f"{session.area.root.name}.queued-{n}.grade" for n in range(6)]
        for name in names:
            warm_up(session.provider, session.area, env, task, name)
        assert entered.acquire(timeout=30)  # one preparation is running, the others queued
        closing = threading.Thread(target=worker.close)
        closing.start()
        while not worker._closed:
            time.sleep(0.01)
        gate.set()
        closing.join(60)
        assert not closing.is_alive()
        for name in [made, *names]:
            assert not any((base / name).exists() for base in manager.bases), name
        assert not [pid for pid in (*children, worker_pid) if Path(f"/proc/{pid}").exists()]


def _slot_cgroup(session, name: str) -> Cgroup:
    manager = session.provider.cgroups
    assert manager is not None
    return Cgroup(manager.version, [base / name for base in manager.bases])


def _wait_for_pids(cg: Cgroup) -> list[int]:
    deadline = time.monotonic() + 30
    while not cg.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    return cg.pids()


def test_a_grading_ends_while_slots_prepared_after_it_still_wait(tmp_path: Path) -> None:
    """Each slot's process is forked by the worker, which holds every waiting slot's status
    pipe: a slot made after another must not keep that one's pipe open (its grading would
    then wait for the later slot to go)."""
    task = load_task(_task(tmp_path, PEEKING_GRADER))
    env = envs.load(task.spec.environment, task.path)
    with _session(tmp_path) as session:
        area = session.area
        req = _request(area.root, task, "first", {"secret.txt": "s", "paths.txt": ""})
        later = f"{area.root.name}.later.grade"
        warm_up(session.provider, area, env, task, req.name)
        assert _wait_for_pids(_slot_cgroup(session, req.name))
        warm_up(session.provider, area, env, task, later)
        assert _wait_for_pids(_slot_cgroup(session, later))
        graded: list = []
        worker = threading.Thread(target=lambda: graded.append(grade(session.provider, area, req)),
                                  daemon=True)
        worker.start()
        worker.join(timeout=60)
        waited = worker.is_alive()
        warm_release(session.provider, area, env, task, later)  # frees a grading stuck on it
        worker.join(timeout=30)
    assert not waited, "the grading waited for a slot prepared after its own"
    assert graded and graded[0].ok, graded and graded[0].error


# The kernel's keyrings belong to a user namespace, which gradings share with their worker.
KEYRING_GRADER = '''
import ctypes
import os
from lastexam.grading import Outcome, Rubric

ADD_KEY = {"x86_64": 248, "aarch64": 217}[os.uname().machine]


def grade(ctx):
    libc = ctypes.CDLL(None, use_errno=True)
    key = libc.syscall(ADD_KEY, b"user", b"left-by-a-grading", b"secret", 6, -4)  # -4: @u
    r = Rubric()
    r.check("no key added", 1, Outcome(key < 0, f"key {key}"))
    # In a Landlock domain that handles block devices, mknod of one is refused by Landlock
    # (EACCES) before the capability check (EPERM) is reached.
    try:
        os.mknod("/tmp/block", 0o600 | 0o060000, os.makedev(7, 0))
        err = 0
    except OSError as e:
        err = e.errno
    r.check("in a Landlock domain", 1, Outcome(err == 13, f"errno {err}"))
    return r
'''


def test_a_grading_cannot_use_the_kernels_keyrings(tmp_path: Path) -> None:
    """...and is in a Landlock domain of its own (see the next test for why)."""
    task = load_task(_task(tmp_path, KEYRING_GRADER))
    with _session(tmp_path) as session:
        record = grade(session.provider, session.area,
                       _request(session.area.root, task, "keys", {}))
    assert record.ok, record.error
    assert record.score == 1.0, [c.message for c in record.checks if not c.passed]


def _seize_errno(landlock: bool) -> int:
    """0 if one unprivileged process could PTRACE_SEIZE another of the same uid and user
    namespace (both dumpable, no capabilities, no_new_privs), else the errno; each process first
    takes a Landlock domain of its own, as a grading does, when `landlock`."""
    import ctypes

    from lastexam.sandbox import warm_worker

    libc = ctypes.CDLL(None, use_errno=True)

    def become_a_grading() -> None:
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
        libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: as a program a grader runs
        libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
        if landlock:
            warm_worker.landlock_domain()

    ready_r, ready_w = os.pipe()
    target = os.fork()
    if target == 0:
        try:
            become_a_grading()
            os.write(ready_w, b"1")
            time.sleep(30)
        finally:
            os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"1"
    os.close(ready_r)
    tracer = os.fork()
    if tracer == 0:
        try:
            become_a_grading()
            code = 0 if libc.ptrace(0x4206, target, 0, 0) == 0 else ctypes.get_errno()  # SEIZE
        except BaseException:
            code = 255
        os._exit(code)
    _, status = os.waitpid(tracer, 0)
    os.kill(target, 9)
    os.waitpid(target, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_gradings_process_cannot_trace_another_gradings(tmp_path: Path) -> None:
    """Gradings share the worker's user namespace and uid: the kernel's credential check then
    lets one trace the other, and a Landlock domain per grading is what refuses it."""
    import errno

    assert _seize_errno(landlock=False) == 0  # what the shared user namespace alone allows
    assert _seize_errno(landlock=True) == errno.EPERM


# Leaves a file named after its token in /tmp and /dev/shm and opens a pseudo-terminal, tries
# to write into the shared parts of the root, then, once the other grading has done the same,
# looks for anything that is not its own.
SHARING_GRADER = '''
import os
import time
from lastexam.grading import Outcome, Rubric


def grade(ctx):
    r = Rubric()
    me = (ctx.output / "token.txt").read_text()
    for folder in ("/tmp", "/dev/shm"):
        with open(f"{folder}/{me}", "w") as f:
            f.write(me)
    master, slave = os.openpty()
    mine = {"ptmx", os.ttyname(slave).rsplit("/", 1)[1]}
    refused = []
    for path in ("/x", "/dev/x", "/grade/x", "/etc/x", "/proc/x"):
        try:
            open(path, "w").close()
        except OSError:
            refused.append(path)
    r.check("the shared root is read-only", 1, Outcome(len(refused) == 5, str(refused)))
    time.sleep(2)  # the other grading's files and terminal are there by now, if they can be seen
    for folder in ("/tmp", "/dev/shm"):
        others = [n for n in os.listdir(folder) if n != me]
        r.check(f"nothing else in {folder}", 1, Outcome(not others, str(others)))
    others = sorted(set(os.listdir("/dev/pts")) - mine)
    r.check("no other terminal", 1, Outcome(not others, str(others)))
    return r
'''


def test_gradings_share_no_writable_place(tmp_path: Path) -> None:
    """Gradings' roots are copies of the worker's template: what each may write (/tmp,
    /dev/shm, pseudo-terminals) is its own, and the shared parts take no writes."""
    task = load_task(_task(tmp_path, SHARING_GRADER))
    with _session(tmp_path) as session:
        area = session.area.root
        requests = {n: _request(area, task, n, {"token.txt": secrets.token_hex(8)}) for n in "ab"}
        graded = _grade_at_once(session, requests)
    for name, record in graded.items():
        assert record.ok, record.error
        failed = {c.name: c.message for c in record.checks if not c.passed}
        assert not failed, (name, failed)
        assert len(record.checks) == 5  # the tamper gate, read-only root, three places


TOKEN_GRADER = '''
from lastexam.grading import Outcome, Rubric


def grade(ctx):
    r = Rubric()
    token = (ctx.output / "token.txt").read_text()
    r.check("the output as the host has it now", 1, Outcome(token == "new", token))
    return r
'''


def test_a_grading_never_grades_other_files_than_the_host_named(tmp_path: Path) -> None:
    """The worker's mounts are its own namespace's: a mount made on the host after it started
    (over a trial's output, here) reaches it only where the host's mounts propagate. The
    grading then grades the files the host has now, or its sandbox fails before the grader
    runs (the harness's failure, not the grader's); never what lay underneath."""
    import subprocess

    from lastexam.sandbox.base import SandboxError

    refused = ""
    task = load_task(_task(tmp_path, TOKEN_GRADER))
    with _session(tmp_path) as session:
        area = session.area.root
        first = _request(area, task, "a", {"token.txt": "new"})
        late = _request(area, task, "b", {"token.txt": "old"})
        assert grade(session.provider, session.area, first).score == 1.0  # the worker is up
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", str(late.output_dir)],
                       check=True)
        try:
            (late.output_dir / "token.txt").write_text("new")
            (late.output_dir / "token.txt").chmod(0o644)
            try:
                record = grade(session.provider, session.area, late)
            except SandboxError as e:
                record, refused = None, str(e)
        finally:
            subprocess.run(["umount", str(late.output_dir)], check=True)
    if record is not None:  # the host's mount reached the worker
        assert record.ok and record.score == 1.0, (record.error, [c.message for c in record.checks])
    else:
        assert "is not, in the worker's mounts, the file the host named" in refused


def test_a_worker_that_cannot_build_its_template_takes_no_grading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No grading runs in a root the worker could not build: the worker leaves (its log says
    why) and the grading is the sandbox's failure, not the grader's."""
    from lastexam.sandbox.base import SandboxError

    spec = warm.WarmWorker._spec

    def broken(self: warm.WarmWorker) -> dict[str, object]:
        return {**spec(self), "system": [["/no-such-folder", None]]}

    monkeypatch.setattr(warm.WarmWorker, "_spec", broken)
    task = load_task(_task(tmp_path, TOKEN_GRADER))
    with _session(tmp_path) as session:
        request = _request(session.area.root, task, "a", {"token.txt": "new"})
        with pytest.raises(SandboxError):
            grade(session.provider, session.area, request)
        logs = [p.read_text() for p in (session.area.root / "warm").glob("*/worker.log")]
    assert any("no-such-folder" in log for log in logs), logs


KIND_GRADER = '''
from lastexam.grading import Rubric


def grade(ctx):
    r = Rubric()
    r.check("the output is a folder", 1, ctx.output.is_dir())
    return r
'''


def test_a_gradings_mount_points_are_of_its_own_kinds(tmp_path: Path) -> None:
    """A task whose output is the whole folder (outputs = ["."], as a Harbor import has) gets,
    malformed, a file there: a later grading's output mounted as a file where an earlier one's
    was a folder (the mount points were shared once, and this failed with ENOTDIR)."""
    task = load_task(_task(tmp_path, KIND_GRADER))
    with _session(tmp_path) as session:
        area = session.area.root
        folder = _request(area, task, "a", {"x.txt": "x"})
        file = _request(area, task, "b", {})
        file.output_dir.rmdir()
        file.output_dir.write_text("")
        file.output_dir.chmod(0o644)
        records = [grade(session.provider, session.area, r) for r in (folder, file, folder)]
    assert all(r.ok for r in records), [r.error for r in records]
    assert [r.score for r in records] == [1.0, 0.0, 1.0]


EXIT_70_GRADER = '''
import os


def grade(ctx):
    os.write(2, b"exiting as a failed setup would")
    os._exit(70)
'''


def test_a_grader_that_exits_as_a_failed_setup_is_still_the_graders_failure(tmp_path: Path) -> None:
    """Whether a grading's sandbox was set up is said by the grading process on a pipe it
    closes before the job's code runs, not read from an exit code a grader can choose."""
    task = load_task(_task(tmp_path, EXIT_70_GRADER))
    with _session(tmp_path) as session:
        record = grade(session.provider, session.area, _request(session.area.root, task, "a", {}))
    assert not record.ok and "exit 70" in (record.error or ""), record.error


# Reports the grading process's capability sets, whether it may gain privileges, and whether
# threading is loaded (the worker's library must not bring it: its after-fork hook would run in
# every forked grading).
STATUS_GRADER = '''
import sys
from lastexam.grading import Outcome, Rubric


def grade(ctx):
    r = Rubric()
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        r.check(f"{name} empty", 1, Outcome(int(status[name].strip(), 16) == 0, status[name].strip()))
    r.check("no new privileges", 1, Outcome(status["NoNewPrivs"].strip() == "1", status["NoNewPrivs"]))
    r.check("threading not loaded", 1, "threading" not in sys.modules)
    return r
'''


def test_a_grading_holds_no_capability_nor_threading(tmp_path: Path) -> None:
    task = load_task(_task(tmp_path, STATUS_GRADER))
    with _session(tmp_path) as session:
        assert warm.usable(session.provider)
        record = _grade_at_once(session, {"a": _request(session.area.root, task, "a", {})})["a"]
    assert record.ok, record.error
    failed = {c.name: c.message for c in record.checks if not c.passed}
    assert not failed, failed
    assert len(record.checks) == 8  # the tamper gate and seven
