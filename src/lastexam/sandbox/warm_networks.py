"""The warm grading worker's network namespaces (imported by warm_worker.py, beside which it is
copied; the standard library only). The worker makes each grading's namespace from a network
namespace of its own and hands it over; a grading's, once every process of it is gone, serves
a later grading only when nothing in it tells it from a new one (docs/integrity.md, "A
grading's network namespace serves the next only as new")."""

from __future__ import annotations

import contextlib
import ctypes
import os

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


# What a grading could leave in its network namespace, its loopback down and no capability in
# it: sockets (one that outlives its processes is carried in flight by a unix socket), IPv6
# flow labels (kept up to 150 s after their socket: found by a review), multicast and anycast
# memberships, counters; and, for a capability it does not have, routes, addresses and
# neighbours. Not read: tcp and tcp6 (each read walks the kernel's whole table, 1.6 ms; a TCP
# socket that outlives its process needs packets, which move snmp), sockstat and softnet_stat
# (they count every namespace's sockets and packets), nf_conntrack (0.35 ms; its entries need
# netfilter rules, which need a capability).
NET_FILES = ("unix", "udp", "udp6", "udplite", "udplite6", "raw", "raw6", "icmp", "icmp6", "packet",
             "netlink", "ip6_flowlabel", "igmp", "igmp6", "mcfilter", "mcfilter6", "anycast6",
             "snmp", "snmp6", "netstat", "dev", "xfrm_stat", "route", "ipv6_route", "if_inet6",
             "arp", "fib_trie")


class Network:
    """A network namespace of the worker's making, and its NET_FILES opened in it (a file of
    /proc/net reads the namespace it was opened in), with their text when it was new."""

    def __init__(self, own: int) -> None:
        self.fd, self.files = -1, []
        _call(_libc.unshare(CLONE_NEWNET), "unshare")
        try:
            self.fd = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            for name in NET_FILES:
                # Absent (no IPv6, a protocol not built) or unreadable by this uid: then no
                # grading, of the same uid and without capabilities, can read it either.
                with contextlib.suppress(FileNotFoundError, PermissionError):
                    self.files.append(os.open(f"/proc/self/net/{name}", os.O_RDONLY | os.O_CLOEXEC))
            self.fresh = self.read()
        except BaseException:
            self.close()
            raise
        finally:
            _call(_libc.setns(own, CLONE_NEWNET), "setns")

    def read(self) -> list[bytes]:
        return [os.pread(fd, 1 << 16, 0) for fd in self.files]

    def fds(self) -> list[int]:
        return [self.fd, *self.files]

    def close(self) -> None:
        for fd in self.fds():
            if fd >= 0:
                os.close(fd)


class Networks:
    """The gradings' network namespaces. A new one costs about 0.7 ms of CPU to make and
    remove (docs/performance.md); one whose grading has ended, every process of it gone, serves
    the next grading when nothing in it tells it from a new one: no socket, every counter and
    device statistic as it was made. Any other is closed (and removed by the kernel)."""

    def __init__(self) -> None:
        self.own = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        self.free: list[Network] = []
        self.used: set[Network] = set()

    def take(self) -> Network:
        net = self.free.pop() if self.free else Network(self.own)
        self.used.add(net)
        return net

    def back(self, net: Network, reusable: bool) -> None:
        """`net` returned; `reusable`: no process can be left in it."""
        self.used.discard(net)
        try:
            clean = reusable and net.read() == net.fresh
        except OSError:  # unreadable now: not known to be as new
            clean = False
        if clean:
            self.free.append(net)
        else:
            net.close()

    def fds(self, but: Network) -> list[int]:
        """Every descriptor held here but `but`'s namespace: a grading must hold none."""
        return [self.own, *but.files, *(fd for net in (*self.free, *self.used) if net is not but
                                        for fd in net.fds())]
