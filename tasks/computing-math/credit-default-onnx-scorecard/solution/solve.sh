#!/bin/bash
# The oracle: scikit-learn model, isotonic calibration, skl2onnx export (see train.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/train.py" /task/inputs /task/output
