"""Reads ffmpeg ebur128 output (stdin) and prints the summary as JSON."""

import json
import re
import sys

text = sys.stdin.read()
summary = text[text.rfind("Summary:"):]
out = {}
for key, pat in (("integrated_lufs", r"I:\s+(-?[\d.]+)\s+LUFS"), ("lra_lu", r"LRA:\s+(-?[\d.]+)\s+LU"),
                 ("true_peak_dbtp", r"Peak:\s+(-?[\d.]+)\s+dBFS")):
    out[key] = float(re.search(pat, summary).group(1))
print(json.dumps(out))
