#!/bin/bash
# The mutation suite (tests/mutations/): each mutation applied alone to a scratch copy of the
# repository, its named tests run there; exit 1 if one was not caught.
#   scripts/mutations.sh --all | --sample N | --changed REF | NAME...   (--help for the rest)
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m tests.mutations.run "$@"
