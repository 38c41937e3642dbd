"""Turns the Sleuth Kit results gathered by solve.sh into files.csv, recovered/ and findings.json."""

import csv
import hashlib
import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

WORK, OUT = Path(sys.argv[1]), Path(sys.argv[2])
CUSTODY = Path("/task/inputs/chain_of_custody.txt").read_text()
ZONE = ZoneInfo("America/Chicago")

# The MIME types file(1) may report for content that fits each extension.
EXPECTED = {
    "txt": {"text/plain"}, "log": {"text/plain"}, "csv": {"text/plain", "text/csv"},
    "pdf": {"application/pdf"}, "jpg": {"image/jpeg"}, "jpeg": {"image/jpeg"}, "png": {"image/png"},
    "docx": {"application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    "xlsx": {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    "dll": {"application/x-dosexec", "application/vnd.microsoft.portable-executable"},
    "zip": {"application/zip"},
}


def iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def main() -> None:
    rows, fs_made = [], None
    for line in (WORK / "body").read_text().splitlines():
        _md5, name, inode, mode, _u, _g, size, _atime, mtime, _ctime, crtime = line.split("|")
        if "(Volume Label Entry)" in name:
            fs_made = int(crtime)
            continue
        if not mode.startswith("r/r"):
            continue
        deleted = name.endswith(" (deleted)")
        path = name.removesuffix(" (deleted)")
        data = (WORK / "content" / inode).read_bytes()[: int(size)]
        alloc = (WORK / "content" / f"{inode}.alloc").read_text().strip()
        status = "allocated" if not deleted else ("overwritten" if alloc == "Allocated" else "deleted")
        mime = (WORK / "content" / f"{inode}.mime").read_text().strip()
        ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
        mismatch = int(status != "overwritten" and ext in EXPECTED and mime not in EXPECTED[ext])
        digest = "" if status == "overwritten" else hashlib.sha256(data).hexdigest()
        if status == "deleted":
            (OUT / "recovered" / f"{inode}_{path.rsplit('/', 1)[-1]}").write_bytes(data)
        rows.append({"inode": int(inode), "path": path, "status": status, "size": int(size), "sha256": digest,
                     "extension_mismatch": mismatch, "created": int(crtime), "modified": int(mtime)})
    rows.sort(key=lambda r: r["inode"])

    seized_local = re.search(r"on (\d{4}-\d\d-\d\d \d\d:\d\d) local time", CUSTODY).group(1)
    seized = int(datetime.strptime(seized_local, "%Y-%m-%d %H:%M").replace(tzinfo=ZONE).timestamp())
    anomalies = [r["inode"] for r in rows
                 if min(r["created"], r["modified"]) < 0 or r["created"] < fs_made
                 or max(r["created"], r["modified"]) > seized]

    with open(OUT / "files.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["inode", "path", "status", "size", "sha256", "extension_mismatch", "created_utc", "modified_utc"])
        for r in rows:
            w.writerow([r["inode"], r["path"], r["status"], r["size"], r["sha256"], r["extension_mismatch"],
                        iso(r["created"]), iso(r["modified"])])

    sha = (WORK / "sha256").read_text().strip()
    md5 = (WORK / "md5").read_text().strip()
    custody_sha = re.search(r"SHA-256\s+([0-9a-f]{64})", CUSTODY).group(1)
    custody_md5 = re.search(r"MD5\s+([0-9a-f]{32})", CUSTODY).group(1)
    findings = {
        "image_sha256": sha,
        "image_md5": md5,
        "custody_hash_verified": sha == custody_sha and md5 == custody_md5,
        "partition_start_sector": int((WORK / "offset").read_text()),
        "filesystem": (WORK / "fstype").read_text().strip(),
        "extension_mismatches": [r["inode"] for r in rows if r["extension_mismatch"]],
        "timestamp_anomalies": anomalies,
    }
    (OUT / "findings.json").write_text(json.dumps(findings, indent=2) + "\n")


main()
