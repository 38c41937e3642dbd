"""The warm grading worker: python3 -S -B warm_worker.py SOCKET_FD.

Started once per run and environment by sandbox/warm.py, as the sandbox's unprivileged host
uid, with the grading library already imported and one made-up grading rehearsed by it
(grading/rehearsal.py: the library's own grader, so that no slot pays a first grading's
costs). It runs no task's code itself. It lives in a user namespace of its own (the sandbox's
uid inside, as in bwrap's sandboxes) and is the init of a pid namespace of its own, so that it
can give each grading a new pid namespace and come back to its own; in a mount namespace of
its own it builds, once, the part of the root every grading shares (the system read-only,
/etc's files, /dev's nodes). For each slot the host prepares (a job socket, a status pipe and
cgroups) it forks, in a new pid namespace, the grading process: that namespace's init, which
joins the cgroups, enters new mount (a private copy of the worker's), network, ipc, uts and
cgroup namespaces and mounts its own /proc, /dev/pts and /dev/shm while the slot waits. When
the job comes (a JSON header and the job's descriptors) the init adds the job's own mounts and
a private /tmp, pivots into the root,
forbids further user namespaces, drops every capability, takes the seccomp filter and the
file-size limit, and runs the grading harness. The worker, its parent, writes its wait status
to the slot's status pipe, which the grading never holds. One fork per grading: each fork of
the worker costs page-table copies, copy-on-write faults and an exit in proportion to what it
touches. Only the standard library is used here (the host's Python, no site packages).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import json
import os
import resource
import select
import signal
import socket
import struct
import sys

if __package__:  # imported from the package (tests), not run as the worker
    from lastexam.sandbox.warm_networks import Network, Networks
else:  # copied beside this script (sandbox/warm.py)
    from warm_networks import Network, Networks

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x2000000, 0x4000000, 0x8000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE, MS_SLAVE = 32, 4096, 16384, 1 << 18, 1 << 19
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 444, 446  # one number on every architecture
LANDLOCK_ACCESS_FS_MAKE_BLOCK = 1 << 11
# statvfs flags that are locked on a bind mount and must be kept when it is remounted.
KEPT_FLAGS = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {"stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
             "fd": "/proc/self/fd", "core": "/proc/kcore"}
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")
MAX_JOB_FDS = 16
# The descriptor limit the worker was started with: the worker raises its own to the hard limit
# (each network namespace it keeps holds len(NET_FILES) + 1), every grading gets this one back.
NOFILE = resource.getrlimit(resource.RLIMIT_NOFILE)

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


def enter_namespaces(net: int) -> None:
    """In the grading process, already in the job's cgroups and the init of its pid namespace
    (owned by the worker's user namespace): new mount (a copy of the worker's, which holds the
    template root), ipc, uts and cgroup namespaces, and the network namespace `net` the worker
    gave it (Networks)."""
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP), "unshare")
    _check(libc.setns(net, CLONE_NEWNET), "join the network namespace")
    os.close(net)


def build_template(spec: dict) -> None:
    """Once, in the worker: a mount namespace of its own holding, at spec["root"], the part of
    the root every grading shares: the system read-only, /etc's files, /dev's nodes and links
    (read-only), and the folders on which each grading mounts its own /dev/pts, /dev/shm,
    /proc and /tmp. A grading's new mount namespace is a copy of this one (private: nothing
    mounted in one reaches another); building it anew for each grading took some forty mounts."""
    _check(libc.unshare(CLONE_NEWNS), "unshare")
    root = spec["root"]
    # The host's later mounts still reach this namespace where its mounts are shared (as they
    # reached a grading when each made its namespace from the host's); nothing goes back.
    _mount(None, "/", None, MS_REC | MS_SLAVE)
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
    for folder in ("/proc", "/tmp", spec["job_root"]):
        os.mkdir(root + folder)


def _dev(dev: str) -> None:
    os.mkdir(dev)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID, "mode=0755,size=64k")
    for node in DEV_NODES:
        _bind(f"/dev/{node}", f"{dev}/{node}", writable=True, device=True)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"{dev}/{name}")
    os.symlink("pts/ptmx", f"{dev}/ptmx")
    for folder in ("pts", "shm"):
        os.mkdir(f"{dev}/{folder}")
    _mount(None, dev, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)


def own_mounts(spec: dict) -> None:
    """As the new pid namespace's init, in its copy of the template, before its job: what no
    grading shares: its own pseudo-terminals, /dev/shm, and /proc (its pid namespace's)."""
    root = spec["root"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # from here on, nothing reaches this copy
    _mount("devpts", f"{root}/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
           "newinstance,ptmxmode=0666,mode=620")
    _mount("tmpfs", f"{root}/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # No user namespace below the worker's (bwrap's --disable-userns), set while we may. The
    # worker itself makes none after its start.
    _write(root + "/proc/sys/user/max_user_namespaces", "0")
    for name in PROC_COVERED:
        if os.path.exists(f"{root}/proc/{name}"):
            _bind(f"{root}/proc/{name}", f"{root}/proc/{name}", writable=False)


class Job:
    """One grading, in the pid namespace's init: what the host sent, and the descriptors that
    came with it (the status pipe stays with the init's parent)."""

    def __init__(self, header: dict, fds: list[int], spec: dict):
        self.header, self.spec = header, spec
        self.stdout, self.stderr = fds[0], fds[1]
        self.passed = dict(zip(header["pass_fds"], fds[2:], strict=True))

    def finish_root(self) -> None:
        """The job's /tmp and mounts added to its copy of the template (build_template), then the
        root pivoted into and made read-only; the old one gone."""
        root = self.spec["root"]
        _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
               f"mode=1777,size={self.header['tmp_bytes']}")
        # The job's mount points, of the kinds its sources are (a grading's output may be a
        # file), on a tmpfs of the grading's own: made in the shared template, the first job's
        # kinds would stay for every later one.
        job_root = root + self.spec["job_root"]
        _mount("tmpfs", job_root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
        for source, target, writable, dev, ino in self.header["mounts"]:
            _bind(source, root + target, writable)
            # The source as this namespace sees it must be the file the host named (a mount made
            # on the host after the worker started may not have reached it).
            st = os.stat(root + target)
            if (st.st_dev, st.st_ino) != (dev, ino):
                raise OSError(errno.ESTALE, f"{source} is not, in the worker's mounts, the file the host named")
        _mount(None, job_root, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
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
        # The bounding set came empty from the worker (drop_bounding_set); this empties the rest.
        header = struct.pack("=Ii", 0x20080522, 0)
        _check(libc.capset(header, bytes(24)), "capset")
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        landlock_domain()
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


def landlock_domain() -> None:
    """A Landlock domain of this process's own, which forbids nothing a grading can do (it
    handles only the making of block devices, which takes a capability anyway). Gradings share
    the worker's user namespace and uid, so the kernel's credential check would let a process
    of one trace a process of another; Landlock refuses to trace outside one's own domain.
    (Nothing in a grading can name a process of another, in a sibling pid namespace: this is
    the second wall.) Without Landlock in the kernel, nothing is done."""
    attr = struct.pack("=Q", LANDLOCK_ACCESS_FS_MAKE_BLOCK)  # ABI 1's struct: handled_access_fs
    fd = libc.syscall(LANDLOCK_CREATE_RULESET, attr, len(attr), 0)
    if fd < 0:
        if ctypes.get_errno() in (errno.ENOSYS, errno.EOPNOTSUPP):
            return
        _check(-1, "landlock ruleset")
    try:
        _check(libc.syscall(LANDLOCK_RESTRICT_SELF, fd, 0), "landlock")
    finally:
        os.close(fd)


def drop_bounding_set() -> None:
    """Once, in the worker: its capability bounding set emptied, inherited so by every grading
    (the set only limits what an exec can gain; the worker's own capabilities, which make the
    gradings' namespaces, stay). Each grading used to drop the forty-odd one by one."""
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL:
                break  # past the last capability this kernel knows
            _check(-1, f"drop capability {cap} from the bounding set")


def _grading_process(spec: dict, jobs: socket.socket, ready: int, net: int) -> None:
    """The pid namespace's init, in the job's cgroups; never returns. It makes its own mounts,
    then waits for its job on `jobs` (nothing there: the slot was dropped). Once its sandbox
    is set up, before anything of the job runs, it writes one byte to `ready` and closes it:
    the worker tells the host whether a grading failed before its grader could run."""
    setup_error = None
    try:
        enter_namespaces(net)
        own_mounts(spec)
    except BaseException:
        import traceback

        setup_error = traceback.format_exc()
    try:
        message, fds, flags, _ = socket.recv_fds(jobs, 1 << 20, MAX_JOB_FDS)
    except BaseException:
        os._exit(0)
    if not message or flags & socket.MSG_CTRUNC:  # dropped, or the job's descriptors lost
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
        os.write(ready, b"1")
        os.close(ready)
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


def _slot(fds: list[int], spec: dict, inherited: list[int], ready: int, net: int) -> None:
    """The worker's child, the init of a new pid namespace, ready for one job: the worker's
    descriptors it inherited (`inherited`) and the status pipe closed, the job's cgroups joined
    (a move between cgroups can wait for an RCU grace period), then the grading process. Its
    fds: the job socket, the status pipe, the cgroups' cgroup.procs."""
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        resource.setrlimit(resource.RLIMIT_NOFILE, NOFILE)
        for fd in (*inherited, fds[1]):  # the status is the worker's to write, never the grading's
            os.close(fd)
        channel = socket.socket(fileno=fds[0])
        for fd in fds[2:]:
            os.write(fd, b"0")  # 0: the writing process; the descriptor was opened by the host
            os.close(fd)
    except BaseException:
        os._exit(0)
    _grading_process(spec, channel, ready, net)


class Slots:
    """The worker's gradings: each forked into a new pid namespace, its wait status written
    to its slot's status pipe when it ends (or the slot is dropped)."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        self.networks = Networks()
        # pidfd: (pid, status pipe, the read end of its "set up" pipe, its network namespace)
        self.children: dict[int, tuple[int, int, int, Network]] = {}

    def fork(self, fds: list[int], keep: list[int]) -> int | None:
        """The grading process of a slot, [job socket, status pipe, *cgroup.procs], the
        worker's copies of its descriptors closed (but the status pipe's); its pidfd."""
        pid = None
        net: Network | None = None
        ready_r = ready_w = -1
        try:
            if len(fds) < 2:
                return None
            net = self.networks.take()
            inherited = [*keep, self.own_pid_ns, *self.networks.fds(but=net)]
            for child_pidfd, (_, status_w, other_ready, _) in self.children.items():
                inherited += (child_pidfd, status_w, other_ready)
            ready_r, ready_w = os.pipe()
            os.set_blocking(ready_r, False)  # never wait on it: a byte is there, or nothing is
            _check(libc.unshare(CLONE_NEWPID), "unshare")
            try:
                pid = os.fork()
                if pid == 0:
                    _slot(fds, self.spec, [*inherited, ready_r], ready_w, net.fd)
                pidfd = os.pidfd_open(pid)
                self.children[pidfd] = (pid, fds[1], ready_r, net)
                ready_r, net = -1, None  # the child's entry holds them now
                fds = [fds[0], *fds[2:]]
            finally:
                # Our children after this one in our own namespace again. If that fails no
                # slot can be made: the worker leaves, its gradings with it (their status
                # pipes then end), and the host starts another.
                if pid != 0 and libc.setns(self.own_pid_ns, CLONE_NEWPID) != 0:
                    print(f"setns: {os.strerror(ctypes.get_errno())}", file=sys.stderr, flush=True)
                    os._exit(1)
            return pidfd
        except OSError as e:
            print(f"slot: {e}", file=sys.stderr, flush=True)
            return None
        finally:
            if net is not None:  # no grading tracked here holds it; unused if none was forked
                self.networks.back(net, reusable=pid is None)
            for fd in (*fds, ready_r, ready_w):
                if fd >= 0:
                    os.close(fd)

    def reap(self, pidfd: int) -> None:
        """A grading process has ended: its wait status, and whether its sandbox was set up,
        to its status pipe."""
        pid, status_w, ready_r, net = self.children.pop(pidfd)
        os.close(pidfd)
        reaped = False
        try:
            _, status = os.waitpid(pid, 0)
            # The pid namespace's init has been reaped only once every process of it has been:
            # nothing of the grading is left in its network namespace.
            reaped = True
            try:
                ready = os.read(ready_r, 1) == b"1"
            except BlockingIOError:
                ready = False
            os.write(status_w, struct.pack(self.spec["status"], status, ready))
        except OSError:  # the host dropped the slot: no one reads
            pass
        finally:
            os.close(status_w)
            os.close(ready_r)
            self.networks.back(net, reusable=reaped)
        # The worker is its namespace's init: anything orphaned there is reaped here.
        with contextlib.suppress(ChildProcessError):
            while (found := os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)) is not None:
                if any(found.si_pid == p for p, _, _, _ in self.children.values()):
                    break
                os.waitpid(found.si_pid, 0)


def learn(message: bytes) -> None:
    """The grader a slot's message names ({"grader": [the file name its gradings see, its
    path here]}) compiled before the slot's fork (grading/harness.py finds it there by name
    and source). Compiling runs none of its code. Any failure (a SyntaxError, an unreadable
    file) is left to the grading, which compiles the grader itself and meets it."""
    try:
        grader = json.loads(message).get("grader")
    except (ValueError, AttributeError):  # cut short (a path past the buffer): not named
        return
    if not (isinstance(grader, list) and len(grader) == 2 and all(isinstance(p, str) for p in grader)):
        return
    filename, path = grader
    try:
        with open(path, "rb") as f:
            source = f.read()
        from lastexam.grading import harness

        harness.precompile(source, filename)
    except BaseException:
        return
    gc.freeze()  # as the worker's other objects: out of the forked gradings' collections


def serve(sock: socket.socket, spec: dict) -> None:
    """Each message prepares a slot: [its job socket, its status pipe, the cgroups'
    cgroup.procs], and names the grader its job will run (JSON: {"grader": ...})."""
    slots = Slots(spec)
    # Each message is read once: parsing it for every slot would have the worker write to
    # pages it shares with the children it forked, a copy-on-write fault each.
    learned: set[bytes] = set()
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            if fd != sock.fileno():
                poller.unregister(fd)
                slots.reap(fd)
                continue
            message, fds, flags, _ = socket.recv_fds(sock, 1 << 12, MAX_JOB_FDS)
            if not message:
                return  # the host has gone: so do we, and every grading left with us
            if flags & socket.MSG_CTRUNC:  # descriptors lost (none left here): no slot
                print("slot: its descriptors did not all arrive", file=sys.stderr, flush=True)
                for fd in fds:
                    os.close(fd)
                continue
            if message not in learned:
                learned.add(message)
                learn(message)
            pidfd = slots.fork(fds, [sock.fileno()])
            if pidfd is not None:
                poller.register(pidfd, select.POLLIN)


def _own_namespaces(inside_uid: int, sock: socket.socket) -> None:
    """The worker's own user namespace, the sandbox's uid inside (a process of the sandbox uid
    in the host's namespace would make other runs' preflight see the uid as taken by another),
    its own pid namespace, of which the worker goes on as the init, and its own network
    namespace, owned by its user namespace (it makes the gradings' from there, and returns to
    it: Networks); it uses no network itself. The process the host
    started stays outside, waiting for it, and leaves with its exit status."""
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside_uid} {uid} 1")
    _write("/proc/self/gid_map", f"{inside_uid} {gid} 1")
    pid = os.fork()
    if pid == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        return
    sock.close()  # the worker's alone: a host's message to a dead worker then fails
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


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
    _own_namespaces(spec["uid"], sock)
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE[1], NOFILE[1]))
    try:
        build_template(spec)
        drop_bounding_set()
    except BaseException:  # no grading without its root: the host finds no worker to take its slots
        import traceback

        traceback.print_exc()  # to the worker's log
        sys.stderr.flush()
        os._exit(1)
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
