"""The warm grading worker: python3 -S -B warm_worker.py SOCKET_FD.

Started once per run and environment by sandbox/warm.py, as the sandbox's unprivileged host
uid, with the grading library already imported and one made-up grading rehearsed by it
(grading/rehearsal.py: the library's own grader, so that no slot pays a first grading's
costs). It runs no task's code itself: for each slot
the host prepares (a job socket and cgroups) it forks a child that joins the cgroups, enters
new user, mount, pid, network, ipc, uts and cgroup namespaces and forks the grading process,
the pid namespace's init, which builds the part of the root every job shares (the system
read-only, /dev, /proc) while the slot waits. When the job comes (a JSON header and the job's
descriptors) the init adds the job's own mounts and a private /tmp, pivots into the root,
forbids further user namespaces, drops every capability, takes the seccomp filter and the
file-size limit, and runs the grading harness. Its parent reports its wait status on the
job's status pipe. Only the standard library is used here (the host's Python, no site packages).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import resource
import signal
import socket
import struct
import sys

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x2000000, 0x4000000, 0x8000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_CHILD_SUBREAPER = 36
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
# statvfs flags that are locked on a bind mount and must be kept when it is remounted.
KEPT_FLAGS = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {"stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
             "fd": "/proc/self/fd", "core": "/proc/kcore"}
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")
MAX_JOB_FDS = 16

libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [None if s is None else s.encode() for s in (source, target, fstype, data)]
    _check(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def _bind(source: str, target: str, writable: bool, device: bool = False) -> None:
    """A recursive bind mount, read-only unless writable, keeping the source's locked flags."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    elif not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "wb").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    flags = os.statvfs(target).f_flag & KEPT_FLAGS | MS_NOSUID | (0 if device else MS_NODEV)
    if not writable:
        flags |= MS_RDONLY
    _mount(None, target, None, MS_BIND | MS_REMOUNT | flags)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces(inside_uid: int) -> None:
    """In the slot's child, already in the job's cgroups: new user, mount, pid, network, ipc,
    uts and cgroup namespaces, the worker's uid mapped to `inside_uid`."""
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
                        | CLONE_NEWUTS | CLONE_NEWCGROUP), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside_uid} {uid} 1")
    _write("/proc/self/gid_map", f"{inside_uid} {gid} 1")


