#!/bin/bash
# A venv with Harbor's own package, for the Harbor interop tests (tests/interop): Harbor needs
# Python 3.12 or later, which Debian 12 lacks, so it lives apart from .venv. It is made from the
# first of $LASTEXAM_HARBOR_BASE_PYTHON, python3.13, python3.12 or a pyenv 3.12+ ($PYENV_ROOT);
# without one it says so and exits 0 (the tests that need it are then skipped, saying why).
# Harbor is installed at the version pinned in pyproject.toml's [interop] extra, without its
# service dependencies (litellm, supabase, fastapi, ...; with them it took 89 s here, against 24 s): only what its
# task and trajectory models import. `--full` installs it with every dependency instead.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-harbor
pin=$(grep -o "harbor==[0-9.]*" pyproject.toml | head -1)
base=""
for py in "${LASTEXAM_HARBOR_BASE_PYTHON:-}" python3.13 python3.12 \
          $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do
    [[ -n "$py" ]] || continue
    if command -v "$py" >/dev/null && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
        base=$(command -v "$py"); break
    fi
done
if [[ -z "$base" ]]; then
    echo "harbor-venv: no Python 3.12+ here; the Harbor interop tests will be skipped" >&2
    exit 0
fi
if [[ ! -x $venv/bin/python ]] || ! $venv/bin/python -m pip show harbor 2>/dev/null | grep -qx "Version: ${pin#harbor==}"; then
    rm -rf $venv
    "$base" -m venv $venv
    if [[ "${1:-}" == "--full" ]]; then
        $venv/bin/pip install -q --disable-pip-version-check "$pin"
    else
        $venv/bin/pip install -q --disable-pip-version-check --no-deps "$pin"
        $venv/bin/pip install -q --disable-pip-version-check --no-warn-conflicts "pydantic>=2.14" "toml>=0.10.2" \
            "pathspec>=1.0.3" "shortuuid>=1.0.13"
    fi
fi
echo "harbor-venv: $($venv/bin/python -m pip show harbor | grep ^Version) in $venv ($($venv/bin/python --version))"
