#!/bin/bash
# Oracle for gl-paid-reserve-mack: pandas builds the net paid triangle from the payment
# extract, chainladder runs the chain ladder, Mack, BF and Cape Cod.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
python3 "$here/review.py" /task/inputs /task/output
