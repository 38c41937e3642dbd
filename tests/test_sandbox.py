"""Each sandbox property, attacked from inside by the `command` agent and shown to hold."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import socket
import threading
import time
import tomllib
import uuid
from pathlib import Path

import pytest
from adversarial.attack_kit import searched_files

from conftest import (
    COLUMN_TOTAL,
    ROOT,
    Point,
    processes_named,
    run_command_agent,
    run_json,
    run_watching,
    trial_dir,
)
from lastexam.paths import lastexam_home

pytestmark = pytest.mark.usefixtures("base_env_ready")


def _agent_log(run: Path, trial: dict) -> str:
    return (trial_dir(run, trial) / "agent" / "agent.stdout.log").read_text(errors="replace")


HIDDEN_NAMES = ("expected.json", "grader.py", "solve.sh", "fixture.toml", "task.toml", "results.db",
                "trial.json")


def _section(log: str, name: str) -> str:
    return log.split(f"{name}-BEGIN\n", 1)[1].split(f"{name}-END", 1)[0]


def test_hidden_task_parts_are_absent(tmp_path: Path, sandbox: str) -> None:
    """No file anywhere in the sandbox (all of its file system but /proc, /sys and /dev; of the
    system's and environments' read-only installs, files under 4 MiB) holds the content of the
    task's reference, grader, solution or fixtures, nor its canary outside the instruction; nor
    does any file bear their names."""
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    marks = {part: f"lastexam-hidden-{part}-{uuid.uuid4().hex}" for part in
             ("reference", "grader", "solution", "fixture", "probe")}
    (task / "reference" / "notes.txt").write_text(marks["reference"] + "\n")
    for path, part in ((task / "grader.py", "grader"), (task / "solution" / "solve.sh", "solution")):
        path.write_text(path.read_text() + f"\n# {marks[part]}\n")
    (task / "fixtures" / "negative" / "partial" / "output" / "notes.txt").write_text(marks["fixture"] + "\n")
    canary = tomllib.loads((task / "task.toml").read_text())["canary"]

    def halves(text: str) -> str:
        # Each string is written in two halves, which only printf joins: the sandbox's copies of
        # this command (its argv, an exec log) cannot match.
        return f"'{text[: len(text) // 2]}' '{text[len(text) // 2:]}'"

    patterns = " ".join(halves(text) for text in (*marks.values(), canary))
    pruned = "-path /proc -o -path /sys -o -path /dev -o -path /tmp/patterns -o -path /task/instruction.md"
    names = " -o ".join(f"-name {n}" for n in HIDDEN_NAMES)
    cmd = (
        f"printf '%s%s\\n' {patterns} > /tmp/patterns; "
        f"printf '%s%s\\n' {halves(marks['probe'])} > /task/output/probe.txt; "
        "ls -a /task; "
        f"echo NAMES-BEGIN; find / \\( {pruned} \\) -prune -o \\( {names} \\) -print 2>/dev/null; echo NAMES-END; "
        f"echo FILES-BEGIN; find / \\( {pruned} \\) -prune -o -type f {searched_files()} -print0 2>/dev/null"
        " | xargs -0 -r grep -lF -f /tmp/patterns -- 2>/dev/null; echo FILES-END; "
        "echo SEARCHED $(find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f"
        f" {searched_files()} -print 2>/dev/null | wc -l); "
        "test -e /root && echo ROOT-VISIBLE; echo ALL-SEARCHED"
    )
    run = tmp_path / "run"
    result = run_json("run", task, "--agent", "command", "--agent-arg", f"cmd={cmd}", "--out", run,
                      "--timeout", "900", timeout=1200)
    log = _agent_log(run, result["trials"][0])
    assert log.rstrip().endswith("ALL-SEARCHED"), log[-2000:]
    listing = log.split("\n", 5)
    assert set(listing[0:5]) >= {".", "..", "inputs", "instruction.md", "output"}
    assert _section(log, "NAMES").split() == []
    # The probe, written in the sandbox, shows the search reads file content; nothing else matches.
    assert _section(log, "FILES").split() == ["/task/output/probe.txt"]
    # The system's files, not just /task (a broken size test, as -size -4M, keeps only empty ones).
    assert int(log.split("SEARCHED ", 1)[1].split()[0]) > 10_000
    # What the search reads only in part holds nothing of a task: neither this project nor
    # LASTEXAM_HOME (the work areas, the runs' copies of tasks) lies under it.
    for place in (ROOT, lastexam_home()):
        assert not place.resolve().is_relative_to("/usr"), place
    assert "ROOT-VISIBLE" not in log
    assert str(ROOT) not in log and str(tmp_path) not in log


def test_no_network_but_loopback(tmp_path: Path, sandbox: str) -> None:
    """From inside: a network namespace of its own with only `lo`, loopback working, and a
    listener this test starts on the host unreachable, both at the host's own addresses and at
    the host's 127.0.0.1 (inside, that is the sandbox's own loopback). No internet needed."""
    listener = socket.create_server(("0.0.0.0", 0))
    port = listener.getsockname()[1]
    targets = ["127.0.0.1", *_host_addresses()]
    accepted: list[str] = []

    def accept() -> None:
        while True:
            try:
                conn, peer = listener.accept()
            except OSError:
                return
            accepted.append(peer[0])
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    for host in targets:
        socket.create_connection((host, port), timeout=5).close()  # reachable from the host
    cmd = (
        "python3 - <<'EOF'\n"
        "import os, socket\n"
        "print('NETNS', os.readlink('/proc/self/ns/net'))\n"
        "print('IFACES', ' '.join(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:])))\n"
        f"for host in {targets!r}:\n"
        "    try:\n"
        f"        socket.create_connection((host, {port}), timeout=5); print('REACHED', host)\n"
        "    except OSError as e:\n"
        "        print('blocked', host, type(e).__name__)\n"
        "s = socket.create_server(('127.0.0.1', 0)); c = socket.create_connection(s.getsockname())\n"
        "s.accept()[0].sendall(b'ping'); print('loopback', c.recv(4).decode())\n"
        "EOF"
    )
    run = tmp_path / "run"
    try:
        log = _agent_log(run, run_command_agent(cmd, run))
    finally:
        listener.close()
    assert log.split("NETNS ", 1)[1].split()[0] != os.readlink("/proc/self/ns/net")
    assert log.split("IFACES ", 1)[1].splitlines()[0].split() == ["lo"]
    assert "REACHED" not in log and log.count("blocked") == len(targets)
    assert sorted(accepted) == sorted(targets)  # only the host's own connections ever arrived
    assert "loopback ping" in log


def _host_addresses() -> list[str]:
    """The host's own IPv4 addresses other than loopback (the kernel's local routes)."""
    found, last = [], ""
    for line in Path("/proc/net/fib_trie").read_text().splitlines():
        if line.strip().startswith("|--"):
            last = line.split()[-1]
        elif "/32 host LOCAL" in line and not last.startswith("127.") and last not in found:
            found.append(last)
    return found


def test_cannot_write_outside_the_workspace(tmp_path: Path, sandbox: str) -> None:
    cmd = (
        "for p in /usr/x /etc/x /opt/x /x /task/x /var/lib/lastexam/x; do "
        "  (echo hi > $p) 2>/dev/null && echo WROTE $p || echo denied $p; done; "
        "echo hi > /task/output/ok && echo hi > $HOME/ok && echo hi > /tmp/ok && echo writable-ok"
    )
    run = tmp_path / "run"
    log = _agent_log(run, run_command_agent(cmd, run))
    assert "WROTE" not in log
    assert log.count("denied") == 6 and "writable-ok" in log


NAMESPACES = ("user", "pid", "net", "ipc", "uts", "mnt")


def test_runs_without_host_privileges(tmp_path: Path, sandbox: str) -> None:
    cmd = (
        "grep CapEff /proc/self/status; id -u; "
        f"for ns in {' '.join(NAMESPACES)}; do echo NS $ns $(readlink /proc/self/ns/$ns); done; "
        "mount -t tmpfs none /tmp 2>/dev/null && echo MOUNTED; "
        "unshare -U true 2>/dev/null && echo NESTED-USERNS; "
        "cat /etc/shadow >/dev/null 2>&1 && echo READ-SHADOW; "
        "kill -9 1 2>/dev/null; echo END"
    )
    run = tmp_path / "run"
    log = _agent_log(run, run_command_agent(cmd, run))
    assert "CapEff:\t0000000000000000" in log
    assert "MOUNTED" not in log and "NESTED-USERNS" not in log and "READ-SHADOW" not in log
    inside = dict(line.split()[1:3] for line in log.splitlines() if line.startswith("NS "))
    assert sorted(inside) == sorted(NAMESPACES)
    shared = [ns for ns in NAMESPACES if inside[ns] == os.readlink(f"/proc/self/ns/{ns}")]
    assert shared == [], f"namespaces shared with the host: {shared}"
    assert "END" in log



IO_URING = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "params = ctypes.create_string_buffer(120)\n"
    "fd = libc.syscall(425, 4, params)\n"
    "print('IO_URING', 'created' if fd >= 0 else os.strerror(ctypes.get_errno()))\n"
)


def test_io_uring_is_refused(tmp_path: Path, sandbox: str) -> None:
    """An io_uring could fallocate out of the seccomp filter's sight (IORING_OP_FALLOCATE)."""
    run = tmp_path / "run"
    log = _agent_log(run, run_command_agent(f"python3 -c {shlex.quote(IO_URING)}", run))
    assert "IO_URING Operation not supported" in log, log[-500:]


