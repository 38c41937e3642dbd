#!/bin/bash
# The test job (as root on Debian): install what the tests need, then run them all. The heavy
# suites run what changed plus a sample rotating daily (CI); `scripts/test.sh --full` runs them
# whole (about an hour more on a 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
[ "${1:-}" = "--full" ] && full=1
# What changed is measured from the last release tag or, while there is none, from the newest
# commit made more than 4 hours before the tested one (a working session's commits are pushed
# together: the previous commit alone would miss all but the last); with no such commit, from
# HEAD~1 (and where git cannot tell, everything counts as changed).
since="$(git describe --tags --abbrev=0 2>/dev/null || true)"
if [ -z "$since" ]; then
    since="$(git rev-list -1 --before="@$(( $(git log -1 --format=%ct HEAD) - 14400 ))" HEAD 2>/dev/null || true)"
fi
since="${since:-HEAD~1}"
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
if [ $full = 1 ]; then
    LASTEXAM_TEST_PODMAN=0 .venv/bin/python -m pytest -q -p no:cacheprovider tests
    scripts/podman-tests.sh
    LASTEXAM_TEST_PODMAN=0 scripts/mutations.sh --all
    $lx validate tasks --concurrency 2
    exit 0
fi
# Every test; of the per-client cases (tests/sampling.py) two per test rotating daily, all of
# them when the agent, computer-use, desktop, gateway or trajectory code changed.
LASTEXAM_TEST_SAMPLE=2 LASTEXAM_TEST_CHANGED_SINCE="$since" LASTEXAM_TEST_PODMAN=0 \
    .venv/bin/python -m pytest -q -p no:cacheprovider tests
# The container provider's cases: the oracle plus 2 others, rotating daily; all of them:
# scripts/podman-tests.sh (docs/sandbox.md).
scripts/podman-tests.sh --sample 2
# The mutations of files changed since $since plus 4 others, rotating daily; the full catalogue
# is `scripts/mutations.sh --all`.
# (LASTEXAM_TEST_PODMAN=0: a mutation's named sandbox tests run with bwrap only)
LASTEXAM_TEST_PODMAN=0 scripts/mutations.sh --sample 4 --changed "$since"
# Every cheap gate on every task; the sandboxed gates on tasks changed since
# tasks/validation-manifest.json and on two unchanged ones (rotating daily). The full run is
# `lastexam validate tasks`.
$lx validate tasks --changed --sample 2 --concurrency 2
