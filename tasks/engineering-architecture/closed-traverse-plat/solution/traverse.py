"""Oracle for closed-traverse-plat: reduce the field book, balance, adjust by the compass rule,
convert with PROJ and draw the plat with ezdxf.

Flags reproduce professional mistakes for the negative fixtures (default: none).
"""

import argparse
import csv
import json
import math
from pathlib import Path

import ezdxf
from pyproj import CRS, Proj, Transformer

FT_US = 1200.0 / 3937.0
SPC = CRS.from_epsg(2232)
R_EARTH = 6371000.0


def dms(text: str) -> float:
    d, m, s = (float(p) for p in text.strip().split("-"))
    return d + m / 60 + s / 3600


def quadrant(az: float) -> str:
    sec = round(az * 3600) % 1296000
    a = sec / 3600
    ns, ew, ang = (("N", "E", a) if a <= 90 else ("S", "E", 180 - a) if a <= 180
                   else ("S", "W", a - 180) if a <= 270 else ("N", "W", 360 - a))
    t = round(ang * 3600)
    return f"{ns} {t // 3600:02d}°{t % 3600 // 60:02d}'{t % 60:02d}\" {ew}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--keep-bumped", action="store_true")
    ap.add_argument("--ground", action="store_true", help="no grid reduction")
    ap.add_argument("--intl-foot", action="store_true")
    ap.add_argument("--slope", action="store_true", help="slope distances used as horizontal")
    ap.add_argument("--no-adjust", action="store_true")
    ap.add_argument("--r12", action="store_true", help="small R12 drawing (fixtures)")
    ap.add_argument("--all-metres", action="store_true", help="day-2 distances read as metres")
    a = ap.parse_args()

    book = list(csv.DictReader(open(a.inputs / "fieldbook.csv")))
    ctl = {r["point"]: (float(r["easting_ftus"]), float(r["northing_ftus"]))
           for r in csv.DictReader(open(a.inputs / "control.csv"))}
    notes = (a.inputs / "field_notes.txt").read_text()
    h_ell = float(notes.split("mean ellipsoid height")[1].split("m")[0])

    # A disturbed set is superseded by the re-observation booked right after it at the same station.
    rejected = []
    for prev, nxt in zip(book, book[1:], strict=False):
        if prev["occupied"] == nxt["occupied"] and prev["backsight"] == nxt["backsight"]:
            rejected.append(int(prev["set"]))
    if a.keep_bumped:
        rejected = []
    use = [r for r in book if int(r["set"]) not in rejected]

    to_geo = Transformer.from_crs(SPC, CRS.from_epsg(4269), always_xy=True)
    if a.intl_foot:
        # E, N converted to metres with 0.3048 and projected with the metric zone definition
        metric = Transformer.from_crs(CRS.from_epsg(26954), CRS.from_epsg(4269), always_xy=True)

        def geo(e: float, n: float) -> tuple[float, float]:
            return metric.transform(e * 0.3048, n * 0.3048)
    else:
        def geo(e: float, n: float) -> tuple[float, float]:
            return to_geo.transform(e, n)
    lon0, lat0 = geo(*ctl["CP-101"])
    k = Proj(SPC).get_factors(lon0, lat0).meridional_scale
    cf = 1.0 if a.ground else k * R_EARTH / (R_EARTH + h_ell)

    dist: dict[tuple, list] = {}
    for r in use:
        unit = FT_US if (r["day"] == "2" and not a.all_metres) else 1.0
        for tgt, z, s in (("backsight", "bs_zenith", "bs_slope_dist"), ("foresight", "fs_zenith", "fs_slope_dist")):
            hd = float(r[s]) * unit * (1.0 if a.slope else math.sin(math.radians(dms(r[z]))))
            dist.setdefault(tuple(sorted((r["occupied"], r[tgt]))), []).append(hd)
    order = list(dict.fromkeys(["CP-101"] + [r["occupied"] for r in use]))
    n = len(order)
    sets: dict[str, list] = {}
    for r in use:
        if r["backsight"] != "CP-102":
            sets.setdefault(r["occupied"], []).append(dms(r["angle_right"]))
    interior = {s: sum(v) / len(v) for s, v in sets.items()}
    orient = next(dms(r["angle_right"]) for r in use if r["backsight"] == "CP-102")
    mis = sum(interior.values()) - (n - 2) * 180
    corr = 0.0 if a.no_adjust else -mis / n

    legs = []
    az0 = math.degrees(math.atan2(ctl["CP-102"][0] - ctl["CP-101"][0], ctl["CP-102"][1] - ctl["CP-101"][1]))
    az = (az0 + orient) % 360
    for i in range(n):
        p, q = order[i], order[(i + 1) % n]
        if i:
            az = (az + 180 + interior[p] + corr) % 360
        hd = dist[tuple(sorted((p, q)))]
        length = sum(hd) / len(hd) * cf / FT_US
        legs.append((p, q, length, length * math.cos(math.radians(az)), length * math.sin(math.radians(az))))
    perim = sum(lg[2] for lg in legs)
    en, ee = sum(lg[3] for lg in legs), sum(lg[4] for lg in legs)
    xy = {"CP-101": ctl["CP-101"]}
    e, nn = ctl["CP-101"]
    for p, q, length, dn, de in legs[:-1]:
        f = 0.0 if a.no_adjust else length / perim
        e, nn = e + de - ee * f, nn + dn - en * f
        xy[q] = (e, nn)
    ring = [xy[s] for s in order]
    area = 0.5 * sum(ring[i][0] * ring[i - 1][1] * -1 + ring[i - 1][0] * ring[i][1] for i in range(n))

    a.out.mkdir(parents=True, exist_ok=True)
    with open(a.out / "adjusted_coords.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["station", "northing_ftus", "easting_ftus", "latitude", "longitude"])
        for s in order:
            lon, lat = geo(*xy[s])
            w.writerow([s, f"{xy[s][1]:.4f}", f"{xy[s][0]:.4f}", f"{lat:.9f}", f"{lon:.9f}"])
    lin = math.hypot(en, ee)
    report = {"combined_factor": round(cf, 10), "angular_misclosure_sec": round(mis * 3600, 2),
              "linear_misclosure_ft": round(lin, 4), "perimeter_ft": round(perim, 3),
              "precision_ratio": round(perim / lin) if lin else None,
              "area_sqft": round(area, 1), "area_acres": round(area / 43560, 4), "rejected_sets": rejected}
    (a.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")

    doc = ezdxf.new("R12") if a.r12 else ezdxf.new("R2010", setup=True)
    doc.header["$INSUNITS"] = 21  # US survey feet
    msp = doc.modelspace()
    doc.layers.add("BOUNDARY", color=7)
    doc.layers.add("BRG-DIST", color=3)
    if a.r12:
        msp.add_polyline2d(ring, close=True, dxfattribs={"layer": "BOUNDARY"})
    else:
        msp.add_lwpolyline(ring, close=True, dxfattribs={"layer": "BOUNDARY"})
    for i, s in enumerate(order):
        p, q = xy[s], xy[order[(i + 1) % n]]
        az = math.degrees(math.atan2(q[0] - p[0], q[1] - p[1])) % 360
        ground = math.dist(p, q) / cf
        mid = ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
        msp.add_text(f"{quadrant(az)}  {ground:.2f}'", height=8,
                     dxfattribs={"layer": "BRG-DIST", "insert": mid})
    doc.saveas(a.out / "plat.dxf")


if __name__ == "__main__":
    main()
