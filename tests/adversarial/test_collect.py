"""What the harness reads after an agent ran (outputs, inputs, exec log) is read safely: the
shapes an agent can leave behind, built directly on the host, without a sandbox."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from lastexam.run.collect import inputs_state, snapshot_output
from lastexam.sandbox.base import SandboxLimits
from lastexam.sandbox.bwrap import _over_quota
from lastexam.untrusted import iter_lines, remove_tree
from lastexam.usage.execlog import parse


def _deep_tree(root: Path, levels: int = 30, name: str = "d" * 200) -> None:
    """A chain of folders whose full path is far beyond PATH_MAX (made with relative paths)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("deep")
    finally:
        os.close(fd)


def test_hard_link_to_a_file_outside_the_output_is_dropped(tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "secret.json"
    out.mkdir()
    outside.write_text('{"total": 6.75}')
    os.link(outside, out / "result.json")
    (out / "a").write_text("x")
    os.link(out / "a", out / "b")  # both names inside: kept
    got = snapshot_output(out, tmp_path / "snap", max_bytes=1 << 20)
    assert {"path": "result.json", "why": "hard link to a file outside the output"} in got["dropped"]
    assert sorted(os.listdir(tmp_path / "snap")) == ["a", "b"]


def test_tree_beyond_path_max_is_snapshotted_and_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.json").write_text("{}")
    _deep_tree(out)
    got = snapshot_output(out, tmp_path / "snap", max_bytes=1 << 20)
    assert got["files"] == 1 and any("longer than" in d["why"] for d in got["dropped"])
    remove_tree(out)
    remove_tree(tmp_path / "snap")
    assert not out.exists() and not (tmp_path / "snap").exists()
    assert _over_quota_on_deep(tmp_path)


def test_folders_nested_too_deep_are_dropped(tmp_path: Path) -> None:
    out = tmp_path / "out"
    deep = out.joinpath(*["d"] * 40)
    deep.mkdir(parents=True)
    (deep / "f").write_text("deep")
    (out / "result.json").write_text("{}")
    got = snapshot_output(out, tmp_path / "snap", max_bytes=1 << 20)
    assert got["files"] == 1 and os.listdir(tmp_path / "snap") == ["result.json"]
    assert {"path": "/".join(["d"] * 32), "why": "folder nested deeper than 32 levels"} in got["dropped"]


def _over_quota_on_deep(tmp_path: Path) -> bool:
    watched = tmp_path / "watched"
    watched.mkdir()
    _deep_tree(watched)
    try:
        limits = SandboxLimits(wall_s=1, memory_mb=1, max_processes=1, watch_bytes=1 << 30,
                               watch_files=1 << 20, watch_dirs=1 << 20)
        return _over_quota([watched], limits)  # too long to scan: counts as over
    finally:
        remove_tree(watched)


def test_inputs_state_does_not_read_a_huge_sparse_input(tmp_path: Path) -> None:
    pristine, staged = tmp_path / "p", tmp_path / "s"
    for d in (pristine, staged):
        (d / "sub").mkdir(parents=True)
        (d / "data.csv").write_text("x\n1\n")
        (d / "sub" / "b.csv").write_text("y\n")
    os.truncate(staged / "data.csv", 1 << 32)  # 4 GB, sparse: reading it would show in the count
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "b.csv").write_text("y\n")
    (staged / "sub").rename(tmp_path / "moved")
    (staged / "sub").symlink_to(elsewhere)  # a folder on the way swapped for a link
    read_before = _bytes_read()
    state = inputs_state(pristine, staged)
    assert _bytes_read() - read_before < 1 << 20  # the huge input was not read
    assert state == {"data.csv": f"size {1 << 32}", "sub/b.csv": "not-regular"}


def _bytes_read() -> int:
    """Bytes this process has read through read(2) and the like (Linux task I/O accounting)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_exec_log_fifos_links_and_long_lines(tmp_path: Path) -> None:
    """The host's copy of the exec log is read without blocking, following links or
    backtracking; a line the shim cannot have written marks it tampered."""
    secret = tmp_path / "host-secret"
    secret.write_text("exec\t9\t1\t1.0\t/usr/bin/awk\tawk\n")
    (tmp_path / "link.log").symlink_to(secret)
    os.mkfifo(tmp_path / "fifo.log")
    log_file = tmp_path / "exec.log"
    line = "exec\t1\t1\t1.0\t/bin/x\t" + "\x1fx" * 300_000 + "\n"
    log_file.write_text("exec\t2\t1\t2.0\t/usr/bin/awk\tawk\n" + line + "py\t3\tnumpy pandas\n")
    result: list = []

    def read_all() -> None:
        result.extend(parse(p) for p in (log_file, tmp_path / "link.log", tmp_path / "fifo.log"))

    worker = threading.Thread(target=read_all, daemon=True)
    worker.start()
    worker.join(10)
    assert len(result) == 3, "parse blocked (a FIFO) or backtracked (the crafted line)"
    log, linked, fifo = result
    assert [e.program for e in log.events] == ["awk"]
    assert set(log.python_imports) == {"numpy", "pandas"}
    assert log.tampered == "a line longer than the shim writes"
    assert linked.total == fifo.total == 0
    assert linked.tampered == fifo.tampered == "the exec log is missing"


def test_iter_lines_skips_overlong_lines(tmp_path: Path) -> None:
    f = tmp_path / "log"
    f.write_bytes(b"a\n" + b"x" * 5000 + b"\nb\n")
    assert list(iter_lines(f, max_line=100)) == ["a\n", "b\n"]
    (tmp_path / "link").symlink_to(f)
    assert list(iter_lines(tmp_path / "link")) == []


def test_snapshot_caps_folders_and_drops_empty_ones(tmp_path: Path, monkeypatch) -> None:
    import lastexam.run.collect as collect

    monkeypatch.setattr(collect, "MAX_FOLDERS", 50)
    out = tmp_path / "out"
    for i in range(300):
        (out / f"d{i:03d}" / "e").mkdir(parents=True)
    (out / "sub").mkdir()
    (out / "result.json").write_text("{}")
    got = collect.snapshot_output(out, tmp_path / "snap", max_bytes=1 << 20)
    assert os.listdir(tmp_path / "snap") == ["result.json"]  # empty folders are not copied
    assert got["files"] == 1 and got["folders_seen"] == 50
    assert got["capped"] == ["more than 50 folders: the rest was not scanned"]


def test_watch_counts_folders(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"d{i}").mkdir()
    limits = SandboxLimits(wall_s=1, memory_mb=1, max_processes=1, watch_bytes=1 << 30,
                           watch_files=1000, watch_dirs=20)
    assert _over_quota([tmp_path], limits)
    assert not _over_quota([tmp_path], SandboxLimits(
        wall_s=1, memory_mb=1, max_processes=1, watch_bytes=1 << 30, watch_files=1000, watch_dirs=30))
