// Synchronous FIFO, valid/ready on both sides, any depth from 2 to 128.
`default_nettype none
module sync_fifo #(
    parameter integer WIDTH = 8,
    parameter integer DEPTH = 16,
    parameter integer AF_THRESH = 12
) (
    input  wire             clk,
    input  wire             rst_n,
    input  wire [WIDTH-1:0] in_data,
    input  wire             in_valid,
    output wire             in_ready,
    output wire [WIDTH-1:0] out_data,
    output wire             out_valid,
    input  wire             out_ready,
    output wire [7:0]       count,
    output wire             almost_full
);
    localparam integer AW = (DEPTH > 2) ? $clog2(DEPTH) : 1;
    localparam [31:0] DEPTH_U = DEPTH;
    localparam [31:0] LAST_U = DEPTH - 1;
    localparam [31:0] AF_U = AF_THRESH;
    localparam [AW-1:0] LAST = LAST_U[AW-1:0];
    localparam [7:0] FULL = DEPTH_U[7:0];
    localparam [7:0] AF = AF_U[7:0];

    reg [WIDTH-1:0] mem [0:DEPTH-1];
    reg [AW-1:0] wr_ptr;
    reg [AW-1:0] rd_ptr;
    reg [7:0] cnt;

    wire push = in_valid && in_ready;
    wire pop = out_valid && out_ready;

    assign in_ready = cnt != FULL;
    assign out_valid = cnt != 8'd0;
    assign out_data = mem[rd_ptr];
    assign count = cnt;
    assign almost_full = cnt >= AF;

    always @(posedge clk) begin
        if (push) mem[wr_ptr] <= in_data;
    end

    always @(posedge clk) begin
        if (!rst_n) begin
            wr_ptr <= {AW{1'b0}};
            rd_ptr <= {AW{1'b0}};
            cnt <= 8'd0;
        end else begin
            if (push) wr_ptr <= (wr_ptr == LAST) ? {AW{1'b0}} : wr_ptr + 1'b1;
            if (pop) rd_ptr <= (rd_ptr == LAST) ? {AW{1'b0}} : rd_ptr + 1'b1;
            if (push && !pop) cnt <= cnt + 8'd1;
            else if (pop && !push) cnt <= cnt - 8'd1;
        end
    end
endmodule
`default_nettype wire
