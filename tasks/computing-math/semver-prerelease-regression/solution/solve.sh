#!/bin/bash
# The oracle: the maintainers' fix (precedence key computed once per Version, SemVer 2.0.0
# section 11 rules, hash consistent with equality) and max_satisfying, with regression tests.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out=/task/output
mkdir -p "$out/tests"
cp -r "$here/fixed/semverkit" "$out/semverkit"
cp "$here/test_release_2_4.py" "$out/tests/"
cp "$here/README.md" "$out/README.md"
cd "$out"
cp -r /task/inputs/tests/. /tmp/tests-all/ 2>/dev/null || { mkdir -p /tmp/tests-all && cp -r /task/inputs/tests/. /tmp/tests-all/; }
cp tests/*.py /tmp/tests-all/
PYTHONPATH="$out" python3 -m pytest -q -p no:cacheprovider /tmp/tests-all
PYTHONPATH="$out" python3 /task/inputs/tools/opcount.py
