#!/bin/bash
# Harbor's verifier of a task exported by lastexam: grades /task/output with the task's grader
# (verify.py beside this file) and writes /logs/verifier/reward.json.
set -euo pipefail
mkdir -p /logs/verifier
exec python3 /tests/verify.py
