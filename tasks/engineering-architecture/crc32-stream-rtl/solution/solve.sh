#!/bin/bash
# Oracle for crc32-stream-rtl: the RTL, linted with Verilator, synthesised with Yosys and
# checked in Icarus Verilog against the sample capture before delivery.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
mkdir -p /task/output/rtl
cp "$here"/rtl/sync_fifo.v "$here"/rtl/crc32_stream.v /task/output/rtl/
rtl=(/task/output/rtl/sync_fifo.v /task/output/rtl/crc32_stream.v)

verilator --lint-only -Wall --top-module crc32_stream "${rtl[@]}"
yosys -q -p "read_verilog ${rtl[*]}; synth -top crc32_stream; tee -q -o $work/stat.txt stat"
if grep -qi latch "$work/stat.txt"; then echo "latch inferred" >&2; exit 1; fi

# The capture shows each word MSB first: lane 0 (the first byte on the wire) is the last two hex digits.
python3 - "$work" <<'PY'
import csv, sys
work = sys.argv[1]
rows = list(csv.DictReader(open("/task/inputs/sample_capture.csv")))
crcs = list(csv.DictReader(open("/task/inputs/sample_crc.csv")))
with open(f"{work}/words.memh", "w") as f:
    for r in rows:
        f.write(f"{(int(r['last']) << 36) | (int(r['keep'], 2) << 32) | int(r['data_hex'], 16):010x}\n")
with open(f"{work}/want.memh", "w") as f:
    for r in crcs:
        f.write(f"{int(r['length_bytes']):04x}{int(r['crc32_hex'], 16):08x}\n")
open(f"{work}/counts", "w").write(f"{len(rows)} {len(crcs)}\n")
PY
read -r nw np < "$work/counts"
cd "$work"
iverilog -g2005 -o sample.vvp -P tb_sample.NW="$nw" -P tb_sample.NP="$np" "$here/tb_sample.v" "${rtl[@]}"
vvp -n sample.vvp | tee "$work/sim.log"
grep -q '^PASS' "$work/sim.log"
