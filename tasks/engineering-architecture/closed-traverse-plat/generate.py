"""Seeded generator of inputs/ and reference/ for closed-traverse-plat: python3 generate.py --out DIR.

A closed loop traverse of eight stations near Evergreen, Colorado (about 2 150 m above sea
level), started on control point CP-101 and oriented on CP-102. The truth is laid out on the
State Plane grid (NAD83 Colorado Central, US survey feet); the field observations are ground
measurements made from it (grid distance / project combined factor) with instrument noise.

inputs/fieldbook.csv        one row per instrument set: angle right, zeniths, slope distances
inputs/control.csv          the two control points (grid, ftUS)
inputs/field_notes.txt      the party chief's notes: project data, two days of remarks
reference/expected.json     the adjusted traverse, computed by the rules the instruction names
"""

import argparse
import csv
import io
import json
import math
import random
from pathlib import Path

from pyproj import CRS, Proj, Transformer

SEED = 20261203
CANARY = "c401a2c0-6944-48ef-a003-59630bbad665"
SPC = "EPSG:2232"          # NAD83 / Colorado Central (ftUS)
GEOG = "EPSG:4269"         # NAD83 geographic
FT_US = 1200.0 / 3937.0    # metres per US survey foot
R_EARTH = 6371000.0
ELLIPSOID_H = 2131.4       # project mean ellipsoid height, m (NAVD88 2148.2 - GEOID18 16.8)
CP101_LATLON = (39.6372184, -105.3247316)
STATIONS = ["CP-101", "T2", "T3", "T4", "T5", "T6", "T7", "T8"]
DAY2_FROM = "T6"           # sets from this station on were shot on day 2 in ftUS
BUMPED_AT = "T7"           # the first set here was disturbed and re-observed
BUMP_ANGLE_SEC = 68.0
BUMP_DIST_M = 0.012


def dms(deg: float) -> str:
    total = round(deg * 3600.0)
    d, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{d:03d}-{m:02d}-{s:02d}"


def from_dms(text: str) -> float:
    d, m, s = (int(p) for p in text.split("-"))
    return d + m / 60.0 + s / 3600.0


def azimuth(p: tuple[float, float], q: tuple[float, float]) -> float:
    """Grid azimuth in degrees from north, clockwise; points are (E, N)."""
    return math.degrees(math.atan2(q[0] - p[0], q[1] - p[1])) % 360.0


def bearing_text(az: float) -> str:
    total = round(az * 3600.0) % (360 * 3600)
    az_r = total / 3600.0
    if az_r <= 90:
        ns, ew, ang = "N", "E", az_r
    elif az_r <= 180:
        ns, ew, ang = "S", "E", 180 - az_r
    elif az_r <= 270:
        ns, ew, ang = "S", "W", az_r - 180
    else:
        ns, ew, ang = "N", "W", 360 - az_r
    t = round(ang * 3600)
    d, rem = divmod(t, 3600)
    m, s = divmod(rem, 60)
    return f"{ns} {d:02d}°{m:02d}'{s:02d}\" {ew}"


def layout(rng: random.Random, e0: float, n0: float) -> dict[str, tuple[float, float]]:
    """Counterclockwise polygon with CP-101 as its first vertex (grid, ftUS)."""
    radii = [rng.uniform(230.0, 340.0) for _ in STATIONS]
    thetas = [math.radians(200.0 + 45.0 * k + rng.uniform(-12.0, 12.0)) for k in range(len(STATIONS))]
    ce = e0 - radii[0] * math.cos(thetas[0]) / FT_US
    cn = n0 - radii[0] * math.sin(thetas[0]) / FT_US
    pts = {}
    for name, r, t in zip(STATIONS, radii, thetas, strict=True):
        pts[name] = (ce + r * math.cos(t) / FT_US, cn + r * math.sin(t) / FT_US)
    pts["CP-101"] = (e0, n0)
    return pts


def observe(rng, pts, elev, cf, a, b, hi, ht, units, offset_m=0.0) -> tuple[str, str]:
    """Zenith and slope distance from a to b, as the total station would show them."""
    grid_m = math.dist(pts[a], pts[b]) * FT_US
    hz = grid_m / cf + offset_m
    dv = (elev[b] + ht) - (elev[a] + hi)
    zen = math.degrees(math.atan2(hz, dv)) + rng.gauss(0.0, 3.0) / 3600.0
    slope = math.hypot(hz, dv) + rng.gauss(0.0, 0.004 + 2e-6 * hz)
    if units == "ftUS":
        slope /= FT_US
    return dms(zen), f"{slope:.3f}"