KEYRING = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "nr = {'x86_64': 248, 'aarch64': 217}[os.uname().machine]\n"
    "key = libc.syscall(nr, b'user', b'k', b'v', 1, -4)\n"
    "print('ADD_KEY', 'added' if key >= 0 else 'refused')\n"
)


def test_the_kernels_keyrings_are_refused(tmp_path: Path, sandbox: str) -> None:
    """A user's keyring outlives a sandbox in its user namespace (the warm gradings share
    theirs): add_key, request_key and keyctl are refused, as container runtimes do."""
    run = tmp_path / "run"
    log = _agent_log(run, run_command_agent(f"python3 -c {shlex.quote(KEYRING)}", run))
    assert "ADD_KEY refused" in log, log[-500:]


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid switch happens when the harness is root")
def test_files_written_in_the_sandbox_belong_to_a_dedicated_host_uid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    """The sandbox's host uid is no account's and no other process's (not `nobody`)."""
    import pwd

    from lastexam.run.session import make_provider
    from lastexam.sandbox.base import Mount, SandboxLimits, SandboxRequest
    from lastexam.sandbox.bwrap import DEFAULT_HOST_UID, uid_in_use

    monkeypatch.delenv("LASTEXAM_SANDBOX_UID", raising=False)
    area = lastexam_home() / "work" / f"uidtest-{os.getpid()}"
    out = area / "out"
    out.mkdir(parents=True)
    area.chmod(0o711)
    try:
        provider = make_provider(sandbox, area / "etc")
        assert provider.uid == DEFAULT_HOST_UID and provider.preflight() == []
        os.chown(out, provider.uid, provider.uid)
        result = provider.run(SandboxRequest(
            name=f"uidtest-{os.getpid()}", argv=["/bin/sh", "-c", "echo x > /out/f"],
            mounts=[Mount(out, "/out", writable=True)], env={"PATH": "/usr/bin:/bin"}, cwd="/",
            limits=SandboxLimits(wall_s=30, memory_mb=256, max_processes=16, watch_bytes=0),
            stdout=tmp_path / "so", stderr=tmp_path / "se",
        ))
        assert result.exit_code == 0
        owner = (out / "f").stat().st_uid
        assert owner == DEFAULT_HOST_UID and (out / "f").stat().st_gid == DEFAULT_HOST_UID
        with pytest.raises(KeyError):
            pwd.getpwuid(owner)
        assert uid_in_use(owner) is None
        # A uid that an account holds is refused before any sandbox runs as it.
        monkeypatch.setenv("LASTEXAM_SANDBOX_UID", "65534")
        problems = make_provider(sandbox, area / "etc").preflight()
        assert len(problems) == 1 and "65534 is used by the account" in problems[0]
    finally:
        shutil.rmtree(area, ignore_errors=True)


