"""Write the fixtures' deliverables (run at authoring time): python3 make_fixtures.py.

Each variant of build_ad.py is saved through Inkscape, as a designer's file would be.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from build_ad import build

TASK = Path(__file__).resolve().parent.parent
VARIANTS = {
    "positive/px-units-paths": "px-paths",
    "positive/inch-page-group-transforms": "group-transforms",
    "negative/bleed-ignored": "no-bleed",
    "negative/naive-cmyk-colours": "naive-cmyk",
    "negative/type-size-in-px": "px-type",
    "negative/logo-stretched": "stretched-logo",
    "negative/grid-skipped": "no-grid",
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for folder, variant in VARIANTS.items():
            draft = Path(tmp) / f"{variant}.svg"
            draft.write_text(build(TASK / "inputs", variant))
            out = TASK / "fixtures" / folder / "output"
            out.mkdir(parents=True, exist_ok=True)
            subprocess.run(["inkscape", str(draft), "--export-type=svg", f"--export-filename={out / 'ad.svg'}"],
                           check=True, env={**os.environ, "HOME": tmp}, capture_output=True)


if __name__ == "__main__":
    main()
