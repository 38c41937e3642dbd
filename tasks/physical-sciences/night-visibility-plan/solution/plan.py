"""Reference night plan: astronomical twilights, airmass-2 windows and topocentric Moon distance."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import astropy.units as u
import numpy as np
from astropy.coordinates import FK4, AltAz, EarthLocation, SkyCoord, get_body, get_sun
from astropy.time import Time
from astropy.utils import iers

iers.conf.auto_download = False
MIN_ALT = 30.0  # airmass 2
TWILIGHT = -18.0
MOON_MIN = 30.0
MIN_WINDOW = 60.0


def obsdb(path: Path) -> EarthLocation:
    """An IRAF observatory-database entry: longitude in degrees WEST, sexagesimal."""
    fields = dict(re.findall(r"^\s*(\w+)\s*=\s*(.+?)\s*$", path.read_text(), re.M))

    def sexa(text: str) -> float:
        parts = [float(p) for p in text.strip().split(":")]
        sign = -1 if text.strip().startswith("-") else 1
        return sign * sum(abs(p) / 60**i for i, p in enumerate(parts))

    return EarthLocation(lon=-sexa(fields["longitude"]) * u.deg, lat=sexa(fields["latitude"]) * u.deg,
                         height=float(fields["altitude"]) * u.m)


def crossing(f, t0: Time, t1: Time, level: float) -> Time:
    """Bisection of a monotone crossing between t0 and t1 to 0.1 s."""
    a, b = t0, t1
    fa = f(a) - level
    while (b - a).to_value(u.s) > 0.1:
        m = a + (b - a) / 2
        fm = f(m) - level
        if np.sign(fm) == np.sign(fa):
            a, fa = m, fm
        else:
            b = m
    return a + (b - a) / 2


def altitude_fn(loc: EarthLocation, target_of):
    def f(t: Time) -> np.ndarray:
        return target_of(t).transform_to(AltAz(obstime=t, location=loc, pressure=0 * u.hPa)).alt.deg
    return f


def interval(f, start: Time, end: Time, level: float, above: bool) -> list[Time]:
    """The sub-interval of [start, end] where f is above (or below) level; empty if none."""
    grid = start + np.linspace(0, (end - start).to_value(u.min), int((end - start).to_value(u.min) / 2) + 2) * u.min
    vals = f(grid)
    good = vals >= level if above else vals <= level
    if not good.any():
        return []
    i0, i1 = int(np.argmax(good)), len(good) - 1 - int(np.argmax(good[::-1]))
    lo = start if i0 == 0 else crossing(f, grid[i0 - 1], grid[i0], level)
    hi = end if i1 == len(good) - 1 else crossing(f, grid[i1], grid[i1 + 1], level)
    return [lo, hi]


def iso(t: Time) -> str:
    return t.utc.isot[:19]


def plan(inputs: Path) -> tuple[dict, list[dict]]:
    loc = obsdb(inputs / "obsdb.dat")
    night = json.loads((inputs / "request.json").read_text())
    # the local evening of the requested date: noon to noon local mean time
    noon = Time(f"{night['night_of']}T12:00:00", scale="utc") - loc.lon.deg / 15 * u.hour
    sun = altitude_fn(loc, lambda t: get_sun(t))
    dark = interval(sun, noon, noon + 24 * u.hour, TWILIGHT, above=False)
    start, end = dark
    rows = []
    with (inputs / "targets.csv").open() as f:
        for row in csv.DictReader(f):
            ra, dec = row["ra"], row["dec"]
            if row["equinox"].strip().upper() == "B1950":
                c = SkyCoord(ra, dec, unit=(u.hourangle, u.deg),
                             frame=FK4(equinox="B1950", obstime="B1950")).icrs
            else:
                c = SkyCoord(ra, dec, unit=(u.hourangle, u.deg), frame="icrs")
            w = interval(altitude_fn(loc, lambda t, c=c: c), start, end, MIN_ALT, above=True)
            out = {"name": row["name"], "ra_icrs_deg": round(float(c.ra.deg), 5),
                   "dec_icrs_deg": round(float(c.dec.deg), 5),
                   "window_start_utc": iso(w[0]) if w else "", "window_end_utc": iso(w[1]) if w else "",
                   "window_minutes": round((w[1] - w[0]).to_value(u.min), 1) if w else 0.0}
            if w:
                mid = w[0] + (w[1] - w[0]) / 2
                frame = AltAz(obstime=mid, location=loc, pressure=0 * u.hPa)
                sep = get_body("moon", mid, loc).transform_to(frame).separation(c.transform_to(frame))
                out["moon_sep_deg"] = round(float(sep.deg), 2)
            else:
                out["moon_sep_deg"] = ""
            ok = bool(w) and out["window_minutes"] >= MIN_WINDOW and out["moon_sep_deg"] >= MOON_MIN
            out["schedulable"] = "yes" if ok else "no"
            rows.append(out)
    return {"evening_twilight_utc": iso(start), "morning_twilight_utc": iso(end)}, rows


def main() -> None:
    inputs, out = Path(sys.argv[1]), Path(sys.argv[2])
    night, rows = plan(inputs)
    (out / "night.json").write_text(json.dumps(night, indent=2) + "\n")
    with (out / "plan.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
