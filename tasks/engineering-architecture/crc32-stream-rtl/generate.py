"""Seeded generator of inputs/ and reference/ for crc32-stream-rtl: python3 generate.py --out DIR.

inputs/: a sample capture of packets on the 32-bit stream with their CRCs (zlib), for the
designer's own test bench. reference/: the grader's test benches, the hidden stimulus they read
($readmemh files) and the expected results, the golden CRCs from zlib.crc32.
"""

import argparse
import json
import random
import zlib
from pathlib import Path

SEED = 1402
CANARY = "e205fa46-68fc-4857-b167-79088488d5bf"
KEEP = {0: 0b0000, 1: 0b0001, 2: 0b0011, 3: 0b0111, 4: 0b1111}
RESET_CYCLES = 3

# The grader's test benches (hidden with the stimulus): one line per cycle, sampled before the
# rising edge, which grader.py parses.
TB_FIFO = """`timescale 1ns/1ps
module tb_fifo;
  parameter integer DEPTH = 8;
  parameter integer AF_THRESH = 6;
  parameter integer N = 1;
  reg clk = 1'b0;
  reg rst_n = 1'b0;
  reg [11:0] in_data = 12'd0;
  reg in_valid = 1'b0;
  reg out_ready = 1'b0;
  wire in_ready, out_valid, almost_full;
  wire [11:0] out_data;
  wire [7:0] count;
  reg [14:0] stim [0:N-1];
  integer cyc;
  sync_fifo #(.WIDTH(12), .DEPTH(DEPTH), .AF_THRESH(AF_THRESH)) dut (
    .clk(clk), .rst_n(rst_n), .in_data(in_data), .in_valid(in_valid), .in_ready(in_ready),
    .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready), .count(count),
    .almost_full(almost_full));
  initial begin
    $readmemh("fifo_stim.memh", stim);
    for (cyc = 0; cyc < N; cyc = cyc + 1) begin
      rst_n = !stim[cyc][14];
      in_valid = stim[cyc][13];
      out_ready = stim[cyc][12];
      in_data = stim[cyc][11:0];
      #5;
      $display("T %0d %b %b %b %h %0d %b", cyc, in_valid, in_ready, out_valid, out_data, count, almost_full);
      clk = 1'b1;
      #5;
      clk = 1'b0;
    end
    $finish;
  end
endmodule
"""

TB_CRC = """`timescale 1ns/1ps
module tb_crc;
  parameter integer DEPTH = 16;
  parameter integer AF_THRESH = 12;
  parameter integer NW = 1;
  parameter integer NC = 1;
  parameter integer RESET_CYCLES = 3;
  reg clk = 1'b0;
  reg rst_n = 1'b0;
  reg [31:0] s_data = 32'd0;
  reg [3:0] s_keep = 4'd0;
  reg s_last = 1'b0;
  reg s_valid = 1'b0;
  reg m_ready = 1'b0;
  wire s_ready, m_valid, almost_full;
  wire [31:0] m_crc;
  wire [15:0] m_len;
  wire [7:0] level;
  reg [36:0] words [0:NW-1];
  reg [1:0] pace [0:NC-1];
  integer cyc;
  integer wi;
  reg accepted;
  crc32_stream #(.DEPTH(DEPTH), .AF_THRESH(AF_THRESH)) dut (
    .clk(clk), .rst_n(rst_n), .s_data(s_data), .s_keep(s_keep), .s_last(s_last),
    .s_valid(s_valid), .s_ready(s_ready), .m_crc(m_crc), .m_len(m_len), .m_valid(m_valid),
    .m_ready(m_ready), .level(level), .almost_full(almost_full));
  initial begin
    $readmemh("crc_words.memh", words);
    $readmemh("crc_pace.memh", pace);
    wi = 0;
    accepted = 1'b0;
    for (cyc = 0; cyc < NC; cyc = cyc + 1) begin
      rst_n = (cyc >= RESET_CYCLES);
      if (!s_valid || accepted) begin
        if (rst_n && pace[cyc][1] && wi < NW) begin
          s_valid = 1'b1;
          {s_last, s_keep, s_data} = words[wi];
        end else begin
          s_valid = 1'b0;
        end
      end
      m_ready = pace[cyc][0];
      #5;
      $display("C %0d %b %b %b %b %h %h %0d %b", cyc, s_valid, s_ready, m_valid, m_ready, m_crc, m_len, level, almost_full);
      accepted = (s_valid === 1'b1) && (s_ready === 1'b1);
      clk = 1'b1;
      #5;
      clk = 1'b0;
      if (accepted) wi = wi + 1;
    end
    $finish;
  end
endmodule
"""


def words_of(payload: bytes, empty_tail: bool) -> list[tuple[int, int, int]]:
    """(last, keep, data) words; lane 0 = data[7:0] is the first byte on the wire."""
    words = []
    chunks = [payload[i:i + 4] for i in range(0, len(payload), 4)]
    if empty_tail or not chunks:
        chunks.append(b"")
    for n, chunk in enumerate(chunks):
        data = int.from_bytes(chunk.ljust(4, b"\0"), "little")
        words.append((int(n == len(chunks) - 1), KEEP[len(chunk)], data))
    return words


