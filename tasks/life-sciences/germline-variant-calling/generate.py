"""Seeded generator of inputs/ and reference/ for germline-variant-calling:
python3 generate.py --out DIR.

A synthetic diploid genome (two contigs with homopolymers, short tandem repeats, an
interspersed repeat family and a segmental duplication), planted SNVs and indels (het, hom
and two multiallelic sites), and 2x150 bp Illumina-like reads from one library sequenced on
two lanes: binned qualities with matching error rates, adapter read-through on short
fragments, PCR duplicates (within and across lanes), a coverage dropout and contaminant
pairs. The truth VCF is written left-aligned, parsimonious and biallelic."""

import argparse
import gzip
import json
import random
from pathlib import Path

SEED = 427
CANARY = "22174210-468e-4bd8-bd13-8047a240668d"
SAMPLE = "PT0427"
LIBRARY = "LIB-PT0427-A"
FLOWCELL = "HK3TWDSXY"
INSTRUMENT = "A00871"
RUN = 214
BARCODE = "GTAGCTCA+ACGGTTAC"
CONTIGS = [("chr1", 72_000), ("chr2", 48_000)]
READ_LEN = 150
DEPTH = 30.0
DUP_FRACTION = 0.11  # share of library fragments read more than once
CONTAM_FRACTION = 0.012
ADAPTER_R1 = "AGATCGGAAGAGCACACGTCTGAACTCCAGTCACGTAGCTCAATCTCGTATGCCGTCTTCTGCTTG"
ADAPTER_R2 = "AGATCGGAAGAGCGTCGTGTAGGGAAAGAGTGTACGGTTACGTGTAGATCTCGGTGGTCGCCGTATCATT"
QUAL_BINS = [("F", 0.0006), (":", 0.006), (",", 0.06), ("#", 0.5)]  # Q37, Q25, Q11, Q2
COMP = str.maketrans("ACGTN", "TGCAN")
TRANSITION = {"A": "G", "G": "A", "C": "T", "T": "C"}
DROPOUT = ("chr2", 30_500, 32_300)  # GC-rich stretch sequenced at a quarter of the depth


def revcomp(s: str) -> str:
    return s.translate(COMP)[::-1]


def random_seq(rng: random.Random, n: int, gc: float = 0.41) -> str:
    return "".join(
        rng.choice("GC") if rng.random() < gc else rng.choice("AT") for _ in range(n)
    )


def build_reference(rng: random.Random):
    element = random_seq(rng, 310, 0.52)  # an interspersed repeat family
    seqs, features = {}, {}
    for name, length in CONTIGS:
        parts, pos, feats = [], 0, []
        while pos < length:
            r = rng.random()
            if r < 0.06:
                base = rng.choice("AT") if rng.random() < 0.8 else rng.choice("GC")
                run = base * rng.randint(6, 10)
                feats.append(("homopolymer", pos, pos + len(run)))
                chunk = run
            elif r < 0.09:
                unit = rng.choice(["CA", "TG", "AT", "AGG", "TTC", "GATA"])
                chunk = unit * rng.randint(5, 9)
                feats.append(("str", pos, pos + len(chunk)))
            elif r < 0.097:
                chunk = "".join(
                    b if rng.random() > 0.03 else rng.choice("ACGT") for b in element
                )
                feats.append(("repeat", pos, pos + len(chunk)))
            else:
                chunk = random_seq(rng, rng.randint(60, 260), 0.41)
            parts.append(chunk)
            pos += len(chunk)
        seq = "".join(parts)[:length]
        if name == "chr2":
            lo, hi = DROPOUT[1], DROPOUT[2]
            seq = seq[:lo] + random_seq(rng, hi - lo, 0.66) + seq[hi:]
        seqs[name], features[name] = seq, feats
    # A 2.4 kb segmental duplication from chr1 into chr2 at 99.6 % identity.
    src = seqs["chr1"][20_000:22_400]
    copy = "".join(b if rng.random() > 0.004 else rng.choice("ACGT".replace(b, "")) for b in src)
    seqs["chr2"] = seqs["chr2"][:12_000] + copy + seqs["chr2"][12_000 + len(copy):]
    overwritten = [(12_000, 12_000 + len(copy)), (DROPOUT[1], DROPOUT[2])]
    features["chr2"] = [
        f for f in features["chr2"] if all(f[2] <= lo or f[1] >= hi for lo, hi in overwritten)
    ]
    features["chr1"].append(("segdup", 20_000, 22_400))
    features["chr2"].append(("segdup", 12_000, 12_000 + len(copy)))
    features[DROPOUT[0]].append(("dropout", DROPOUT[1], DROPOUT[2]))
    return seqs, features


