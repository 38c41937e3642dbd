"""`lastexam view`: a local web viewer of runs and trials (binds 127.0.0.1 only)."""