def _split_marker() -> tuple[str, str]:
    """A unique sleep duration that names the sleepers (/bin/sh has no `exec -a`), assembled by
    the sandbox's shell from two halves: the harness's own command line, which holds the
    agent's command, never contains it whole."""
    marker = f"{100_000 + os.getpid()}.{uuid.uuid4().int % 10**9:09d}"
    return marker, f"A='{marker[:4]}'; B='{marker[4:]}'; export M=\"$A$B\"; "


def _run_watching_survivors(tmp_path: Path, cmd: str, marker: str, timeout: str) -> tuple[dict, list]:
    """Run the command agent; at the collect phase (the agent's sandbox is over, its outputs
    not yet read) list the processes named marker."""
    at_collect: list[list[str]] = []

    def on_point(point: Point, _proc) -> None:
        if point.phase == "collect":
            at_collect.append(processes_named(marker))

    watched = run_watching(["run", COLUMN_TOTAL, "--agent", "command", "--agent-arg", f"cmd={cmd}",
                            "--timeout", timeout, "--out", tmp_path / "run", "--json"],
                           tmp_path / "watch", on_point, delays={"collect": 1})
    assert watched.returncode == 0, watched.stderr[-2000:]
    return json.loads(watched.stdout)["trials"][0], at_collect


def test_time_cap_kills_every_process(tmp_path: Path, sandbox: str) -> None:
    marker, setup = _split_marker()
    cmd = (
        setup + 'sleep "$M" & '
        "setsid sh -c 'sleep \"$M\"' & "
        "trap '' TERM; echo partial > /task/output/result.json; sleep 1000"
    )
    trial, at_collect = _run_watching_survivors(tmp_path, cmd, marker, "2")
    assert trial["status"] == "timeout"
    assert trial["score"] == 0.0  # still graded: what it left at the cap counts
    assert any(c["name"].startswith("result.json parses") and not c["passed"] for c in trial["checks"])
    assert at_collect == [[]]  # every process was gone before the outputs were collected
    assert processes_named(marker) == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.skipif(os.geteuid() != 0, reason="memory and process limits need cgroups (root)")