def fieldbook(rng, pts, elev, cf):
    rows, n = [], len(STATIONS)
    plan = [("CP-101", "CP-102", "T2")]
    plan += [(STATIONS[i], STATIONS[i - 1], STATIONS[(i + 1) % n]) for i in range(1, n)]
    plan.append(("CP-101", "T8", "T2"))
    minute = 8 * 60 + 20
    day, s = 1, 0
    for occ, bs, fs in plan:
        if occ == DAY2_FROM:
            day, minute = 2, 8 * 60 + 25
        tries = [True, False] if occ == BUMPED_AT else [False]
        for bumped in tries:
            s += 1
            units = "ftUS" if day == 2 else "m"
            hi = round(rng.uniform(1.45, 1.65), 3)
            ht_b, ht_f = round(rng.uniform(1.5, 2.0), 3), round(rng.uniform(1.5, 2.0), 3)
            true_ang = (azimuth(pts[occ], pts[fs]) - azimuth(pts[occ], pts[bs])) % 360.0
            ang = true_ang + (rng.gauss(0.0, 5.0) + (BUMP_ANGLE_SEC if bumped else 0.0)) / 3600.0
            off = BUMP_DIST_M if bumped else 0.0
            bz, bd = observe(rng, pts, elev, cf, occ, bs, hi, ht_b, units, off)
            fz, fd = observe(rng, pts, elev, cf, occ, fs, hi, ht_f, units, off)
            rows.append({"set": s, "day": day, "time": f"{minute // 60:02d}:{minute % 60:02d}",
                         "occupied": occ, "backsight": bs, "foresight": fs, "angle_right": dms(ang),
                         "hi_m": f"{hi:.3f}", "bs_ht_m": f"{ht_b:.3f}", "bs_zenith": bz, "bs_slope_dist": bd,
                         "fs_ht_m": f"{ht_f:.3f}", "fs_zenith": fz, "fs_slope_dist": fd})
            minute += 11 if bumped else rng.randint(34, 58)
    return rows


