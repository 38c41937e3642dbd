"""Speed of `lastexam canary scan` on one core, for a training-data pipeline. Target: at least
300 MB/s on plain text.

Writes, in a temporary folder, about 1 GB (--mb) of synthetic JSONL (words, numbers, dates,
dashed ids and GUIDs that are no canary, all from a fixed seed), then the same bytes gzip- and
zstd-compressed, with a few canaries planted at known offsets. The patterns are the canaries of
tasks/ plus 1,000 random GUIDs. Each input is scanned --repeats times by the scanner
(lastexam.pool.canary) and the median MB/s of decompressed bytes is reported; the planted hits
must be found, and nothing else. For comparison, on a sample of the plain text: the two other
multi-pattern searches considered, one regex alternation of the escaped canaries (re.IGNORECASE)
and Aho-Corasick (pyahocorasick, when installed: pip install 'lastexam[scan]').

    python benchmarks/canary_scan.py [--mb 1024] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import zstandard

from lastexam.paths import default_tasks_dir
from lastexam.pool import canary as cn

SEED = 20261203
BLOCK_MB = 32  # distinct text, written again and again: larger than gzip's and zstd's windows
WORDS = ["the", "of", "and", "to", "in", "is", "that", "for", "it", "with", "as", "was", "on",
         "be", "by", "this", "are", "from", "or", "at", "an", "data", "model", "face", "bed",
         "add", "cafe", "bead", "fade", "deed", "decade", "accede", "0x1f", "2024", "17",
         "3.14159", "-42", "well-known", "state-of-the-art", "e-mail", "x-ray", "co-op", "re-run"]


def guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def text_block(rng: random.Random, size: int) -> bytes:
    """JSONL lines of about 400 bytes; one in ten carries a GUID that is no canary."""
    lines, total, n = [], 0, 0
    while total < size:
        record = {
            "id": n, "date": f"20{rng.randrange(10, 27)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
            "url": f"https://example.org/{rng.randrange(16**6):06x}-{rng.randrange(16**4):04x}/page",
            "text": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(30, 80))),
        }
        if n % 10 == 0:
            record["request_id"] = guid(rng)
        line = (json.dumps(record) + "\n").encode()
        lines.append(line)
        total += len(line)
        n += 1
    return b"".join(lines)[:size]


def write_inputs(folder: Path, mb: int, planted: list[str]) -> tuple[Path, list[int]]:
    """data.jsonl of `mb` MB with one planted canary in each of a few blocks (alternately
    upper-case); returns it and the planted offsets."""
    rng = random.Random(SEED)
    block = text_block(rng, BLOCK_MB * 1024**2)
    blocks = max(1, mb // BLOCK_MB)
    plant_in = {b: planted[i % len(planted)] for i, b in enumerate(range(1, blocks, max(1, blocks // 5)))}
    offsets, pos = [], 0
    path = folder / "data.jsonl"
    with path.open("wb") as f:
        for b in range(blocks):
            data = block
            if b in plant_in:
                at = data.index(b"\n", rng.randrange(len(data) // 2)) + 1
                canary = plant_in[b].upper() if len(offsets) % 2 else plant_in[b]
                line = json.dumps({"text": f"leaked: {canary}"}).encode() + b"\n"
                data = data[:at] + line + data[at:]
                offsets.append(pos + at + line.index(canary.encode()))
            f.write(data)
            pos += len(data)
    return path, offsets


def compress(plain: Path) -> tuple[Path, Path]:
    gz, zst = plain.with_suffix(".jsonl.gz"), plain.with_suffix(".jsonl.zst")
    with plain.open("rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
        while chunk := src.read(cn.CHUNK):
            dst.write(chunk)
    with plain.open("rb") as src, zst.open("wb") as dst:
        zstandard.ZstdCompressor(level=3).copy_stream(src, dst)
    return gz, zst


def median_rate(run: Callable[[], object], size: int, repeats: int) -> tuple[float, float, object]:
    """Median MB/s over `repeats` runs, per CPU second and per wall second, and what the last
    run returned (its hits). On a shared machine the CPU figure is the one to read: the wall
    one counts the time other processes held the core."""
    cpu, wall, result = [], [], None
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        result = run()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return size / 1e6 / statistics.median(cpu), size / 1e6 / statistics.median(wall), result


def alternation_hits(canaries: dict[str, str], sample: bytes) -> Callable[[], int]:
    pattern = re.compile(b"|".join(re.escape(c.encode()) for c in canaries), re.IGNORECASE)
    return lambda: sum(1 for _ in pattern.finditer(sample))


def aho_corasick_hits(canaries: dict[str, str], sample: bytes) -> Callable[[], int] | None:
    try:
        import ahocorasick
    except ImportError:
        return None
    automaton = ahocorasick.Automaton()
    for c, task_id in canaries.items():
        automaton.add_word(c, task_id)
    automaton.make_automaton()
    # its automaton matches str: lower-cased bytes as latin-1 keep one character per byte
    return lambda: sum(1 for _ in automaton.iter(sample.lower().decode("latin-1")))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=1024, help="Size of the plain text, in MiB.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sample-mb", type=int, default=64, help="Plain text for Aho-Corasick.")
    parser.add_argument("--alternation-kb", type=int, default=512, help="Plain text for the alternation.")
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    rng = random.Random(SEED + 1)
    suite = cn.collect_canaries([default_tasks_dir()])
    canaries = {**suite, **{guid(rng): f"random-{i}" for i in range(1000)}}
    planted = sorted(suite)[:3]
    with tempfile.TemporaryDirectory(prefix="lastexam-canary-bench-") as d:
        start = time.perf_counter()
        plain, offsets = write_inputs(Path(d), args.mb, planted)
        gz, zst = compress(plain)
        size = plain.stat().st_size
        print(f"{size / 1e6:.0f} MB of JSONL, {len(canaries)} canaries ({len(suite)} of tasks/), "
              f"{len(offsets)} planted; inputs written in {time.perf_counter() - start:.0f} s")
        rows = []
        for path in (plain, gz, zst):
            def run(path: Path = path) -> list[int]:
                return [h.offset for h in cn.Scanner(canaries).scan([path])]

            *rates, found = median_rate(run, size, args.repeats)
            if found != offsets:
                raise SystemExit(f"{path.name}: found {found}, planted {offsets}")
            rows.append((path.name, f"{path.stat().st_size / 1e6:.0f}", "probe regex + dict (lastexam)", *rates))
            if path != plain:  # what decompressing alone costs
                *rates, _ = median_rate(lambda path=path: sum(map(len, cn.read_chunks(path))), size, args.repeats)
                rows.append((path.name, "", "decompression alone, no search", *rates))
        with plain.open("rb") as f:
            sample = f.read(args.sample_mb * 1024**2)
        small = sample[:args.alternation_kb * 1024]
        *rates, _ = median_rate(alternation_hits(canaries, small), len(small), args.repeats)
        rows.append((f"first {args.alternation_kb} KiB", "", "regex alternation, re.IGNORECASE", *rates))
        aho = aho_corasick_hits(canaries, sample)
        if aho is not None:
            *rates, _ = median_rate(aho, len(sample), args.repeats)
            rows.append((f"first {args.sample_mb} MiB", "", "Aho-Corasick (pyahocorasick)", *rates))
    print(f"\nmedian of {args.repeats} runs, pinned to one core\n")
    print("| input | file MB | search | MB/s per CPU second | MB/s wall |")
    print("|---|---:|---|---:|---:|")
    for name, file_mb, how, cpu, wall in rows:
        print(f"| {name} | {file_mb} | {how} | {_rate(cpu)} | {_rate(wall)} |")


def _rate(mb_s: float) -> str:
    return f"{mb_s:.0f}" if mb_s >= 10 else f"{mb_s:.2f}"


if __name__ == "__main__":
    main()