def test_memory_limit(tmp_path: Path, sandbox: str) -> None:
    task = _with_limits(tmp_path, "memory_mb = 128")
    cmd = "python3 -c 'x = bytearray(600 * 1024 * 1024); print(len(x))'; echo after"
    run = tmp_path / "run"
    trial = run_command_agent(cmd, run, task)
    log = _agent_log(run, trial)
    assert "629145600" not in log
    assert trial["status"] == "agent_error" and trial["ended_by"] == "memory"


@pytest.mark.skipif(os.geteuid() != 0, reason="memory and process limits need cgroups (root)")
def test_process_limit(tmp_path: Path, sandbox: str) -> None:
    task = _with_limits(tmp_path, "max_processes = 32")
    cmd = (
        "python3 - <<'EOF'\n"
        "import os, time\n"
        "n = 0\n"
        "for _ in range(100):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30); os._exit(0)\n"
        "        n += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print('forked', n)\n"
        "EOF"
    )
    run = tmp_path / "run"
    trial = run_command_agent(cmd, run, task, "--timeout", "20")
    log = _agent_log(run, trial)
    forked = int(log.split("forked")[1].split()[0])
    assert 10 < forked < 32


def test_output_size_cap(tmp_path: Path, sandbox: str) -> None:
    task = _with_limits(tmp_path, "output_mb = 5")
    cmd = "head -c 200000000 /dev/zero > /task/output/big; sleep 30"
    run = tmp_path / "run"
    trial = run_command_agent(cmd, run, task, "--timeout", "25")
    assert trial["status"] == "agent_error"
    size = sum(f.stat().st_size for f in (trial_dir(run, trial) / "output").rglob("*") if f.is_file())
    assert size <= 5 * 1024 * 1024
    # A file past the cap is dropped and listed, not copied in part.
    record = json.loads((trial_dir(run, trial) / "trial.json").read_text())
    assert {"path": "big", "why": "over the output size cap"} in record["outputs"]["dropped"]


def _with_limits(tmp_path: Path, line: str) -> Path:
    import shutil

    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text() + f"\n[limits]\n{line}\n")
    return task