def left_align_del(seq: str, p: int, n: int) -> int:
    while p > 1 and seq[p - 1] == seq[p + n - 1]:
        p -= 1
    return p


def left_align_ins(seq: str, p: int, ins: str):
    while p > 1 and seq[p - 1] == ins[-1]:
        ins = ins[-1] + ins[:-1]
        p -= 1
    return p, ins


def plant_variants(rng: random.Random, seqs, features):
    """Variants as (contig, pos0, ref, alt, haplotypes); indel alleles anchored on pos0."""
    variants = []
    for name, length in CONTIGS:
        seq = seqs[name]
        blocked = [(a - 150, b + 150) for kind, a, b in features[name] if kind in ("segdup", "repeat", "dropout")]
        taken = []

        def free(p, margin=40):
            return (
                200 < p < length - 200
                and all(not (a <= p <= b) for a, b in blocked)
                and all(abs(p - q) > margin for q in taken)
            )

        # Indels in homopolymers and STRs: the representation must be left-aligned.
        tracts = [f for f in features[name] if f[0] in ("homopolymer", "str")]
        rng.shuffle(tracts)
        n_tract_indels = 9 if name == "chr1" else 6
        for kind, a, b in tracts:
            if n_tract_indels == 0:
                break
            if b > length - 200 or not free(a) or not free(b):
                continue
            unit = 1 if kind == "homopolymer" else next(k for k in (2, 3, 4) if seq[a:a + k] * 2 == seq[a:a + 2 * k])
            k = rng.choice([1, 1, 2]) * unit
            p = rng.randint(a + 1, b - k)  # somewhere inside the tract, not at its left end
            if rng.random() < 0.5:
                p0 = left_align_del(seq, p, k)
                ref, alt = seq[p0 - 1:p0 + k], seq[p0 - 1]
            else:
                ins = seq[p:p + k]
                p0, ins = left_align_ins(seq, p, ins)
                ref, alt = seq[p0 - 1], seq[p0 - 1] + ins
            variants.append([name, p0 - 1, ref, alt, rng.choice([{1}, {2}, {1, 2}])])
            taken.append(p)
            n_tract_indels -= 1
        # Indels in unique sequence.
        for _ in range(12 if name == "chr1" else 8):
            while True:
                p = rng.randint(300, length - 300)
                if free(p) and seq[p - 3:p + 12].count(seq[p]) < 5:
                    break
            k = min(1 + int(rng.expovariate(0.45)), 12)
            if rng.random() < 0.5:
                p0 = left_align_del(seq, p, k)
                ref, alt = seq[p0 - 1:p0 + k], seq[p0 - 1]
            else:
                ins = random_seq(rng, k)
                p0, ins = left_align_ins(seq, p, ins)
                ref, alt = seq[p0 - 1], seq[p0 - 1] + ins
            variants.append([name, p0 - 1, ref, alt, rng.choice([{1}, {2}, {1, 2}])])
            taken.append(p)
        # SNVs.
        for _ in range(100 if name == "chr1" else 68):
            while True:
                p = rng.randint(250, length - 250)
                if free(p):
                    break
            ref = seq[p]
            alt = TRANSITION[ref] if rng.random() < 0.69 else rng.choice([b for b in "ACGT" if b not in (ref, TRANSITION[ref])])
            haps = {1, 2} if rng.random() < 0.38 else {rng.choice([1, 2])}
            variants.append([name, p, ref, alt, haps])
            taken.append(p)
        # Variants inside the coverage dropout: called on few reads, so they fail the depth filter.
        if name == DROPOUT[0]:
            for p in (DROPOUT[1] + 400, DROPOUT[1] + 1100):
                ref = seq[p]
                variants.append([name, p, ref, TRANSITION[ref], {1, 2}])
                taken.append(p)
        # One multiallelic SNV site (1/2) and one multiallelic homopolymer deletion (1/2).
        if name == "chr1":
            while True:
                p = rng.randint(250, length - 250)
                if free(p):
                    break
            ref = seq[p]
            a1, a2 = [b for b in "ACGT" if b != ref][:2]
            variants.append([name, p, ref, a1, {1}])
            variants.append([name, p, ref, a2, {2}])
            taken.append(p)
            for kind, a, b in tracts:
                if kind == "homopolymer" and b - a >= 8 and free(a) and free(b) and b < length - 200:
                    p0 = left_align_del(seq, a, 1)
                    variants.append([name, p0 - 1, seq[p0 - 1:p0 + 1], seq[p0 - 1], {1}])
                    variants.append([name, p0 - 1, seq[p0 - 1:p0 + 2], seq[p0 - 1], {2}])
                    taken.append(a)
                    break
    variants.sort(key=lambda v: (v[0], v[1], len(v[2]), v[3]))
    return variants