def packet_list(rng: random.Random, count: int, long_one: bool) -> list[tuple[bytes, bool]]:
    packets: list[tuple[bytes, bool]] = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.06:
            packets.append((b"", False))
        elif roll < 0.12:
            packets.append((rng.randbytes(4 * rng.randint(1, 6)), True))
        elif roll < 0.22:
            packets.append((rng.randbytes(rng.randint(1, 3)), False))
        else:
            packets.append((rng.randbytes(rng.randint(4, 96)), False))
        if long_one and i == count // 2:
            packets.append((rng.randbytes(1500), False))
    return packets


def kind_of(payload: bytes, empty_tail: bool) -> str:
    if not payload or empty_tail:
        return "empty"
    return "full" if len(payload) % 4 == 0 else "partial"


def capture(rng: random.Random) -> tuple[str, str]:
    packets = packet_list(rng, 12, False)
    packets[3] = (b"", False)
    packets[7] = (rng.randbytes(8), True)
    rows = ["packet,word,data_hex,keep,last"]
    crcs = ["packet,length_bytes,crc32_hex"]
    for p, (payload, tail) in enumerate(packets):
        for w, (last, keep, data) in enumerate(words_of(payload, tail)):
            rows.append(f"{p},{w},{data:08X},{keep:04b},{last}")
        crcs.append(f"{p},{len(payload)},{zlib.crc32(payload):08X}")
    return "\n".join(rows) + "\n", "\n".join(crcs) + "\n"


def fifo_stim(rng: random.Random, n: int) -> list[str]:
    """[14] reset, [13] in_valid, [12] out_ready, [11:0] data; bursts that fill and empty."""
    lines = []
    p_in, p_out = 0.5, 0.5
    for cyc in range(n):
        if cyc % 60 == 0:
            p_in, p_out = rng.choice([(0.9, 0.2), (0.2, 0.9), (0.6, 0.6), (1.0, 1.0), (0.9, 0.0), (0.0, 0.9)])
        rst = cyc < RESET_CYCLES or cyc == n // 2
        word = (int(rst) << 14) | (int(rng.random() < p_in) << 13) | (int(rng.random() < p_out) << 12) | rng.getrandbits(12)
        lines.append(f"{word:04x}")
    return lines


def crc_pace(rng: random.Random, n_words: int, burst_words: int) -> tuple[list[str], list[int]]:
    """Per cycle: bit1 source may present a word, bit0 m_ready. Phase 1 streams freely."""
    pace = [0] * RESET_CYCLES
    phase1 = (RESET_CYCLES, RESET_CYCLES + burst_words + 40)
    pace += [3] * (phase1[1] - phase1[0])
    hold = 0
    while len(pace) < phase1[1] + 2 * n_words:
        if hold > 0:
            hold -= 1
            ready = 0
        elif rng.random() < 0.03:
            hold = rng.randint(10, 60)
            ready = 0
        else:
            ready = int(rng.random() < 0.7)
        pace.append((int(rng.random() < 0.75) << 1) | ready)
    pace += [3] * (4 * n_words + 300)
    return [f"{p:x}" for p in pace], list(phase1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    inputs, ref = out / "inputs", out / "reference"
    inputs.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)

    cap, cap_crc = capture(rng)
    (inputs / "sample_capture.csv").write_text(cap)
    (inputs / "sample_crc.csv").write_text(cap_crc)

    packets = packet_list(rng, 150, True)
    words, expected = [], []
    first_burst = 0
    for i, (payload, tail) in enumerate(packets):
        pw = words_of(payload, tail)
        words += pw
        if i < 40:
            first_burst += len(pw)
        expected.append({"crc": f"{zlib.crc32(payload):08x}", "len": len(payload), "kind": kind_of(payload, tail)})
    (ref / "crc_words.memh").write_text("".join(f"{(last << 36) | (keep << 32) | data:010x}\n" for last, keep, data in words))
    pace, phase1 = crc_pace(rng, len(words), first_burst)
    (ref / "crc_pace.memh").write_text("\n".join(pace) + "\n")
    stim = {}
    for name in ("a", "b"):
        stim[name] = fifo_stim(rng, 1500)
        (ref / f"fifo_stim_{name}.memh").write_text("\n".join(stim[name]) + "\n")
    meta = {
        "canary": CANARY,
        "reset_cycles": RESET_CYCLES,
        "crc_configs": [{"DEPTH": 16, "AF_THRESH": 12}, {"DEPTH": 4, "AF_THRESH": 3}],
        "fifo_configs": [
            {"name": "a", "WIDTH": 12, "DEPTH": 8, "AF_THRESH": 6, "cycles": len(stim["a"])},
            {"name": "b", "WIDTH": 12, "DEPTH": 5, "AF_THRESH": 5, "cycles": len(stim["b"])},
        ],
        "crc_words": len(words),
        "crc_cycles": len(pace),
        "free_stream_cycles": phase1,
        "packets": expected,
    }
    (ref / "expected.json").write_text(json.dumps(meta, indent=1) + "\n")
    (ref / "tb_fifo.v").write_text(TB_FIFO)
    (ref / "tb_crc.v").write_text(TB_CRC)


if __name__ == "__main__":
    main()
