"""lastexam: run agents on professional tasks in a sandbox and grade what they leave."""

__version__ = "0.1.0"
