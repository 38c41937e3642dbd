// Packet CRC-32 (IEEE 802.3, reflected, init and xorout 0xFFFFFFFF) behind an input FIFO.
// One 32-bit word per clock; lane 0 (s_data[7:0]) is the first byte on the wire.
`default_nettype none
module crc32_stream #(
    parameter integer DEPTH = 16,
    parameter integer AF_THRESH = 12
) (
    input  wire        clk,
    input  wire        rst_n,
    input  wire [31:0] s_data,
    input  wire [3:0]  s_keep,
    input  wire        s_last,
    input  wire        s_valid,
    output wire        s_ready,
    output reg  [31:0] m_crc,
    output reg  [15:0] m_len,
    output reg         m_valid,
    input  wire        m_ready,
    output wire [7:0]  level,
    output wire        almost_full
);
    wire [36:0] f_data;
    wire f_valid;
    wire f_ready = !m_valid || m_ready;

    sync_fifo #(.WIDTH(37), .DEPTH(DEPTH), .AF_THRESH(AF_THRESH)) u_fifo (
        .clk(clk), .rst_n(rst_n),
        .in_data({s_last, s_keep, s_data}), .in_valid(s_valid), .in_ready(s_ready),
        .out_data(f_data), .out_valid(f_valid), .out_ready(f_ready),
        .count(level), .almost_full(almost_full)
    );

    function [31:0] crc_byte(input [31:0] c, input [7:0] b);
        integer i;
        reg [31:0] x;
        begin
            x = c ^ {24'd0, b};
            for (i = 0; i < 8; i = i + 1)
                x = x[0] ? ((x >> 1) ^ 32'hEDB88320) : (x >> 1);
            crc_byte = x;
        end
    endfunction

    reg [31:0] crc;
    reg [15:0] len;
    reg [31:0] crc_next;
    reg [15:0] len_next;
    integer lane;

    always @* begin
        crc_next = crc;
        len_next = len;
        for (lane = 0; lane < 4; lane = lane + 1) begin
            if (f_data[32 + lane]) begin
                crc_next = crc_byte(crc_next, f_data[8*lane +: 8]);
                len_next = len_next + 16'd1;
            end
        end
    end

    wire take = f_valid && f_ready;

    always @(posedge clk) begin
        if (!rst_n) begin
            crc <= 32'hFFFFFFFF;
            len <= 16'd0;
            m_valid <= 1'b0;
            m_crc <= 32'd0;
            m_len <= 16'd0;
        end else begin
            if (m_valid && m_ready) m_valid <= 1'b0;
            if (take) begin
                if (f_data[36]) begin
                    m_crc <= ~crc_next;
                    m_len <= len_next;
                    m_valid <= 1'b1;
                    crc <= 32'hFFFFFFFF;
                    len <= 16'd0;
                end else begin
                    crc <= crc_next;
                    len <= len_next;
                end
            end
        end
    end
endmodule
`default_nettype wire
