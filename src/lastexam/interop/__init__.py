"""Bridges to other harnesses: Harbor task folders (export, import) and Inspect AI (a task, a
sandbox environment and a scorer backed by lastexam's own). docs/interop.md says what maps to
what."""
