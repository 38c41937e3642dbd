"""Assemble qc.json from the samtools/bcftools outputs the oracle wrote into WORK."""
import gzip
import json
import sys
from pathlib import Path

fastq, work = Path(sys.argv[1]), Path(sys.argv[2])
total = 0
for f in sorted(fastq.glob("*.fastq.gz")):
    with gzip.open(f, "rt") as fh:
        total += sum(1 for _ in fh) // 4
flag = json.loads((work / "flagstat.json").read_text())["QC-passed reads"]
dups = int((work / "dups.txt").read_text())
stats = {}
for line in (work / "stats.txt").read_text().splitlines():
    parts = line.split("\t")
    if parts[0] == "SN":
        stats[parts[2].rstrip(":")] = int(parts[3])
    elif parts[0] == "TSTV":
        tstv = float(parts[4])
print(json.dumps({
    "sample": "PT0427",
    "total_reads": total,
    "mapped_pct": round(100 * flag["primary mapped"] / flag["primary"], 3),
    "duplicate_pct": round(100 * dups / flag["primary mapped"], 3),
    "mean_depth": round(float((work / "depth.txt").read_text()), 3),
    "ts_tv": round(tstv, 4),
    "pass_snvs": stats["number of SNPs"],
    "pass_indels": stats["number of indels"],
}, indent=2))
