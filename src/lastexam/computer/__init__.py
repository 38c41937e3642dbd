"""Computer use in desktop trials: the `computer` MCP server (computer_mcp.py, run inside the
sandbox from the desktop toolchain) and the toolchain's install (toolchain.py)."""
