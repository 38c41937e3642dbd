"""Seeded generator of inputs/ and reference/ for night-visibility-plan: python3 generate.py --out DIR."""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
from pathlib import Path

import astropy.units as u
import numpy as np
from astropy.coordinates import FK4, SkyCoord, get_body
from astropy.time import Time
from astropy.utils import iers

iers.conf.auto_download = False
HERE = Path(__file__).resolve().parent
SEED = 4_26_2026
CANARY = "06ac1b25-7c2d-4f82-94f8-39e5a2015d8f"
NIGHT = "2026-04-26"
OBSDB = """# IRAF observatory database entry (noao$lib/obsdb.dat conventions)
observatory = "cpx"
	name = "Cerro Pedregoso Observatory"
	longitude = 70:44:01.4
	latitude = -30:14:16.8
	altitude = 2215
	timezone = 4
"""
PREFIX = ["HD", "HIP", "NGC", "CPD", "LTT", "GJ", "WD", "SN"]


def sexa(value: float, hours: bool) -> str:
    v = value / 15 if hours else value
    sign = "-" if v < 0 else ("" if hours else "+")
    v = abs(v)
    d = int(v)
    m = int((v - d) * 60)
    s = (v - d - m / 60) * 3600
    return f"{sign}{d:02d}:{m:02d}:{s:05.2f}" if hours else f"{sign}{d:02d}:{m:02d}:{s:04.1f}"


def targets(rng: np.random.Generator) -> list[dict[str, str]]:
    geo = get_body("moon", Time(f"{NIGHT}T04:00:00", scale="utc") + 1 * u.day)
    moon = SkyCoord(geo.ra, geo.dec, frame="icrs")  # the direction only: no barycentric parallax
    rows = []
    for k in range(16):
        if k in (3, 11):  # near the Moon
            c = moon.directional_offset_by(rng.uniform(0, 360) * u.deg, rng.uniform(8, 22) * u.deg)
            ra, dec = float(c.ra.deg), float(c.dec.deg)
        else:
            ra, dec = float(rng.uniform(60, 300)), float(np.degrees(np.arcsin(rng.uniform(-0.98, 0.72))))
        equinox = "B1950" if k in (5, 9, 14) else "J2000"
        if equinox == "B1950":
            c = SkyCoord(ra * u.deg, dec * u.deg, frame="icrs").transform_to(
                FK4(equinox="B1950", obstime="B1950"))
            ra, dec = float(c.ra.deg), float(c.dec.deg)
        name = f"{PREFIX[int(rng.integers(len(PREFIX)))]} {int(rng.integers(1000, 99999))}"
        rows.append({"name": name, "ra": sexa(ra, True), "dec": sexa(dec, False), "equinox": equinox})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE)
    out = parser.parse_args().out
    inputs, reference = out / "inputs", out / "reference"
    for d in (inputs, reference):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    rng = np.random.default_rng(SEED)
    (inputs / "obsdb.dat").write_text(OBSDB)
    (inputs / "request.json").write_text(json.dumps(
        {"observatory": "cpx", "night_of": NIGHT, "proposal": "2026A-0417"}, indent=2) + "\n")
    rows = targets(rng)
    with (inputs / "targets.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["name", "ra", "dec", "equinox"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    sys.path.insert(0, str(HERE / "solution"))
    from plan import plan  # the reference is the oracle's computation

    night, plan_rows = plan(inputs)
    (reference / "expected.json").write_text(json.dumps(
        {"canary": CANARY, "night": night, "targets": plan_rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
