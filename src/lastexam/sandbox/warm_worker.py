"""The warm grading worker: python3 -S -B warm_worker.py SOCKET_FD.

Started once per run and environment by sandbox/warm.py, as the sandbox's unprivileged host
uid, with the grading library already imported. It runs no grader code itself: for each slot
the host prepares (a job socket and cgroups) it forks a child that joins the cgroups, waits
for its job (a JSON header and the job's descriptors), enters new user, mount, pid, network,
ipc, uts and cgroup namespaces, and forks the grading process. That process is the pid
namespace's init: it builds a root holding only the system (read-only), the job's mounts and
a private /tmp, pivots into it, forbids further user namespaces, drops every capability,
takes the seccomp filter and the file-size limit, and runs the grading harness. Its parent
reports its wait status on the job's status pipe. Only the standard library is used here (the host's Python, no site packages).
"""

from __future__ import annotations

import contextlib
import ctypes
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


class Job:
    """One grading: what the host sent, and the descriptors that came with it."""

    def __init__(self, header: dict, fds: list[int], spec: dict):
        self.header, self.spec = header, spec
        self.stdout, self.stderr, self.status = fds[0], fds[1], fds[2]
        self.passed = dict(zip(header["pass_fds"], fds[3:], strict=True))

    def enter(self) -> None:
        """In the forked child, already in the job's cgroups: its own namespaces."""
        uid, gid = os.getuid(), os.getgid()
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
                            | CLONE_NEWUTS | CLONE_NEWCGROUP), "unshare")
        inside = self.spec["uid"]
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{inside} {uid} 1")
        _write("/proc/self/gid_map", f"{inside} {gid} 1")

    def build_root(self) -> None:
        """As the new pid namespace's init: the job's root, pivoted into; the old one gone."""
        spec, root = self.spec, self.spec["root"]
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        for path, link in spec["system"]:
            if link is not None:
                os.symlink(link, root + path)
            else:
                _bind(path, root + path, writable=False)
        for source, target in spec["etc_files"]:
            _bind(source, root + target, writable=False)
        self._dev(root + "/dev")
        os.mkdir(root + "/tmp")
        _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
               f"mode=1777,size={self.header['tmp_bytes']}")
        os.makedirs(root + "/var")
        os.symlink("../tmp", root + "/var/tmp")
        for source, target, writable in self.header["mounts"]:
            _bind(source, root + target, writable)
        os.mkdir(root + "/proc")
        _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        # No user namespace below this one (bwrap's --disable-userns), set while we may.
        _write(root + "/proc/sys/user/max_user_namespaces", "0")
        for name in PROC_COVERED:
            if os.path.exists(f"{root}/proc/{name}"):
                _bind(f"{root}/proc/{name}", f"{root}/proc/{name}", writable=False)
        os.chdir(root)
        _check(libc.syscall(PIVOT_ROOT[os.uname().machine], b".", b"."), "pivot_root")
        _check(libc.umount2(b".", MNT_DETACH), "umount old root")
        os.chdir("/")
        _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)

    @staticmethod
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


def _grading_process(job: Job) -> None:
    """The pid namespace's init; never returns."""
    code, err = 70, job.stderr  # 70: the sandbox could not be set up
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        job.build_root()
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


def _run_job(job: Job) -> None:
    """The forked child of the worker: namespaces, then the grading process, then its status."""
    status = 255 << 8
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        job.enter()
        pid = os.fork()
        if pid == 0:
            _grading_process(job)
        for fd in (job.stdout, job.stderr, *job.passed.values()):
            os.close(fd)
        _, status = os.waitpid(pid, 0)
    except BaseException as e:
        os.write(job.stderr, f"grading sandbox setup failed: {e}\n".encode())
    finally:
        os.write(job.status, struct.pack("=i", status))
        os._exit(0)


def _slot(fds: list[int], spec: dict) -> None:
    """A child waiting for one job: it joins the job's cgroups first (moving a process between
    cgroups can wait for an RCU grace period: done ahead, off the grading's path), then takes
    the job from its own socket (nothing there: the host dropped the slot)."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        channel = socket.socket(fileno=fds[0])
        for fd in fds[1:]:
            os.write(fd, b"0")  # 0: the writing process; the descriptor was opened by the host
            os.close(fd)
        message, job_fds, _, _ = socket.recv_fds(channel, 1 << 20, MAX_JOB_FDS)
    except BaseException:
        os._exit(0)
    if not message:
        os._exit(0)
    channel.close()
    _run_job(Job(json.loads(message), job_fds, spec))


def serve(sock: socket.socket, spec: dict) -> None:
    """Each message prepares a slot: [its job socket, the cgroups' cgroup.procs]."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
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


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[0]))
    spec = json.loads(sock.recv(1 << 20))  # the first message: what every job shares
    _own_user_namespace()
    import lastexam.grading.harness  # noqa: F401  (the point of a warm worker)

    serve(sock, spec)


if __name__ == "__main__":
    del sys.path[0]  # as in harness.py: the library comes from PYTHONPATH only
    main(sys.argv[1:])
