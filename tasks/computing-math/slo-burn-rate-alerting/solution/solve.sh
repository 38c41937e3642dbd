#!/bin/bash
# The oracle: the rule file and its unit tests (written by hand from slo-policy.md), checked
# and tested with promtool as an SRE would before a merge request.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output/rules /task/output/tests
cp "$here/slo.yml" /task/output/rules/slo.yml
cp "$here/slo_test.yml" /task/output/tests/slo_test.yml
cd /task/output
promtool check rules rules/slo.yml
promtool test rules tests/slo_test.yml
