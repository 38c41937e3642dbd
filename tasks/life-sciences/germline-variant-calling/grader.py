"""Grader for germline-variant-calling.

The deliverables are checked three ways: against the planted truth (variants, genotypes,
reads, duplicates), against what samtools/bcftools report about the delivered files
themselves (qc.json must describe the BAM and VCF handed in), and for the conventions the
instruction fixes (read groups, normalisation, soft filters, bgzip + tabix).

Tolerances:
- Variant recall/precision thresholds: a bcftools pipeline run as instructed recovers every
  planted variant outside the coverage dropout (SNV recall 170/172, indel 37/37, no false
  positive). The thresholds leave room for about 4 SNVs and 3 indels lost to legitimate
  parameter differences, but not for un-normalised indels (about 20 of 37 alleles differ) or
  unsplit multiallelic sites.
- Duplicate rate +-1.0 point of the planted PCR duplicates: samtools markdup flags chance
  coincident fragments too (< 0.3 point at this depth) and misses duplicates whose mate is
  unmapped; marking by lane instead of by library loses about half of them (about 6 points).
- BAM mean depth +-5 % of the simulated library depth: MAPQ < 20 in the segmental duplication
  and clipped adapter bases lower it by about 2.5 %; counting duplicates raises it by 11 %.
- qc.json against samtools/bcftools on the delivered files: percentages to 0.02 points and
  depth to 0.5 % (rounding to two decimals), Ti/Tv to 0.01, counts exact.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import zlib
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, as_number, get, load_json, near

SNV_RECALL, SNV_PRECISION = 0.97, 0.98
INDEL_RECALL, INDEL_PRECISION = 0.90, 0.90
GT_CONCORDANCE = 0.97
# The crux: a call set that misses this much is not a call of this sample (an empty or
# placeholder VCF, calls from the wrong alignment); every other check then earns nothing.
CRUX_SNV = 0.80
RUN_TIMEOUT = 120


def run(argv: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """A tool run that never raises: (exit code, stdout, stderr); 127 if it could not start."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=cwd)
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, "", str(e)


def is_bgzf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    return len(head) == 18 and head[:4] == b"\x1f\x8b\x08\x04" and head[12:14] == b"BC"


def parse_vcf(path: Path):
    """(meta lines, sample names, records) or None; records are lists of the 10 first columns."""
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            meta, samples, records = [], None, []
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("##"):
                    meta.append(line)
                elif line.startswith("#CHROM"):
                    samples = line.split("\t")[9:]
                elif line:
                    cols = line.split("\t")
                    if len(cols) < 8:
                        return None
                    records.append(cols)
    except (OSError, EOFError, UnicodeError, zlib.error, gzip.BadGzipFile):
        return None
    if samples is None:
        return None
    return meta, samples, records


def info_dp(info: str) -> float | None:
    m = re.search(r"(?:^|;)DP=([^;]+)", info)
    return as_number(m.group(1)) if m else None


def alt_count(rec: list[str]) -> int | None:
    if len(rec) < 10:
        return None
    keys = rec[8].split(":")
    if "GT" not in keys:
        return None
    values = rec[9].split(":")
    idx = keys.index("GT")
    if idx >= len(values):
        return None
    alleles = re.split(r"[/|]", values[idx])
    return sum(1 for a in alleles if a not in ("0", "."))


