#!/bin/bash
# The test job (as root on Debian): install what the tests need, then run them all.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
# Harbor's package (Python 3.12+) in .venv-harbor, for the Harbor interop tests.
scripts/harbor-venv.sh
lx=.venv/bin/lastexam

$lx env install --all
# The pinned agent CLIs from npm (and socat), for the real-client tests in tests/agents, and the
# computer-use MCP server of desktop trials.
$lx agents install claude-code codex gemini-cli computer
.venv/bin/ruff check src tests benchmarks tasks
# The catalogue is generated: fail when docs/tasks.md is out of date.
$lx tasks list --markdown | diff -u docs/tasks.md - || { echo "docs/tasks.md is stale: run lastexam tasks list --markdown > docs/tasks.md"; exit 1; }
LASTEXAM_TEST_PODMAN=0 .venv/bin/python -m pytest -q -p no:cacheprovider tests
# The container provider's cases: the oracle plus 2 others, rotating daily; all of them:
# scripts/podman-tests.sh (docs/sandbox.md).
scripts/podman-tests.sh --sample 2
# The mutations of files changed since the last release tag (or the previous commit while there
# is none) plus 4 others, rotating daily; the full catalogue is `scripts/mutations.sh --all`.
# (LASTEXAM_TEST_PODMAN=0: a mutation's named sandbox tests run with bwrap only)
LASTEXAM_TEST_PODMAN=0 scripts/mutations.sh --sample 4 --changed "$(git describe --tags --abbrev=0 2>/dev/null || echo HEAD~1)"
# Every cheap gate on every task; the sandboxed gates on tasks changed since
# tasks/validation-manifest.json and on two unchanged ones (rotating daily). The full run is
# `lastexam validate tasks`.
$lx validate tasks --changed --sample 2 --concurrency 2
