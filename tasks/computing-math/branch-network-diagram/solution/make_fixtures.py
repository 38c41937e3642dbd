"""Write the fixtures' deliverables (run at authoring time): python3 make_fixtures.py.

Each variant of build_dia.py is loaded and saved by Dia, as an engineer's file would be.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from build_dia import build

TASK = Path(__file__).resolve().parent.parent
VARIANTS = {
    "positive/moved-reordered-gzip": "moved",
    "negative/slash24-assumption": "slash24",
    "negative/inventory-not-filtered": "unfiltered",
    "negative/firewall-on-every-vlan": "fw-everywhere",
    "negative/lines-not-glued": "unglued",
    "negative/star-on-firewall": "star",
    "negative/labels-as-loose-text": "loose-labels",
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for folder, variant in VARIANTS.items():
            draft = Path(tmp) / f"{variant}.dia"
            draft.write_bytes(build(TASK / "inputs", variant))
            out = TASK / "fixtures" / folder / "output"
            out.mkdir(parents=True, exist_ok=True)
            env = {k: v for k, v in os.environ.items() if k != "DISPLAY"} | {"HOME": tmp}
            subprocess.run(["dia", "--nosplash", f"--export={out / 'network.dia'}", "--filter=dia", str(draft)],
                           check=True, env=env, capture_output=True)


if __name__ == "__main__":
    main()
