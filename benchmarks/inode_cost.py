"""What making and removing files and folders costs on the file system of LASTEXAM_HOME.

    python benchmarks/inode_cost.py [--n 2000] [--dir /var/lib/lastexam]

Times, per entry, making N empty files in a new folder, removing them, making N more; then N
folders made and removed; and the same on /dev/shm (a tmpfs) for comparison. On an ext4 without
a journal, a new inode skips every inode number its block group freed in the last minutes,
reading each: the cost grows with what was removed lately (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from lastexam.paths import lastexam_home


def per_entry(n: int, step) -> float:
    started = time.perf_counter()
    for i in range(n):
        step(i)
    return (time.perf_counter() - started) / n * 1000


def file_made(base: Path, n: int) -> float:
    """Milliseconds to make one empty file in a new folder of `base` (N made, then removed)."""
    d = Path(tempfile.mkdtemp(dir=base, prefix="inode-cost-"))
    try:
        return per_entry(n, lambda i: os.close(os.open(d / f"a{i}", os.O_CREAT | os.O_WRONLY, 0o644)))
    finally:
        for i in range(n):
            os.unlink(d / f"a{i}")
        os.rmdir(d)


def run(base: Path, n: int) -> str:
    d = Path(tempfile.mkdtemp(dir=base, prefix="inode-cost-"))
    try:
        make = per_entry(n, lambda i: os.close(os.open(d / f"a{i}", os.O_CREAT | os.O_WRONLY, 0o644)))
        remove = per_entry(n, lambda i: os.unlink(d / f"a{i}"))
        again = per_entry(n, lambda i: os.close(os.open(d / f"b{i}", os.O_CREAT | os.O_WRONLY, 0o644)))
        per_entry(n, lambda i: os.unlink(d / f"b{i}"))
        mkdir = per_entry(n, lambda i: os.mkdir(d / f"c{i}"))
        rmdir = per_entry(n, lambda i: os.rmdir(d / f"c{i}"))
    finally:
        os.rmdir(d)
    return (f"{base!s:>22}: file made {make:.3f}, removed {remove:.3f}, made after removals "
            f"{again:.3f}; folder made {mkdir:.3f}, removed {rmdir:.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None, help="default: LASTEXAM_HOME")
    args = parser.parse_args()
    print(run(args.dir or lastexam_home(), args.n))
    if Path("/dev/shm").is_dir():
        print(run(Path("/dev/shm"), args.n))


if __name__ == "__main__":
    main()
