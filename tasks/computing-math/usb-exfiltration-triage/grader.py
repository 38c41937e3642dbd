"""Grader for usb-exfiltration-triage: the examiner's report against the planted truth.

Tolerances (and why):
- hashes, inodes, sizes, statuses, mismatch and anomaly lists: exact; each has one right answer
  that The Sleuth Kit and file(1) give, and a forensic report is wrong if any of them differs;
- times 1 s: FAT keeps modification times to 2 s and creation times to 10 ms, so the stored
  value is exact; 1 s lets a report truncate or round the 10 ms part. Time-zone mistakes are
  whole hours off.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    equal,
    get,
    load_csv,
    load_json,
    match_rows,
    rows_by,
    same_set,
)

COLUMNS = ["inode", "path", "status", "size", "sha256", "extension_mismatch", "created_utc", "modified_utc"]
TIME_TOL_S = 1.0
MAX_RECOVERED_FILES, MAX_RECOVERED_BYTES = 200, 16 * 1024 * 1024


def epoch(value: object) -> float | None:
    """Seconds since 1970 of an ISO 8601 instant with an explicit offset; None otherwise."""
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.strip().replace(" ", "T", 1))
        return None if t.tzinfo is None else t.astimezone(UTC).timestamp()
    except (ValueError, OverflowError):  # OverflowError: year 1 at +01:00 is before year 1 in UTC
        return None


def inode_of(row: dict) -> int | None:
    n = as_number(row.get("inode"))
    return int(n) if n is not None and n == int(n) else None


def recovered_hashes(ctx: GradeContext) -> tuple[list[str], Outcome]:
    folder = ctx.out("recovered")
    if not folder.is_dir():
        return [], Outcome(False, "recovered/ is not a folder")
    files = []
    for root, _dirs, names in os.walk(folder):  # does not follow symbolic links
        files += [Path(root) / n for n in names if (Path(root) / n).is_file() and not (Path(root) / n).is_symlink()]
        if len(files) > MAX_RECOVERED_FILES:
            return [], Outcome(False, f"recovered/ holds over {MAX_RECOVERED_FILES} files")
    files.sort()
    out = []
    for p in files:
        if p.stat().st_size > MAX_RECOVERED_BYTES:
            return [], Outcome(False, f"{p.name} is over {MAX_RECOVERED_BYTES} bytes")
        out.append(hashlib.sha256(p.read_bytes()).hexdigest())
    return out, Outcome(True, f"{len(out)} files")


def listed_inodes(value: object) -> list[int] | None:
    if not isinstance(value, list):
        return None
    out = []
    for v in value:
        n = as_number(v)
        if n is None or n != int(n):
            return None
        out.append(int(n))
    return sorted(out)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    truth = ctx.reference_json("truth.json")
    ref = {int(k): v for k, v in truth["files"].items()}

    rows, table_ok = load_csv(ctx.out("files.csv"), required_columns=COLUMNS)
    r.gate("files.csv has the required columns", table_ok)
    findings, parsed = load_json(ctx.out("findings.json"))
    r.gate("findings.json parses as a JSON object", parsed)
    hashes, folder_ok = recovered_hashes(ctx)

    # The crux: deleted files carved back out of the image, byte for byte.
    intact = {i: f for i, f in ref.items() if f["status"] == "deleted"}
    got = set(hashes)
    found = sorted(f["name"] for f in intact.values() if f["sha256"] in got)
    r.gate("at least two intact deleted files recovered byte for byte in recovered/",
           Outcome(folder_ok.passed and len(found) >= 2, f"{len(found)} of {len(intact)} recovered: {found}"
                   if folder_ok.passed else folder_ok.message,
                   expected=sorted(f["name"] for f in intact.values()), seen=found))

    # Weighted as the precondition of everything else: a report that hashes the wrong bytes, or
    # declares verified evidence unverified, undermines every finding built on the image.
    r.check("image SHA-256 and MD5 over the whole split image, custody hashes verified", 4, all_of([
        ("sha256", equal(str(get(findings, "image_sha256", "")).strip().lower(), truth["image_sha256"])),
        ("md5", equal(str(get(findings, "image_md5", "")).strip().lower(), truth["image_md5"])),
        ("verified", equal(get(findings, "custody_hash_verified"), truth["custody_hash_verified"])),
    ]))
    r.check("partition start sector and file-system type", 1, all_of([
        ("partition_start_sector", equal(as_number(get(findings, "partition_start_sector")), truth["partition_start_sector"])),
        ("filesystem", equal(str(get(findings, "filesystem", "")).strip().upper(), truth["filesystem"])),
    ]))

    table = rows_by(rows, inode_of)
    r.check("one row per file entry, allocated and deleted (keyed by inode)", 2, table.coverage(ref))
    r.check("status of every entry (allocated / deleted / overwritten)", 2,
            match_rows(table, {i: {"status": f["status"]} for i, f in ref.items()}, ["status"]))
    r.check("size and SHA-256 of every file (empty for overwritten)", 2,
            match_rows(table, {i: {"size": f["size"], "sha256": f["sha256"] or None} for i, f in ref.items()},
                       ["size", "sha256"], exact=True))
    want = sorted(f["sha256"] for f in intact.values())
    r.check("recovered/ holds exactly the intact deleted files, nothing overwritten or allocated", 3,
            Outcome(folder_ok.passed and sorted(hashes) == want,
                    f"{len(hashes)} files, {len(found)} of {len(intact)} intact deleted files among them"
                    if folder_ok.passed else folder_ok.message, expected=want, seen=sorted(hashes)[:10]))

    mism = {i for i, f in ref.items() if f["extension_mismatch"]}
    table_mism = sorted(i for i, row in table.items() if as_number(row.get("extension_mismatch")) == 1)
    r.check("extension mismatches by signature (files.csv flags and findings.json list)", 2, all_of([
        ("files.csv", same_set(table_mism, sorted(mism))),
        ("findings.json", equal(listed_inodes(get(findings, "extension_mismatches")), sorted(mism))),
    ]))

    for field, weight, label in (("created_utc", 3, "creation"), ("modified_utc", 2, "modification")):
        seen = {i: {field: epoch(row.get(field))} for i, row in table.items()}
        want_t = {i: {field: epoch(f[field])} for i, f in ref.items()}
        r.check(f"{label} times in true UTC within 1 s (local FAT times, time zone and DST)", weight,
                match_rows(seen, want_t, [field], abs=TIME_TOL_S))

    anomalies = sorted(i for i, f in ref.items() if f["timestamp_anomaly"])
    r.check("timestamp anomalies (before the file system existed, after seizure)", 2,
            equal(listed_inodes(get(findings, "timestamp_anomalies")), anomalies))
    return r
