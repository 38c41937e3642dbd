// Self-check on the sample capture: every packet's CRC and length against sample_crc.csv.
`timescale 1ns/1ps
module tb_sample;
  parameter integer NW = 1;
  parameter integer NP = 1;
  reg clk = 1'b0, rst_n = 1'b0;
  reg [36:0] words [0:NW-1];
  reg [47:0] want [0:NP-1];
  reg [31:0] s_data = 0; reg [3:0] s_keep = 0; reg s_last = 0; reg s_valid = 0; reg m_ready = 1'b1;
  wire s_ready, m_valid, almost_full; wire [31:0] m_crc; wire [15:0] m_len; wire [7:0] level;
  integer wi = 0, got = 0, bad = 0, cyc;
  crc32_stream #(.DEPTH(4), .AF_THRESH(3)) dut (.clk(clk), .rst_n(rst_n), .s_data(s_data), .s_keep(s_keep),
    .s_last(s_last), .s_valid(s_valid), .s_ready(s_ready), .m_crc(m_crc), .m_len(m_len), .m_valid(m_valid),
    .m_ready(m_ready), .level(level), .almost_full(almost_full));
  always #5 clk = ~clk;
  initial begin
    $readmemh("words.memh", words);
    $readmemh("want.memh", want);
    repeat (3) @(posedge clk);
    rst_n <= 1'b1;
    for (cyc = 0; cyc < 20 * NW; cyc = cyc + 1) begin
      @(posedge clk);
      if (s_valid && s_ready) wi = wi + 1;
      if (m_valid && m_ready) begin
        if ({m_len, m_crc} !== want[got]) begin
          bad = bad + 1;
          $display("packet %0d: got %h/%0d, want %h", got, m_crc, m_len, want[got]);
        end
        got = got + 1;
      end
      m_ready <= (cyc % 7) != 3;
      s_valid <= (wi < NW) && ((cyc % 5) != 1);
      {s_last, s_keep, s_data} <= words[wi < NW ? wi : 0];
    end
    if (got != NP || bad != 0) begin
      $display("FAIL: %0d of %0d packets, %0d wrong", got, NP, bad);
      $fatal(1);
    end
    $display("PASS: %0d packets", got);
    $finish;
  end
endmodule
