"""What an agent executed in its sandbox (exec log) and whether it used the task's declared
professional software."""