def adjust(rows, control, cf, rejected):
    """The reference adjustment: equal angular balance, compass rule, grid in ftUS."""
    good = [r for r in rows if r["set"] not in rejected]
    hz: dict[frozenset, list[float]] = {}
    for r in good:
        to_m = FT_US if r["day"] == 2 else 1.0
        for tgt, z, d in ((r["backsight"], r["bs_zenith"], r["bs_slope_dist"]),
                          (r["foresight"], r["fs_zenith"], r["fs_slope_dist"])):
            h = float(d) * to_m * math.sin(math.radians(from_dms(z)))
            hz.setdefault(frozenset((r["occupied"], tgt)), []).append(h)
    n = len(STATIONS)
    interior = {}
    for r in good:
        if r["backsight"] != "CP-102":
            interior[r["occupied"]] = from_dms(r["angle_right"])
    orient = next(from_dms(r["angle_right"]) for r in good if r["backsight"] == "CP-102")
    mis_sec = (sum(interior.values()) - (n - 2) * 180.0) * 3600.0
    corr = -mis_sec / n / 3600.0
    courses = [(STATIONS[i], STATIONS[(i + 1) % n]) for i in range(n)]
    grid_ft = [sum(hz[frozenset(c)]) / len(hz[frozenset(c)]) * cf / FT_US for c in courses]
    az = (azimuth(control["CP-101"], control["CP-102"]) + orient) % 360.0
    lat_dep = []
    for i, (a, b) in enumerate(courses):
        if i > 0:
            az = (az + 180.0 + interior[a] + corr) % 360.0
        lat_dep.append((grid_ft[i] * math.cos(math.radians(az)), grid_ft[i] * math.sin(math.radians(az))))
    e_n = sum(ld[0] for ld in lat_dep)
    e_e = sum(ld[1] for ld in lat_dep)
    perim = sum(grid_ft)
    coords = {"CP-101": control["CP-101"]}
    e, nn = control["CP-101"]
    for i, (a, b) in enumerate(courses[:-1]):
        nn += lat_dep[i][0] - e_n * grid_ft[i] / perim
        e += lat_dep[i][1] - e_e * grid_ft[i] / perim
        coords[b] = (e, nn)
    ring = [coords[s] for s in STATIONS]
    area = 0.5 * sum(ring[i][0] * ring[(i + 1) % n][1] - ring[(i + 1) % n][0] * ring[i][1] for i in range(n))
    return coords, {"angular_misclosure_sec": round(mis_sec, 2), "linear_misclosure_ft": math.hypot(e_n, e_e),
                    "perimeter_ft": perim, "precision_ratio": perim / math.hypot(e_n, e_e),
                    "area_sqft": area, "area_acres": area / 43560.0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    to_grid = Transformer.from_crs(GEOG, SPC, always_xy=True)
    to_geo = Transformer.from_crs(SPC, GEOG, always_xy=True)
    e0, n0 = to_grid.transform(CP101_LATLON[1], CP101_LATLON[0])
    e0, n0 = round(e0, 3), round(n0, 3)
    lon0, lat0 = to_geo.transform(e0, n0)
    k = Proj(CRS(SPC)).get_factors(lon0, lat0).meridional_scale
    cf = k * R_EARTH / (R_EARTH + ELLIPSOID_H)
    pts = layout(rng, e0, n0)
    rm_az = math.radians(rng.uniform(100.0, 140.0))
    rm_m = rng.uniform(380.0, 460.0)
    pts["CP-102"] = (round(e0 + rm_m * math.sin(rm_az) / FT_US, 3), round(n0 + rm_m * math.cos(rm_az) / FT_US, 3))
    elev = {s: 2148.2 + rng.uniform(-12.0, 12.0) for s in pts}
    rows = fieldbook(rng, pts, elev, cf)
    control = {"CP-101": (e0, n0), "CP-102": pts["CP-102"]}
    bumped = next(r["set"] for r in rows if r["occupied"] == BUMPED_AT)
    coords, summary = adjust(rows, control, cf, {bumped})

    inp, ref = out / "inputs", out / "reference"
    inp.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    (inp / "fieldbook.csv").write_text(buf.getvalue())
    ctl = "point,northing_ftus,easting_ftus,description\n"
    ctl += f"CP-101,{n0:.3f},{e0:.3f},brass cap in concrete (HARN-tied 2024)\n"
    ctl += f"CP-102,{pts['CP-102'][1]:.3f},{pts['CP-102'][0]:.3f},azimuth mark: rebar and aluminium cap\n"
    (inp / "control.csv").write_text(ctl)
    t_bump = next(r["time"] for r in rows if r["occupied"] == BUMPED_AT)
    notes = NOTES.format(h=ELLIPSOID_H, t_bump=t_bump, at=BUMPED_AT, day2=DAY2_FROM)
    (inp / "field_notes.txt").write_text(notes)

    stations = []
    for s in STATIONS:
        e, nn = coords[s]
        lon, lat = to_geo.transform(e, nn)
        stations.append({"station": s, "northing_ftus": round(nn, 4), "easting_ftus": round(e, 4),
                         "latitude": round(lat, 9), "longitude": round(lon, 9)})
    courses = []
    for i, a in enumerate(STATIONS):
        b = STATIONS[(i + 1) % len(STATIONS)]
        az = azimuth(coords[a], coords[b])
        grid = math.dist(coords[a], coords[b])
        mid = ((coords[a][0] + coords[b][0]) / 2, (coords[a][1] + coords[b][1]) / 2)
        courses.append({"from": a, "to": b, "azimuth_deg": round(az, 8), "bearing": bearing_text(az),
                        "grid_ft": round(grid, 4), "ground_ft": round(grid / cf, 4),
                        "mid_e": round(mid[0], 3), "mid_n": round(mid[1], 3)})
    expected = {"canary": CANARY, "crs": SPC, "combined_factor": round(cf, 10), "grid_scale_factor": round(k, 10),
                "rejected_sets": [bumped], "stations": stations, "courses": courses,
                **{key: round(v, 6) for key, v in summary.items()}}
    (ref / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n")


NOTES = """\
JOB 26-118  BOUNDARY SURVEY, LOT 7 RIDGEVIEW SUBDIVISION, JEFFERSON COUNTY, COLORADO
Party chief: R. Okafor   Instrument: 1" total station, EDM 2 mm + 2 ppm, prisms on tripods
Horizontal datum: NAD83(2011) State Plane Colorado Central, US survey feet (control CP-101, CP-102)
Vertical: NAVD88. Project mean elevation 2148.2 m; GEOID18 separation -16.8 m;
  mean ellipsoid height {h:.1f} m.
Procedure: angles right (clockwise) from backsight to foresight, one set per setup, mean of face
  left and face right as booked. Zenith angles and slope distances booked to backsight and to
  foresight at every setup. HI and HT taped in metres. EDM distances booked in metres as displayed.
  Loop run counterclockwise from CP-101, oriented on CP-102, closed back on CP-101.

DAY 1
08:05  Set up CP-101, checked level and plummet. Backsight CP-102, check shot on the RM booked.
       Weather clear, 9 C, light wind.
       Setups CP-101 through T5 occupied; all observations booked.
16:40  Off site. Instrument cased in the truck.

DAY 2
07:50  On site. Battery swap on the total station, settings re-loaded from the job file.
       Continued the loop at {day2}, then {at}, T8, and re-occupied CP-101 to close the angles.
{t_bump}  {at}: a cyclist caught a tripod leg after the backsight pointing; the foresight was booked
       before we saw the plummet was off the point. Re-levelled and re-centred over {at} and
       re-observed the whole set (next set in the book).
15:10  Office check of the raw file: the EDM units menu was on US survey feet after the morning
       battery swap, so every distance booked today is in ftUS as displayed. Angles unaffected.
"""


if __name__ == "__main__":
    main()