def ratio_outcome(num: int, den: int, threshold: float, what: str, misses: list) -> Outcome:
    value = num / den if den else 0.0
    return Outcome(
        den > 0 and value >= threshold,
        f"{what} {num}/{den} = {value:.3f} (threshold {threshold})",
        expected=f">= {threshold}",
        seen={"value": round(value, 4), "examples": misses[:5]},
    )


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    exp = ctx.reference_json("expected.json")
    sample = exp["sample"]

    truth = {}
    for line in ctx.ref("truth.vcf").read_text().splitlines():
        if line and not line.startswith("#"):
            c = line.split("\t")
            truth[(c[0], int(c[1]), c[3], c[4])] = c[9]

    # ---------------- VCF ----------------
    vcf = ctx.out("calls.vcf.gz")
    parsed = parse_vcf(vcf) if is_bgzf(vcf) else None
    r.gate("calls.vcf.gz is a bgzip-compressed VCF with a #CHROM header", Outcome(parsed is not None, "readable" if parsed else "missing, not BGZF, or not a VCF"))
    meta, samples, records = parsed if parsed else ([], [], [])

    contigs = {}
    for m in meta:
        mm = re.match(r"##contig=<ID=([^,>]+),length=(\d+)", m)
        if mm:
            contigs[mm.group(1)] = int(mm.group(2))
    order = {c: i for i, c in enumerate(contigs)}
    keys_sorted = [(order.get(rec[0], 1 << 30), as_number(rec[1]) or 0) for rec in records]
    sorted_ok = keys_sorted == sorted(keys_sorted)
    index = next((p for p in (ctx.out("calls.vcf.gz.tbi"), ctx.out("calls.vcf.gz.csi")) if p.is_file()), None)
    index_n = None
    if index is not None:
        code, out, _ = run(["bcftools", "index", "-n", str(vcf)])
        index_n = int(out.strip()) if code == 0 and out.strip().isdigit() else None
    problems = []
    if samples != [sample]:
        problems.append(f"sample columns {samples}, expected [{sample!r}]")
    if contigs != exp["contigs"]:
        problems.append(f"contig header lines {contigs}")
    if not sorted_ok:
        problems.append("records not sorted by contig and position")
    if index_n != len(records):
        problems.append(f"tabix index missing or stale (index counts {index_n}, file has {len(records)})")
    r.check(
        "VCF sample named PT0427, contigs with lengths, sorted, current tabix index",
        1,
        Outcome(not problems, "; ".join(problems) or "all conventions hold", expected={"sample": sample, "contigs": exp["contigs"]}, seen=problems or None),
    )

    fmt_ok = bool(records) and all(len(rec) >= 10 and {"GT", "AD", "DP"} <= set(rec[8].split(":")) for rec in records)
    r.check("per-sample GT, AD and DP on every record", 1, Outcome(fmt_ok, "FORMAT has GT:AD:DP" if fmt_ok else "FORMAT/AD or FORMAT/DP missing", expected="GT, AD, DP", seen=sorted({rec[8] for rec in records if len(rec) > 8})[:5]))

    # Normalisation: bcftools norm against the reference must find nothing to split or realign.
    norm_msg, norm_ok = "no VCF", False
    if records:
        ref_fa = ctx.scratch / "ref.fa"
        shutil.copyfile(ctx.inputs / "reference" / "syn1.fa", ref_fa)
        run(["samtools", "faidx", str(ref_fa)])
        code, _, err = run(["bcftools", "norm", "-f", str(ref_fa), "-m", "-any", "-Ov", "-o", "/dev/null", str(vcf)])
        m = re.search(r"total/split/realigned/skipped:\s*(\d+)/(\d+)/(\d+)/(\d+)", err)
        multi = sum(1 for rec in records if "," in rec[4])
        if code == 0 and m:
            split, realigned = int(m.group(2)), int(m.group(3))
            norm_ok = split == 0 and realigned == 0 and multi == 0
            norm_msg = f"bcftools norm would split {split} and realign {realigned} records; {multi} multiallelic"
        else:
            norm_msg = f"bcftools norm failed: {err.strip()[-200:]}"
    r.check("variants normalised: biallelic, left-aligned and trimmed (bcftools norm finds nothing to change)", 2, Outcome(norm_ok, norm_msg, expected="0 split, 0 realigned", seen=norm_msg))

    # Soft filters, exactly as stated, on every record.
    declared = {m.split("ID=")[1].split(",")[0] for m in meta if m.startswith("##FILTER=<ID=")}
    bad = []
    for rec in records:
        qual, dp = as_number(rec[5]), info_dp(rec[7])
        want = set()
        if qual is None or qual < 30:
            want.add("LowQual")
        if dp is None or dp < 10:
            want.add("LowDepth")
        got = set(rec[6].split(";"))
        if (got != want) if want else (got != {"PASS"}):
            bad.append({"pos": f"{rec[0]}:{rec[1]}", "QUAL": rec[5], "DP": dp, "FILTER": rec[6], "expected": ";".join(sorted(want)) or "PASS"})
    filt_ok = bool(records) and not bad and {"LowQual", "LowDepth"} <= declared
    r.check(
        "soft filters LowQual (QUAL<30) and LowDepth (INFO/DP<10) set exactly, declared in the header",
        2,
        Outcome(filt_ok, f"{len(bad)} of {len(records)} records filtered wrongly; declared {sorted(declared)}", expected="FILTER per rule", seen=bad[:5] or sorted(declared)),
    )

    calls = {(rec[0], as_number(rec[1]), rec[3], rec[4]): rec for rec in records}
    lo_name, lo, hi = exp["dropout"]
    dropout = [k for k in truth if k[0] == lo_name and lo <= k[1] <= hi]
    kept = [k for k in dropout if k in calls and "LowDepth" in calls[k][6].split(";")]
    r.check(
        "true variants in the low-coverage stretch kept in the VCF with FILTER LowDepth",
        1,
        Outcome(len(kept) == len(dropout), f"{len(kept)} of {len(dropout)} kept and flagged", expected=[f"{k[0]}:{k[1]}" for k in dropout], seen=[f"{k[0]}:{k[1]} {calls[k][6]}" for k in dropout if k in calls]),
    )

    def is_snv(k):
        return len(k[2]) == 1 and len(k[3]) == 1

    passed = {k: rec for k, rec in calls.items() if rec[6] == "PASS"}
    truth_snvs = [k for k in truth if is_snv(k)]
    pass_snvs = [k for k in passed if is_snv(k)]
    hits = sum(1 for k in truth_snvs if k in passed)
    crux_recall = hits / len(truth_snvs) if truth_snvs else 0.0
    crux_precision = hits / len(pass_snvs) if pass_snvs else 0.0
    r.gate(
        "PASS SNVs recover the planted truth (recall and precision >= 0.80)",
        Outcome(min(crux_recall, crux_precision) >= CRUX_SNV, f"recall {crux_recall:.3f}, precision {crux_precision:.3f}",
                expected=f">= {CRUX_SNV}", seen={"recall": round(crux_recall, 4), "precision": round(crux_precision, 4)}),
    )
    for kind, test, rec_thr, prec_thr in (("SNV", is_snv, SNV_RECALL, SNV_PRECISION), ("indel", lambda k: not is_snv(k), INDEL_RECALL, INDEL_PRECISION)):
        t = [k for k in truth if test(k)]
        c = [k for k in passed if test(k)]
        tp = [k for k in t if k in passed]
        fn = [f"{k[0]}:{k[1]} {k[2]}>{k[3]}" for k in t if k not in passed]
        fp = [f"{k[0]}:{k[1]} {k[2]}>{k[3]}" for k in c if k not in truth]
        weight_r = 2
        r.check(f"{kind} recall of PASS calls against the planted truth", weight_r, ratio_outcome(len(tp), len(t), rec_thr, "recall", fn))
        r.check(f"{kind} precision of PASS calls", 1, ratio_outcome(len(c) - len(fp), len(c), prec_thr, "precision", fp))

    matched = [k for k in truth if k in passed]
    gt_bad = [f"{k[0]}:{k[1]} truth {truth[k]} call {passed[k][9].split(':')[0] if len(passed[k]) > 9 else '?'}" for k in matched if alt_count(passed[k]) != (2 if truth[k] == "1/1" else 1)]
    r.check("genotype concordance (het/hom) of matched PASS calls", 1, ratio_outcome(len(matched) - len(gt_bad), len(matched), GT_CONCORDANCE, "concordance", gt_bad))

    # ---------------- BAM ----------------
    bam = ctx.out("sample.bam")
    bam_ok = bam.is_file() and run(["samtools", "quickcheck", str(bam)])[0] == 0
    header = run(["samtools", "view", "-H", str(bam)])[1] if bam_ok else ""
    bai = any(p.is_file() for p in (ctx.out("sample.bam.bai"), ctx.out("sample.bam.csi"), ctx.out("sample.bai")))
    # A region query needs a loadable index (idxstats silently falls back to reading the BAM).
    idx_ok = bai and run(["samtools", "view", "-c", str(bam), next(iter(exp["contigs"]))])[0] == 0
    so = re.search(r"^@HD.*\tSO:(\S+)", header, re.M)
    r.check(
        "sample.bam is a valid coordinate-sorted BAM with an index",
        1,
        Outcome(bam_ok and bool(so) and so.group(1) == "coordinate" and idx_ok, f"valid={bam_ok}, SO={so.group(1) if so else None}, index={idx_ok}", expected="valid, SO:coordinate, indexed"),
    )

    rgs = {}
    for line in header.splitlines():
        if line.startswith("@RG"):
            tags = dict(f.split(":", 1) for f in line.split("\t")[1:] if ":" in f)
            rgs[tags.get("ID")] = tags
    want_rg = {rid: {"SM": sample, "LB": exp["library"], "PL": "ILLUMINA"} for rid in exp["read_groups"]}
    rg_problems = []
    if set(rgs) != set(want_rg):
        rg_problems.append(f"read group IDs {sorted(k for k in rgs if k)}")
    for rid, want in want_rg.items():
        for key, val in want.items():
            if rgs.get(rid, {}).get(key) != val:
                rg_problems.append(f"{rid} {key}={rgs.get(rid, {}).get(key)}")
    mis_tagged = 0
    primary = mapped = dups = None
    if bam_ok:
        code, out, _ = run(["samtools", "view", "-F", "0x900", str(bam)])
        lane_of = {f"{k}": v for k, v in exp["read_groups"].items()}
        primary = mapped = dups = 0
        for line in out.splitlines():
            cols = line.split("\t", 11)
            if len(cols) < 11:
                continue
            flag = int(cols[1]) if cols[1].isdigit() else 0
            primary += 1
            if not flag & 4:
                mapped += 1
                if flag & 1024:
                    dups += 1
            name_parts = cols[0].split(":")
            rg = re.search(r"\tRG:Z:(\S+)", "\t" + (cols[11] if len(cols) > 11 else ""))
            lane = int(name_parts[3]) if len(name_parts) > 3 and name_parts[3].isdigit() else None
            if rg is None or lane_of.get(rg.group(1)) != lane:
                mis_tagged += 1
    if mis_tagged:
        rg_problems.append(f"{mis_tagged} reads without their lane's read group")
    r.check(
        "one read group per lane (ID flowcell.lane, SM, LB, PL) and every read tagged with its lane's group",
        2,
        Outcome(bam_ok and not rg_problems, "; ".join(rg_problems) or "read groups as specified", expected=want_rg, seen=rg_problems or None),
    )
    r.check(
        "every input read is in the BAM once as a primary record (unmapped and duplicates kept)",
        1,
        Outcome(primary == exp["total_reads"], f"{primary} primary records", expected=exp["total_reads"], seen=primary),
    )
    planted = 100 * exp["duplicate_reads_planted"] / (exp["total_reads"] - 2 * exp["contaminant_pairs"])
    dup_pct = 100 * dups / mapped if mapped else None
    r.check("duplicates flagged (0x400) at the planted PCR-duplicate rate", 2, near(dup_pct, planted, abs=1.0))

    depth = None
    if bam_ok:
        code, out, _ = run(["samtools", "depth", "-a", "-Q", "20", str(bam)])
        n = total = 0
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[2].isdigit():
                n += 1
                total += int(parts[2])
        depth = total / n if n else None
    r.check("BAM mean depth (MAPQ>=20, duplicates excluded) matches the simulated library", 1, near(depth, exp["library_depth"], rel=0.05))

    # ---------------- qc.json ----------------
    qc, qc_ok = load_json(ctx.out("qc.json"))
    r.check(
        "qc.json sample and total_reads",
        1,
        Outcome(qc_ok.passed and get(qc, "sample") == sample and get(qc, "total_reads") == exp["total_reads"], "as expected" if qc_ok.passed else qc_ok.message, expected={"sample": sample, "total_reads": exp["total_reads"]}, seen={"sample": get(qc, "sample", None), "total_reads": get(qc, "total_reads", None)} if qc_ok.passed else None),
    )
    map_pct = 100 * mapped / primary if primary else None
    a = near(get(qc, "mapped_pct"), map_pct, abs=0.02) if map_pct is not None else Outcome(False, "no readable BAM to compare with")
    b = near(get(qc, "duplicate_pct"), dup_pct, abs=0.02) if dup_pct is not None else Outcome(False, "no readable BAM to compare with")
    r.check(
        "qc.json mapped_pct and duplicate_pct agree with the delivered BAM",
        1,
        Outcome(a.passed and b.passed, f"mapped_pct: {a.message}; duplicate_pct: {b.message}", expected={"mapped_pct": map_pct, "duplicate_pct": dup_pct}, seen={"mapped_pct": get(qc, "mapped_pct", None), "duplicate_pct": get(qc, "duplicate_pct", None)}),
    )
    r.check(
        "qc.json mean_depth agrees with samtools depth -a -Q 20 on the delivered BAM",
        1,
        near(get(qc, "mean_depth"), depth, rel=0.005) if depth else Outcome(False, "no readable BAM to compare with"),
    )
    stats_ok, tstv, n_snv, n_indel = False, None, None, None
    if records:
        code, out, _ = run(["bcftools", "stats", "-f", "PASS", str(vcf)])
        for line in out.splitlines():
            p = line.split("\t")
            if p[0] == "SN" and len(p) > 3 and p[2] == "number of SNPs:":
                n_snv = int(p[3])
            elif p[0] == "SN" and len(p) > 3 and p[2] == "number of indels:":
                n_indel = int(p[3])
            elif p[0] == "TSTV" and len(p) > 4:
                tstv = as_number(p[4])
        stats_ok = code == 0 and tstv is not None
    c = near(get(qc, "ts_tv"), tstv, abs=0.01) if stats_ok else Outcome(False, "bcftools stats could not read the VCF")
    counts_ok = stats_ok and get(qc, "pass_snvs") == n_snv and get(qc, "pass_indels") == n_indel
    r.check(
        "qc.json ts_tv, pass_snvs and pass_indels agree with bcftools stats -f PASS on the delivered VCF",
        1,
        Outcome(c.passed and counts_ok, f"ts_tv: {c.message}; counts {'agree' if counts_ok else 'differ'}", expected={"ts_tv": tstv, "pass_snvs": n_snv, "pass_indels": n_indel}, seen={k: get(qc, k, None) for k in ("ts_tv", "pass_snvs", "pass_indels")}),
    )
    return r
