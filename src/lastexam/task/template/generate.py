"""Seeded generator of inputs/ and reference/ for {name}: python3 generate.py --out DIR."""

import argparse
import json
import random
from pathlib import Path

SEED = 1
CANARY = "{canary}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    value = rng.uniform(0, 1)
    (out / "inputs" / "data.csv").write_text(f"x\n{{value:.6f}}\n")
    (out / "reference" / "expected.json").write_text(
        json.dumps({{"canary": CANARY, "value": round(value, 6)}}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