def build_shared_root(spec: dict) -> None:
    """As the new pid namespace's init, before its job: the part of the root every job
    shares: the system read-only, /etc's files, a private /dev and /proc."""
    root = spec["root"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for path, link in spec["system"]:
        if link is not None:
            os.symlink(link, root + path)
        else:
            _bind(path, root + path, writable=False)
    for source, target in spec["etc_files"]:
        _bind(source, root + target, writable=False)
    _dev(root + "/dev")
    os.makedirs(root + "/var")
    os.symlink("../tmp", root + "/var/tmp")
    os.mkdir(root + "/proc")
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # No user namespace below this one (bwrap's --disable-userns), set while we may.
    _write(root + "/proc/sys/user/max_user_namespaces", "0")
    for name in PROC_COVERED:
        if os.path.exists(f"{root}/proc/{name}"):
            _bind(f"{root}/proc/{name}", f"{root}/proc/{name}", writable=False)


def _dev(dev: str) -> None:
    os.mkdir(dev)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID, "mode=0755,size=64k")
    for node in DEV_NODES:
        _bind(f"/dev/{node}", f"{dev}/{node}", writable=True, device=True)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"{dev}/{name}")
    os.mkdir(f"{dev}/pts")
    _mount("devpts", f"{dev}/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    os.symlink("pts/ptmx", f"{dev}/ptmx")
    os.mkdir(f"{dev}/shm")
    _mount("tmpfs", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    _mount(None, dev, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)


class Job:
    """One grading, in the pid namespace's init: what the host sent, and the descriptors that
    came with it (the status pipe stays with the init's parent)."""

    def __init__(self, header: dict, fds: list[int], spec: dict):
        self.header, self.spec = header, spec
        self.stdout, self.stderr = fds[0], fds[1]
        self.passed = dict(zip(header["pass_fds"], fds[2:], strict=True))

    def finish_root(self) -> None:
        """The job's /tmp and mounts added to the shared root (build_shared_root), then the
        root pivoted into and made read-only; the old one gone."""
        root = self.spec["root"]
        os.mkdir(root + "/tmp")
        _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
               f"mode=1777,size={self.header['tmp_bytes']}")
        for source, target, writable in self.header["mounts"]:
            _bind(source, root + target, writable)
        os.chdir(root)
        _check(libc.syscall(PIVOT_ROOT[os.uname().machine], b".", b"."), "pivot_root")
        _check(libc.umount2(b".", MNT_DETACH), "umount old root")
        os.chdir("/")
        _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)

    def confine(self) -> None:
        """A session and hostname of its own, no capabilities, no new privileges, the seccomp filter."""
        os.setsid()
        _check(libc.sethostname(b"sandbox", 7), "sethostname")
        fsize = self.header["fsize"]
        if fsize > 0:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient")
        for cap in range(64):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                break  # past the last capability this kernel knows
        header = struct.pack("=Ii", 0x20080522, 0)
        _check(libc.capset(header, bytes(24)), "capset")
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        program = bytes.fromhex(self.spec["seccomp"])
        if program:
            buf = ctypes.create_string_buffer(program)
            prog = struct.pack("HxxxxxxP", len(program) // 8, ctypes.addressof(buf))
            _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0), "seccomp")

    def arrange_fds(self) -> None:
        """Standard streams, and each passed descriptor under the number the host gave it."""
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(self.stdout, 1)
        os.dup2(self.stderr, 2)
        high = {target: os.dup(fd) for target, fd in self.passed.items()}
        for target, fd in high.items():
            os.dup2(fd, target)
        keep = {0, 1, 2, *high}
        for fd in map(int, os.listdir("/proc/self/fd")):
            if fd not in keep:
                with contextlib.suppress(OSError):  # the listing's own, already closed
                    os.close(fd)

    def grade(self) -> int:
        """Run the harness as a fresh `python3 -S -B harness.py CONTEXT RESULT` would."""
        lib_host, lib = self.spec["lib_host"], self.spec["lib"]
        sys.path[:] = [lib if p == lib_host else p for p in sys.path]
        for name in ("lastexam", "lastexam.grading"):
            module = sys.modules[name]
            module.__path__[:] = [p.replace(lib_host, lib, 1) for p in module.__path__]
        sys.path_importer_cache.clear()
        os.environ.clear()
        os.environ.update(self.header["env"])
        os.chdir(self.header["cwd"])
        from lastexam.grading import harness

        sys.argv[:] = [f"{lib}/lastexam/grading/harness.py", *self.header["argv"]]
        return harness.main(self.header["argv"])


def _grading_process(spec: dict, jobs: socket.socket) -> None:
    """The pid namespace's init; never returns. It builds the shared root, then waits for
    its job on `jobs` (nothing there: the slot was dropped)."""
    setup_error = None
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        build_shared_root(spec)
    except BaseException:
        import traceback

        setup_error = traceback.format_exc()
    try:
        message, fds, _, _ = socket.recv_fds(jobs, 1 << 20, MAX_JOB_FDS)
    except BaseException:
        os._exit(0)
    if not message:
        os._exit(0)
    jobs.close()
    job = Job(json.loads(message), fds, spec)
    code, err = 70, job.stderr  # 70: the sandbox could not be set up
    try:
        if setup_error is not None:
            os.write(err, setup_error.encode())
            os._exit(code)
        job.finish_root()
        job.confine()
        job.arrange_fds()
        code, err = 1, 2
        code = job.grade()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback

        os.write(err, traceback.format_exc().encode())
    finally:
        _at_exit()
        os._exit(code)


def _at_exit() -> None:
    """What the interpreter would do on exit: its threads joined, its exit functions run."""
    import atexit

    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # a grader's exit function that raises changes nothing here
        pass