def test_background_processes_end_with_the_agent(tmp_path: Path, sandbox: str) -> None:
    """When the agent's own process exits, what it left running is killed: the trial does not
    wait for it (nor for the exec-log tracer) until the time cap."""
    marker, setup = _split_marker()
    cmd = (
        setup + '(sleep "$M" &); setsid sh -c \'sleep "$M"\' & '
        "echo '{\"total\": 6.75, \"count\": 3}' > /task/output/result.json"
    )
    trial, at_collect = _run_watching_survivors(tmp_path, cmd, marker, "600")
    # Ended by the agent's exit, not by the cap: waiting for the sleepers would be a timeout.
    assert trial["status"] == "completed" and trial["score"] == 1.0
    assert at_collect == [[]]
    assert processes_named(marker) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="teardown checks need cgroups (root)")
def test_processes_surviving_the_teardown_count_against_the_agent(tmp_path: Path) -> None:
    """Processes left after SIGKILL and the teardown (simulated: the cgroup reports one) make
    an agent_error that counts, not an infra_error that is retried and left out."""
    import json
    import subprocess
    import sys

    patched = (
        "import sys\n"
        "from lastexam.sandbox import cgroups\n"
        "real = cgroups.Cgroup.kill_all\n"
        "def kill_all(self, deadline_s=10.0):\n"
        "    return real(self, deadline_s) + (1 if self.dirs[0].name.endswith('__1') else 0)\n"
        "cgroups.Cgroup.kill_all = kill_all\n"
        "from lastexam.cli import main\n"
        "sys.argv[0] = 'lastexam'\n"
        "main()\n"
    )
    cmd = "echo '{\"total\": 6.75, \"count\": 3}' > /task/output/result.json"
    proc = subprocess.run(
        [sys.executable, "-c", patched, "run", str(COLUMN_TOTAL), "--agent", "command",
         "--agent-arg", f"cmd={cmd}", "--out", str(tmp_path / "run"), "--json"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    from tests.faults.campaign import sandbox_cgroups

    for c in sandbox_cgroups():  # kept, as for real survivors, for the next run's sweep
        if os.path.basename(c).startswith(f"{result['run_id']}."):
            os.rmdir(c)
    trial = result["trials"][0]
    assert trial["status"] == "agent_error" and trial["ended_by"] == "survivors", trial
    assert trial["policy"]["counts"] and trial["policy"]["retries"] == 0
    assert "survived" in trial["error"]


@pytest.mark.skipif(os.geteuid() != 0, reason="running a process as another uid needs root")
def test_a_uid_a_host_process_runs_as_is_not_dedicated() -> None:
    import subprocess

    from lastexam.sandbox.bwrap import uid_in_use

    uid = 1_990_000_123
    assert uid_in_use(uid) is None
    proc = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                             "sleep", "60"])
    try:
        for _ in range(200):
            found = uid_in_use(uid)
            if found:
                break
            time.sleep(0.01)
        assert found == f"process {proc.pid} (sleep)"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's cgroup needs root")
def test_a_request_that_cannot_start_leaves_no_descriptor_or_cgroup(tmp_path: Path) -> None:
    """A variable holding a NUL cannot be passed to a program: the launch is refused as a
    sandbox error, and its pipes, seccomp filter and cgroup go with it."""
    from lastexam.run.session import make_provider
    from lastexam.sandbox.base import SandboxError, SandboxLimits, SandboxRequest
    from tests.faults.campaign import sandbox_cgroups

    name = f"nul-{uuid.uuid4().hex[:8]}"
    area = lastexam_home() / "work" / name
    area.mkdir(parents=True)
    try:
        provider = make_provider("bwrap", area / "etc")
        request = SandboxRequest(
            name=name, argv=["/bin/true"], mounts=[], env={"PATH": "/usr/bin:/bin", "X": "a\0b"},
            cwd="/", limits=SandboxLimits(wall_s=30, memory_mb=256, max_processes=16, watch_bytes=0),
            stdout=tmp_path / "so", stderr=tmp_path / "se",
        )
        provider.run(dataclasses.replace(request, env={"PATH": "/usr/bin:/bin"}))  # fds opened once
        before = sorted(os.listdir("/proc/self/fd"))
        with pytest.raises(SandboxError, match="null"):
            provider.run(request)
        assert sorted(os.listdir("/proc/self/fd")) == before
        assert not [c for c in sandbox_cgroups() if os.path.basename(c) == name]
    finally:
        shutil.rmtree(area, ignore_errors=True)
