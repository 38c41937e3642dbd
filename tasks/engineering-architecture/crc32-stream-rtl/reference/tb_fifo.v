`timescale 1ns/1ps
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
