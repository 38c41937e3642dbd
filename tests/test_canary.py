"""`lastexam canary scan` (issue 16, part 5): canaries planted in plain, JSONL, gzip, zstd and
parquet files are found at their offsets in the decompressed bytes, in any letter case and
across chunk boundaries; unreadable files are skipped with a warning; and `validate` fails two
tasks, or a task and a sealed pool's card, that share a canary."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import uuid
from pathlib import Path

import pytest
import zstandard

from conftest import COLUMN_TOTAL, run_cli
from lastexam.pool import canary as cn

BASE_CANARY = "8cbf5e58-8c2f-4cd0-919c-42ea7ef23d71"  # tests/data/tasks/other/column-total
PLANTED = str(uuid.uuid5(uuid.NAMESPACE_URL, "lastexam-test/canary-planted"))
OTHER = str(uuid.uuid5(uuid.NAMESPACE_URL, "lastexam-test/canary-other"))  # not a task's
HEX64 = "0" * 64
CARD_ID = "sealed-card"
CARD_CANARY = str(uuid.uuid5(uuid.NAMESPACE_URL, "lastexam-test/canary-card"))


def make_task(root: Path, task_id: str, canary: str) -> Path:
    """A copy of the harness test task under a new id, with `canary` wherever it had its own."""
    folder = root / "other" / task_id
    shutil.copytree(COLUMN_TOTAL, folder)
    for rel in ("task.toml", "instruction.md", "reference/expected.json"):
        path = folder / rel
        text = path.read_text()
        assert BASE_CANARY in text, path
        path.write_text(text.replace(BASE_CANARY, canary))
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace('id = "column-total"', f'id = "{task_id}"'))
    return folder


def make_pool(folder: Path, cards: dict[str, str]) -> Path:
    """A pool.toml whose cards (id -> canary) are all this scan and these gates read."""
    folder.mkdir(parents=True)
    text = f'recipients = ["age1{"q" * 58}"]\n'
    for card_id, canary in cards.items():
        text += (f'\n[[task]]\nid = "{card_id}"\ncluster = "other"\nsubdomain = "sports"\n'
                 f'tier = "near-term"\nsoftware = ["awk"]\nenvironment = "base"\ntimeout_s = 60\n'
                 f'canary = "{canary}"\nrelease_date = 2030-01-01\ncontent_hash = "{HEX64}"\n'
                 f'grader_version = "{HEX64}"\n'
                 f'bundle = {{ spec = "{HEX64}", agent = "{HEX64}", hidden = "{HEX64}" }}\n')
    (folder / "pool.toml").write_text(text)
    return folder


@pytest.fixture
def planted_task(tmp_path: Path) -> Path:
    return make_task(tmp_path / "tasks", "planted-task", PLANTED)


def scan_cli(*args: str | Path) -> tuple[int, list[str], str]:
    proc = run_cli("canary", "scan", *args, check=False, timeout=120)
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


def test_canaries_in_gzip_and_jsonl_are_found_at_their_offsets(tmp_path: Path, planted_task: Path) -> None:
    data = tmp_path / "data"
    (data / "shard").mkdir(parents=True)
    first = json.dumps({"text": f"a line naming {OTHER}, not a task's"}) + "\n"
    second = json.dumps({"id": 2, "text": f"copied from the benchmark: {PLANTED} ..."}) + "\n"
    (data / "corpus.jsonl").write_text(first + second)
    head = b"x" * 100_000 + b"\n"
    with gzip.open(data / "shard" / "part-0.txt.gz", "wb") as f:
        f.write(head + PLANTED.encode() + b" tail\n")
    (data / "shard" / "broken.gz").write_bytes(b"not gzip at all")
    code, lines, err = scan_cli(data, "--tasks", planted_task.parent)
    jsonl_at = len(first.encode()) + second.encode().index(PLANTED.encode())
    assert lines == [f"{data / 'corpus.jsonl'}:{jsonl_at}: planted-task",
                     f"{data / 'shard' / 'part-0.txt.gz'}:{len(head)}: planted-task"], err
    assert code == 1
    # the broken file is named on stderr, and the scan went on past it
    assert f"{data / 'shard' / 'broken.gz'}" in err and "Traceback" not in err
    assert "2 hits of 1 tasks" in err


def test_a_clean_folder_exits_0(tmp_path: Path, planted_task: Path) -> None:
    data = tmp_path / "clean"
    data.mkdir()
    (data / "notes.jsonl").write_text(json.dumps({"id": OTHER, "text": PLANTED[:-1]}) + "\n")
    with gzip.open(data / "more.gz", "wb") as f:
        f.write(PLANTED[1:].encode())
    code, lines, err = scan_cli(data, "--tasks", planted_task)
    assert (code, lines) == (0, []), err
    assert "0 hits" in err


def test_a_bad_path_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    code, lines, err = scan_cli(missing)
    assert code == 2 and lines == []
    assert str(missing) in err and "Traceback" not in err
    code, _, err = scan_cli(tmp_path, "--tasks", missing)
    assert code == 2 and str(missing) in err and "Traceback" not in err


def test_a_sealed_pools_cards_are_canary_sources(tmp_path: Path) -> None:
    pool = make_pool(tmp_path / "pool", {CARD_ID: CARD_CANARY})
    (tmp_path / "data.txt").write_text(f"..{CARD_CANARY}..")
    code, lines, _ = scan_cli(tmp_path / "data.txt", "--tasks", pool)
    assert (code, lines) == (1, [f"{tmp_path / 'data.txt'}:2: {CARD_ID}"])


def scan_files(*paths: Path, canaries: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    scanner = cn.Scanner(canaries or {PLANTED: "planted-task"}, warn=warnings.append)
    return [str(h) for h in scanner.scan(paths)], warnings


@pytest.mark.parametrize("cut", range(1, 36))
def test_a_canary_split_across_chunks_is_found_once(cut: int) -> None:
    text = b"abc-" * 20 + PLANTED.encode() + b"-0000-" * 5
    at = text.index(PLANTED.encode())
    scanner = cn.Scanner({PLANTED: "planted-task"})
    hits = list(scanner.scan_stream(Path("s"), [text[:at + cut], text[at + cut:]]))
    assert [(h.offset, h.task_id) for h in hits] == [(at, "planted-task")]


def test_chunks_smaller_than_a_canary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cn, "CHUNK", 7)
    text = "-".join(f"{i:04x}" for i in range(200)) + PLANTED + "z" * 50 + PLANTED
    (tmp_path / "t.txt").write_text(text)
    hits, _ = scan_files(tmp_path / "t.txt")
    first = text.index(PLANTED)
    assert hits == [f"{tmp_path / 't.txt'}:{first}: planted-task",
                    f"{tmp_path / 't.txt'}:{first + 36 + 50}: planted-task"]


def test_zstd_across_frames(tmp_path: Path) -> None:
    c = zstandard.ZstdCompressor()
    first, second = b"frame one\n" * 1000, b"frame two " + PLANTED.encode()
    (tmp_path / "d.jsonl.zst").write_bytes(c.compress(first) + c.compress(second))
    (tmp_path / "e.zstd").write_bytes(b"\x28\xb5\x2f\xfd garbage")
    hits, warnings = scan_files(tmp_path)
    assert hits == [f"{tmp_path / 'd.jsonl.zst'}:{len(first) + 10}: planted-task"]
    assert len(warnings) == 1 and str(tmp_path / "e.zstd") in warnings[0]


def test_upper_and_mixed_case_canaries_are_found(tmp_path: Path) -> None:
    mixed = "".join(ch.upper() if i % 2 else ch for i, ch in enumerate(PLANTED))
    (tmp_path / "u.txt").write_text(f"{PLANTED.upper()}\n{mixed}\n")
    hits, _ = scan_files(tmp_path / "u.txt")
    assert hits == [f"{tmp_path / 'u.txt'}:0: planted-task", f"{tmp_path / 'u.txt'}:37: planted-task"]
    # a canary written upper-case in its task.toml is found written lower-case
    hits, _ = scan_files(tmp_path / "u.txt", canaries={PLANTED.upper(): "upper-task"})
    assert hits == [f"{tmp_path / 'u.txt'}:0: upper-task", f"{tmp_path / 'u.txt'}:37: upper-task"]


def test_parquet_text_columns(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"n": [1, 2, 3], "text": ["first", None, f"see {PLANTED}"],
                      "tag": pa.array(["a", "b", PLANTED.upper()]).dictionary_encode()})
    pq.write_table(table, tmp_path / "t.parquet")
    hits, warnings = scan_files(tmp_path / "t.parquet")
    # the values of the text columns one per line: "first\nsee <canary>\n" then "a\nb\n<CANARY>\n"
    assert hits == [f"{tmp_path / 't.parquet'}:10: planted-task",
                    f"{tmp_path / 't.parquet'}:{10 + 36 + 1 + 4}: planted-task"]
    assert warnings == []


def test_parquet_without_pyarrow_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    (tmp_path / "a.parquet").write_bytes(b"PAR1")
    (tmp_path / "b.txt").write_text(PLANTED)
    hits, warnings = scan_files(tmp_path)
    assert hits == [f"{tmp_path / 'b.txt'}:0: planted-task"]
    assert len(warnings) == 1 and str(tmp_path / "a.parquet") in warnings[0]
    assert "cannot read parquet without pyarrow" in warnings[0]


def test_two_tasks_sharing_a_canary_fail_validation(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    make_task(tasks, "dup-a", PLANTED)
    make_task(tasks, "dup-b", PLANTED.upper())  # the same GUID, written upper-case
    make_task(tasks, "unique-c", OTHER)
    proc = run_cli("validate", tasks, "--gates", "static", "--json", check=False, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    gates = {t["task"]: {g["name"]: (g["passed"], g["detail"]) for g in t["gates"]}
             for t in json.loads(proc.stdout)["tasks"]}
    assert gates["dup-a"]["canary unique"] == (False, "canary also used by dup-b")
    assert gates["dup-b"]["canary unique"] == (False, "canary also used by dup-a")
    assert gates["unique-c"]["canary unique"] == (True, "")
    # every public task's canary is in its instruction.md and reference/, as before
    assert all(g["canary present"] == (True, "") for g in gates.values())


def test_a_task_sharing_a_canary_with_a_sealed_task_fails(tmp_path: Path) -> None:
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    sealed = tmp_path / "to-seal"
    make_task(sealed, CARD_ID, CARD_CANARY)
    make_task(sealed, "released-task", OTHER)
    run_cli("seal", sealed, "--recipient", f"{key}.pub", "--out", tmp_path / "pool")
    public = tmp_path / "tasks"
    make_task(public, "public-task", CARD_CANARY.upper())
    make_task(public, "released-task", OTHER)  # the same task, released from the pool
    proc = run_cli("validate", public, tmp_path / "pool", "--identity", key, "--gates", "static",
                   "--json", check=False, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    gates = {(t["task"], Path(t["path"]).is_relative_to(public)): dict(
        (g["name"], (g["passed"], g["detail"])) for g in t["gates"]) for t in json.loads(proc.stdout)["tasks"]}
    assert gates["public-task", True]["canary unique"] == (False, f"canary also used by {CARD_ID}")
    assert gates[CARD_ID, False]["canary unique"] == (False, "canary also used by public-task")
    assert gates["released-task", True]["canary unique"] == (True, "")
    assert gates["released-task", False]["canary unique"] == (True, "")
