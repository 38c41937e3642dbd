"""The gates a task passes before it enters the suite (`lastexam validate`). They run the
oracle and nop agents in a run of their own, so this package sits above `run/`."""
