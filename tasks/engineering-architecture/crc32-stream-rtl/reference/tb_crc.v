`timescale 1ns/1ps
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
