#!/bin/bash
set -euo pipefail
printf '42\n' > /tmp/answer.csv
ssconvert /tmp/answer.csv /task/output/answer.gnumeric
