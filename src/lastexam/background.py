"""Short jobs in the background on daemon threads kept for the next job: each trial drains
its exec log and its grading's result while a sandbox runs, and starting a thread for each
holds the interpreter's lock through the thread's creation (10 % of the time it was held at 8
concurrent trials, py-spy --gil). A job never waits for a free thread: one is started when
none is idle."""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import traceback
from collections.abc import Callable

MAX_IDLE = 64  # threads kept waiting; more, after a burst, end

_idle: list[queue.SimpleQueue[Job]] = []
_lock = threading.Lock()


class Job:
    """A call run in the background; join() waits for its end."""

    def __init__(self, call: Callable[[], object]):
        self._call = call
        self._done = threading.Event()

    def join(self) -> None:
        self._done.wait()


def run(call: Callable[[], object]) -> Job:
    """Start `call` on an idle kept thread, or a new one."""
    job = Job(call)
    with _lock:
        inbox = _idle.pop() if _idle else None
    if inbox is None:
        inbox = queue.SimpleQueue()
        threading.Thread(target=_serve, args=(inbox,), daemon=True, name="background").start()
    inbox.put(job)
    return job


def _serve(inbox: queue.SimpleQueue[Job]) -> None:
    while True:
        job = inbox.get()
        try:
            job._call()
        except BaseException:  # as a thread's uncaught exception: printed, the caller goes on
            with contextlib.suppress(BaseException):  # stderr itself may be gone
                traceback.print_exc()
        finally:
            job._call = _done_call  # the job's objects are not kept alive by the join's holder
            with _lock:  # idle again before the job is seen done: the next job finds this thread
                keep = len(_idle) < MAX_IDLE
                if keep:
                    _idle.append(inbox)
            job._done.set()
        del job  # nothing of a finished job is held while the thread waits
        if not keep:
            return


def _done_call() -> None:
    pass


def _forget_threads() -> None:
    """In a forked child the kept threads do not exist: none is idle there."""
    global _lock
    _idle.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_threads)
