#!/bin/bash
# The container sandbox's tests (docs/sandbox.md), as root on Debian, after scripts/setup.sh:
# installs Podman and debootstrap, builds the base environment's image (skipped while its tag
# exists), then runs the podman cases of tests/test_sandbox.py, tests/test_container_sandbox.py and
# tests/adversarial/test_fallocate.py (each also runs with bwrap in the main test run).
#   scripts/podman-tests.sh              every podman case
#   scripts/podman-tests.sh --sample N   the oracle case plus N others, rotating daily (CI)
set -euo pipefail
cd "$(dirname "$0")/.."

# runc: crun, Podman's default runtime, refuses hosts with v1 or hybrid cgroups.
packages=(podman debootstrap runc uidmap catatonit)
scripts/apt-install.sh "${packages[@]}"
.venv/bin/lastexam env build-image base

export LASTEXAM_TEST_PODMAN=1  # a podman case that cannot run fails instead of skipping
mapfile -t cases < <(.venv/bin/python -m pytest --collect-only -q -p no:cacheprovider \
    tests/test_sandbox.py tests/test_container_sandbox.py tests/adversarial/test_fallocate.py -k podman | grep '::')
if [[ "${1:-}" == "--sample" ]]; then
    n=${2:?--sample N}
    oracle=() others=()
    for c in "${cases[@]}"; do
        if [[ "$c" == *test_the_oracle_scores_full_marks* ]]; then oracle+=("$c"); else others+=("$c"); fi
    done
    day=$(( $(date -u +%s) / 86400 ))
    picked=()
    for ((i = 0; i < n && i < ${#others[@]}; i++)); do
        picked+=("${others[$(( (day * n + i) % ${#others[@]} ))]}")
    done
    cases=("${oracle[@]}" "${picked[@]}")
fi
echo "podman cases: ${cases[*]}"
.venv/bin/python -m pytest -q -p no:cacheprovider "${cases[@]}"