def _slot(fds: list[int], spec: dict) -> None:
    """A child of the worker ready for one job, prepared while its trial's agent runs: it
    joins the job's cgroups (a move between cgroups can wait for an RCU grace period), enters
    the job's namespaces and forks their init, which builds the shared part of the root. Then
    it takes the job from its own socket (nothing there: the host dropped the slot), hands it
    to the init, and reports the init's wait status on the job's status pipe."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        channel = socket.socket(fileno=fds[0])
        for fd in fds[1:]:
            os.write(fd, b"0")  # 0: the writing process; the descriptor was opened by the host
            os.close(fd)
    except BaseException:
        os._exit(0)
    pid, inner, setup_error = None, None, None
    try:
        enter_namespaces(spec["uid"])
        inner, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            channel.close()
            inner.close()
            _grading_process(spec, theirs)
        theirs.close()
    except BaseException as e:
        setup_error = f"grading sandbox setup failed: {e}\n"
    try:
        message, job_fds, _, _ = socket.recv_fds(channel, 1 << 20, MAX_JOB_FDS)
    except BaseException:
        message, job_fds = b"", []
    if not message:  # dropped: the init goes too, reaped here
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        os._exit(0)
    channel.close()
    _run_job(message, job_fds, pid, inner, setup_error)


def _run_job(message: bytes, fds: list[int], pid: int | None, inner: socket.socket | None,
             setup_error: str | None) -> None:
    """The job handed to the slot's init (all its descriptors but the status pipe), its end
    awaited, its wait status written to the status pipe."""
    status, status_fd, stderr = 255 << 8, fds[2], fds[1]
    try:
        if setup_error is not None or pid is None or inner is None:
            raise OSError(setup_error or "no grading process")
        socket.send_fds(inner, [message], [fds[0], fds[1], *fds[3:]])
        inner.close()
        for fd in (fds[0], *fds[3:]):
            os.close(fd)
        _, status = os.waitpid(pid, 0)
    except BaseException as e:
        os.write(stderr, (setup_error or f"grading sandbox setup failed: {e}\n").encode())
    finally:
        os.write(status_fd, struct.pack("=i", status))
        os._exit(0)


def serve(sock: socket.socket, spec: dict) -> None:
    """Each message prepares a slot: [its job socket, the cgroups' cgroup.procs]."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    # A slot's init orphaned by a kill of its cgroup comes here, and is reaped as well.
    _check(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "subreaper")
    while True:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 10, MAX_JOB_FDS)
        if not message:
            return  # the host has gone: so do we
        if os.fork() == 0:
            sock.close()
            _slot(fds, spec)
        for fd in fds:
            os.close(fd)


def _own_user_namespace() -> None:
    """The worker's own user namespace, the same uid inside: a process of the sandbox uid in
    the host's namespace would make other runs' preflight see the uid as taken by another."""
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def preload(modules: list[str]) -> None:
    """The modules the task's grader imports (NumPy, pandas, ...), loaded once here instead
    of in each grading. One that fails to load is left to the grader, which then fails as it
    would have; the reason goes to the worker's log."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException as e:  # an ImportError, or whatever the module raises
            print(f"preload {name}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)


def rehearse() -> None:
    """One made-up grading by the library's own grader, before the first fork. A failure
    costs only speed: it goes to the worker's log."""
    try:
        from lastexam.grading.rehearsal import rehearse as grading_rehearsal

        grading_rehearsal()
    except BaseException as e:
        print(f"rehearsal: {type(e).__name__}: {e}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[0]))
    spec = json.loads(sock.recv(1 << 20))  # the first message: what every job shares
    _own_user_namespace()
    import lastexam.grading as library
    import lastexam.grading.harness  # noqa: F401  (the point of a warm worker)

    for name in library.__all__:  # every module a grader may import from it, loaded once here
        getattr(library, name)
    preload(spec.get("preload", []))
    rehearse()
    # Out of the collector's reach: a forked slot's collections would otherwise write to every
    # inherited object's header, copying the worker's pages one by one.
    gc.freeze()

    serve(sock, spec)


if __name__ == "__main__":
    del sys.path[0]  # as in harness.py: the library comes from PYTHONPATH only
    main(sys.argv[1:])
