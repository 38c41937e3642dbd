#!/bin/bash
# Oracle: bwa mem per lane with its read group, fixmate, coordinate sort, merge, samtools
# markdup, bcftools mpileup/call, norm, soft filters, tabix; QC numbers from samtools/bcftools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
in=/task/inputs
out=/task/output
work=$(mktemp -d)
mkdir -p "$out"

cp "$in/reference/syn1.fa" "$work/ref.fa"
bwa index "$work/ref.fa" 2>/dev/null
samtools faidx "$work/ref.fa"

sample=PT0427
lib=LIB-PT0427-A
for lane in 1 2; do
    r1="$in/fastq/${sample}_S7_L00${lane}_R1_001.fastq.gz"
    r2="$in/fastq/${sample}_S7_L00${lane}_R2_001.fastq.gz"
    header=$(zcat "$r1" | head -n 1 || true)   # flowcell ID is the third field of the read name
    fc=$(echo "$header" | cut -d: -f3)
    rg="@RG\tID:${fc}.${lane}\tSM:${sample}\tLB:${lib}\tPL:ILLUMINA\tPU:${fc}.${lane}.GTAGCTCA+ACGGTTAC"
    bwa mem -t 2 -K 10000000 -R "$rg" "$work/ref.fa" "$r1" "$r2" 2>/dev/null \
        | samtools fixmate -m -u - - \
        | samtools sort -@2 -o "$work/lane${lane}.bam" -
done
samtools merge -@2 -f -o "$work/merged.bam" "$work/lane1.bam" "$work/lane2.bam"
samtools markdup -@2 "$work/merged.bam" "$out/sample.bam"
samtools index "$out/sample.bam"

bcftools mpileup -f "$work/ref.fa" -q 20 -Q 20 -a FORMAT/AD,FORMAT/DP -Ou "$out/sample.bam" \
    | bcftools call -m -v -Ou \
    | bcftools norm -f "$work/ref.fa" -m -any -Ou \
    | bcftools filter -s LowQual -e 'QUAL<30' -Ou \
    | bcftools filter -m + -s LowDepth -e 'INFO/DP<10' -Oz -o "$out/calls.vcf.gz"
tabix -p vcf "$out/calls.vcf.gz"

samtools flagstat -O json "$out/sample.bam" > "$work/flagstat.json"
samtools view -c -F 0x904 -f 0x400 "$out/sample.bam" > "$work/dups.txt"
samtools depth -a -Q 20 "$out/sample.bam" | awk '{s += $3; n++} END {printf "%.6f\n", s / n}' > "$work/depth.txt"
bcftools stats -f PASS "$out/calls.vcf.gz" > "$work/stats.txt"
python3 "$here/qc.py" "$in/fastq" "$work" > "$out/qc.json"
rm -rf "$work"