def haplotype(seq: str, variants, hap: int, name: str) -> str:
    """Apply one haplotype's variants; at a shared position only that haplotype's allele applies."""
    out, cursor = [], 0
    for contig, p, ref, alt, haps in variants:
        if contig != name or hap not in haps:
            continue
        assert p >= cursor and seq[p:p + len(ref)] == ref
        out.append(seq[cursor:p])
        out.append(alt)
        cursor = p + len(ref)
    out.append(seq[cursor:])
    return "".join(out)


def quals_and_errors(rng: random.Random, bases: str, mate: int):
    q, s = [], []
    n = len(bases)
    for i, b in enumerate(bases):
        x = i / n
        worse = 0.03 + 0.12 * x * x + (0.04 if mate == 2 else 0.0)
        r = rng.random()
        if r < worse * 0.72:
            sym, err = QUAL_BINS[1]
        elif r < worse * 0.97:
            sym, err = QUAL_BINS[2]
        elif r < worse:
            sym, err = QUAL_BINS[3]
        else:
            sym, err = QUAL_BINS[0]
        if rng.random() < err:
            b = "N" if sym == "#" and rng.random() < 0.5 else rng.choice([c for c in "ACGT" if c != b])
        q.append(sym)
        s.append(b)
    return "".join(s), "".join(q)


def make_reads(rng: random.Random, seqs, variants):
    haps = {
        (name, h): haplotype(seqs[name], variants, h, name) for name, _ in CONTIGS for h in (1, 2)
    }
    genome = sum(length for _, length in CONTIGS)
    n_frag = int(DEPTH * genome / (2 * READ_LEN) / (1 + DUP_FRACTION * 1.4) * 1.02)
    keys = sorted(haps)
    weights = [len(haps[k]) for k in keys]
    fragments = []
    genomic_bases = 0
    while len(fragments) < n_frag:
        key = rng.choices(keys, weights)[0]
        hseq = haps[key]
        flen = rng.randint(95, 149) if rng.random() < 0.025 else max(180, min(520, int(rng.gauss(335, 45))))
        start = rng.randint(0, len(hseq) - flen)
        mid = start + flen // 2
        if key[0] == DROPOUT[0] and DROPOUT[1] <= mid <= DROPOUT[2] and rng.random() > 0.25:
            continue
        frag = hseq[start:start + flen]
        if rng.random() < 0.5:
            frag = revcomp(frag)
        fragments.append(frag)
        genomic_bases += 2 * min(flen, READ_LEN)
    contaminant = random_seq(rng, 9_000, 0.5)
    for _ in range(int(n_frag * CONTAM_FRACTION)):
        flen = max(180, min(520, int(rng.gauss(335, 45))))
        start = rng.randint(0, len(contaminant) - flen)
        frag = contaminant[start:start + flen]
        fragments.append(frag if rng.random() < 0.5 else revcomp(frag))
    n_contam = len(fragments) - n_frag
    # PCR duplicates: extra reads of the same molecule, on either lane.
    copies = []
    n_dup_reads = 0
    for i, frag in enumerate(fragments):
        n = 1
        if i < n_frag and rng.random() < DUP_FRACTION:
            n += 1 + (rng.random() < 0.3)
        n_dup_reads += 2 * (n - 1)
        copies.extend([frag] * n)
    rng.shuffle(copies)
    lanes = {1: [], 2: []}
    used = set()
    for frag in copies:
        lane = 1 if rng.random() < 0.55 else 2
        while True:
            tile = rng.choice([1101, 1102, 1103, 1104, 2101, 2102, 2103, 2104])
            x, y = rng.randint(1000, 32000), rng.randint(1000, 37000)
            if (lane, tile, x, y) not in used:
                used.add((lane, tile, x, y))
                break
        r1 = (frag + ADAPTER_R1 + "A" * READ_LEN)[:READ_LEN]
        r2 = (revcomp(frag) + ADAPTER_R2 + "A" * READ_LEN)[:READ_LEN]
        s1, q1 = quals_and_errors(rng, r1, 1)
        s2, q2 = quals_and_errors(rng, r2, 2)
        head = f"@{INSTRUMENT}:{RUN}:{FLOWCELL}:{lane}:{tile}:{x}:{y}"
        lanes[lane].append((f"{head} 1:N:0:{BARCODE}\n{s1}\n+\n{q1}\n", f"{head} 2:N:0:{BARCODE}\n{s2}\n+\n{q2}\n"))
    stats = {
        "library_fragments": n_frag,
        "contaminant_pairs": n_contam,
        "duplicate_reads_planted": n_dup_reads,
        "total_reads": 2 * len(copies),
        "library_depth": round(genomic_bases / genome, 3),
        "reads_per_lane": {str(k): 2 * len(v) for k, v in sorted(lanes.items())},
    }
    return lanes, stats


