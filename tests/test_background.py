"""lastexam.background: jobs run at once, on kept threads, and a failing job ends its join."""

from __future__ import annotations

import threading

from lastexam import background


def test_jobs_run_at_once_and_threads_are_kept() -> None:
    gate = threading.Event()
    seen: list[str] = []
    # Two jobs at the same time: the second must not wait for the first's thread.
    first = background.run(lambda: (gate.wait(10), seen.append(threading.current_thread().name)))
    second = background.run(lambda: seen.append("second"))
    second.join()
    assert seen == ["second"]
    gate.set()
    first.join()
    threads = set()
    for _ in range(5):  # one at a time: each finds a kept thread
        job = background.run(lambda: threads.add(threading.get_ident()))
        job.join()
    assert len(threads) == 1


def test_a_failing_job_still_ends(capsys) -> None:
    def boom() -> None:
        raise RuntimeError("boom")

    background.run(boom).join()
    after = background.run(lambda: None)
    after.join()
    assert "RuntimeError: boom" in capsys.readouterr().err


def test_a_job_ends_when_even_its_report_fails(monkeypatch) -> None:
    """A failing job's traceback goes to stderr; with stderr gone (a closed pipe) the job must
    still be seen done."""
    import sys

    class Gone:
        def write(self, _: str) -> int:
            raise BrokenPipeError

        def flush(self) -> None:
            raise BrokenPipeError

    def boom() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(sys, "stderr", Gone())
    job = background.run(boom)
    assert job._done.wait(10)