def write_gz(path: Path, text: str) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
        gz.write(text.encode())


def truth_vcf(variants) -> str:
    lines = [
        "##fileformat=VCFv4.2",
        f"##source=planted truth (canary {CANARY})",
        *[f"##contig=<ID={n},length={length}>" for n, length in CONTIGS],
        '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
        f"#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t{SAMPLE}",
    ]
    shared = {}
    for contig, p, *_ in variants:
        shared[(contig, p)] = shared.get((contig, p), 0) + 1
    for contig, p, ref, alt, haps in variants:
        gt = "1/1" if haps == {1, 2} else "0/1"
        kind = "SNV" if len(ref) == len(alt) == 1 else "INDEL"
        info = f"TYPE={kind}" + (";MULTI" if shared[(contig, p)] > 1 else "")
        lines.append(f"{contig}\t{p + 1}\t.\t{ref}\t{alt}\t.\tPASS\t{info}\tGT\t{gt}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    seqs, features = build_reference(rng)
    variants = plant_variants(rng, seqs, features)
    lanes, stats = make_reads(rng, seqs, variants)

    inp, ref = out / "inputs", out / "reference"
    (inp / "reference").mkdir(parents=True, exist_ok=True)
    (inp / "fastq").mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    fasta = []
    for name, _ in CONTIGS:
        seq = seqs[name]
        fasta.append(f">{name}\n" + "".join(seq[i:i + 60] + "\n" for i in range(0, len(seq), 60)))
    (inp / "reference" / "syn1.fa").write_text("".join(fasta))
    for lane, pairs in sorted(lanes.items()):
        stem = f"{SAMPLE}_S7_L00{lane}"
        write_gz(inp / "fastq" / f"{stem}_R1_001.fastq.gz", "".join(p[0] for p in pairs))
        write_gz(inp / "fastq" / f"{stem}_R2_001.fastq.gz", "".join(p[1] for p in pairs))
    (ref / "truth.vcf").write_text(truth_vcf(variants))
    n_snv = sum(1 for v in variants if len(v[2]) == len(v[3]) == 1)
    expected = {
        "canary": CANARY,
        "sample": SAMPLE,
        "library": LIBRARY,
        "read_groups": {f"{FLOWCELL}.{lane}": lane for lane in (1, 2)},
        "contigs": {n: length for n, length in CONTIGS},
        "truth_snvs": n_snv,
        "truth_indels": len(variants) - n_snv,
        "dropout": list(DROPOUT),
        **stats,
    }
    (ref / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
